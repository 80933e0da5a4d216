// Reordering an array in place (core/GatherInPlace.hpp): item r takes make(r, keep(what item
// from(r) held)), whichever way the sweep goes and however many items move against it.
#include "core/GatherInPlace.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <random>

using namespace dem;

namespace {

// Gathers items 0..size-1 (each item its own value) by `from` (from[r] for r in [1, count]),
// through a make() that tags each value with its destination, and checks every destination.
void checkGather(const std::vector<size_t>& from, size_t count, size_t size) {
    std::vector<std::pair<size_t, size_t>> items(size); // (value, destination it was made for)
    for (size_t i = 0; i < size; ++i)
        items[i] = {i, SIZE_MAX};
    std::vector<std::pair<size_t, size_t>> side;
    gatherInPlace(
        items, count, [&](size_t r) { return from[r]; },
        [](const std::pair<size_t, size_t>& item) { return item; }, side,
        [](size_t r, const std::pair<size_t, size_t>& old) {
            return std::pair<size_t, size_t>(old.first, r);
        });
    for (size_t r = 1; r <= count; ++r) {
        REQUIRE(items[r].first == from[r]);
        REQUIRE(items[r].second == r);
    }
    CHECK(items[0].first == 0);
    CHECK(side.size() <= count / 2 + 1); // only the items that move against the sweep
}

} // namespace

TEST_CASE("gather in place: fixed points, shifts, cycles and reversals", "[records]") {
    // Every item stays (made afresh in place).
    checkGather({0, 1, 2, 3, 4}, 4, 5);
    // Sources above (an upward sweep) and below (downward), the last ones beyond count.
    checkGather({0, 3, 4, 5, 6, 7}, 5, 8);
    checkGather({0, 5, 1, 2, 3}, 4, 6);
    // One rotation over all, and a reversal (half the items against either sweep).
    checkGather({0, 2, 3, 4, 1}, 4, 5);
    checkGather({0, 5, 4, 3, 2, 1}, 5, 6);
    // Nothing to gather.
    checkGather({0}, 0, 3);
}

TEST_CASE("gather in place: random partial reorderings", "[records]") {
    std::mt19937 rng(7);
    for (int trial = 0; trial < 200; ++trial) {
        const size_t size = 1 + rng() % 300;
        const size_t count = rng() % size; // at most size - 1
        std::vector<size_t> sources(size - 1);
        std::iota(sources.begin(), sources.end(), size_t(1));
        std::shuffle(sources.begin(), sources.end(), rng);
        if (trial % 2) // mostly in order, as records are between rebuilds
            std::sort(sources.begin(), sources.begin() + std::min(count, sources.size() / 2));
        std::vector<size_t> from(count + 1, 0);
        for (size_t r = 1; r <= count; ++r)
            from[r] = sources[r - 1];
        checkGather(from, count, size);
    }
}
