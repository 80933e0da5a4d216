// Long energy-conservation run of the linear law (the Hertz one is in the fast suite).
#include "../unit/EnergyScene.hpp"

#include <catch2/catch.hpp>

using namespace dem;
using namespace dem::test;

TEST_CASE("Elastic linear gas in a box conserves energy over 20,000 steps", "[physics][energy]") {
    // As the fast 2,000-step variant: collision errors O(w dt) of either sign, ~1e-2 of one
    // contact's energy each, no drift. Tolerance 0.5 % of the initial total.
    const EnergyRun r = runGas(LawKind::Linear, 20000);
    INFO("max |E - E0| / E0 = " << r.maxDrift << ", final " << r.finalDrift);
    CHECK(r.contacts > 100000);
    CHECK(r.maxDrift < 5e-3);
}
