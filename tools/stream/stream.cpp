// dem-stream: memory bandwidth of this machine, for tools/bench's bandwidth bound. STREAM's triad
// a = b + s c over three arrays of 256 MiB each (far beyond any cache), best of five runs, with
// the thread count of OMP_NUM_THREADS. Counts 24 bytes per element (two reads, one write) as
// STREAM does, plus 8 for the write-allocate read of `a` that a plain store causes: 32 bytes.
// Prints one line: "stream_bytes_per_second <B/s> threads <n>".
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

int main() {
    const size_t n = size_t(1) << 25;
    std::vector<double> a(n), b(n), c(n);
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; ++i) { // first touch by the thread that uses the page
        a[i] = 0;
        b[i] = 1;
        c[i] = 2;
    }
    double best = 1e30;
    for (int rep = 0; rep < 5; ++rep) {
        const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n; ++i)
            a[i] = b[i] + 3.0 * c[i];
        const std::chrono::duration<double> t = std::chrono::steady_clock::now() - t0;
        best = std::min(best, t.count());
    }
    if (a[n / 2] != 7.0)
        return 1;
    std::printf("stream_bytes_per_second %.6g threads %d\n", 32.0 * double(n) / best,
                omp_get_max_threads());
    return 0;
}
