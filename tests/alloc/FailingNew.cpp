#include "FailingNew.hpp"
#include "ReplacedNew.hpp"

#include <atomic>
#include <cstdlib>
#include <execinfo.h>
#include <fcntl.h>
#include <omp.h>
#include <unistd.h>

namespace {
std::atomic<long> allocationsBeforeFailure{-1};
std::atomic<bool> failed{false};
std::atomic<long> inParallel{0};

// With DEM_FAIL_REPORT set, the failing allocation's call stack is written to that file: the
// test running the program learns that the failure was made, and a reader of a failed test where.
void report() {
    const char* path = std::getenv("DEM_FAIL_REPORT");
    if (!path)
        return;
    const int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    void* frames[64];
    ::backtrace_symbols_fd(frames, ::backtrace(frames, 64), fd);
    ::close(fd);
}

// backtrace loads the unwinder when first called: not from within operator new.
const bool unwinderLoaded = [] {
    void* frame;
    return ::backtrace(&frame, 1) == 1;
}();
} // namespace

void* testAllocate(size_t n, size_t align) {
    if (omp_get_level() > 0)
        inParallel.fetch_add(1, std::memory_order_relaxed);
    else if (allocationsBeforeFailure.load(std::memory_order_relaxed) >= 0 &&
             allocationsBeforeFailure.fetch_sub(1, std::memory_order_relaxed) == 0) {
        failed = true;
        report();
        throw std::bad_alloc();
    }
    return demtest::heapAllocate(n, align);
}

// Under the sanitizers: what a library leaves unfreed when an allocation fails in its constructor
// (Boost's zstd filter) is not what these tests check, so the leak check is off; and one fault of
// Boost's on that path is suppressed (ubsan.supp). The environment's options come on top.
extern "C" const char* __asan_default_options() {
    return "detect_leaks=0";
}
extern "C" const char* __ubsan_default_options() {
    return "suppressions=" DEM_UBSAN_SUPPRESSIONS;
}

namespace demtest {

void failAllocationAfter(long k) {
    failed = false;
    allocationsBeforeFailure = k;
}

bool allocationFailed() {
    return failed;
}

long allocationsInParallel() {
    return inParallel.load();
}

} // namespace demtest
