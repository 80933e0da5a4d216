// Bit-for-bit reproducibility for any thread count (physics.md §1 "Determinism"): every
// per-sphere sum is gathered in a fixed order, so 1, 2 and 3 threads give the same state digest.
// Note: under a heavily loaded machine each OpenMP barrier can cost a scheduler time slice, so
// multi-threaded steps are kept few here.
// The 5000-step run is in tests/slow/test_determinism_long.cpp.
#include "DeterminismScene.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace dem;
using namespace dem::test;

TEST_CASE("Thread count does not change the trajectory", "[determinism]") {
    // More spheres than parallelThreshold (2048), so the pair loop, the per-sphere gather and the
    // Verlet build really run on several threads. All spheres start in contact with their
    // neighbours or the walls; digests are compared every 50 steps so a divergence is located.
    // Any order-dependent floating-point sum would change the last bits within a few steps.
    // Three threads split the spheres unevenly.
    const Simulation sim = densePacking(10, 10, layersAboveThreshold());
    REQUIRE(sim.particles.size() > parallelThreshold);
    const auto one = digests(sim, 1, 200, 50);
    const auto two = digests(sim, 2, 200, 50);
    const auto three = digests(sim, 3, 50, 50); // oversubscribed on 2 cores: kept short
    for (size_t k = 0; k < one.size(); ++k) {
        INFO("after " << (k + 1) * 50 << " steps");
        CHECK(one[k] == two[k]);
        if (k < three.size())
            CHECK(one[k] == three[k]);
    }
    // The run is not trivially static: one more step changes the digest.
    CHECK(digests(sim, 1, 201, 201).back() != one.back());
}

TEST_CASE("Running twice gives the same digest; a one-ulp change does not", "[determinism]") {
    Simulation sim = densePacking(5, 5, 4);
    const auto a = digests(sim, 1, 300, 300);
    const auto b = digests(sim, 1, 300, 300);
    CHECK(a == b);
    sim.particles.pos[17].x() = std::nextafter(sim.particles.pos[17].x(), 1.0);
    CHECK(digests(sim, 1, 300, 300) != a);
}
