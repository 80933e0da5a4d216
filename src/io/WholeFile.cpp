#include "io/WholeFile.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

namespace dem {

std::string FileRead::message(const std::string& path) const {
    return std::string(opened ? "cannot read '" : "cannot open '") + path +
           "': " + std::strerror(error);
}

FileRead readWholeFile(const std::string& path, std::string& text, size_t limit) {
    FileRead r;
    text.clear();
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOMEM)
            throw std::bad_alloc();
        r.error = errno;
        return r;
    }
    r.opened = true;
    struct FdCloser {
        int fd;
        ~FdCloser() { ::close(fd); }
    } closer{fd};
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        if (uint64_t(st.st_size) > limit) { // a sparse file of a terabyte reserves nothing
            r.error = EFBIG;
            return r;
        }
        text.reserve(size_t(st.st_size));
    }
    char buffer[1 << 16];
    for (;;) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n > 0 && size_t(n) > limit - text.size()) {
            r.error = EFBIG;
            return r;
        }
        if (n > 0)
            text.append(buffer, size_t(n));
        else if (n == 0)
            return r;
        else if (errno != EINTR) {
            r.error = errno;
            return r;
        }
    }
}

bool readWholeFile(const std::string& path, std::string& text, std::string& error) {
    const FileRead r = readWholeFile(path, text);
    if (!r)
        error = r.message(path);
    return bool(r);
}

} // namespace dem
