#pragma once
// Runs a write with the process's file size limit lowered, so that it fails with EFBIG (File too
// large) part way: SIGXFSZ, which would end the process, is ignored meanwhile.
#include <sys/resource.h>

#include <csignal>
#include <stdexcept>

namespace demtest {

template <class Write> auto withFileSizeLimit(rlim_t bytes, Write&& write) {
    struct rlimit saved {};
    if (::getrlimit(RLIMIT_FSIZE, &saved) != 0)
        throw std::runtime_error("getrlimit failed");
    struct rlimit limited = saved;
    limited.rlim_cur = bytes;
    const auto previous = std::signal(SIGXFSZ, SIG_IGN);
    if (::setrlimit(RLIMIT_FSIZE, &limited) != 0) {
        std::signal(SIGXFSZ, previous);
        throw std::runtime_error("setrlimit failed");
    }
    const auto result = write();
    ::setrlimit(RLIMIT_FSIZE, &saved);
    std::signal(SIGXFSZ, previous);
    return result;
}

} // namespace demtest
