// The step loop takes no memory from the heap once its scratch has grown to the scene: a loop that
// allocates can fail part way through a run, and fresh memory costs page faults the first time it
// is written. This executable counts every global operator new (it replaces them, which is why it
// is not part of dem_tests); the library builds the nothrow forms of aligned new on these.
#include "../unit/DeterminismScene.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<size_t> allocations{0};

void* counted(size_t n) {
    allocations.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(n ? n : 1))
        return p;
    throw std::bad_alloc();
}

// Over-aligned types (RecordBlock) come through these.
void* countedAligned(size_t n, std::align_val_t a) {
    allocations.fetch_add(1, std::memory_order_relaxed);
    const size_t align = size_t(a);
    if (void* p = std::aligned_alloc(align, (n + align - 1) / align * align))
        return p;
    throw std::bad_alloc();
}
} // namespace

void* operator new(size_t n, std::align_val_t a) {
    return countedAligned(n, a);
}
void* operator new[](size_t n, std::align_val_t a) {
    return countedAligned(n, a);
}
void operator delete(void* p, std::align_val_t) noexcept {
    std::free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
    std::free(p);
}
void operator delete(void* p, size_t, std::align_val_t) noexcept {
    std::free(p);
}
void operator delete[](void* p, size_t, std::align_val_t) noexcept {
    std::free(p);
}

void* operator new(size_t n) {
    return counted(n);
}
void* operator new[](size_t n) {
    return counted(n);
}
void* operator new(size_t n, const std::nothrow_t&) noexcept {
    try {
        return counted(n);
    } catch (const std::bad_alloc&) {
        return nullptr;
    }
}
void* operator new[](size_t n, const std::nothrow_t& tag) noexcept {
    return operator new(n, tag);
}
void operator delete(void* p) noexcept {
    std::free(p);
}
void operator delete[](void* p) noexcept {
    std::free(p);
}
void operator delete(void* p, size_t) noexcept {
    std::free(p);
}
void operator delete[](void* p, size_t) noexcept {
    std::free(p);
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
