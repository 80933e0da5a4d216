// Thread-count independence on the full dense packing (fast variant in tests/unit).
#include "../unit/DeterminismScene.hpp"

#include <catch2/catch.hpp>

using namespace dem;
using namespace dem::test;

TEST_CASE("Thread count does not change the trajectory (2000 spheres, 5000 steps)",
          "[determinism]") {
    const Simulation sim = densePacking(10, 10, 20);
    REQUIRE(sim.particles.size() == 2000);
    const auto one = digests(sim, 1, 5000, 500);
    const auto two = digests(sim, 2, 5000, 500);
    for (size_t k = 0; k < one.size(); ++k) {
        INFO("after " << (k + 1) * 500 << " steps");
        CHECK(one[k] == two[k]);
    }
}
