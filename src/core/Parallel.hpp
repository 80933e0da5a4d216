#pragma once
// Below this many items a loop runs on one thread: starting a parallel region costs more than it
// saves on small scenes. The results are the same either way (see Step.cpp).
#include <algorithm>
#include <boost/container/small_vector.hpp>
#include <cstddef>
#include <omp.h>
#include <type_traits>
#include <utility>
#include <vector>

namespace dem {
constexpr std::size_t parallelThreshold = 2048;

// A figure or two per thread of a region (counts, offsets, bounds): on the stack for up to 64
// threads, so that sharing work out asks for no memory in the step loop.
template <class T> using PerThread = boost::container::small_vector<T, 65>;

// The step and the rebuilds share their work out by thread number among omp_get_max_threads()
// threads; a region given fewer shares it among those it got, evenly, losing the balance the
// sweep's split follows. Makes every region get that many for the rest of the program: the
// runtime may not hand out fewer (OMP_DYNAMIC), and the count stays within its limit
// (OMP_THREAD_LIMIT). `requested`: the count asked for, 0 for the runtime's default. Returns the
// count the regions will get.
inline int useExactThreads(int requested) {
    omp_set_dynamic(0);
    const int n =
        std::min(requested > 0 ? requested : omp_get_max_threads(), omp_get_thread_limit());
    omp_set_num_threads(n);
    return n;
}

// Inside a parallel region: f(t) for this thread's ranges among `ranges`, which an earlier
// region's team made (work measured in one region, its memory grown between the two, where
// running out of it is std::bad_alloc: app/OutOfMemory.cpp). Range t is thread t's when the team
// is as large; a smaller team (the runtime may give fewer threads than asked for) takes them in
// turns.
template <class F> void forEachRangeOfThisThread(std::size_t ranges, F&& f) {
    const std::size_t team = std::size_t(omp_get_num_threads());
    for (std::size_t t = std::size_t(omp_get_thread_num()); t < ranges; t += team)
        f(t);
}

// What listByRanges does after the list is written when it is given nothing: nothing.
struct NoFinish {
    void operator()(std::size_t, std::size_t, std::size_t, std::size_t) const {}
};

// Writes a list whose items come from n sources in order: each thread counts the items of its
// range of sources [a, b) (count(a, b)), a prefix sum over the ranges gives each the place of its
// first item, allot(total) sizes the list between two regions (so that memory is never asked for
// inside one, where running out of it ends the process: app/OutOfMemory.cpp), and each range's
// items are written into [begin, end) (write(a, b, begin, end)). `finish`, when given, runs on the
// same ranges once every range is written (finish(a, b, begin, end)). The ranges are the first
// region's team's; the list does not depend on the team, which may be smaller than asked for.
// Returns the total.
template <class Count, class Allot, class Write, class Finish = NoFinish>
std::size_t listByRanges(std::size_t n, Count&& count, Allot&& allot, Write&& write,
                         Finish&& finish = {}) {
    const int threads = n > parallelThreshold ? omp_get_max_threads() : 1;
    PerThread<std::size_t> first(std::size_t(threads) + 1, 0);
    std::size_t ranges = 1;
    auto range = [&](std::size_t t) { return std::pair(n * t / ranges, n * (t + 1) / ranges); };
#pragma omp parallel num_threads(threads)
    {
#pragma omp single
        ranges = std::size_t(omp_get_num_threads());
        const auto [a, b] = range(std::size_t(omp_get_thread_num()));
        first[std::size_t(omp_get_thread_num()) + 1] = count(a, b);
    }
    for (std::size_t t = 0; t < ranges; ++t)
        first[t + 1] += first[t];
    const std::size_t total = first[ranges];
    allot(total);
#pragma omp parallel num_threads(threads)
    {
        forEachRangeOfThisThread(ranges, [&](std::size_t t) {
            const auto [a, b] = range(t);
            write(a, b, first[t], first[t + 1]);
        });
        if constexpr (!std::is_same_v<std::decay_t<Finish>, NoFinish>) {
#pragma omp barrier
            forEachRangeOfThisThread(ranges, [&](std::size_t t) {
                const auto [a, b] = range(t);
                finish(a, b, first[t], first[t + 1]);
            });
        }
    }
    return total;
}
} // namespace dem
