#pragma once
// The sphere ranges of the threads' sweeps (Step.cpp): bounds[t] to bounds[t + 1] for thread t.
// Any split gives the same results (each sphere's arithmetic does not depend on who does it), so
// the split can follow the threads' measured times without costing determinism.
#include <cstddef>
#include <utility>
#include <vector>

namespace dem {

// Splits the spheres [0, n) among `threads` sweeps. With bounds and times of the last step for as
// many threads and spheres (seconds[t]: thread t's sweep up to the barrier), each bound moves
// halfway to where the last step's cost, spread evenly over each range's spheres, splits evenly:
// a thread slowed by a denser part of the packing gives spheres to the others, and a step's
// noise moves the bounds by half of it only. Otherwise equal counts.
void splitSweep(std::vector<size_t>& bounds, const std::vector<double>& seconds, size_t n,
                size_t threads);

// A split kept from one use to the next (the sweep's, the rebuild's pair listing's): thread t takes
// the spheres [bounds[t], bounds[t + 1]), and seconds[t] is its time at the last use.
struct TimedSplit {
    std::vector<size_t> bounds;
    std::vector<double> seconds;
};

// Thread t's range of n spheres in a team: bounds' when they were made for a team of that size and
// n spheres, otherwise equal ranges (the runtime may give a region fewer threads than asked for).
inline std::pair<size_t, size_t> splitRange(const std::vector<size_t>& bounds, size_t n, size_t t,
                                            size_t team) {
    if (bounds.size() == team + 1 && bounds.back() == n)
        return {bounds[t], bounds[t + 1]};
    return {n * t / team, n * (t + 1) / team};
}

} // namespace dem
