#include "app/Checkpointer.hpp"
#include "io/AtomicFile.hpp"
#include "io/DirectoryNames.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <new>

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace dem {

namespace {

const char* endingFor(const std::string& compression) {
    if (compression == "none")
        return ".dem";
    if (compression == "bzip2")
        return ".dem.bz2";
    if (compression == "xz")
        return ".dem.xz";
    if (compression == "zstd")
        return ".dem.zst";
    return ".dem.gz";
}

bool isStageEndName(const std::string& path) {
    return fs::path(path).filename().string().find(".stage") != std::string::npos;
}

} // namespace

Checkpointer::Checkpointer(const CheckpointSpec& spec, std::string dir)
    : spec_(spec), dir_(std::move(dir)), ending_(endingFor(spec.compression)),
      lastWall_(Clock::now()) {}

void Checkpointer::start(double nextTime) {
    nextTime_ = nextTime > 0 ? nextTime : spec_.everyTime;
    lastWall_ = Clock::now();
}

bool Checkpointer::periodicDue(const Simulation& sim) {
    bool due = spec_.every > 0 && sim.step % spec_.every == 0;
    // A time mark counts as reached within half a step, so rounding of t = n dt cannot skip it.
    if (spec_.everyTime > 0 && sim.time >= nextTime_ - 0.5 * sim.dt) {
        due = true;
        while (nextTime_ <= sim.time + 0.5 * sim.dt)
            nextTime_ += spec_.everyTime;
    }
    if (spec_.everyWallMinutes > 0 &&
        std::chrono::duration<double>(Clock::now() - lastWall_).count() >=
            60 * spec_.everyWallMinutes)
        due = true;
    return due;
}

std::string Checkpointer::fileName(uint64_t step, CheckpointReason reason,
                                   size_t endedStage) const {
    if (reason == CheckpointReason::StageEnd)
        return fmt::format("step-{:09d}.stage{}{}", step, endedStage + 1, ending_);
    return fmt::format("step-{:09d}{}", step, ending_);
}

bool Checkpointer::write(const Simulation& sim, const CheckpointMeta& meta, CheckpointReason reason,
                         size_t endedStage, std::string& path, std::string& error) {
    if (sim.step == lastStep_)
        return true;
    std::error_code ec;
    fs::create_directories(dir_, ec);
    const std::string name = fileName(sim.step, reason, endedStage);
    path = (fs::path(dir_) / name).string();
    const auto start = Clock::now();
    if (!writeCheckpoint(path, sim, meta, spec_.level, error))
        return false;
    if (!writeLatestPointer(dir_, name, error))
        return false;
    lastStep_ = sim.step;
    lastWall_ = Clock::now();
    lastWriteSeconds_ = std::chrono::duration<double>(lastWall_ - start).count();
    rotationPostponed_ = !rotate();
    return true;
}

// Keeps the newest `keep` checkpoints by step (unreadable files count as oldest); stage-end
// checkpoints are spared when asked. Housekeeping after a checkpoint is in place: false, with the
// old files left to the next rotation, when it runs out of memory, so that a write that succeeded
// is not reported as failed.
bool Checkpointer::rotate() {
    if (spec_.keep == 0)
        return true;
    try {
        std::vector<CheckpointEntry> entries;
        std::string error;
        if (!listCheckpoints(dir_, entries, error))
            return true; // an unreadable directory: nothing to remove
        uint64_t kept = 0;
        for (const CheckpointEntry& e : entries) {
            if (spec_.keepStageEnds && isStageEndName(e.path))
                continue;
            if (kept < spec_.keep) {
                ++kept;
                continue;
            }
            std::error_code ec;
            fs::remove(e.path, ec);
        }
        return true;
    } catch (const std::bad_alloc&) {
        return false;
    }
}

void clearCheckpoints(const std::string& dir) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        return;
    std::vector<std::string> names;
    directoryNames(dir, names, ec);
    for (const std::string& name : names)
        if (isCheckpointPath(name) || isAtomicWriteTemporary(name) || name == latestPointerName)
            fs::remove(fs::path(dir) / name, ec);
}

std::vector<std::string> dropCheckpointsAfter(const std::string& dir, uint64_t step) {
    std::vector<std::string> removed;
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        return removed;
    removeAtomicWriteTemporaries(dir);
    std::vector<CheckpointEntry> entries;
    std::string error;
    if (!listCheckpoints(dir, entries, error))
        return removed;
    for (const CheckpointEntry& e : entries)
        if (e.headerOk && e.step > step && fs::remove(e.path, ec))
            removed.push_back(fs::path(e.path).filename().string());
    return removed;
}

std::vector<std::string> resumeCandidates(const std::string& dir) {
    std::vector<std::string> paths;
    std::string latest, error;
    if (readLatestPointer(dir, latest, error))
        paths.push_back(latest);
    std::vector<CheckpointEntry> entries;
    if (listCheckpoints(dir, entries, error))
        for (const CheckpointEntry& e : entries)
            if (std::find(paths.begin(), paths.end(), e.path) == paths.end())
                paths.push_back(e.path);
    return paths;
}

} // namespace dem
