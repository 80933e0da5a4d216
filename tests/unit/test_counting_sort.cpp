// The counting sort of the grid and of the pairs by second sphere (core/CountingSort.hpp): the
// order of a stable sort by bin, for any thread count, including empty bins and more threads than
// bins.
#include "SceneBuilder.hpp"
#include "core/CountingSort.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <random>

using namespace dem;

namespace {

void checkSort(const std::vector<uint32_t>& bin, size_t bins, int threads) {
    test::ScopedThreads use(threads);
    std::vector<uint32_t> start, out, scratch;
    countingSort(
        bin.size(), bins, [&](size_t p) { return bin[p]; }, start, out, scratch);
    std::vector<uint32_t> expected(bin.size());
    std::iota(expected.begin(), expected.end(), 0u);
    std::stable_sort(expected.begin(), expected.end(),
                     [&](uint32_t a, uint32_t b) { return bin[a] < bin[b]; });
    REQUIRE(out == expected);
    std::vector<uint32_t> count(bins, 0);
    for (uint32_t b : bin)
        ++count[b];
    REQUIRE(start.size() == bins + 1);
    REQUIRE(start[0] == 0);
    for (size_t b = 0; b < bins; ++b) {
        REQUIRE(start[b + 1] - start[b] == count[b]);
        for (uint32_t e = start[b]; e < start[b + 1]; ++e)
            REQUIRE(bin[out[e]] == b);
    }
}

std::vector<uint32_t> randomBins(size_t n, size_t bins, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<uint32_t> pick(0, uint32_t(bins - 1));
    std::vector<uint32_t> bin(n);
    for (uint32_t& b : bin)
        b = pick(rng);
    return bin;
}

} // namespace

TEST_CASE("counting sort gives a stable sort's order on any number of threads", "[sort]") {
    const size_t n = 3 * parallelThreshold + 17; // above the threshold: the threads share it
    std::vector<uint32_t> runs(n); // as pairs by second sphere: near the first, in runs
    for (size_t p = 0; p < n; ++p)
        runs[p] = uint32_t(p / 5 + p % 7);
    for (int threads : {1, 2, 3, 4}) {
        INFO("threads " << threads);
        checkSort(randomBins(n, 37, 1), 37, threads);         // many items per bin
        checkSort(randomBins(n, 20 * n, 2), 20 * n, threads); // mostly empty bins
        checkSort(randomBins(n, 1, 3), 1, threads);           // fewer bins than threads
        checkSort(runs, n / 5 + 7, threads);
    }
}

TEST_CASE("counting sort of nothing and of few items", "[sort]") {
    checkSort({}, 0, 2);
    checkSort({}, 4, 2);
    checkSort({3, 1, 3, 0, 1}, 5, 2);
}
