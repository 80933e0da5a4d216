#include "io/AtomicFile.hpp"

#include "io/DirectoryNames.hpp"
#include "io/FileDescriptor.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <vector>

namespace dem {

namespace {

// The temporary file of an atomic write, removed unless it was renamed into place: on an error,
// and on an exception (running out of memory) anywhere before the rename.
class TemporaryFile {
public:
    explicit TemporaryFile(std::string path) : path_(std::move(path)) {}
    TemporaryFile(const TemporaryFile&) = delete;
    TemporaryFile& operator=(const TemporaryFile&) = delete;
    ~TemporaryFile() {
        if (!renamed_)
            ::unlink(path_.c_str());
    }
    const std::string& path() const { return path_; }
    void renamed() { renamed_ = true; }

private:
    std::string path_;
    bool renamed_ = false;
};

} // namespace

bool writeFileAtomically(const std::string& path,
                         const std::function<bool(int fd, std::string& why)>& fill,
                         Durability durability, std::string& error) {
    // Everything that allocates comes before the rename: after it, the file is in place and the
    // write must not be reported as failed for want of memory.
    const bool sync = durability == Durability::Synced;
    const std::string quoted = "'" + path + "'";
    const size_t slash = path.find_last_of('/');
    const std::string dir = slash == std::string::npos ? "."
                            : slash == 0               ? "/"
                                                       : path.substr(0, slash);
    std::string syncError = quoted + ": written, but the directory could not be synced (";
    syncError.reserve(syncError.size() + 256); // room for strerror's text and ')'
    TemporaryFile tmp(path + ".tmp-" + std::to_string(::getpid()));
    FileDescriptor fd(::open(tmp.path().c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    // errno is read before a message is made: making it may change errno.
    if (fd.get() < 0) {
        const int e = errno;
        error = quoted + ": cannot create the temporary file '" + tmp.path() + "' (" +
                errnoText(e) + ")";
        return false;
    }
    std::string why;
    if (!fill(fd.get(), why)) {
        error = quoted + ": write failed (" + why + ")";
        return false;
    }
    if (sync && ::fsync(fd.get()) != 0) {
        const int e = errno;
        error = quoted + ": fsync failed (" + errnoText(e) + ")";
        return false;
    }
    if (::close(fd.release()) != 0) {
        const int e = errno;
        error = quoted + ": close failed (" + errnoText(e) + ")";
        return false;
    }
    if (::rename(tmp.path().c_str(), path.c_str()) != 0) {
        const int e = errno;
        error = quoted + ": cannot rename the temporary file into place (" + errnoText(e) + ")";
        return false;
    }
    tmp.renamed();
    if (!sync)
        return true;
    // Make the rename durable. Some file systems cannot sync directories (EINVAL): not an error.
    FileDescriptor dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dfd.get() < 0 || (::fsync(dfd.get()) != 0 && errno != EINVAL && errno != ENOTSUP)) {
        const int e = errno;
        syncError.append(std::strerror(e)).push_back(')');
        error = std::move(syncError);
        return false;
    }
    return true;
}

bool writeTextAtomically(const std::string& path, std::string_view text, Durability durability,
                         std::string& error) {
    return writeFileAtomically(
        path,
        [text](int fd, std::string& why) {
            const int e = writeAll(fd, text.data(), text.size());
            if (e != 0)
                why = errnoText(e);
            return e == 0;
        },
        durability, error);
}

bool isAtomicWriteTemporary(std::string_view name) {
    const size_t at = name.rfind(".tmp-");
    if (at == std::string_view::npos || at == 0 || at + 5 == name.size())
        return false;
    const std::string_view pid = name.substr(at + 5);
    return std::all_of(pid.begin(), pid.end(), [](char c) { return c >= '0' && c <= '9'; });
}

void removeAtomicWriteTemporaries(const std::string& dir) {
    std::vector<std::string> names;
    std::error_code ec;
    directoryNames(dir, names, ec);
    for (const std::string& name : names)
        if (isAtomicWriteTemporary(name))
            ::unlink((dir + "/" + name).c_str());
}

} // namespace dem
