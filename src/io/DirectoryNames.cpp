#include "io/DirectoryNames.hpp"

#include <dirent.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <new>

namespace dem {

bool directoryNames(const std::string& dir, std::vector<std::string>& names, std::error_code& ec) {
    names.clear();
    ec.clear();
    const std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
    if (!d) {
        if (errno == ENOMEM)
            throw std::bad_alloc();
        ec.assign(errno, std::generic_category());
        return false;
    }
    for (;;) {
        errno = 0;
        const dirent* e = ::readdir(d.get());
        if (!e)
            break;
        if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
            names.emplace_back(e->d_name);
    }
    if (errno != 0) {
        ec.assign(errno, std::generic_category());
        return false;
    }
    return true;
}

} // namespace dem
