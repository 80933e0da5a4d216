// Contacts with moving obstacles: the obstacle's velocity enters the relative velocity at the
// contact point (Step.cpp objectVelocityAt; physics.md §3.2), and reactions on obstacles.
#include "SceneBuilder.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace dem;
using namespace dem::test;

TEST_CASE("A sphere dropped on a moving belt ends up rolling at 2/7 of its speed",
          "[contact][moving]") {
    // A sphere at rest on a wall (z = 0) that moves along x at V. Friction acts at the contact
    // point, so the sphere's angular momentum about that point is conserved (zero): once it rolls
    // on the belt, v = V / (1 + m a^2 / I) = 2V/7 (a = R - u/2, 3e-4 from R). The slipping phase
    // lasts (2V/7) / (mu g) = 0.05 s; the run lasts 0.2 s (Hertz-Mindlin e = 0.5 damps the shear
    // spring). Tolerance 0.5 %. The belt's reported force is the friction on it.
    ScopedThreads single(1);
    const double R = 0.01, rho = 2500, E = 1e8, nu = 0.25, g = 9.81, V = 0.5, mu = 0.3;
    SceneBuilder b;
    const int m = b.material(hertz(rho, E, nu, 0.5, std::atan(mu)));
    const int belt = b.wall(Vec3::Zero(), Vec3::UnitZ(), m, "belt");
    const double eStar = E / (2 * (1 - nu * nu)), mass = sphereMass(rho, R);
    const double u = std::pow(mass * g / (4.0 / 3.0 * eStar * std::sqrt(R)), 2.0 / 3.0);
    b.sphere(Vec3(0, 0, R - u), R, m);
    Motion mv;
    mv.object = belt;
    mv.velocity = Vec3(V, 0, 0);
    b.motion(mv).gravity(Vec3(0, 0, -g));
    Simulation sim = b.build(1e-5);
    Workspace ws;
    // Slipping: the friction force mu m g drags the sphere forward; the belt feels its reaction.
    REQUIRE(run(sim, ws, 1000));
    CHECK(sim.particles.vel[0].x() == Approx(mu * g * 0.01).epsilon(0.01));
    CHECK(sim.obstacles.objects[size_t(belt)].force.x() == Approx(-mu * mass * g).epsilon(1e-3));
    REQUIRE(run(sim, ws, 19000));
    const Particles& P = sim.particles;
    CHECK(P.vel[0].x() == Approx(2.0 / 7.0 * V).epsilon(0.005));
    // Rolling on the belt: the contact point moves with it, v - w_y a = V (w_y < 0).
    CHECK(P.vel[0].x() - P.angVel[0].y() * (R - u / 2) == Approx(V).epsilon(1e-4));
    CHECK(std::abs(P.vel[0].z()) < 1e-9);
    CHECK(sim.obstacles.objects[size_t(belt)].center.x() == Approx(V * 0.2).epsilon(1e-9));
}
