#pragma once
// Temporary files of gnuplot runs (its messages, a snapshot's script and data), made under
// $TMPDIR (default /tmp) and removed when their owner goes, whether it returns or throws. Removing
// them takes nothing from the heap: it may happen while running out of memory unwinds the stack.
#include <string>
#include <vector>

namespace dem {

// $TMPDIR, or /tmp when it is unset or empty.
std::string temporaryDirectory();

// A file made by mkstemp as "<temporaryDirectory()>/<prefix>XXXXXX", open for reading and
// writing; closed and removed on destruction.
class ScratchFile {
public:
    ScratchFile() = default;
    ScratchFile(const ScratchFile&) = delete;
    ScratchFile& operator=(const ScratchFile&) = delete;
    ~ScratchFile();

    // False with `error` set ("cannot create a temporary file in DIR: REASON") on failure.
    bool make(const char* prefix, std::string& error);
    const std::string& path() const { return path_; }
    int fd() const { return fd_; }
    void closeFd(); // the file stays until destruction

private:
    std::string path_;
    int fd_ = -1;
    bool made_ = false;
};

// A directory made by mkdtemp like ScratchFile's file, for the files named when it is made (a
// listing would take memory); removed with them on destruction.
class ScratchDirectory {
public:
    ScratchDirectory() = default;
    ScratchDirectory(const ScratchDirectory&) = delete;
    ScratchDirectory& operator=(const ScratchDirectory&) = delete;
    ~ScratchDirectory();

    bool make(const char* prefix, std::vector<std::string> files, std::string& error);
    // The path of files[k].
    std::string file(size_t k) const { return path_ + "/" + files_[k]; }

private:
    std::string path_;
    std::vector<std::string> files_;
    bool made_ = false;
};

} // namespace dem
