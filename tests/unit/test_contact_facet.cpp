// Spheres on welded facet meshes: one contact per touched feature (face, edge or vertex), the
// exact weight on the mesh wherever the sphere sits, and smooth rolling across facet edges with
// the tangential history carried from facet to facet (physics.md §2.4; Obstacles.hpp).
#include "SceneBuilder.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace dem;
using namespace dem::test;

namespace {

constexpr double R = 0.01, rho = 2500, E = 1e8, nu = 0.25, g = 9.81;
constexpr double h = 0.02; // grid spacing: 4 x 4 squares of 2R, 32 triangles

// Equilibrium overlap of a Hertzian sphere resting on a flat obstacle of the same material
// (R* = R, E* = E / (2 (1 - nu^2))): m g = 4/3 E* sqrt(R) u^(3/2).
double restingOverlap() {
    const double eStar = E / (2 * (1 - nu * nu));
    return std::pow(sphereMass(rho, R) * g / (4.0 / 3.0 * eStar * std::sqrt(R)), 2.0 / 3.0);
}

size_t touchingObstacleContacts(const Simulation& sim) {
    size_t c = 0;
    for (uint8_t t : sim.obstacleContacts.touching)
        c += t;
    return c;
}

} // namespace

TEST_CASE("A sphere resting on a facet mesh feels exactly its weight", "[contact][facet]") {
    // Wherever the sphere sits (face interior, shared edge, vertex of 6 triangles) the mesh must
    // report exactly one contact and carry m g: at equilibrium the step's contact force balances
    // gravity (a = F/m + g = 0). Hertz-Mindlin e = 0.5 plus Cundall damping 0.3 settle the normal
    // oscillation (w ~ 1.5e3 rad/s, decay ~ 3e2 /s) from a 50 % overlap error to far below 1e-6
    // within 0.1 s. Tolerance: 1e-6 of m g.
    const struct {
        const char* where;
        double x, y;
    } spots[] = {
        {"face interior", 1.7 * h, 1.2 * h},
        {"edge between two squares (y = const)", 1.5 * h, 2 * h},
        {"edge between two squares (x = const)", 2 * h, 1.5 * h},
        {"diagonal edge inside a square", 1.5 * h, 1.5 * h},
        {"vertex shared by 6 triangles", 2 * h, 2 * h},
        {"boundary vertex shared by 2 triangles", 0, 0},
    };
    const double mg = sphereMass(rho, R) * g;
    for (const auto& spot : spots) {
        ScopedThreads single(1);
        SceneBuilder b;
        const int m = b.material(hertz(rho, E, nu, 0.5, std::atan(0.5)));
        const MeshSpec grid = flatGrid(4, 4, h);
        REQUIRE(grid.triangles.size() == 32);
        const int mesh = b.mesh(grid, m, "floor");
        b.sphere(Vec3(spot.x, spot.y, R - 0.5 * restingOverlap()), R, m);
        b.gravity(Vec3(0, 0, -g)).damping(0.3);
        Simulation sim = b.build(1e-5);
        Workspace ws;
        REQUIRE(run(sim, ws, 10000));
        INFO(spot.where);
        const Vec3 f = sim.obstacles.objects[size_t(mesh)].force; // reaction on the mesh
        CHECK(f.z() == Approx(-mg).epsilon(1e-6));
        CHECK(std::hypot(f.x(), f.y()) < 1e-9 * mg);
        // Its torque about the mesh centre (2h, 2h, 0): the weight at the contact point under
        // the sphere, (x - 2h, y - 2h, .) x (0, 0, -m g).
        const Vec3 torque = sim.obstacles.objects[size_t(mesh)].torque;
        CHECK(torque.x() == Approx(-mg * (spot.y - 2 * h)).margin(1e-9 * mg * h));
        CHECK(torque.y() == Approx(mg * (spot.x - 2 * h)).margin(1e-9 * mg * h));
        CHECK(std::abs(torque.z()) < 1e-9 * mg * h);
        CHECK(touchingObstacleContacts(sim) == 1);
        CHECK(sim.particles.pos[0].z() == Approx(R - restingOverlap()).epsilon(1e-9));
        // No lateral drift: the contact normal is vertical at every feature.
        CHECK(std::hypot(sim.particles.pos[0].x() - spot.x, sim.particles.pos[0].y() - spot.y) <
              1e-12);
    }
}

namespace {

struct Rolling {
    std::vector<Vec3> pos, vel;
    size_t maxContacts = 0, minContacts = 1000;
};

// A Hertz-Mindlin sphere (friction 0.5, e = 1, no Cundall damping) on a flat floor, either the
// 32-triangle mesh or a single wall through the same plane, started at the resting overlap with
// velocity v0 and angular velocity w0, optionally pushed by a constant horizontal force.
Rolling roll(bool onMesh, const Vec3& x0, const Vec3& v0, const Vec3& w0, const Vec3& push,
             int steps) {
    ScopedThreads single(1);
    SceneBuilder b;
    const int m = b.material(hertz(rho, E, nu, 1.0, std::atan(0.5)));
    if (onMesh)
        b.mesh(flatGrid(4, 4, h), m, "floor");
    else
        b.wall(Vec3::Zero(), Vec3::UnitZ(), m, "floor");
    const int grp = b.group("ball");
    b.sphere(x0, R, m, v0, w0, -1, 1u << grp);
    b.force(grp, push);
    b.gravity(Vec3(0, 0, -g));
    Simulation sim = b.build(1e-5);
    Workspace ws;
    Rolling r;
    for (int k = 0; k < steps; ++k) {
        if (!advance(sim, ws)) {
            FAIL(ws.error);
        }
        r.pos.push_back(sim.particles.pos[0]);
        r.vel.push_back(sim.particles.vel[0]);
        r.maxContacts = std::max(r.maxContacts, touchingObstacleContacts(sim));
        r.minContacts = std::min(r.minContacts, touchingObstacleContacts(sim));
    }
    return r;
}

} // namespace

TEST_CASE("A sphere rolls across facet edges without bumps", "[contact][facet]") {
    const double u = restingOverlap();
    const double a = R - 0.5 * u;                   // the law's lever arm to the contact point
    const Vec3 dir = Vec3(1, 0.37, 0).normalized(); // crosses x-, y- and diagonal edges
    const Vec3 x0(0.3 * h, 0.45 * h, R - u);        // at rest vertically: F_N = m g

    SECTION("free rolling: constant height and velocity") {
        // Velocity 0.2 m/s with the spin that makes the contact point still (w x (-a n) = -v):
        // no tangential force, so the sphere must keep z = R - u to round-off (1e-9 R) and its
        // velocity to 1e-6 relative over 0.25 s (0.05 m: about 6 edge crossings).
        const Vec3 v0 = 0.2 * dir;
        const Vec3 w0 = Vec3::UnitZ().cross(v0) / a;
        const Rolling r = roll(true, x0, v0, w0, Vec3::Zero(), 25000);
        CHECK(r.maxContacts == 1);
        CHECK(r.minContacts == 1);
        double dz = 0, dv = 0;
        for (size_t k = 0; k < r.pos.size(); ++k) {
            dz = std::max(dz, std::abs(r.pos[k].z() - x0.z()));
            dv = std::max(dv, (r.vel[k] - v0).norm());
        }
        CHECK(dz < 1e-9 * R);
        CHECK(dv < 1e-6 * v0.norm());
        CHECK((r.pos.back() - x0).dot(dir) == Approx(0.05).epsilon(1e-6));
    }

    SECTION("pushed rolling: the shear history crosses the edges (mesh = wall)") {
        // A horizontal push of 0.3 m g makes the sphere roll at (5/7) 0.3 g with a non-zero
        // tangential spring that also oscillates (no shear damping at e = 1). For Hertz-Mindlin a
        // face contact on a facet and a wall contact in the same plane use the same R*, m_eff,
        // normal and overlap, so the two runs must agree to round-off as long as every change of
        // facet carries the tangential force over; losing it at one edge would change the
        // velocity by ~(2/7) 0.3 g / w_t ~ 1e-4 m/s. Tolerance 1e-9 m/s and 1e-12 m.
        const Vec3 push = 0.3 * sphereMass(rho, R) * g * dir;
        const int steps = 20000; // 0.2 s, ~0.04 m
        const Rolling mesh = roll(true, x0, Vec3::Zero(), Vec3::Zero(), push, steps);
        const Rolling wall = roll(false, x0, Vec3::Zero(), Vec3::Zero(), push, steps);
        CHECK(mesh.maxContacts == 1);
        CHECK(mesh.minContacts == 1);
        double dx = 0, dv = 0, dz = 0;
        for (int k = 0; k < steps; ++k) {
            dx = std::max(dx, (mesh.pos[size_t(k)] - wall.pos[size_t(k)]).norm());
            dv = std::max(dv, (mesh.vel[size_t(k)] - wall.vel[size_t(k)]).norm());
            dz = std::max(dz, std::abs(mesh.pos[size_t(k)].z() - x0.z()));
        }
        CHECK(dx < 1e-12);
        CHECK(dv < 1e-9);
        CHECK(dz < 1e-9 * R);
        // And it rolls: s = (5/7) a t^2 / 2 with a = 0.3 g, to 1 % (start-up oscillation).
        const double t = steps * 1e-5;
        CHECK((mesh.pos.back() - x0).dot(dir) ==
              Approx(5.0 / 7.0 * 0.3 * g * t * t / 2).epsilon(0.01));
    }
}
