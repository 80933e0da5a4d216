#pragma once
// Below this many items a loop runs on one thread: starting a parallel region costs more than it
// saves on small scenes. The results are the same either way (see Step.cpp).
#include <algorithm>
#include <cstddef>
#include <omp.h>

namespace dem {
constexpr std::size_t parallelThreshold = 2048;

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
} // namespace dem
