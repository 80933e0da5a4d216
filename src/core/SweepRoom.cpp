#include "core/SweepRoom.hpp"
#include "core/Parallel.hpp"

#include <algorithm>

namespace dem {

bool measuredOn(const SweepRoom& room, const Simulation& sim) {
    return room.rebuild == sim.neighbours.rebuilds && room.spheres == sim.particles.size() &&
           room.pairs == sim.pairs.size() && room.candidates == sim.obstacleContacts.size();
}

// A sphere p waits in a range starting at a when it has pairs as second sphere and the first of
// them (jPairs[jStart[p]]) belongs to a sphere below a. Of the spheres whose first such pair
// belongs to a sphere below a (`listed`), those below a (`passed`) are not in the range: listed -
// passed wait. Both grow with a: one pass.
size_t mostWaiting(const SpherePairs& S, size_t n) {
    size_t most = 0, listed = 0, passed = 0;
    for (size_t a = 0; a < n; ++a) {
        most = std::max(most, listed - passed);
        for (uint32_t k = S.start[a]; k < S.start[a + 1]; ++k)
            listed += S.jPairs[S.jStart[S.j[k]]] == k;
        passed += S.jStart[a + 1] > S.jStart[a];
    }
    return most;
}

// A sphere p that waits in a range starting at a has a pair (i, p) with i < a <= p: with p - i <=
// reach for every pair (the last of i's pairs, sorted by p, is its farthest), at most `reach`
// spheres, [a, a + reach), wait. When pairs span more than an eighth of the spheres (across a
// periodic cell's faces, or in a small scene) that bound would reserve far more than the spheres
// of a plane of grid cells that wait: mostWaiting counts them exactly, in a pass over the pairs
// (~1 ms per 10^5 spheres, against ~0.1 ms for this one).
SweepRoom measureSweepRoom(const Simulation& sim) {
    const SpherePairs& S = sim.pairs;
    const ObstacleContacts& O = sim.obstacleContacts;
    const size_t n = sim.particles.size();
    SweepRoom room;
    if (S.start.size() != n + 1 || S.jStart.size() != n + 1 || O.start.size() != n + 1)
        return room;
    size_t entries = 0, obstacles = 0, reach = 0;
#pragma omp parallel for if (n > parallelThreshold) reduction(max : entries, obstacles, reach)
    for (size_t i = 0; i < n; ++i) {
        const uint32_t k0 = S.start[i], k1 = S.start[i + 1];
        entries = std::max<size_t>(entries, S.start[std::min(n, i + sweepBlock)] - k0 + 1);
        obstacles = std::max<size_t>(obstacles, O.start[i + 1] - O.start[i]);
        if (k1 > k0)
            reach = std::max<size_t>(reach, S.j[k1 - 1] - i);
    }
    room.rebuild = sim.neighbours.rebuilds;
    room.spheres = n;
    room.pairs = S.size();
    room.candidates = O.size();
    room.touchingEntries = entries;
    room.obstacles = obstacles;
    room.waiting = reach > n / 8 ? mostWaiting(S, n) : reach;
    return room;
}

} // namespace dem
