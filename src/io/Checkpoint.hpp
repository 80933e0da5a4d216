#pragma once
// Checkpoint files: the complete Simulation value plus run-level metadata, written atomically and
// verified (magic, format version, lengths, CRC-32) before anything is loaded. Continuing from a
// checkpoint is bit-for-bit identical to never having stopped. Format: man/dem-checkpoint.5.
//
// None of these functions throws: they return false with a one-line message naming the file.
#include "core/Simulation.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace dem {

// Current checkpoint format version; files with a newer version are rejected.
inline constexpr uint32_t checkpointFormatVersion = 10;

// Run-level data stored beside the simulation.
struct CheckpointMeta {
    std::string
        programVersion; // DEM_VERSION of the program that wrote the file (set by the writer)
    std::string deckName, deckPath, deckText, resolvedToml;
    std::map<std::string, double> params;
    std::string runState; // opaque JSON text owned by the runner (stage records, counters...)
};

// Whole-file compression, chosen from the file ending: .dem, .dem.gz, .dem.bz2, .dem.xz, .dem.zst.
enum class Compression { None, Gzip, Bzip2, Xz, Zstd };

const char* compressionName(Compression c); // "none", "gzip", "bzip2", "xz", "zstd"

// Compression of a checkpoint file name; false (with error) for an unknown ending.
bool compressionFromPath(const std::string& path, Compression& c, std::string& error);

// True when `path` ends in one of the checkpoint endings.
bool isCheckpointPath(const std::string& path);

// Writes `sim` and `meta` to `path` atomically: "<path>.tmp-<pid>" in the same directory is
// written, flushed and fsynced, then renamed over `path`, and the directory is fsynced. On failure
// the temporary file is removed and an existing file under `path` is left untouched. Two threads
// of one process must not write the same path at once (they would share the temporary file).
// `level`: 1 (fast) to 9 (small), or -1 for the compressor's default; ignored for .dem.
bool writeCheckpoint(const std::string& path, const Simulation& sim, const CheckpointMeta& meta,
                     int level, std::string& error);

// Reads a checkpoint. Verifies the magic, format version, byte order, header checksum, complete
// length, payload CRC-32 and the structural consistency of the simulation before touching `sim`
// and `meta`; on failure both are left unchanged. Running out of memory is not the file's fault:
// std::bad_alloc is passed on (main reports it, exit status 1), as by inspectCheckpoint.
bool readCheckpoint(const std::string& path, Simulation& sim, CheckpointMeta& meta,
                    std::string& error);

struct CheckpointInfo {
    std::string path, compression, programVersion, deckName;
    uint32_t formatVersion = 0;
    uint64_t step = 0;
    double time = 0;
    size_t stage = 0, stages = 0, particles = 0;
    bool stageStarted = false; // `stage` is under way (else the next to start, or the last ended)
    std::string runState;      // CheckpointMeta::runState, for the runner to read
    size_t contacts = 0;       // touching sphere–sphere plus sphere–obstacle contacts
    uint64_t fileBytes = 0;
    bool checksumOk = false;
    std::string stateDigest;         // stateDigest(sim) of the stored simulation
    PeriodicCell cell;               // of the stored simulation (enabled = false without one)
    StressControl stressControl;     // of the cell, in force (axes 0: none)
    Vec3 cellStress = Vec3::Zero();  // the cell's normal stresses, with stress control only
    struct Servo {                   // a servo-controlled object in force
        std::string object;          // its name in the deck
        double target = 0, push = 0; // servo_force, and the spheres' push now [N]
    };
    std::vector<Servo> servos;
};

// Reads and verifies the whole file. When only the payload is bad, the fields known from the
// header (path, compression, formatVersion, step, time, particles, fileBytes) are still filled in,
// checksumOk is false, and the function returns false with the error.
bool inspectCheckpoint(const std::string& path, CheckpointInfo& info, std::string& error);

// --- in-memory snapshots -----------------------------------------------------------------------
// The serialised simulation alone (the checkpoint payload's simulation sections): usable as a
// named in-memory snapshot, and to compare two simulations bit for bit.
std::string serializeSimulation(const Simulation& sim);
bool deserializeSimulation(const std::string& bytes, Simulation& sim, std::string& error);

// Structural consistency of a simulation value (array lengths, indices in range), as checked after
// loading. False with a description of the first problem found.
bool checkSimulationConsistency(const Simulation& sim, std::string& why);

// --- checkpoint directories (for the runner: --resume, keep=k rotation) -----------------------
struct CheckpointEntry {
    std::string path;      // directory / file name
    bool headerOk = false; // header readable and valid (the payload is not checked)
    uint64_t step = 0;     // from the header
    double time = 0;       // from the header
    int64_t mtimeNs = 0;   // modification time, ns since the epoch
    uint64_t fileBytes = 0;
};

// Files in `dir` with a checkpoint ending (temporary files excluded), newest first: readable
// headers before unreadable ones, then by step (descending), then modification time (descending),
// then name. Only each file's header is decompressed. False (with error) if `dir` can't be listed.
bool listCheckpoints(const std::string& dir, std::vector<CheckpointEntry>& entries,
                     std::string& error);

// The `latest` pointer: a text file `dir`/latest holding one checkpoint file name (relative to
// `dir`) and a newline, replaced atomically like a checkpoint.
inline constexpr const char* latestPointerName = "latest";
bool writeLatestPointer(const std::string& dir, const std::string& fileName, std::string& error);
// Reads the pointer; `path` becomes dir/<name>. False if it is missing or malformed.
bool readLatestPointer(const std::string& dir, std::string& path, std::string& error);

} // namespace dem
