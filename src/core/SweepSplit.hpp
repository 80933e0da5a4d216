#pragma once
// The sphere ranges of the threads' sweeps (Step.cpp): bounds[t] to bounds[t + 1] for thread t.
// Any split gives the same results (each sphere's arithmetic does not depend on who does it), so
// the split can follow the threads' measured times without costing determinism.
#include <cstddef>
#include <vector>

namespace dem {

// Splits the spheres [0, n) among `threads` sweeps. With bounds and times of the last step for as
// many threads and spheres (seconds[t]: thread t's sweep up to the barrier), each bound moves
// halfway to where the last step's cost, spread evenly over each range's spheres, splits evenly:
// a thread slowed by a denser part of the packing gives spheres to the others, and a step's
// noise moves the bounds by half of it only. Otherwise equal counts.
void splitSweep(std::vector<size_t>& bounds, const std::vector<double>& seconds, size_t n,
                size_t threads);

// A split kept from one use to the next, for a pass over the spheres other than the sweep (the
// rebuild's pair listing): seconds[t] is thread t's time at the last use.
struct TimedSplit {
    std::vector<size_t> bounds;
    std::vector<double> seconds;
};

} // namespace dem
