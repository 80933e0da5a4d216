// Checkpoint files: framing, compression, atomic writing, verified reading (man/dem-checkpoint.5).
#include "io/Checkpoint.hpp"

#include "Version.hpp"
#include "core/Measures.hpp"
#include "core/StateDigest.hpp"
#include "io/AtomicFile.hpp"
#include "io/CheckpointFormat.hpp"
#include "io/CheckpointSerialize.hpp"
#include "io/FileDescriptor.hpp"

#include <boost/core/ref.hpp>
#include <boost/iostreams/compose.hpp>
#include <boost/iostreams/filter/bzip2.hpp>
#include <boost/iostreams/filter/gzip.hpp>
#include <boost/iostreams/filter/lzma.hpp>
#include <boost/iostreams/filter/zstd.hpp>
#include <boost/iostreams/filtering_stream.hpp>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <system_error>

namespace dem {

namespace bio = boost::iostreams;

namespace ckpt {

std::string quoted(const std::string& path) {
    return "'" + path + "'";
}

std::string exceptionText(const std::exception& e) {
    return dynamic_cast<const std::bad_alloc*>(&e) ? "out of memory" : e.what();
}

namespace {

struct Ending {
    const char* suffix;
    Compression compression;
};
constexpr Ending endings[] = {{".dem", Compression::None},
                              {".dem.gz", Compression::Gzip},
                              {".dem.bz2", Compression::Bzip2},
                              {".dem.xz", Compression::Xz},
                              {".dem.zst", Compression::Zstd}};

bool endsWith(const std::string& s, const char* suffix) {
    const size_t n = std::strlen(suffix);
    return s.size() > n && s.compare(s.size() - n, n, suffix) == 0;
}

const char* endingOf(Compression c) {
    for (const Ending& e : endings)
        if (e.compression == c)
            return e.suffix;
    return ".dem";
}

uint32_t crc32Of(uint32_t crc, const char* p, size_t n) {
    return uint32_t(::crc32_z(crc, reinterpret_cast<const Bytef*>(p), n));
}

// The compression a file's first bytes announce; nullopt when none (not a checkpoint at all).
// A prefix of the checkpoint magic counts as uncompressed, so a tiny file reads as truncated.
std::optional<Compression> sniff(const unsigned char* b, size_t n) {
    if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b)
        return Compression::Gzip;
    if (n >= 3 && b[0] == 'B' && b[1] == 'Z' && b[2] == 'h')
        return Compression::Bzip2;
    static const unsigned char xz[6] = {0xfd, '7', 'z', 'X', 'Z', 0};
    if (n >= 6 && std::memcmp(b, xz, 6) == 0)
        return Compression::Xz;
    static const unsigned char zstd[4] = {0x28, 0xb5, 0x2f, 0xfd};
    if (n >= 4 && std::memcmp(b, zstd, 4) == 0)
        return Compression::Zstd;
    if (n > 0 && std::memcmp(b, fileMagic, std::min<size_t>(n, sizeof fileMagic)) == 0)
        return Compression::None;
    return std::nullopt;
}

// --- file descriptors as Boost.Iostreams devices -----------------------------------------------
struct FdSource {
    using char_type = char;
    using category = bio::source_tag;
    int fd = -1;
    bool eof = false;
    std::streamsize read(char* s, std::streamsize n) {
        for (;;) {
            const ssize_t r = ::read(fd, s, size_t(n));
            if (r > 0)
                return r;
            if (r == 0) {
                eof = true;
                return -1;
            }
            if (errno != EINTR)
                throw std::system_error(errno, std::generic_category(), "read error");
        }
    }
};

// Copied into the stream (by value, as a compressor's device): the first failed write's errno goes
// to *error.
struct FdSink {
    using char_type = char;
    using category = bio::sink_tag;
    int fd = -1;
    int* error = nullptr;
    std::streamsize write(const char* s, std::streamsize n) {
        if ((*error = writeAll(fd, s, size_t(n))) != 0)
            throw std::system_error(*error, std::generic_category(), "write error");
        return n;
    }
};

constexpr std::streamsize streamBuffer = std::streamsize(1) << 18;
// Decompressed data reaches the reader in blocks of this size; a decompressor that fails loses
// the block in progress, so truncation reports are accurate to this many bytes.
constexpr std::streamsize outputBlock = 4096;

void pushDecompressor(bio::filtering_istream& in, Compression c) {
    switch (c) {
    case Compression::None:
        break;
    case Compression::Gzip:
        in.push(bio::gzip_decompressor(), outputBlock);
        break;
    case Compression::Bzip2:
        in.push(bio::bzip2_decompressor(), outputBlock);
        break;
    case Compression::Xz:
        in.push(bio::lzma_decompressor(), outputBlock);
        break;
    case Compression::Zstd:
        in.push(bio::zstd_decompressor(), outputBlock);
        break;
    }
}

// The sink, behind the compressor if there is one, pushed as one device with a buffer in front.
// Pushed apart, a push that runs out of memory after the compressor's buffer was set up (the
// chain's list node comes last) made Boost close the compressor at once, which wrote its header
// or last block to the sink that was not there yet: a segmentation fault. As one device, the
// compressor is closed into its sink; the temporary file is then removed. The compressor's own
// buffer is as large, so that the file is written in blocks of that size.
template <class Compressor>
void pushSink(bio::filtering_ostream& out, Compressor compressor, const FdSink& sink) {
    out.push(bio::compose(std::move(compressor), sink), streamBuffer);
}

void pushSink(bio::filtering_ostream& out, Compression c, int level, const FdSink& sink) {
    switch (c) {
    case Compression::None:
        out.push(sink, streamBuffer);
        break;
    case Compression::Gzip:
        pushSink(
            out,
            bio::gzip_compressor(
                bio::gzip_params(level < 0 ? bio::gzip::default_compression : level), streamBuffer),
            sink);
        break;
    case Compression::Bzip2:
        pushSink(out,
                 bio::bzip2_compressor(
                     bio::bzip2_params(level < 0 ? bio::bzip2::default_block_size : level),
                     streamBuffer),
                 sink);
        break;
    case Compression::Xz:
        pushSink(out,
                 bio::lzma_compressor(
                     bio::lzma_params(level < 0 ? bio::lzma::default_compression : uint32_t(level)),
                     streamBuffer),
                 sink);
        break;
    case Compression::Zstd:
        pushSink(out,
                 bio::zstd_compressor(
                     bio::zstd_params(level < 0 ? bio::zstd::default_compression : uint32_t(level)),
                     streamBuffer),
                 sink);
        break;
    }
}

// What went wrong in a decompressor, and whether it means the input ended early.
struct StreamError {
    std::string what;
    bool endedEarly = false;
};

StreamError describe(const std::exception& e, Compression c) {
    const std::string name = std::string(compressionName(c)) + " stream";
    if (const auto* g = dynamic_cast<const bio::gzip_error*>(&e)) {
        switch (g->error()) {
        case bio::gzip::bad_crc:
            return {"corrupted gzip stream (CRC mismatch)"};
        case bio::gzip::bad_length:
            return {"corrupted gzip stream (length mismatch)"};
        case bio::gzip::bad_header:
            return {"corrupted gzip stream (bad gzip header)"};
        case bio::gzip::bad_footer:
            return {"corrupted gzip stream (incomplete gzip footer)", true};
        case bio::gzip::bad_method:
            return {"corrupted gzip stream (unknown compression method)"};
        default:
            if (g->zlib_error_code() == Z_BUF_ERROR)
                return {"corrupted gzip stream (unexpected end)", true};
            return {"corrupted gzip stream (invalid compressed data)"};
        }
    }
    if (const auto* b = dynamic_cast<const bio::bzip2_error*>(&e)) {
        if (b->error() == bio::bzip2::unexpected_eof)
            return {"corrupted bzip2 stream (unexpected end)", true};
        if (b->error() == bio::bzip2::data_error_magic)
            return {"corrupted bzip2 stream (bad bzip2 magic)"};
        return {"corrupted bzip2 stream (invalid compressed data)"};
    }
    if (const auto* x = dynamic_cast<const bio::lzma_error*>(&e)) {
        if (x->error() == bio::lzma::buf_error)
            return {"corrupted xz stream (unexpected end)", true};
        return {"corrupted xz stream (invalid compressed data)"};
    }
    if (dynamic_cast<const bio::zstd_error*>(&e))
        return {"corrupted zstd stream (invalid compressed data)"};
    if (const auto* s = dynamic_cast<const std::system_error*>(&e))
        return {std::string("read error (") + s->code().message() + ")"};
    return {"corrupted " + name + " (" + e.what() + ")"};
}

template <class T> T load(const char* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
template <class T> void store(char* p, T v) {
    std::memcpy(p, &v, sizeof v);
}

void encodeHeader(const Header& h, char* b) {
    std::memset(b, 0, headerBytes);
    std::memcpy(b, fileMagic, sizeof fileMagic);
    store<uint32_t>(b + 8, h.version);
    store<uint32_t>(b + 12, byteOrderMark);
    store<uint32_t>(b + 16, uint32_t(headerBytes));
    store<uint32_t>(b + 20, 0);
    store<uint64_t>(b + 24, h.payloadBytes);
    store<uint64_t>(b + 32, h.step);
    store<double>(b + 40, h.time);
    store<uint64_t>(b + 48, h.particles);
    store<uint32_t>(b + 60, crc32Of(0, b, 60));
}

// Checks the first `n` bytes of a header; "" when it is complete and valid. The magic and version
// are checked first, as they are the only fields every format version has at the same place.
std::string decodeHeader(const char* b, size_t n, Header& h) {
    if (std::memcmp(b, fileMagic, std::min(n, sizeof fileMagic)) != 0)
        return "not a dem checkpoint (bad magic)";
    if (n >= 12) {
        h.version = load<uint32_t>(b + 8);
        uint32_t swapped = h.version;
        swapped = (swapped >> 24) | ((swapped >> 8) & 0xff00) | ((swapped << 8) & 0xff0000) |
                  (swapped << 24);
        if (h.version > checkpointFormatVersion &&
            !(swapped >= 1 && swapped <= checkpointFormatVersion))
            return fmt::format("format version {} is newer than this program supports ({})",
                               h.version, checkpointFormatVersion);
    }
    if (n >= 16 && load<uint32_t>(b + 12) != byteOrderMark) {
        if (load<uint32_t>(b + 12) == 0x04030201)
            return "written on a machine of the other byte order (checkpoints are not portable "
                   "across byte orders)";
        return "corrupted header (bad byte-order mark)";
    }
    if (n >= 12 && h.version == 0)
        return "corrupted header (format version 0)";
    if (n < headerBytes)
        return fmt::format("truncated (expected a {}-byte header, got {} bytes)", headerBytes, n);
    if (load<uint32_t>(b + 60) != crc32Of(0, b, 60))
        return "corrupted header (header checksum mismatch)";
    if (load<uint32_t>(b + 16) != headerBytes || load<uint32_t>(b + 20) != 0 ||
        load<uint32_t>(b + 56) != 0)
        return "corrupted header (unexpected header length or flags)";
    h.payloadBytes = load<uint64_t>(b + 24);
    h.step = load<uint64_t>(b + 32);
    h.time = load<double>(b + 40);
    h.particles = load<uint64_t>(b + 48);
    return "";
}

} // namespace

bool loadFile(const std::string& path, bool headerOnly, LoadedFile& out, std::string& error) {
    out = LoadedFile{};
    auto fail = [&](const std::string& what) {
        error = quoted(path) + ": " + what;
        return false;
    };
    FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0)
        return fail("cannot open (" + errnoText(errno) + ")");
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0)
        return fail("cannot stat (" + errnoText(errno) + ")");
    if (S_ISDIR(st.st_mode))
        return fail("is a directory, not a checkpoint file");
    out.fileBytes = uint64_t(st.st_size);
    unsigned char first[8];
    ssize_t n = 0;
    do
        n = ::pread(fd.get(), first, sizeof first, 0);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return fail("read error (" + errnoText(errno) + ")");
    if (n == 0)
        return fail("empty file");

    // The content decides the decompressor; a name promising another compression is an error.
    const std::optional<Compression> content = sniff(first, size_t(n));
    Compression named = Compression::None;
    std::string ignored;
    const bool hasEnding = compressionFromPath(path, named, ignored);
    if (hasEnding && content != named) {
        if (named == Compression::None)
            return fail(content ? fmt::format("not a dem checkpoint (bad magic; the content is "
                                              "{}-compressed, so the name should end in {})",
                                              compressionName(*content), endingOf(*content))
                                : "not a dem checkpoint (bad magic)");
        const std::string expected = fmt::format(
            "not {} {} file", named == Compression::Xz ? "an" : "a", compressionName(named));
        if (!content)
            return fail(expected + fmt::format(" (bad {} magic)", compressionName(named)));
        if (*content == Compression::None)
            return fail(expected +
                        " (it holds an uncompressed checkpoint, which should end in .dem)");
        return fail(expected + fmt::format(" (the content is {}-compressed, so the name should "
                                           "end in {})",
                                           compressionName(*content), endingOf(*content)));
    }
    if (!content)
        return fail("not a dem checkpoint (bad magic)");
    out.compression = *content;

    FdSource source;
    source.fd = fd.get();
    char header[headerBytes];
    char trailer[trailerBytes];
    size_t headerGot = 0, payloadGot = 0, trailerGot = 0;
    enum { InHeader, InPayload, InTrailer, AtEnd } phase = InHeader;
    auto truncated = [&]() {
        // The decompressor delivers nothing of the chunk in which its input ends (a file cut in
        // half may count 0 bytes of a header that it decoded long ago), so neither a count nor
        // the part of the checkpoint reached says where the file was cut.
        if (out.compression != Compression::None)
            return fail(fmt::format("truncated (the {} stream ends early)",
                                    compressionName(out.compression)));
        switch (phase) {
        case InHeader:
            return fail(fmt::format("truncated (expected a {}-byte header, got {} bytes)",
                                    headerBytes, headerGot));
        case InPayload:
            return fail(fmt::format("truncated (expected {} payload bytes, got {})",
                                    out.header.payloadBytes, payloadGot));
        case InTrailer:
            return fail(fmt::format("truncated (expected a {}-byte trailer, got {} bytes)",
                                    trailerBytes, trailerGot));
        default:
            return fail(
                fmt::format("truncated ({} stream ends early)", compressionName(out.compression)));
        }
    };
    try {
        bio::filtering_istream in;
        pushDecompressor(in, out.compression);
        in.push(boost::ref(source), streamBuffer);
        in.exceptions(std::ios::badbit);
        // Reads up to n bytes, counting them in `got` chunk by chunk (kept if a chunk throws).
        auto readInto = [&](char* dst, size_t want, size_t& got) {
            constexpr size_t chunk = size_t(1) << 16;
            while (got < want) {
                in.read(dst + got, std::streamsize(std::min(chunk, want - got)));
                const size_t k = size_t(in.gcount());
                got += k;
                if (k == 0 || !in)
                    break;
            }
        };
        // Before blaming the content of a compressed file, lets the decompressor check the rest of
        // its stream: a damaged compressed block decodes to garbage before its CRC is checked.
        auto drain = [&] {
            if (out.compression == Compression::None)
                return;
            std::vector<char> sink(size_t(1) << 16);
            size_t got = 0;
            for (size_t total = 0; total < (size_t(1) << 28); total += got) {
                got = 0;
                readInto(sink.data(), sink.size(), got);
                if (got < sink.size())
                    break;
            }
        };
        readInto(header, headerBytes, headerGot);
        const std::string why = decodeHeader(header, headerGot, out.header);
        if (!why.empty()) {
            if (why.find("newer than") == std::string::npos &&
                why.find("other byte order") == std::string::npos)
                drain();
            return fail(why);
        }
        out.headerOk = true;
        if (headerOnly)
            return true;

        // Memory for the payload is reserved up to a plausible bound (a length that passed the
        // header checksum but is absurd cannot allocate much) and grows beyond it as data arrives.
        phase = InPayload;
        const uint64_t expected = out.header.payloadBytes;
        std::string& payload = out.payload;
        const uint64_t plausible = out.compression == Compression::None
                                       ? out.fileBytes
                                       : 64 * out.fileBytes + (uint64_t(1) << 20);
        payload.reserve(size_t(std::min(expected, plausible)));
        while (payloadGot < expected) {
            const size_t target = size_t(std::min<uint64_t>(
                expected,
                std::max<uint64_t>({2 * payload.size(), payload.capacity(), uint64_t(1) << 20})));
            payload.resize(target);
            const size_t before = payloadGot;
            readInto(payload.data(), target, payloadGot);
            if (payloadGot == before || payloadGot < target)
                break;
        }
        if (payloadGot < expected) {
            payload.resize(payloadGot);
            return truncated();
        }
        phase = InTrailer;
        readInto(trailer, trailerBytes, trailerGot);
        if (trailerGot < trailerBytes)
            return truncated();
        phase = AtEnd;
        char extra;
        size_t extraGot = 0;
        readInto(&extra, 1, extraGot); // also makes the decompressor check its own footer
        if (extraGot) {
            drain();
            return fail("trailing data after the end of the checkpoint (file is corrupted)");
        }
    } catch (const std::bad_alloc&) {
        throw; // not the file's fault (Checkpoint.hpp)
    } catch (const std::exception& e) {
        // A damaged stream is reported as such; a stream that merely ends early is a truncated
        // file, unless what arrived of the header already shows it is not a checkpoint.
        const StreamError s = describe(e, out.compression);
        if (!s.endedEarly || !source.eof)
            return fail(s.what);
        if (phase == InHeader && headerGot > 0) {
            const std::string why = decodeHeader(header, headerGot, out.header);
            if (!why.empty() && why.rfind("truncated", 0) != 0)
                return fail(why);
        }
        return truncated();
    }

    const uint32_t crc = load<uint32_t>(trailer);
    if (std::memcmp(trailer + 16, endMagic, sizeof endMagic) != 0 || load<uint32_t>(trailer + 4))
        return fail("corrupted trailer (file is corrupted)");
    if (load<uint64_t>(trailer + 8) != out.header.payloadBytes)
        return fail("trailer and header disagree on the payload length (file is corrupted)");
    if (crc != crc32Of(0, out.payload.data(), out.payload.size()))
        return fail("checksum mismatch (file is corrupted)");
    return true;
}

} // namespace ckpt

using namespace ckpt;

const char* compressionName(Compression c) {
    switch (c) {
    case Compression::None:
        return "none";
    case Compression::Gzip:
        return "gzip";
    case Compression::Bzip2:
        return "bzip2";
    case Compression::Xz:
        return "xz";
    case Compression::Zstd:
        return "zstd";
    }
    return "unknown";
}

bool compressionFromPath(const std::string& path, Compression& c, std::string& error) {
    // Longest endings first is not needed: ".dem" only matches names ending exactly in ".dem".
    for (const Ending& e : endings) {
        if (endsWith(path, e.suffix)) {
            c = e.compression;
            return true;
        }
    }
    error = quoted(path) +
            ": unknown checkpoint file ending (use .dem, .dem.gz, .dem.bz2, .dem.xz or .dem.zst)";
    return false;
}

bool isCheckpointPath(const std::string& path) {
    Compression c;
    std::string ignored;
    return compressionFromPath(path, c, ignored);
}

bool writeCheckpoint(const std::string& path, const Simulation& sim, const CheckpointMeta& meta,
                     int level, std::string& error) {
    try {
        Compression compression;
        if (!compressionFromPath(path, compression, error))
            return false;
        if (level != -1 && (level < 1 || level > 9)) {
            error = quoted(path) +
                    fmt::format(": compression level {} is out of range (1 to 9, or -1 for the "
                                "default)",
                                level);
            return false;
        }
        std::string why;
        if (!checkSimulationConsistency(sim, why)) {
            error = quoted(path) + ": refusing to write an inconsistent simulation (" + why + ")";
            return false;
        }
        CheckpointMeta stored = meta;
        stored.programVersion = DEM_VERSION;
        Simulation& s = const_cast<Simulation&>(sim); // the counter and writer only read it
        Counter counter;
        io(counter, stored);
        io(counter, s);
        Header header;
        header.payloadBytes = counter.size;
        header.step = sim.step;
        header.time = sim.time;
        header.particles = sim.particles.size();

        return writeFileAtomically(
            path,
            [&](int fd, std::string& why) {
                int sinkError = 0;
                try {
                    bio::filtering_ostream out;
                    pushSink(out, compression, level, FdSink{fd, &sinkError});
                    out.exceptions(std::ios::badbit | std::ios::failbit);
                    char head[headerBytes];
                    encodeHeader(header, head);
                    out.write(head, headerBytes);
                    uint32_t crc = 0;
                    uint64_t written = 0;
                    Writer w([&](const char* p, size_t n) {
                        crc = crc32Of(crc, p, n);
                        written += n;
                        out.write(p, std::streamsize(n));
                    });
                    io(w, stored);
                    io(w, s);
                    w.flush();
                    if (written != header.payloadBytes) {
                        why = fmt::format("internal error: payload of {} bytes, {} announced",
                                          written, header.payloadBytes);
                        return false;
                    }
                    char tail[trailerBytes];
                    store<uint32_t>(tail, crc);
                    store<uint32_t>(tail + 4, 0);
                    store<uint64_t>(tail + 8, written);
                    std::memcpy(tail + 16, endMagic, sizeof endMagic);
                    out.write(tail, trailerBytes);
                    out.reset(); // flushes and closes the compressor (writes its footer)
                } catch (const std::exception& e) {
                    why = sinkError ? errnoText(sinkError) : exceptionText(e);
                    return false;
                }
                if (sinkError) {
                    why = errnoText(sinkError);
                    return false;
                }
                return true;
            },
            Durability::Synced, error);
    } catch (const std::exception& e) {
        error = quoted(path) + ": cannot write (" + exceptionText(e) + ")";
        return false;
    }
}

namespace {

// Parses a verified payload into fresh values; `sim` and `meta` are assigned only on success.
bool parsePayload(const std::string& path, const std::string& payload, uint32_t version,
                  Simulation& sim, CheckpointMeta& meta, std::string& error) {
    try {
        CheckpointMeta m;
        Simulation s;
        Reader r(payload.data(), payload.size(), version);
        io(r, m);
        io(r, s);
        if (r.remaining())
            throw FormatError(fmt::format("{} bytes after the last section", r.remaining()));
        std::string why;
        if (!checkSimulationConsistency(s, why))
            throw FormatError("inconsistent simulation: " + why);
        sim = std::move(s);
        meta = std::move(m);
        return true;
    } catch (const std::bad_alloc&) {
        throw; // not the file's fault (Checkpoint.hpp)
    } catch (const std::exception& e) {
        error = quoted(path) + ": malformed payload (" + e.what() + ")";
    }
    return false;
}

} // namespace

bool readCheckpoint(const std::string& path, Simulation& sim, CheckpointMeta& meta,
                    std::string& error) {
    try {
        LoadedFile file;
        if (!loadFile(path, false, file, error))
            return false;
        return parsePayload(path, file.payload, file.header.version, sim, meta, error);
    } catch (const std::bad_alloc&) {
        throw; // not the file's fault (Checkpoint.hpp)
    } catch (const std::exception& e) {
        error = quoted(path) + ": cannot read (" + e.what() + ")";
        return false;
    }
}

bool inspectCheckpoint(const std::string& path, CheckpointInfo& info, std::string& error) {
    try {
        info = CheckpointInfo{};
        info.path = path;
        LoadedFile file;
        const bool ok = loadFile(path, false, file, error);
        info.fileBytes = file.fileBytes;
        if (file.headerOk) {
            info.compression = compressionName(file.compression);
            info.formatVersion = file.header.version;
            info.step = file.header.step;
            info.time = file.header.time;
            info.particles = file.header.particles;
        }
        if (!ok)
            return false;
        info.checksumOk = true;
        Simulation sim;
        CheckpointMeta meta;
        if (!parsePayload(path, file.payload, file.header.version, sim, meta, error))
            return false;
        info.programVersion = meta.programVersion;
        info.deckName = meta.deckName;
        info.stage = sim.stage;
        info.stageStarted = sim.stageStarted;
        info.stages = sim.stages.size();
        info.runState = meta.runState;
        info.particles = sim.particles.size();
        size_t contacts = sim.pairs.touchingCount();
        for (uint8_t t : sim.obstacleContacts.touching)
            contacts += t;
        info.contacts = contacts;
        info.stateDigest = stateDigest(sim);
        info.cell = sim.cell;
        info.stressControl = sim.stressControl;
        if (sim.stressControl.axes != 0)
            info.cellStress = cellStress(sim).diagonal();
        for (const Motion& m : sim.motions)
            if (m.kind == Motion::Kind::Servo)
                info.servos.push_back({sim.obstacles.objects[size_t(m.object)].name, m.servoForce,
                                       servoPush(sim, m)});
        return true;
    } catch (const std::bad_alloc&) {
        throw; // not the file's fault (Checkpoint.hpp)
    } catch (const std::exception& e) {
        error = quoted(path) + ": cannot read (" + e.what() + ")";
        return false;
    }
}

} // namespace dem
