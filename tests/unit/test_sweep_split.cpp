// The threads' sweep ranges (core/SweepSplit.hpp): equal counts until times are measured, then
// bounds that move towards equal cost, converge on it, and always cover [0, n) in order.
#include "core/SweepSplit.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <numeric>

using namespace dem;

namespace {

// Each range's time when sphere p costs cost(p).
template <class Cost> std::vector<double> timesOf(const std::vector<size_t>& bounds, Cost&& cost) {
    std::vector<double> seconds(bounds.size() - 1, 0);
    for (size_t t = 0; t + 1 < bounds.size(); ++t)
        for (size_t p = bounds[t]; p < bounds[t + 1]; ++p)
            seconds[t] += cost(p);
    return seconds;
}

void requireCover(const std::vector<size_t>& bounds, size_t n, size_t threads) {
    REQUIRE(bounds.size() == threads + 1);
    REQUIRE(bounds.front() == 0);
    REQUIRE(bounds.back() == n);
    for (size_t t = 0; t < threads; ++t)
        REQUIRE(bounds[t] <= bounds[t + 1]);
}

} // namespace

TEST_CASE("sweep split: equal counts without the last step's times", "[sweep]") {
    std::vector<size_t> bounds;
    splitSweep(bounds, {}, 100, 3);
    REQUIRE(bounds == std::vector<size_t>{0, 33, 66, 100});
    // Times of another thread count or sphere count do not apply.
    splitSweep(bounds, {1.0, 2.0}, 100, 2);
    REQUIRE(bounds == std::vector<size_t>{0, 50, 100});
    splitSweep(bounds, {1.0, 2.0}, 90, 2);
    REQUIRE(bounds == std::vector<size_t>{0, 45, 90});
    splitSweep(bounds, {1.0, 0.0}, 90, 2); // a thread that measured nothing
    REQUIRE(bounds == std::vector<size_t>{0, 45, 90});
    splitSweep(bounds, {}, 7, 1);
    REQUIRE(bounds == std::vector<size_t>{0, 7});
}

TEST_CASE("sweep split: a bound moves halfway to where the last step's cost splits evenly",
          "[sweep]") {
    // Thread 0 took three times as long over as many spheres: spread evenly over each range, half
    // the cost is 2/3 into range 0, sphere 33.3; halfway from 50 is 41.7.
    std::vector<size_t> bounds{0, 50, 100};
    splitSweep(bounds, {3.0, 1.0}, 100, 2);
    REQUIRE(bounds == std::vector<size_t>{0, 41, 100});
    // Balanced times leave the bounds where they are.
    bounds = {0, 30, 60, 100};
    splitSweep(bounds, {1.0, 1.0, 1.0}, 100, 3);
    REQUIRE(bounds == std::vector<size_t>{0, 30, 60, 100});
}

TEST_CASE("sweep split: repeated steps converge on equal cost and keep the ranges in order",
          "[sweep]") {
    const size_t n = 10000;
    // A dense part of the packing: the first fifth of the spheres cost five times as much.
    auto cost = [n](size_t p) { return p < n / 5 ? 5.0 : 1.0; };
    double total = 0;
    for (size_t p = 0; p < n; ++p)
        total += cost(p);
    for (size_t threads : {2, 3, 4}) {
        std::vector<size_t> bounds;
        std::vector<double> seconds;
        for (int step = 0; step < 40; ++step) {
            splitSweep(bounds, seconds, n, threads);
            requireCover(bounds, n, threads);
            seconds = timesOf(bounds, cost);
        }
        // Within a few spheres' cost of an even share (bounds are whole spheres).
        for (double s : seconds)
            REQUIRE(std::abs(s - total / double(threads)) <= 10.0);
    }
}

TEST_CASE("sweep split: extreme times keep every bound within [0, n] and in order", "[sweep]") {
    std::vector<size_t> bounds{0, 10, 20, 30};
    splitSweep(bounds, {1e-12, 1.0, 1e-12}, 30, 3);
    requireCover(bounds, 30, 3);
    bounds = {0, 0, 0, 30}; // two empty ranges that still took time
    splitSweep(bounds, {1e-6, 1e-6, 1.0}, 30, 3);
    requireCover(bounds, 30, 3);
    REQUIRE(bounds[2] > 0); // the one busy thread gives spheres away
}

TEST_CASE("sweep split: a thread's range follows the split made for its team, else equal counts",
          "[sweep]") {
    const std::vector<size_t> bounds = {0, 30, 100};
    CHECK(splitRange(bounds, 100, 0, 2) == std::pair<size_t, size_t>(0, 30));
    CHECK(splitRange(bounds, 100, 1, 2) == std::pair<size_t, size_t>(30, 100));
    // A team of another size, or another count of spheres (some were removed): equal ranges.
    CHECK(splitRange(bounds, 100, 0, 1) == std::pair<size_t, size_t>(0, 100));
    CHECK(splitRange(bounds, 90, 1, 2) == std::pair<size_t, size_t>(45, 90));
    CHECK(splitRange({}, 7, 2, 3) == std::pair<size_t, size_t>(4, 7));
}
