// Contact stiffnesses read from one step of a static overlap (physics.md §2.6, §4.1, §5.1, §8.1),
// and the P-wave time step (§10.2, §15).
#include "SceneBuilder.hpp"

#include "core/SphereLoad.hpp"
#include "core/TimeStep.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace dem;
using namespace dem::test;

namespace {

struct Probe {
    Vec3 normalForce, shearForce; // on the sphere that is body 2 (or the only sphere)
};

// One step with the given body-2 sphere displaced by `overlap` into body 1 (a sphere of radius
// r1 centred at the origin, or an obstacle whose surface passes through the origin with normal
// +z), moving tangentially at `vt` along +y. The contact law sees the start-of-step positions and
// the mid-step velocity, so F_N = K_N u and F_T = -K_T vt dt exactly after one step.
enum class Body1 { Sphere, Wall, Facet, Box };

Probe probe(const Material& m1, const Material& m2, Body1 kind, double r1, double r2, double u,
            double vt, double dt) {
    ScopedThreads single(1);
    SceneBuilder b;
    const int a = b.material(m1);
    const int c = b.material(m2);
    switch (kind) {
    case Body1::Sphere:
        b.sphere(Vec3::Zero(), r1, a);
        break;
    case Body1::Wall:
        b.wall(Vec3::Zero(), Vec3::UnitZ(), a);
        break;
    case Body1::Facet: {
        MeshSpec mesh;
        mesh.vertices = {Vec3(-1, -1, 0), Vec3(1, -1, 0), Vec3(0, 2, 0)};
        mesh.triangles = {{0, 1, 2}};
        b.mesh(mesh, a);
        break;
    }
    case Body1::Box:
        b.box(Vec3(0, 0, -0.5), Vec3(1, 1, 0.5), a);
        break;
    }
    const double z = kind == Body1::Sphere ? r1 + r2 - u : r2 - u;
    const size_t s = b.sphere(Vec3(0, 0, z), r2, c, Vec3(0, vt, 0));
    Simulation sim = b.build(dt);
    Workspace ws;
    REQUIRE(advance(sim, ws));
    Vec3 f;
    if (kind == Body1::Sphere) {
        REQUIRE(sim.pairs.size() == 1);
        REQUIRE(sim.pairs.touching(0));
        f = sim.pairs.record(0).force;
    } else {
        f = sphereLoad(sim, s).force;
    }
    return {Vec3(0, 0, f.z()), Vec3(f.x(), f.y(), 0)};
}

const double dt = 1e-6, vt = 1e-3; // tangential increment vt dt = 1e-9 m

// Forces are products of a few doubles: 1e-12 relative. The box works in its own frame, centred
// 0.5 m below the contact: the sphere centre there (0.51 m) carries a round-off of ~1e-16 x 0.5 m,
// 1e-11 of the 1e-5 m overlap, so 1e-9 for it.
double tolerance(Body1 kind) {
    return kind == Body1::Box ? 1e-9 : 1e-12;
}

} // namespace

TEST_CASE("Linear law stiffnesses follow Yade's series springs", "[contact][linear]") {
    // K_N = 2 E_a R_a E_b R_b / (E_a R_a + E_b R_b), K_T likewise with E nu (nu = K_T/K_N here),
    // R_a, R_b the reference radii: R for spheres, walls and boxes, 2R for facets.
    const double E = 1e8, ratio = 0.3, R = 0.01, u = 1e-5;
    const Material m = linear(2500, E, ratio, 1, std::atan(10.0));
    auto check = [&](Body1 kind, double r1, double r2, double kn) {
        const Probe p = probe(m, m, kind, r1, r2, u, vt, dt);
        const double tol = tolerance(kind);
        CHECK(p.normalForce.z() == Approx(kn * u).epsilon(tol));
        CHECK(p.shearForce.y() == Approx(-ratio * kn * vt * dt).epsilon(tol));
        CHECK(p.shearForce.x() == 0);
    };
    SECTION("equal spheres: K_N = E R, K_T / K_N = nu") {
        check(Body1::Sphere, R, R, E * R);
    }
    SECTION("unequal spheres: K_N = 2 E r1 r2 / (r1 + r2)") {
        check(Body1::Sphere, R, 2.5 * R, 2 * E * R * 2.5 * R / (3.5 * R));
    }
    SECTION("wall: K_N = E R") {
        check(Body1::Wall, 0, R, E * R);
    }
    SECTION("box face: K_N = E R") {
        check(Body1::Box, 0, R, E * R);
    }
    SECTION("facet: K_N = 4/3 E R (refR1 = 2R)") {
        check(Body1::Facet, 0, R, 4.0 / 3.0 * E * R);
    }
    SECTION("two materials") {
        const double Ea = 1e8, Eb = 3e8, ra = 0.01, rb = 0.02, na = 0.3, nb = 0.5;
        const Probe p = probe(linear(2500, Ea, na, 1, 1.5), linear(2500, Eb, nb, 1, 1.5),
                              Body1::Sphere, ra, rb, u, vt, dt);
        const double kn = 2 * Ea * ra * Eb * rb / (Ea * ra + Eb * rb);
        const double kt = 2 * Ea * ra * na * Eb * rb * nb / (Ea * ra * na + Eb * rb * nb);
        CHECK(p.normalForce.z() == Approx(kn * u).epsilon(1e-12));
        CHECK(p.shearForce.y() == Approx(-kt * vt * dt).epsilon(1e-12));
    }
}

TEST_CASE("Hertz-Mindlin stiffnesses", "[contact][hertz]") {
    // F_N = 4/3 E* sqrt(R* u) u, k_s = 8 G* sqrt(R* u); E* = (E/(1-nu^2))/2, G* = G/(2(2-nu))
    // for one material. R* = r1 r2/(r1+r2) for spheres and R for a flat obstacle.
    const double E = 1e8, nu = 0.25, R = 0.01, u = 1e-5;
    const double eStar = E / (2 * (1 - nu * nu));
    const double gStar = E / (2 * (1 + nu)) / (2 * (2 - nu));
    const Material m = hertz(2500, E, nu, 1, std::atan(10.0));
    for (const Body1 kind : {Body1::Sphere, Body1::Wall, Body1::Facet, Body1::Box}) {
        const double rStar = kind == Body1::Sphere ? 0.5 * R : R;
        const Probe p = probe(m, m, kind, R, R, u, vt, dt);
        INFO("body 1 kind " << int(kind));
        CHECK(p.normalForce.z() ==
              Approx(4.0 / 3.0 * eStar * std::sqrt(rStar * u) * u).epsilon(tolerance(kind)));
        CHECK(p.shearForce.y() ==
              Approx(-8 * gStar * std::sqrt(rStar * u) * vt * dt).epsilon(tolerance(kind)));
    }
}

TEST_CASE("Viscoelastic normal stiffness from contact time", "[contact][viscoelastic]") {
    // K_n = m_eff (pi^2 + ln^2 e_n) / t_c^2 with m_eff = m/2 for equal spheres, m for an obstacle
    // (infinite mass); K_s = 2/7 m_eff (pi^2 + ln^2 e_t) / t_c^2 (physics.md §8.1).
    const double R = 0.01, rho = 2500, tc = 1e-3, et = 0.7, u = 1e-5;
    const double mass = sphereMass(rho, R);
    const Material m = viscoElastic(rho, tc, 1.0, et, std::atan(10.0));
    for (const Body1 kind : {Body1::Sphere, Body1::Wall}) {
        const double mEff = kind == Body1::Sphere ? 0.5 * mass : mass;
        const double kn = mEff * pi * pi / (tc * tc);
        const double ks = 2.0 / 7.0 * mEff * (pi * pi + std::log(et) * std::log(et)) / (tc * tc);
        const double cs = -4.0 / 7.0 * mEff * std::log(et) / tc;
        const Probe p = probe(m, m, kind, R, R, u, vt, dt);
        CHECK(p.normalForce.z() == Approx(kn * u).epsilon(1e-12));
        // Elastic increment plus the shear dashpot (not sliding).
        CHECK(p.shearForce.y() == Approx(-ks * vt * dt - cs * vt).epsilon(1e-12));
    }
}

TEST_CASE("P-wave time step of Yade's documentation", "[contact][timestep]") {
    // R = 1e-3 m, rho = 2400, E = 30e9: R sqrt(rho/E) = 2.8284271247461903e-07 s (physics.md §15).
    SceneBuilder b;
    const int m = b.material(linear(2400, 30e9, 0.3));
    b.sphere(Vec3::Zero(), 1e-3, m);
    b.sphere(Vec3(1, 0, 0), 2e-3, m); // a larger sphere does not lower it
    const Simulation sim = b.build(1e-8);
    CHECK(pWaveTimeStep(sim) == Approx(2.8284271247461903e-07).epsilon(1e-15));
}
