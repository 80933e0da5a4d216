#pragma once
// Runs a write with the process's file size limit lowered, so that it fails with EFBIG (File too
// large) part way: SIGXFSZ, which would end the process, is ignored meanwhile. Limit and signal
// are restored however the write returns.
#include <sys/resource.h>

#include <csignal>
#include <stdexcept>

namespace demtest {

template <class Write> auto withFileSizeLimit(rlim_t bytes, Write&& write) {
    struct Limit {
        struct rlimit saved {};
        void (*previous)(int) = SIG_DFL;
        explicit Limit(rlim_t bytes) {
            if (::getrlimit(RLIMIT_FSIZE, &saved) != 0)
                throw std::runtime_error("getrlimit failed");
            struct rlimit limited = saved;
            limited.rlim_cur = bytes;
            previous = std::signal(SIGXFSZ, SIG_IGN);
            if (::setrlimit(RLIMIT_FSIZE, &limited) != 0) {
                std::signal(SIGXFSZ, previous);
                throw std::runtime_error("setrlimit failed");
            }
        }
        ~Limit() {
            ::setrlimit(RLIMIT_FSIZE, &saved);
            std::signal(SIGXFSZ, previous);
        }
    } limit(bytes);
    return write();
}

} // namespace demtest
