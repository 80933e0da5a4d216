#pragma once
// A global operator new that fails once on request (FailingNew.cpp), for the tests that run out of
// memory at each allocation in turn. Only allocations outside OpenMP parallel regions are counted
// and failed: inside one, dem's new-handler ends the process (OutOfMemory.hpp, tested with
// dem_out_of_memory_probe). Those inside are counted apart: a run makes none.
namespace demtest {

// The allocation after the next `k` fails with std::bad_alloc; negative: none fails.
void failAllocationAfter(long k);

// Whether the requested failure was made since the last failAllocationAfter.
bool allocationFailed();

// How many allocations were made inside OpenMP parallel regions so far (none of them fails).
long allocationsInParallel();

} // namespace demtest
