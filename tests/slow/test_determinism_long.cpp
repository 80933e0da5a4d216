// Thread-count independence on the full dense packing (fast variant in tests/unit).
#include "../unit/DeterminismScene.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace dem;
using namespace dem::test;

TEST_CASE("Thread count does not change the trajectory over 5000 steps", "[determinism]") {
    // 2400 spheres: the brief's 2000 would sit below parallelThreshold (2048) and run serially
    // whatever the thread count.
    const Simulation sim = densePacking(10, 10, std::max(24, layersAboveThreshold()));
    REQUIRE(sim.particles.size() > parallelThreshold);
    const auto one = digests(sim, 1, 5000, 500);
    const auto two = digests(sim, 2, 5000, 500);
    for (size_t k = 0; k < one.size(); ++k) {
        INFO("after " << (k + 1) * 500 << " steps");
        CHECK(one[k] == two[k]);
    }
}
