// The step loop takes no memory from the heap once its scratch has grown to the scene: a loop that
// allocates can fail part way through a run, and fresh memory costs page faults the first time it
// is written. This executable counts every global operator new (ReplacedNew.hpp).
#include "../unit/DeterminismScene.hpp"
#include "ReplacedNew.hpp"

#include "core/Scratch.hpp"

#include <catch2/catch.hpp>

#include <atomic>

namespace {
std::atomic<size_t> allocations{0};
// Those made inside an OpenMP parallel region, also one run by a single thread (`if` false):
// dem's new-handler ends the process in either (OutOfMemory.cpp).
std::atomic<size_t> parallelAllocations{0};
} // namespace

void* testAllocate(size_t n, size_t align) {
    allocations.fetch_add(1, std::memory_order_relaxed);
    if (omp_get_level() > 0)
        parallelAllocations.fetch_add(1, std::memory_order_relaxed);
    return demtest::heapAllocate(n, align);
}

using namespace dem;
using namespace dem::test;

namespace {

// Allocations made by `steps` steps; `rebuild`: each step rebuilds the lists first, otherwise
// none does (the packing is at rest: only the first step rebuilds).
size_t allocationsOver(Simulation& sim, Workspace& ws, int steps, bool rebuild) {
    const uint64_t rebuildsBefore = sim.neighbours.rebuilds;
    const size_t before = allocations.load();
    for (int k = 0; k < steps; ++k) {
        sim.neighbours.needRebuild = sim.neighbours.needRebuild || rebuild;
        REQUIRE(advance(sim, ws));
    }
    const size_t made = allocations.load() - before;
    REQUIRE(sim.neighbours.rebuilds - rebuildsBefore == uint64_t(rebuild ? steps : 0));
    return made;
}

// The first step rebuilds and sizes the scratch; a few rebuilds more grow what they use.
void warmUp(Simulation& sim, Workspace& ws) {
    REQUIRE(advance(sim, ws));
    allocationsOver(sim, ws, 20, false);
    allocationsOver(sim, ws, 3, true);
}

// Spheres above the parallel threshold in a box of walls (scene 0), on a floor of facets (1), in
// a periodic cell (2, where spheres at the end of the order wait for pairs across the faces),
// and 16,800 in a box (3), above the 16,384 at which the reordering runs on several threads.
Simulation allocationScene(int scene) {
    switch (scene) {
    case 2:
        return shearedPacking(layersAboveThreshold(), 0, 0);
    case 3:
        return densePacking(20, 20, 42);
    default:
        return densePacking(10, 10, layersAboveThreshold(), scene == 1);
    }
}

} // namespace

TEST_CASE("A step allocates nothing once its scratch has grown", "[allocation]") {
    for (int threads : {1, 2}) {
        ScopedThreads t(threads);
        REQUIRE(omp_get_max_threads() == threads);
        Simulation sim = densePacking(10, 10, layersAboveThreshold()); // the parallel paths
        Workspace ws;
        warmUp(sim, ws);
        INFO(threads << " threads");
        CHECK(allocationsOver(sim, ws, 20, false) == 0);
    }
}

TEST_CASE("A step allocates nothing wherever the threads' split falls", "[allocation]") {
    // The split follows the threads' times (SweepSplit.hpp), which the test sets: the first
    // thread slow for ten steps, then the second, so that the bound between their ranges moves
    // from half the spheres to about a fortieth and on to nineteen twentieths, through ranges
    // the warm-up never saw. The sweep's scratch is freed after the warm-up: the step must grow
    // it before the parallel region to what any range needs (SweepRoom.hpp), or the region
    // allocates. Scenes 0-2 of allocationScene.
    ScopedThreads t(2);
    REQUIRE(omp_get_max_threads() == 2);
    for (int scene = 0; scene < 3; ++scene) {
        Simulation sim = allocationScene(scene);
        Workspace ws;
        warmUp(sim, ws);
        REQUIRE(ws.touchingScratch.size() == 2);
        for (int thread = 0; thread < 2; ++thread) {
            freeMemory(ws.touchingScratch[thread]);
            freeMemory(ws.deferred[thread]);
            freeMemory(ws.facetScratch[thread]);
        }
        REQUIRE(ws.sweepSplit.seconds.size() == 2);
        const uint64_t rebuilds = sim.neighbours.rebuilds;
        const size_t n = sim.particles.size();
        // Counted over the 20 steps, nothing between them that allocates.
        const size_t parallelBefore = parallelAllocations.load();
        size_t afterFirst = 0;
        bool advanced = true;
        size_t lowest = n, highest = 0;
        for (int k = 0; k < 20; ++k) {
            ws.sweepSplit.seconds[0] = k < 10 ? 0.99 : 0.01;
            ws.sweepSplit.seconds[1] = 1 - ws.sweepSplit.seconds[0];
            advanced = advanced && advance(sim, ws);
            if (k == 0)
                afterFirst = allocations.load();
            lowest = std::min(lowest, ws.sweepSplit.bounds[1]);
            highest = std::max(highest, ws.sweepSplit.bounds[1]);
        }
        const size_t later = allocations.load() - afterFirst;
        const size_t inRegions = parallelAllocations.load() - parallelBefore;
        INFO("scene " << scene << ": " << n << " spheres");
        REQUIRE(advanced);
        CHECK(sim.neighbours.rebuilds == rebuilds);
        CHECK(inRegions == 0);
        CHECK(later == 0);
        CHECK(lowest < n / 10);
        CHECK(highest > n * 8 / 10);
    }
}

TEST_CASE("A rebuild of a settled packing allocates nothing once its scratch has grown",
          "[allocation]") {
    for (int threads : {1, 2}) {
        ScopedThreads t(threads);
        Simulation sim = densePacking(10, 10, layersAboveThreshold());
        Workspace ws;
        warmUp(sim, ws);
        INFO(threads << " threads");
        CHECK(allocationsOver(sim, ws, 5, true) == 0);
    }
}

TEST_CASE("Rebuilds of a moving packing reorder it without allocating", "[allocation]") {
    // Enough spheres for the parallel reordering, each moving (at up to 0.1 m/s) so that the
    // rebuilds reorder them: the ring and the values kept aside come from reused scratch.
    ScopedThreads t(2);
    Simulation sim = allocationScene(3);
    REQUIRE(sim.particles.size() > 16384);
    Workspace ws;
    warmUp(sim, ws);
    allocationsOver(sim, ws, 10, true);
    const std::vector<uint32_t> idsBefore = sim.particles.id;
    CHECK(allocationsOver(sim, ws, 5, true) == 0);
    CHECK(sim.particles.id != idsBefore); // the rebuilds did reorder the spheres
}

TEST_CASE("Rebuilds ask for memory only outside parallel regions", "[allocation]") {
    // Running out of memory inside a parallel region ends the process without the run's summary
    // (app/OutOfMemory.cpp): what the lists need is grown between regions, from the first
    // rebuild, which lists from nothing, on. A skin five times as wide then lists several times the
    // pairs and more obstacle candidates, the buffers filled in parallel outgrowing their memory.
    // Every scene of allocationScene; the last's first rebuild moves most spheres further than the
    // reordering's ring holds (Particles::permute keeps them aside).
    ScopedThreads t(2);
    REQUIRE(omp_get_max_threads() == 2);
    for (int scene = 0; scene < 4; ++scene) {
        Simulation sim = allocationScene(scene);
        Workspace ws;
        const size_t parallelBefore = parallelAllocations.load();
        const size_t before = allocations.load();
        REQUIRE(advance(sim, ws));
        allocationsOver(sim, ws, 5, true);
        const size_t pairs = sim.pairs.size(), candidates = sim.obstacleContacts.size();
        sim.neighbours.skin *= 5;
        const size_t beforeWider = allocations.load();
        allocationsOver(sim, ws, 5, true);
        const size_t widerMade = allocations.load() - beforeWider;
        const size_t inRegions = parallelAllocations.load() - parallelBefore;
        INFO("scene " << scene << ": " << sim.particles.size() << " spheres, pairs " << pairs
                      << " -> " << sim.pairs.size() << ", obstacle candidates " << candidates
                      << " -> " << sim.obstacleContacts.size());
        CHECK(allocations.load() > before);
        CHECK(widerMade > 0); // the lists grew
        CHECK(sim.pairs.size() > 2 * pairs);
        CHECK((scene == 2 || sim.obstacleContacts.size() > candidates));
        CHECK(inRegions == 0);
    }
}
