// Contacts with moving obstacles: the obstacle's velocity enters the relative velocity at the
// contact point (Step.cpp objectVelocityAt; physics.md §3.2), and reactions on obstacles.
#include "SceneBuilder.hpp"

#include "core/Measures.hpp"
#include "core/SphereLoad.hpp"

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

TEST_CASE("Touching spheres of a moved group get finite contact forces", "[contact][moving]") {
    // A group with an imposed velocity has all its spheres' DOFs blocked (infinite mass). Two of
    // them overlapping by u = 1e-4 m move together, so their contact is static: the force
    // between them is the spring's, E R u = 100 N for the linear law, and must be reported as
    // such, not as NaN from an infinite effective mass in the dashpot (c_n = 2 beta sqrt(m k),
    // inf x 0 when they do not approach). The energy sums and the unbalanced force must stay
    // finite too, for every law and restitution.
    for (const LawKind law : {LawKind::Linear, LawKind::HertzMindlin, LawKind::ViscoElastic}) {
        for (const double e : {0.5, 1.0}) {
            ScopedThreads single(1);
            SceneBuilder b;
            const Material mat = law == LawKind::Linear ? linear(2500, 1e8, 0.25, e, 0.3)
                                 : law == LawKind::HertzMindlin
                                     ? hertz(2500, 1e8, 0.25, e, 0.3)
                                     : viscoElastic(2500, 5e-4, e, e, 0.3);
            const int m = b.material(mat);
            const int plate = b.group("plate");
            b.sphere(Vec3(0, 0, 0), 0.01, m, Vec3::Zero(), Vec3::Zero(), -1, 1u << plate);
            b.sphere(Vec3(0.0199, 0, 0), 0.01, m, Vec3::Zero(), Vec3::Zero(), -1, 1u << plate);
            b.sphere(Vec3(0.01, 0, 0.018), 0.01, m); // a free sphere landing on the plate
            Motion lift;
            lift.group = plate;
            lift.velocity = Vec3(0, 0, 0.1);
            b.motion(lift).gravity(Vec3(0, 0, -9.81));
            Simulation sim = b.build(1e-6);
            Workspace ws;
            REQUIRE(run(sim, ws, 5000));
            INFO(lawName(law) << ", e = " << e);
            const Particles& P = sim.particles;
            CHECK(isFinite(sphereLoad(sim, 0).force));
            CHECK(isFinite(sphereLoad(sim, 1).force));
            CHECK(std::isfinite(sim.energy.contactDissipated));
            CHECK(std::isfinite(unbalancedForce(sim)));
            CHECK(sim.pairs.size() == 3); // the free sphere is on the plate
            const SpherePairs& S = sim.pairs;
            REQUIRE(S.start[1] > 0); // pair 0 is one of sphere 0's
            REQUIRE(S.j[0] == 1);    // pairs are sorted by (i, j): the plate's own contact first
            CHECK(S.touching(0));
            CHECK(isFinite(S.record(0).force));
            if (law == LawKind::Linear)
                CHECK(S.record(0).force.x() == Approx(1e8 * 0.01 * 1e-4).epsilon(1e-9));
            CHECK(P.pos[0].z() == Approx(0.1 * 5000 * 1e-6).epsilon(1e-9)); // kinematic
        }
    }
}

TEST_CASE("A turning wall drags a sphere with its velocity at the contact point",
          "[contact][moving]") {
    // A floor wall turning at W about the z axis through the origin; a sphere held at rest at
    // (r0, 0, R - u). The wall's velocity at the contact point is W z x (r0, 0, -u/2) = W r0 y,
    // so after one step the tangential spring (linear, K_T = nu E R) holds
    // F_T = -K_T dt (v_sphere - v_wall) = K_T dt W r0 y on the sphere. Tolerance 1e-12.
    ScopedThreads single(1);
    const double R = 0.01, E = 1e8, ratio = 0.3, u = 1e-5, r0 = 0.05, W = 2, dt = 1e-6;
    SceneBuilder b;
    const int m = b.material(linear(2500, E, ratio, 1, 1.5));
    const int wall = b.wall(Vec3::Zero(), Vec3::UnitZ(), m);
    b.sphere(Vec3(r0, 0, R - u), R, m);
    Motion turn;
    turn.kind = Motion::Kind::Rotation;
    turn.object = wall;
    turn.axis = Vec3::UnitZ();
    turn.angularVelocity = W;
    b.motion(turn);
    Simulation sim = b.build(dt);
    sim.particles.setBlocked(0, BlockAll);
    Workspace ws;
    REQUIRE(advance(sim, ws));
    const Vec3 f = sphereLoad(sim, 0).force;
    CHECK(f.z() == Approx(E * R * u).epsilon(1e-12));
    CHECK(f.y() == Approx(ratio * E * R * dt * W * r0).epsilon(1e-12));
    CHECK(std::abs(f.x()) < 1e-15);
    // The wall reports the reaction and its torque about its axis: -F_T r0 about z.
    CHECK(sim.obstacles.objects[size_t(wall)].torque.z() == Approx(-f.y() * r0).epsilon(1e-9));
}
