#include "app/OutOfMemory.hpp"
#include "app/ExitCodes.hpp"

#include <atomic>
#include <new>
#include <omp.h>
#include <unistd.h>

namespace dem {

namespace {

// operator new calls this when the allocation fails. omp_get_level counts the enclosing parallel
// regions, also those run by one thread (`if` false), whose bodies are wrapped all the same.
// Nothing here allocates (the heap is exhausted): a fixed message, written unbuffered.
void onOutOfMemory() {
    if (omp_get_level() == 0)
        throw std::bad_alloc();
    // Threads running out together: the first says so and ends the process, the others wait.
    static std::atomic_flag ending;
    if (ending.test_and_set())
        for (;;)
            pause();
    const ssize_t written =
        write(STDERR_FILENO, outOfMemoryInParallelMessage, sizeof outOfMemoryInParallelMessage - 1);
    (void)written; // nothing more to do when stderr is gone
    _exit(ExitFailed);
}

} // namespace

void installOutOfMemoryHandler() {
    std::set_new_handler(onOutOfMemory);
}

} // namespace dem
