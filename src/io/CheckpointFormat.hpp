#pragma once
// Internal to the checkpoint code: the on-disk framing (header, trailer), the reader of a whole
// file (decompression, length and checksum checks) and the atomic file writer.
#include "io/Checkpoint.hpp"

#include <cstdint>
#include <exception>
#include <string>

namespace dem::ckpt {

// Header, at the start of the (decompressed) stream; all fields in the writer's byte order.
//   0  8  magic "DEMCKPT\0"           (fixed for every format version)
//   8  4  format version u32           (fixed for every format version)
//  12  4  byte-order mark u32 0x01020304
//  16  4  header length u32 (64)
//  20  4  flags u32 (0)
//  24  8  payload length u64
//  32  8  step u64
//  40  8  time f64
//  48  8  number of spheres u64
//  56  4  reserved u32 (0)
//  60  4  CRC-32 of bytes 0-59
// Trailer, after the payload:
//   0  4  CRC-32 of the payload
//   4  4  reserved u32 (0)
//   8  8  payload length u64 (again)
//  16  8  end magic "DEMCEND\0"
inline constexpr char fileMagic[8] = {'D', 'E', 'M', 'C', 'K', 'P', 'T', '\0'};
inline constexpr char endMagic[8] = {'D', 'E', 'M', 'C', 'E', 'N', 'D', '\0'};
inline constexpr uint32_t byteOrderMark = 0x01020304;
inline constexpr size_t headerBytes = 64;
inline constexpr size_t trailerBytes = 24;

struct Header {
    uint32_t version = checkpointFormatVersion;
    uint64_t payloadBytes = 0;
    uint64_t step = 0;
    double time = 0;
    uint64_t particles = 0;
};

// Everything read from a checkpoint file; `payload` is only filled by a full read.
struct LoadedFile {
    Compression compression = Compression::None;
    Header header;
    bool headerOk = false;
    uint64_t fileBytes = 0;
    std::string payload;
};

// Reads `path`: the header only (headerOnly) or the whole file with the payload, its length and
// CRC-32 verified. On failure `error` is a one-line message starting with the quoted path;
// `out.headerOk` tells whether the header was valid before the failure.
bool loadFile(const std::string& path, bool headerOnly, LoadedFile& out, std::string& error);

// "'path'" for messages.
std::string quoted(const std::string& path);

// An exception's message: "out of memory" for std::bad_alloc (whose what() says only its name).
std::string exceptionText(const std::exception& e);

} // namespace dem::ckpt
