// Reordering an array in place (core/GatherInPlace.hpp): item r takes make(r, keep(what item
// from(r) held)), whichever way the sweep goes and however many items move against it.
#include "SceneBuilder.hpp"
#include "core/GatherInPlace.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <random>

using namespace dem;

namespace {

// Gathers items 0..size-1 (each item its own value) by `from` (from[r] for r in [1, count]),
// through a make() that tags each value with its destination, and checks every destination.
// On one thread only the items that move against the sweep are kept aside; on more, also those
// taken across the threads' ranges.
void checkGather(const std::vector<size_t>& from, size_t count, size_t size,
                 size_t sideLimit = SIZE_MAX) {
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
    CHECK(side.size() <= std::min(sideLimit, count / 2 + 1));
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

TEST_CASE("gather in place: a rebuild's layout on one, two and three threads", "[records]") {
    // Above the parallel threshold: the records of the last layout move up past the contacts
    // formed before them (a downward sweep), and some were given up, which moves the later ones
    // down (an upward sweep when no contact formed); the new ones come from the top (the threads'
    // blocks), shuffled.
    std::mt19937 rng(11);
    const size_t size = 40000, count = 30000;
    for (bool formed : {true, false}) {
        std::vector<size_t> fresh;
        for (size_t q = count + 1; q < size; ++q)
            fresh.push_back(q);
        std::shuffle(fresh.begin(), fresh.end(), rng);
        std::vector<size_t> from(count + 1, 0);
        size_t old = 1, next = 0;
        for (size_t r = 1; r <= count; ++r) {
            if (formed && rng() % 8 == 0)
                from[r] = fresh[next++];
            else
                from[r] = old++;
            if (rng() % 16 == 0)
                ++old;
        }
        for (int threads : {1, 2, 3}) {
            dem::test::ScopedThreads scoped(threads);
            checkGather(from, count, size, count / 4);
        }
    }
}
