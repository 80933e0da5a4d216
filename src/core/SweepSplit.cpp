#include "core/SweepSplit.hpp"
#include "core/Parallel.hpp"

#include <algorithm>

namespace dem {

namespace {

bool measured(const std::vector<size_t>& bounds, const std::vector<double>& seconds, size_t n,
              size_t threads) {
    if (threads < 2 || bounds.size() != threads + 1 || bounds.back() != n ||
        seconds.size() < threads)
        return false;
    for (size_t t = 0; t < threads; ++t)
        if (!(seconds[t] > 0)) // also NaN
            return false;
    return true;
}

} // namespace

void splitSweep(std::vector<size_t>& bounds, const std::vector<double>& seconds, size_t n,
                size_t threads) {
    threads = std::max<size_t>(threads, 1);
    if (!measured(bounds, seconds, n, threads)) {
        bounds.resize(threads + 1);
        for (size_t t = 0; t <= threads; ++t)
            bounds[t] = n * t / threads;
        return;
    }
    double total = 0;
    for (size_t t = 0; t < threads; ++t)
        total += seconds[t];
    // Walk the old ranges with the cost so far; bound k goes where it reaches total * k / threads.
    const PerThread<size_t> old(bounds.begin(), bounds.end());
    size_t range = 0;
    double before = 0; // cost of the ranges before `range`
    for (size_t k = 1; k < threads; ++k) {
        const double goal = total * double(k) / double(threads);
        while (range + 1 < threads && before + seconds[range] < goal)
            before += seconds[range++];
        const double within = std::clamp((goal - before) / seconds[range], 0.0, 1.0);
        const double target = double(old[range]) + within * double(old[range + 1] - old[range]);
        const double moved = 0.5 * (double(old[k]) + target);
        bounds[k] = std::clamp(size_t(moved), bounds[k - 1], n);
    }
    bounds[0] = 0;
    bounds[threads] = n;
}

} // namespace dem
