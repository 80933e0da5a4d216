#include "io/ScratchFiles.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace dem {

namespace {

std::string cannotCreate(const char* what, const std::string& dir, int e) {
    return std::string("cannot create a temporary ") + what + " in " + dir + ": " +
           std::strerror(e);
}

} // namespace

std::string temporaryDirectory() {
    const char* dir = std::getenv("TMPDIR");
    return dir && *dir ? dir : "/tmp";
}

ScratchFile::~ScratchFile() {
    closeFd();
    if (made_)
        ::unlink(path_.c_str());
}

bool ScratchFile::make(const char* prefix, std::string& error) {
    const std::string dir = temporaryDirectory();
    path_ = dir + "/" + prefix + "XXXXXX";
    fd_ = ::mkstemp(path_.data());
    if (fd_ < 0) {
        const int e = errno; // before the message is made, which may change it
        error = cannotCreate("file", dir, e);
        return false;
    }
    made_ = true;
    return true;
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
    const std::string dir = temporaryDirectory();
    path_ = dir + "/" + prefix + "XXXXXX";
    files_ = std::move(files);
    if (!::mkdtemp(path_.data())) {
        const int e = errno;
        error = cannotCreate("directory", dir, e);
        return false;
    }
    made_ = true;
    return true;
}

} // namespace dem
