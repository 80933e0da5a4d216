#pragma once
// The most each thread's sweep scratch (Step.cpp) can need under any split of the spheres. The
// split follows the threads' times and moves every step, so what one split needed says little
// about the next: the room is measured on the lists of each rebuild and reserved before the
// parallel region, where an allocation that fails ends the process.
#include "core/Simulation.hpp"

#include <cstddef>
#include <cstdint>

namespace dem {

constexpr size_t sweepBlock = 128; // spheres per block of the sweep (Step.cpp, sweepSpheres)

struct SweepRoom {
    // The lists it was measured on: the rebuild's count and their sizes (none yet: UINT64_MAX).
    uint64_t rebuild = UINT64_MAX;
    size_t spheres = 0, pairs = 0, candidates = 0;
    size_t touchingEntries = 0; // touching list: the most pairs of a block, plus one
    size_t waiting = 0;         // deferred: the most spheres that can wait behind a range's start
    size_t obstacles = 0;       // facet candidates: the most obstacle contacts of one sphere
};

// Whether `room` was measured on the simulation's present lists.
bool measuredOn(const SweepRoom& room, const Simulation& sim);

// The room for the simulation's lists (none before its first rebuild).
SweepRoom measureSweepRoom(const Simulation& sim);

// The most spheres of n that wait in a range of the sweep, whatever sphere the range starts at.
size_t mostWaiting(const SpherePairs& S, size_t n);

} // namespace dem
