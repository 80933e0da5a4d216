#pragma once
// Stable counting sort on several threads: the items 0..n-1 listed by bin (bin(p) in [0, bins)),
// those of one bin in increasing order, which is what one thread's counting sort gives; the
// result is the same for any thread count, with no atomics.
//
// Each thread takes a range of the items and counts them per bin; the last thread counts in
// `start`, the others in `scratch`, kept by the caller: fresh memory for it at every call cost
// more than the sort's counting on two threads (page faults). Then, by ranges of bins, the counts
// become each thread's first place in each bin (a bin holds the items of lower threads first), and
// each thread places its items. The last thread's places, advanced past its items, end where the
// next bin starts: shifted up by one, they are the bin offsets. The ranges follow the team the
// region gets, which may be smaller than asked for.
#include "core/Parallel.hpp"
#include "core/Scratch.hpp"

#include <algorithm>
#include <cstdint>
#include <omp.h>
#include <vector>

namespace dem {

// out[start[b] .. start[b + 1]) lists the items of bin b; `start` gets bins + 1 offsets.
template <class Bin>
void countingSort(size_t n, size_t bins, Bin&& bin, std::vector<uint32_t>& start,
                  std::vector<uint32_t>& out, std::vector<uint32_t>& scratch) {
    const size_t threads = n > parallelThreshold ? size_t(omp_get_max_threads()) : 1;
    resizeForOverwrite(start, bins + 1);
    // The other threads' counts, then the items in the bin ranges before each thread's: kept by
    // the caller too (the rebuild allocates nothing once its scratch has grown).
    resizeForOverwrite(scratch, (threads - 1) * bins + threads + 1);
    resizeForOverwrite(out, n);
    uint32_t* rangeFirst = scratch.data() + (threads - 1) * bins;
    rangeFirst[0] = 0;
#pragma omp parallel num_threads(int(threads))
    {
        const size_t t = size_t(omp_get_thread_num()), T = size_t(omp_get_num_threads());
        // Thread u's counts, for the team the region got (T <= threads).
        auto counts = [&](size_t u) {
            return u + 1 == T ? start.data() : scratch.data() + u * bins;
        };
        uint32_t* mine = counts(t);
        std::fill(mine, mine + bins, 0); // by its thread: then in that core's cache
        for (size_t p = n * t / T; p < n * (t + 1) / T; ++p)
            ++mine[bin(p)];
#pragma omp barrier
        const size_t lo = bins * t / T, hi = bins * (t + 1) / T;
        uint32_t inRange = 0;
        for (size_t u = 0; u < T; ++u)
            for (size_t b = lo; b < hi; ++b)
                inRange += counts(u)[b];
        rangeFirst[t + 1] = inRange;
#pragma omp barrier
        uint32_t place = 0;
        for (size_t u = 0; u <= t; ++u)
            place += rangeFirst[u];
        for (size_t b = lo; b < hi; ++b)
            for (size_t u = 0; u < T; ++u) {
                const uint32_t count = counts(u)[b];
                counts(u)[b] = place;
                place += count;
            }
#pragma omp barrier
        for (size_t p = n * t / T; p < n * (t + 1) / T; ++p)
            out[mine[bin(p)]++] = uint32_t(p);
    }
    std::copy_backward(start.begin(), start.end() - 1, start.end());
    start[0] = 0;
}

} // namespace dem
