#include "app/OutOfMemory.hpp"
#include "app/ExitCodes.hpp"

#include <atomic>
#include <cstdlib>
#include <exception>
#include <new>
#include <omp.h>
#include <unistd.h>

namespace dem {

namespace {

std::atomic<void (*)()> exitHook{nullptr};

// The end of the process once the message is out.
[[noreturn]] void exitOutOfMemory() {
    if (void (*hook)() = exitHook.load())
        hook();
    _exit(ExitFailed);
}

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
    exitOutOfMemory();
}

std::terminate_handler previousTerminate = nullptr;

// std::terminate, called when an exception reaches a function that may not throw. Some libraries
// allocate in those (nlohmann::json's destructor, toml++'s parser): when the exception is
// std::bad_alloc, the process ends as above, with the message and exit status 1.
void onTerminate() {
    if (const std::exception_ptr e = std::current_exception()) {
        try {
            std::rethrow_exception(e);
        } catch (const std::bad_alloc&) {
            const ssize_t written =
                write(STDERR_FILENO, outOfMemoryMessage, sizeof outOfMemoryMessage - 1);
            (void)written;
            exitOutOfMemory();
        } catch (...) {
        }
    }
    if (previousTerminate)
        previousTerminate();
    std::abort();
}

} // namespace

void setOutOfMemoryExitHook(void (*hook)()) {
    exitHook.store(hook);
}

void installOutOfMemoryHandler() {
    std::set_new_handler(onOutOfMemory);
    previousTerminate = std::set_terminate(onTerminate);
}

} // namespace dem
