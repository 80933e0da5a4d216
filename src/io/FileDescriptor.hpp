#pragma once
// An open file descriptor that closes itself, a write(2) loop that writes all it is given, and
// the text of an errno value.
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <string>
#include <system_error>
#include <utility>

namespace dem {

class FileDescriptor {
public:
    explicit FileDescriptor(int fd = -1) : fd_(fd) {}
    FileDescriptor(const FileDescriptor&) = delete;
    FileDescriptor& operator=(const FileDescriptor&) = delete;
    ~FileDescriptor() {
        if (fd_ >= 0)
            ::close(fd_);
    }
    int get() const { return fd_; }
    int release() { return std::exchange(fd_, -1); }

private:
    int fd_;
};

// Writes the n bytes at p, again after a short write or an interrupted one. Returns 0, or the
// errno of the failed write (EIO for a write that wrote nothing without saying why).
inline int writeAll(int fd, const char* p, size_t n) {
    size_t done = 0;
    while (done < n) {
        const ssize_t w = ::write(fd, p + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? errno : EIO;
        done += size_t(w);
    }
    return 0;
}

// "No such file or directory" for ENOENT.
inline std::string errnoText(int e) {
    return std::generic_category().message(e);
}

} // namespace dem
