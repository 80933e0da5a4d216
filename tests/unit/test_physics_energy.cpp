// Energy conservation of an elastic, frictionless granular gas in a closed box under gravity
// (physics.md §12.6, §12.8). The 20,000-step linear-law run is in tests/slow/test_energy_long.cpp.
#include "EnergyScene.hpp"

#include <catch2/catch.hpp>

using namespace dem;
using namespace dem::test;

TEST_CASE("Elastic Hertz gas in a box conserves energy over 20,000 steps", "[physics][energy]") {
    // 1000 spheres, Hertz, e = 1, friction 0, gravity: kinetic + potential + elastic is a
    // constant of the motion. Leapfrog is symplectic, so the discrete energy only fluctuates:
    // mid-step velocities give ~m v g dt/2 per sphere and elastic energies lag by one step
    // (~F v dt per contact), both ~1e-4 of the total here; collisions add O((w dt)^2.6) each
    // (~5e-5 at 80 steps per contact) with either sign. Tolerance 0.5 % of the initial total;
    // leaving out the elastic energy of the ~80 simultaneous contacts would miss it by ~2 %.
    const EnergyRun r = runGas(LawKind::HertzMindlin, 20000);
    INFO("max |E - E0| / E0 = " << r.maxDrift << ", final " << r.finalDrift
                                << ", contact-steps " << r.contacts);
    CHECK(r.contacts > 100000); // a gas of colliding spheres, not free flight
    CHECK(r.maxDrift < 5e-3);
}

TEST_CASE("Elastic linear gas in a box conserves energy (2,000 steps)", "[physics][energy]") {
    // The linear force jumps at contact onset, so each collision changes the energy by O(w dt)
    // with either sign (~1e-2 of that contact's energy at 80 steps per contact); their sum over
    // the run stays well within 0.5 %.
    const EnergyRun r = runGas(LawKind::Linear, 2000);
    INFO("max |E - E0| / E0 = " << r.maxDrift << ", final " << r.finalDrift);
    CHECK(r.contacts > 10000);
    CHECK(r.maxDrift < 5e-3);
}
