// Energy conservation of an elastic, frictionless granular gas in a closed box under gravity
// (physics.md §12.6, §12.8). The 20,000-step linear-law run is in tests/slow/test_energy_long.cpp.
#include "EnergyScene.hpp"

#include <string>

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
    INFO("max |E - E0| / E0 = " << r.maxDrift << ", final " << r.finalDrift << ", contact-steps "
                                << r.contacts);
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

TEST_CASE("Contact dissipation accounts for the energy lost in an impact", "[physics][energy]") {
    // One oblique impact (normal 1 m/s, tangential 1.2 m/s), no gravity, e = 0.5: the kinetic
    // energy lost must equal the 'dissipated_contacts' measure (dashpots + Coulomb slip). The
    // law's dissipation uses the step's mid-step velocities, so the balance holds to O(dt/t_c)
    // ~ 1e-4 at dt = 1e-7 s; tolerance 1e-3. Hertz-Mindlin is run frictionless: its
    // incremental shear spring with a stiffness that follows the overlap (k_s ~ sqrt(u)) is not
    // conservative, so with friction the books only close to ~2 %.
    using dem::test::ScopedThreads;
    for (const LawKind law : {LawKind::Linear, LawKind::HertzMindlin, LawKind::ViscoElastic}) {
        for (const bool wall : {false, true}) {
            ScopedThreads single(1);
            SceneBuilder b;
            const double R = 0.01, mu = 0.3;
            const Material mat =
                law == LawKind::Linear         ? linear(2500, 1e8, 0.25, 0.5, std::atan(mu))
                : law == LawKind::HertzMindlin ? hertz(2500, 1e8, 0.25, 0.5, 0)
                                               : viscoElastic(2500, 5e-4, 0.5, 0.6, std::atan(mu));
            const int m = b.material(mat);
            if (wall) {
                b.wall(Vec3::Zero(), Vec3::UnitZ(), m);
                b.sphere(Vec3(0, 0, R + 1e-5), R, m, Vec3(1.2, 0, -1));
            } else {
                b.sphere(Vec3(-R - 1e-5, 0, 0), R, m, Vec3(0.5, 0.6, 0));
                b.sphere(Vec3(R + 1e-5, 0, 0), R, m, Vec3(-0.5, -0.6, 0));
            }
            Simulation sim = b.build(1e-7);
            MeasureRef kinetic, dissipated;
            std::string error;
            REQUIRE(parseMeasure("kinetic_energy", sim, kinetic, error));
            REQUIRE(parseMeasure("dissipated_contacts", sim, dissipated, error));
            Workspace ws;
            const double k0 = evaluate(sim, kinetic);
            REQUIRE(run(sim, ws, 20000)); // 2 ms: the contact is over
            REQUIRE(contactCount(sim) == 0);
            const double lost = k0 - evaluate(sim, kinetic);
            INFO(lawName(law) << (wall ? " sphere-wall" : " sphere-sphere") << ": lost " << lost
                              << ", dissipated " << evaluate(sim, dissipated));
            CHECK(lost > 0.25 * k0); // normal part (41 % of k0) loses 1 - e^2 = 75 %
            CHECK(evaluate(sim, dissipated) == Approx(lost).epsilon(1e-3));
        }
    }
}
