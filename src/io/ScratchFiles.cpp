#include "io/ScratchFiles.hpp"

#include "io/FileDescriptor.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <utility>

namespace dem {

std::string temporaryDirectory() {
    const char* dir = std::getenv("TMPDIR");
    return dir && *dir ? dir : "/tmp";
}

namespace {

// Sets `path` to "<temporaryDirectory()>/<prefix>XXXXXX" and has `make` (mkstemp's or mkdtemp's
// call) create it; false with `error` set ("cannot create a temporary WHAT in DIR: REASON").
template <class Make>
bool makeScratch(const char* prefix, const char* what, std::string& path, std::string& error,
                 Make&& make) {
    const std::string dir = temporaryDirectory();
    path = dir + "/" + prefix + "XXXXXX";
    if (make(path.data()))
        return true;
    const int e = errno; // before the message is made, which may change it
    error = std::string("cannot create a temporary ") + what + " in " + dir + ": " + errnoText(e);
    return false;
}

} // namespace

ScratchFile::~ScratchFile() {
    closeFd();
    if (made_)
        ::unlink(path_.c_str());
}

bool ScratchFile::make(const char* prefix, std::string& error) {
    made_ = makeScratch(prefix, "file", path_, error, [this](char* name) {
        fd_ = ::mkstemp(name);
        return fd_ >= 0;
    });
    return made_;
}

void ScratchFile::closeFd() {
    if (fd_ >= 0)
        ::close(fd_);
    fd_ = -1;
}

ScratchDirectory::~ScratchDirectory() {
    if (!made_)
        return;
    const int dir = ::open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
        for (const std::string& name : files_)
            ::unlinkat(dir, name.c_str(), 0);
        ::close(dir);
    }
    ::rmdir(path_.c_str());
}

bool ScratchDirectory::make(const char* prefix, std::vector<std::string> files,
                            std::string& error) {
    files_ = std::move(files);
    made_ = makeScratch(prefix, "directory", path_, error,
                        [](char* name) { return ::mkdtemp(name) != nullptr; });
    return made_;
}

} // namespace dem
