// The step loop takes no memory from the heap once its scratch has grown to the scene: a loop that
// allocates can fail part way through a run, and fresh memory costs page faults the first time it
// is written. This executable counts every global operator new (ReplacedNew.hpp).
#include "../unit/DeterminismScene.hpp"
#include "ReplacedNew.hpp"

#include <catch2/catch.hpp>

#include <atomic>

namespace {
std::atomic<size_t> allocations{0};
} // namespace

void* testAllocate(size_t n, size_t align) {
    allocations.fetch_add(1, std::memory_order_relaxed);
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
    // thread slow for ten steps, then the second. The bound moves a quarter of a range per step,
    // to a twentieth of the spheres and back, through ranges the warm-up never saw. In a periodic
    // cell, spheres at the end of the order wait for pairs across the faces.
    for (bool periodic : {false, true}) {
        ScopedThreads t(2);
        Simulation sim = periodic ? shearedPacking(layersAboveThreshold(), 0, 0)
                                  : densePacking(10, 10, layersAboveThreshold());
        Workspace ws;
        warmUp(sim, ws);
        const size_t before = allocations.load();
        size_t lowest = sim.particles.size(), highest = 0;
        for (int k = 0; k < 20; ++k) {
            REQUIRE(ws.sweepSplit.seconds.size() == 2);
            ws.sweepSplit.seconds[0] = k < 10 ? 0.99 : 0.01;
            ws.sweepSplit.seconds[1] = 1 - ws.sweepSplit.seconds[0];
            REQUIRE(advance(sim, ws));
            lowest = std::min(lowest, ws.sweepSplit.bounds[1]);
            highest = std::max(highest, ws.sweepSplit.bounds[1]);
        }
        const size_t made = allocations.load() - before;
        INFO((periodic ? "periodic" : "box of walls"));
        CHECK(made == 0);
        CHECK(lowest < sim.particles.size() / 10);
        CHECK(highest > sim.particles.size() * 8 / 10);
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
    Simulation sim = densePacking(20, 20, 42);
    REQUIRE(sim.particles.size() > 16384);
    Workspace ws;
    warmUp(sim, ws);
    allocationsOver(sim, ws, 10, true);
    const std::vector<uint32_t> idsBefore = sim.particles.id;
    CHECK(allocationsOver(sim, ws, 5, true) == 0);
    CHECK(sim.particles.id != idsBefore); // the rebuilds did reorder the spheres
}
