// dem-stream: memory bandwidth of this machine, for tools/bench's bandwidth bound. STREAM's triad
// a = b + s c over three arrays of 256 MiB each (far beyond any cache), best of five runs, with
// the thread count of OMP_NUM_THREADS. Counts 24 bytes per element (two reads, one write) as
// STREAM does, plus 8 for the write-allocate read of `a` that a plain store causes: 32 bytes.
// Prints one line: "stream_bytes_per_second <B/s> threads <n>".
//
// dem-stream --machine-speed: the speed of each CPU the process may run on, one at a time, then the
// memory bandwidth with all of them, for tools/bench to tell a run made while the machine was
// slow. On this project's two-CPU virtual machine one CPU at a time ran arithmetic a third slower
// for minutes (a loop of independent additions at two thirds of its usual adds per ns, the other
// CPU at full speed; a one-thread run of the 105k falling ball on it 16.8 s timed instead of
// 12.2), and a run on two threads then waits for the slow one. Prints "cpu_speed <cpu> <adds per
// ns>" for each, the best of three loops of ~20 ms. The memory bandwidth the host's other guests
// leave varies more often, and slow two-thread runs went with it (tools/bench-history.md has the
// measurements, in the round of the table of d218c6f). Prints "memory_bytes_per_second <B/s>": the
// triad over arrays of 32 MiB each, best of three. Exits 1 when a figure could not be measured:
// silently when a check of it failed, with a message when the arrays could not be allocated (a
// memory limit, e.g. ulimit -v).
#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <new>
#include <vector>

namespace {

// The triad's bytes per second over three arrays of n doubles, best of `reps` runs; 0 when it
// failed.
double triadBytesPerSecond(size_t n, int reps) {
    std::vector<double> a, b, c;
    try {
        a.resize(n);
        b.resize(n);
        c.resize(n);
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "dem-stream: cannot allocate the triad's three arrays of %zu MiB\n",
                     n * sizeof(double) >> 20);
        return 0;
    }
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; ++i) { // first touch by the thread that uses the page
        a[i] = 0;
        b[i] = 1;
        c[i] = 2;
    }
    double best = 1e30;
    for (int rep = 0; rep < reps; ++rep) {
        const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n; ++i)
            a[i] = b[i] + 3.0 * c[i];
        const std::chrono::duration<double> t = std::chrono::steady_clock::now() - t0;
        best = std::min(best, t.count());
    }
    return a[n / 2] == 7.0 ? 32.0 * double(n) / best : 0;
}

int bandwidth() {
    const double bytes = triadBytesPerSecond(size_t(1) << 25, 5);
    if (bytes <= 0)
        return 1;
    std::printf("stream_bytes_per_second %.6g threads %d\n", bytes, omp_get_max_threads());
    return 0;
}

// Adds per ns of eight independent chains of scalar additions in registers: as many adds in
// flight as the core's adders take, so the figure is the core's throughput (not an add's
// latency), which a core shared with other work shows. The empty asm keeps each chain a chain of
// scalar adds (no folding into one multiply, no vectorising).
double addsPerNs() {
    constexpr long rounds = 16'000'000;
    double best = 0;
    for (int rep = 0; rep < 3; ++rep) {
        double a = 0, b = 1, c = 2, d = 3, e = 4, f = 5, g = 6, h = 7;
        const auto t0 = std::chrono::steady_clock::now();
        for (long i = 0; i < rounds; ++i) {
            a += 1.0, b += 1.0, c += 1.0, d += 1.0, e += 1.0, f += 1.0, g += 1.0, h += 1.0;
            asm volatile(""
                         : "+x"(a), "+x"(b), "+x"(c), "+x"(d), "+x"(e), "+x"(f), "+x"(g), "+x"(h));
        }
        const std::chrono::duration<double> t = std::chrono::steady_clock::now() - t0;
        if (a + b + c + d + e + f + g + h != 28.0 + 8.0 * double(rounds))
            return 0;
        best = std::max(best, 8.0 * double(rounds) / (t.count() * 1e9));
    }
    return best;
}

int machineSpeed() {
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        return 1;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (!CPU_ISSET(cpu, &allowed))
            continue;
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        if (sched_setaffinity(0, sizeof one, &one) != 0)
            return 1;
        const double adds = addsPerNs();
        if (adds <= 0)
            return 1;
        std::printf("cpu_speed %d %.4g\n", cpu, adds);
    }
    if (sched_setaffinity(0, sizeof allowed, &allowed) != 0)
        return 1;
    const double bytes = triadBytesPerSecond(size_t(1) << 22, 3);
    if (bytes <= 0)
        return 1;
    std::printf("memory_bytes_per_second %.6g\n", bytes);
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    if (argc == 2 && std::strcmp(argv[1], "--machine-speed") == 0)
        return machineSpeed();
    if (argc != 1) {
        std::fprintf(stderr, "usage: dem-stream [--machine-speed]\n");
        return 2;
    }
    return bandwidth();
}
