// Oblique frictional sphere-sphere impacts: tangential impulse of a sliding contact against
// Coulomb's law, and exact conservation of linear and angular momentum (pair forces and torques
// act at one common contact point; physics.md §3.2, §4.3, §5.2).
#include "SceneBuilder.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace dem;
using namespace dem::test;

namespace {

constexpr double R = 0.01, rho = 2500, E = 1e8, nu = 0.25;

struct Momenta {
    Vec3 linear, angular; // about the origin: sum m x x v + I w
};

// With leapfrog, J_n = sum m x_n x v_{n-1/2} + I w_{n-1/2} changes by dt sum (x_n x F_n + T_n),
// which is zero when each pair's forces are opposite and act at one point; after a step the
// state holds x_{n+1}, v_{n+1/2}, and x_{n+1} x v_{n+1/2} = x_n x v_{n+1/2}, so J is evaluated
// from the stored state directly.
Momenta momenta(const Simulation& sim) {
    const Particles& P = sim.particles;
    Momenta m{Vec3::Zero(), Vec3::Zero()};
    for (size_t p = 0; p < P.size(); ++p) {
        m.linear += P.mass(p) * P.vel[p];
        m.angular += P.mass(p) * P.pos[p].cross(P.vel[p]) + P.inertia(p) * P.angVel[p];
    }
    return m;
}

} // namespace

TEST_CASE("Sliding oblique impact: tangential impulse = mu x normal impulse",
          "[contact][oblique]") {
    // Equal spheres, Hertz-Mindlin, mu = 0.1, approach 1 m/s along x and 1 m/s of relative
    // tangential velocity along y, no spin. The slip velocity drops by at most
    // 3.5 mu (1 + e) v_n = 0.7 m/s < 1 m/s, so the contact slides throughout (after the few
    // steps the elastic shear needs to reach mu F_N), and while sliding the law's tangential
    // force is exactly mu F_N. The centres pass each other by ~1 mm during the contact, turning
    // the normal by ~0.05 rad, so impulses are summed in the contact frame of each step:
    // J_t / J_n = mu up to the start-up steps' share (< 1e-3). Tolerance 1e-3.
    // e = 1: with e < 1 the law (as Yade's, physics.md §5.2) adds the shear dashpot -c_s v_t
    // whenever the *elastic* shear is below mu F_N, without bounding the total; at the onset of
    // an impact with tangential velocity that dashpot force dominates (|F_T| ~ 0.9 F_N at
    // e = 0.5), and J_t / J_n comes out ~0.12 instead of 0.1. That is the specified law, so
    // Coulomb's equality is only checked without damping.
    ScopedThreads single(1);
    const double mu = 0.1, e = 1.0, dt = 1e-7;
    SceneBuilder b;
    const int m = b.material(hertz(rho, E, nu, e, std::atan(mu)));
    const double gap = 2e-5;
    b.sphere(Vec3(-R - gap / 2, 0, 0), R, m, Vec3(0.5, -0.5, 0));
    b.sphere(Vec3(R + gap / 2, 0, 0), R, m, Vec3(-0.5, 0.5, 0));
    Simulation sim = b.build(dt);
    Workspace ws;
    const Particles& P = sim.particles;
    double jn = 0, jt = 0, jtArm = 0;
    int contactSteps = 0, aboveCoulomb = 0;
    bool touched = false;
    for (int k = 0; k < 20000; ++k) {
        const Vec3 d = P.pos[1] - P.pos[0];
        const Vec3 n = d.normalized();
        const double u = 2 * R - d.norm();
        REQUIRE(advance(sim, ws));
        const bool touching = sim.pairs.size() == 1 && sim.pairs.touching(0);
        if (touching) {
            const Vec3 f = sim.pairs.record(0).force; // on sphere 1
            const double fn = f.dot(n), ft = (f - fn * n).norm();
            jn += fn * dt;
            jt += ft * dt;
            jtArm += (R - u / 2) * ft * dt;
            ++contactSteps;
            aboveCoulomb += ft > mu * fn * (1 + 1e-12);
        }
        touched = touched || touching;
        if (touched && !touching)
            break;
    }
    REQUIRE(touched);
    INFO("contact steps " << contactSteps << ", above mu F_N " << aboveCoulomb);
    CHECK(aboveCoulomb == 0);                   // Coulomb bound: |F_T| <= mu F_N at every step
    CHECK(jt / jn == Approx(mu).epsilon(1e-3)); // and equality while sliding
    // The friction torque acts at the law's arm R - u/2 on both spheres: I dw_z = sum a F_t dt
    // (equal to R J_t to within u_max/2R = 1.4 %, u_max = 2.79e-4 m as in the Hertz impact).
    CHECK(P.inertia(1) * P.angVel[1].z() == Approx(jtArm).epsilon(1e-9));
    CHECK(P.inertia(0) * P.angVel[0].z() == Approx(jtArm).epsilon(1e-9));
    CHECK(jtArm == Approx(R * jt).epsilon(0.014));
    CHECK(jtArm < R * jt);
}

TEST_CASE("Oblique impacts conserve linear and angular momentum exactly", "[contact][oblique]") {
    // Two unequal spheres with spins in 3D, sticking then sliding (mu = 0.5), for each law; the
    // momenta about the origin must be conserved to round-off (1e-12 of m R v) through the
    // whole contact, which fails if either sphere's torque has the wrong sign or arm.
    for (const LawKind law : {LawKind::Linear, LawKind::HertzMindlin, LawKind::ViscoElastic}) {
        ScopedThreads single(1);
        SceneBuilder b;
        const Material mat = law == LawKind::Linear ? linear(rho, E, 0.3, 0.6, std::atan(0.5))
                             : law == LawKind::HertzMindlin
                                 ? hertz(rho, E, nu, 0.6, std::atan(0.5))
                                 : viscoElastic(rho, 5e-4, 0.6, 0.7, std::atan(0.5));
        const int m = b.material(mat);
        b.sphere(Vec3(0.003, 0.004, -0.002), R, m, Vec3(0.8, 0.3, -0.2), Vec3(30, -50, 20));
        b.sphere(Vec3(0.003 + 0.0249, 0.004 + 0.004, -0.002 + 0.003), 1.5 * R, m,
                 Vec3(-0.6, -0.1, 0.4), Vec3(-10, 40, 70));
        Simulation sim = b.build(1e-7);
        Workspace ws;
        const Momenta before = momenta(sim);
        const double scale = sim.particles.mass(1) * 1.5 * R * 1.0;
        double worstL = 0, worstP = 0;
        int contactSteps = 0;
        for (int k = 0; k < 10000; ++k) {
            REQUIRE(advance(sim, ws));
            contactSteps += sim.pairs.size() == 1 && sim.pairs.touching(0);
            const Momenta now = momenta(sim);
            worstL = std::max(worstL, (now.angular - before.angular).norm());
            worstP = std::max(worstP, (now.linear - before.linear).norm());
        }
        INFO(lawName(law) << ": contact steps " << contactSteps);
        CHECK(contactSteps > 100);
        CHECK(worstP < 1e-12 * sim.particles.mass(1));
        CHECK(worstL < 1e-12 * scale);
    }
}
