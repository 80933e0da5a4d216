#pragma once
// Reading a whole file into a string. Streams' `out << file.rdbuf()` is not used for this: it
// swallows an exception raised while copying, a failed allocation among them, and leaves part of
// the file, which would then be reported as a bad deck or table instead of running out of memory.
#include <cstdint>
#include <string>

namespace dem {

// The most a deck or a parameter table may hold: far more than any written by hand or script.
constexpr size_t maxInputFileBytes = size_t(64) << 20;

struct FileRead {
    bool opened = false; // the file could be opened
    int error = 0;       // errno of the failed open or read; 0 when the whole file was read
    explicit operator bool() const { return error == 0; }
    // "cannot open 'PATH': REASON" or "cannot read 'PATH': REASON".
    std::string message(const std::string& path) const;
};

// Replaces `text` with the content of the file at `path`. Throws std::bad_alloc. A file longer
// than `limit` bytes (/dev/zero given as a deck never ends) stops the read with error EFBIG.
FileRead readWholeFile(const std::string& path, std::string& text, size_t limit = SIZE_MAX);
// Same, with FileRead::message in `error` on failure.
bool readWholeFile(const std::string& path, std::string& text, std::string& error);

} // namespace dem
