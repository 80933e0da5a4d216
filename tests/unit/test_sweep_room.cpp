// The room the sweep's per-thread scratch is given (core/SweepRoom.hpp), against counts over
// every sphere a thread's range could start at.
#include "DeterminismScene.hpp"

#include "core/SweepRoom.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace dem;
using namespace dem::test;

namespace {

// The spheres that wait in a range starting at a, decided as sweepSpheres decides it.
size_t waitingAt(const SpherePairs& S, size_t n, size_t a) {
    size_t count = 0;
    for (size_t p = a; p < n; ++p)
        count += a > 0 && S.jStart[p] < S.jStart[p + 1] && S.jPairs[S.jStart[p]] < S.start[a];
    return count;
}

size_t mostWaitingOverEveryStart(const SpherePairs& S, size_t n) {
    size_t most = 0;
    for (size_t a = 0; a < n; ++a)
        most = std::max(most, waitingAt(S, n, a));
    return most;
}

// A pair list of n spheres: each sphere paired with up to 6 of the next `span`, and one in
// `far` also with one of the last few spheres (pairs across a periodic cell's faces).
SpherePairs randomPairs(size_t n, size_t span, int far, Random& rnd) {
    SpherePairs S;
    S.start.assign(n + 1, 0);
    for (size_t i = 0; i < n; ++i) {
        std::vector<uint32_t> partners;
        const int count = int(rnd(0, 7));
        for (int c = 0; c < count && i + 1 < n; ++c)
            partners.push_back(uint32_t(std::min(n - 1, i + 1 + size_t(rnd(0, double(span))))));
        if (far > 0 && int(rnd(0, far)) == 0 && i + 4 < n)
            partners.push_back(uint32_t(n - 1 - size_t(rnd(0, 4))));
        std::sort(partners.begin(), partners.end());
        partners.erase(std::unique(partners.begin(), partners.end()), partners.end());
        S.j.insert(S.j.end(), partners.begin(), partners.end());
        S.start[i + 1] = uint32_t(S.j.size());
    }
    transposePairs(S, n);
    return S;
}

} // namespace

TEST_CASE("sweep room: the waiting spheres' count is the most over every range start", "[sweep]") {
    Random rnd(31);
    for (size_t n : {0, 1, 2, 3, 50, 400}) {
        for (size_t span : {1, 5, 60}) {
            for (int far : {0, 3, 20}) {
                const SpherePairs S = randomPairs(n, span, far, rnd);
                INFO(n << " spheres, span " << span << ", far " << far);
                CHECK(mostWaiting(S, n) == mostWaitingOverEveryStart(S, n));
            }
        }
    }
}

TEST_CASE("sweep room: measured on packings it covers every range start", "[sweep]") {
    // A 20 x 20 x 10 box, whose pairs span a slab of grid cells (below n/8) and take the bound
    // by span; a 10 x 10 box and a periodic cell, whose pairs span more than n/8 (a tenth of the
    // spheres per slab; across the faces) and take the exact count.
    struct Scene {
        const char* name;
        Simulation sim;
        bool exact;
    };
    Scene scenes[] = {{"20 x 20 box", densePacking(20, 20, 10), false},
                      {"10 x 10 box with a facet floor", densePacking(10, 10, 22, true), true},
                      {"periodic cell", shearedPacking(22, 0, 0), true}};
    for (Scene& s : scenes) {
        INFO(s.name);
        CHECK(!measuredOn(measureSweepRoom(s.sim), s.sim)); // no lists yet
        Workspace ws;
        REQUIRE(advance(s.sim, ws));
        const Simulation& sim = s.sim;
        const size_t n = sim.particles.size();
        const SweepRoom room = measureSweepRoom(sim);
        CHECK(measuredOn(room, sim));
        size_t reach = 0; // the largest span of a pair
        for (size_t i = 0; i < n; ++i)
            for (uint32_t k = sim.pairs.start[i]; k < sim.pairs.start[i + 1]; ++k)
                reach = std::max<size_t>(reach, sim.pairs.j[k] - i);
        const size_t most = mostWaitingOverEveryStart(sim.pairs, n);
        CHECK(most > 0);
        CHECK(s.exact == (reach > n / 8));
        if (s.exact)
            CHECK(room.waiting == most);
        else
            CHECK((room.waiting >= most && room.waiting == reach));
        size_t entries = 0, obstacles = 0;
        for (size_t first = 0; first < n; ++first)
            entries = std::max<size_t>(entries, sim.pairs.start[std::min(n, first + sweepBlock)] -
                                                    sim.pairs.start[first] + 1);
        for (size_t p = 0; p < n; ++p)
            obstacles = std::max<size_t>(obstacles, sim.obstacleContacts.start[p + 1] -
                                                        sim.obstacleContacts.start[p]);
        CHECK(room.touchingEntries == entries);
        CHECK(room.obstacles == obstacles);
        s.sim.neighbours.needRebuild = true;
        REQUIRE(advance(s.sim, ws));
        CHECK(!measuredOn(room, s.sim));
        CHECK(measuredOn(ws.sweepRoom, s.sim)); // the step measured the new lists
    }
}
