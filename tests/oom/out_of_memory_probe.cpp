// Allocates more than any machine's address space holds (2^50 bytes) with dem's out-of-memory
// handler installed: first outside any parallel region, where std::bad_alloc must reach the
// caller, then inside one on its second thread, where the handler must end the process with exit
// status 1 and its message (without it, std::terminate aborts: status 134). Run by
// test_out_of_memory.cpp; an executable of its own, since the handler ends the process.
#include "app/OutOfMemory.hpp"

#include <cstdio>
#include <new>
#include <omp.h>

namespace {
void* volatile kept; // a new-expression's allocation may be left out; a stored call may not
constexpr size_t tooMuch = size_t(1) << 50;
} // namespace

int main() {
    dem::installOutOfMemoryHandler();
    try {
        kept = ::operator new(tooMuch);
        std::puts("allocated outside a parallel region");
        return 4;
    } catch (const std::bad_alloc&) {
        std::puts("std::bad_alloc outside a parallel region");
        std::fflush(stdout);
    }
#pragma omp parallel num_threads(2)
    if (omp_get_thread_num() == omp_get_num_threads() - 1)
        kept = ::operator new(tooMuch);
    std::puts("allocated inside a parallel region");
    return 5;
}
