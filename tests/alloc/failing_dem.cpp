// The dem program with one allocation failing: the one after the first DEM_FAIL_ALLOCATION made
// outside parallel regions once main has started (FailingNew.hpp). src/main.cpp is compiled into
// this executable with its main renamed demMain. Run by test_failing_allocations.cpp. With
// DEM_COUNT_PARALLEL_ALLOCATIONS set, the count of allocations made inside parallel regions
// (none of which fails) is written to the file it names when demMain returns.
#include "FailingNew.hpp"

#include <cstdlib>
#include <fstream>
#include <string>

int demMain(int argc, char** argv);

// Files are not synced: these tests check what a run does when memory runs out, not durability,
// and the twenty fsyncs of a run waited on the disk for more than half of each attempt's time on a
// loaded machine (the tests run thousands of attempts).
extern "C" int fsync(int) {
    return 0;
}

int main(int argc, char** argv) {
    if (const char* k = std::getenv("DEM_FAIL_ALLOCATION"))
        demtest::failAllocationAfter(std::strtol(k, nullptr, 10));
    const char* count = std::getenv("DEM_COUNT_PARALLEL_ALLOCATIONS");
    const std::string countTo = count ? count : "";
    // The jobs `dem batch` starts run this program too: they inherit no failure, so that only the
    // batch's own allocations are failed, and do not write over the count.
    ::unsetenv("DEM_FAIL_ALLOCATION");
    ::unsetenv("DEM_COUNT_PARALLEL_ALLOCATIONS");
    const int code = demMain(argc, argv);
    if (!countTo.empty())
        std::ofstream(countTo) << demtest::allocationsInParallel() << '\n';
    return code;
}
