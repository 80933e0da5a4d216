// The Coulomb limit bounds the whole tangential force: a frictionless contact (mu = 0) transmits
// no tangential force at all, whatever its restitution (physics.md §5.2, §8.2).
#include "SceneBuilder.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace dem;
using namespace dem::test;

namespace {

// A sphere (R = 0.01 m) resting on a horizontal wall at its equilibrium overlap, sliding at 1 m/s
// along x without spin, gravity -9.81 z, for 2000 steps; returns its final velocity and spin.
std::pair<Vec3, Vec3> slideFrictionless(const Material& mat, double overlap) {
    ScopedThreads single(1);
    SceneBuilder b;
    const int m = b.material(mat);
    b.wall(Vec3::Zero(), Vec3::UnitZ(), m);
    b.sphere(Vec3(0, 0, 0.01 - overlap), 0.01, m, Vec3(1, 0, 0));
    b.gravity(Vec3(0, 0, -9.81));
    Simulation sim = b.build(1e-5);
    Workspace ws;
    REQUIRE(run(sim, ws, 2000));
    REQUIRE(sim.obstacleContacts.touching[0] == 1); // still in contact: it slid, it did not fly
    return {sim.particles.vel[0], sim.particles.angVel[0]};
}

} // namespace

TEST_CASE("A frictionless contact has no tangential damping either", "[contact][friction]") {
    // mu = 0: |F_T| <= mu |F_N| = 0, so the shear dashpot (c_s from e < 1) must not act; the
    // sphere keeps sliding at exactly 1 m/s and never spins. Tolerance: round-off (1e-12).
    const double R = 0.01, rho = 2500, g = 9.81, mass = sphereMass(rho, R);
    SECTION("Hertz-Mindlin, e = 0.5") {
        const double eStar = 1e8 / (2 * (1 - 0.25 * 0.25));
        const double u = std::pow(mass * g / (4.0 / 3.0 * eStar * std::sqrt(R)), 2.0 / 3.0);
        const auto [v, w] = slideFrictionless(hertz(rho, 1e8, 0.25, 0.5, 0.0), u);
        CHECK(v.x() == Approx(1).epsilon(1e-12));
        CHECK(w.norm() < 1e-12);
    }
    SECTION("viscoelastic, e_n = e_t = 0.5") {
        const double tc = 1e-3, ln = std::log(0.5);
        const double kn = mass * (pi * pi + ln * ln) / (tc * tc); // m_eff = m against a wall
        const auto [v, w] = slideFrictionless(viscoElastic(rho, tc, 0.5, 0.5, 0.0), mass * g / kn);
        CHECK(v.x() == Approx(1).epsilon(1e-12));
        CHECK(w.norm() < 1e-12);
    }
}

TEST_CASE("The stored shear force turns with a common spin about the normal",
          "[contact][friction]") {
    // Two touching spheres along x, held kinematically (all DOFs blocked: zero velocity, both
    // spinning at w = 10 rad/s about +x, the contact normal). The contact point is on the spin
    // axis, so there is no slip; the material around the contact turns rigidly about +x, and the
    // tangential spring must turn with it (physics.md §3.2: a <- a - a x (dt/2 n.(w1 + w2)) n).
    // After N = 1e4 steps (dt = 1e-5 s) a shear force F0 y becomes F0 (cos t, sin t) in (y, z),
    // t = N w dt = 1 rad.
    // The first-order rotation is exact in angle to t dt^2 w^2/3 ~ 1e-8 and lengthens the vector
    // by (1 + (w dt)^2)^(N/2) - 1 = 5e-5. Tolerances 1e-6 rad and 1e-4.
    ScopedThreads single(1);
    for (const LawKind law : {LawKind::Linear, LawKind::HertzMindlin, LawKind::ViscoElastic}) {
        SceneBuilder b;
        const Material mat = law == LawKind::Linear         ? linear(2500, 1e8, 0.25, 1, 1.5)
                             : law == LawKind::HertzMindlin ? hertz(2500, 1e8, 0.25, 1, 1.5)
                                                            : viscoElastic(2500, 5e-4, 1, 1, 1.5);
        const int m = b.material(mat);
        const Vec3 w(10, 0, 0);
        b.sphere(Vec3(0, 0, 0), 0.01, m, Vec3::Zero(), w);
        b.sphere(Vec3(0.0199, 0, 0), 0.01, m, Vec3::Zero(), w);
        const double dt = 1e-5;
        Simulation sim = b.build(dt);
        sim.particles.setBlocked(0, BlockAll);
        sim.particles.setBlocked(1, BlockAll);
        Workspace ws;
        REQUIRE(advance(sim, ws));
        REQUIRE(sim.pairs.size() == 1);
        REQUIRE(sim.pairs.touching(0));
        const double f0 = 1e-3; // well below mu F_N (mu = tan 1.5 = 14)
        sim.pairs.record(0).shear = Vec3(0, f0, 0);
        REQUIRE(run(sim, ws, 10000));
        const Vec3 s = sim.pairs.record(0).shear;
        INFO(lawName(law) << ": shear " << s.transpose());
        CHECK(std::abs(s.x()) < 1e-12 * f0);
        CHECK(std::atan2(s.z(), s.y()) == Approx(10000 * 10 * dt).margin(1e-6));
        CHECK(s.norm() == Approx(f0).epsilon(1e-4));
    }
}

TEST_CASE("Obstacle contact shear turns with the mean spin about the normal",
          "[contact][friction]") {
    // A kinematic sphere spinning at w about the normal of a wall it touches (contact point on
    // the axis, no slip): the stored shear turns by (dt/2) n.(w_sphere + w_wall) per step
    // (physics.md §3.2) - half the spin on a fixed wall, all of it when the wall turns with the
    // sphere (a rigid rotation). N w dt = 1 rad; tolerances as for sphere pairs.
    ScopedThreads single(1);
    for (const bool wallTurns : {false, true}) {
        SceneBuilder b;
        const int m = b.material(hertz(2500, 1e8, 0.25, 1, 1.5));
        const int wall = b.wall(Vec3::Zero(), Vec3::UnitZ(), m);
        b.sphere(Vec3(0, 0, 0.0099), 0.01, m, Vec3::Zero(), Vec3(0, 0, 10));
        if (wallTurns) {
            Motion turn;
            turn.kind = Motion::Kind::Rotation;
            turn.object = wall;
            turn.axis = Vec3::UnitZ();
            turn.angularVelocity = 10;
            b.motion(turn);
        }
        const double dt = 1e-5;
        Simulation sim = b.build(dt);
        sim.particles.setBlocked(0, BlockAll);
        Workspace ws;
        REQUIRE(advance(sim, ws));
        REQUIRE(sim.obstacleContacts.size() == 1);
        REQUIRE(sim.obstacleContacts.touching[0] == 1);
        const double f0 = 1e-3;
        sim.obstacleContacts.shear[0] = Vec3(f0, 0, 0);
        REQUIRE(run(sim, ws, 10000));
        const Vec3 s = sim.obstacleContacts.shear[0];
        INFO((wallTurns ? "turning wall" : "fixed wall") << ": shear " << s.transpose());
        const double turn = (wallTurns ? 1.0 : 0.5) * 10000 * 10 * dt;
        CHECK(std::abs(s.z()) < 1e-12 * f0);
        CHECK(std::atan2(s.y(), s.x()) == Approx(turn).margin(1e-6));
        CHECK(s.norm() == Approx(f0).epsilon(1e-4));
    }
}
