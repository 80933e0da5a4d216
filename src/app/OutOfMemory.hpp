#pragma once
// Running out of memory (under a limit on the address space such as ulimit -v) ends a command with
// a message and exit status 1, never an abort. Outside a parallel region operator new throws
// std::bad_alloc as usual: the run catches it (Runner.cpp), main the rest. An exception cannot
// leave an OpenMP parallel region (the compiler wraps the region's body in a call to
// std::terminate), and the neighbour lists grow inside one, as do a loaded checkpoint's contact
// records: there the handler installed here prints the message and ends the process at once.
// So does the terminate handler installed with it, when std::bad_alloc reaches a function that may
// not throw (nlohmann::json's destructor and toml++'s parser allocate in such functions).
namespace dem {
void installOutOfMemoryHandler();
// A function those handlers call before they end the process, for what must not be left behind
// (dem batch stops and waits for its running jobs); it may not allocate. nullptr: none.
void setOutOfMemoryExitHook(void (*hook)());
// The messages of those handlers, for the tests.
inline constexpr const char outOfMemoryInParallelMessage[] =
    "dem: error: out of memory in a parallel loop (a run's summary.json is not updated; its "
    "checkpoints are kept)\n";
inline constexpr const char outOfMemoryMessage[] =
    "dem: error: out of memory (a run's summary.json may not record it; its checkpoints are "
    "kept)\n";
} // namespace dem
