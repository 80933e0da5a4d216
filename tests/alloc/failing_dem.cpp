// The dem program with one allocation failing: the one after the first DEM_FAIL_ALLOCATION made
// outside parallel regions once main has started (FailingNew.hpp). src/main.cpp is compiled into
// this executable with its main renamed demMain. Run by test_failing_allocations.cpp.
#include "FailingNew.hpp"

#include <cstdlib>

int demMain(int argc, char** argv);

int main(int argc, char** argv) {
    if (const char* k = std::getenv("DEM_FAIL_ALLOCATION"))
        demtest::failAllocationAfter(std::strtol(k, nullptr, 10));
    // The jobs `dem batch` starts run this program too: they inherit no failure, so that only the
    // batch's own allocations are failed.
    ::unsetenv("DEM_FAIL_ALLOCATION");
    return demMain(argc, argv);
}
