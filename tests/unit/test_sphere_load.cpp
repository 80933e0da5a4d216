// The load on a sphere is not kept by the step: sphereLoad() sums the stored contact results again
// for outputs and measures (SphereLoad.hpp). It must be the very load the step integrated.
#include "SceneBuilder.hpp"

#include "core/Parallel.hpp"
#include "core/SphereLoad.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace dem;
using namespace dem::test;

namespace {

// Spheres on a jittered lattice with overlapping neighbours, in a box of walls, on a facet floor,
// around a box obstacle, some of them pushed by a constant force: every kind of contact, and more
// spheres than parallelThreshold so that two threads split them (and some wait for the other's).
Simulation loadedScene() {
    SceneBuilder b;
    const int m = b.material(hertz(2500, 1e8, 0.25, 0.3, std::atan(0.5)));
    const double s = 9.9e-3;
    const int nx = 12, ny = 12, nz = int(parallelThreshold / 144) + 2;
    b.closedBox(Vec3(0, 0, -0.02), Vec3(nx * s, ny * s, (nz + 2) * s), m);
    b.mesh(flatGrid(8, 8, nx * s / 8, 0, 0, 0.0), m);
    b.box(Vec3(0.5 * nx * s, 0.5 * ny * s, 0.5 * nz * s), Vec3(0.012, 0.012, 0.012), m);
    const int pushed = b.group("pushed");
    Random rnd(5);
    cubicLattice(nx, ny, nz, s, [&](int i, int j, int, const Vec3& centre) {
        const Vec3 x = centre + Vec3(rnd(-5e-5, 5e-5), rnd(-5e-5, 5e-5), rnd(-5e-5, 5e-5));
        b.sphere(x, rnd(4.9e-3, 5.1e-3), m, Vec3(rnd(-0.1, 0.1), rnd(-0.1, 0.1), 0),
                 Vec3(rnd(-5, 5), rnd(-5, 5), rnd(-5, 5)), -1, (i + j) % 3 ? 0 : 1u);
    });
    b.force(pushed, Vec3(0.01, -0.02, 0.03)).gravity(Vec3(0, 0, -9.81));
    return b.build(0.2 * 4.9e-3 * std::sqrt(2500 / 1e8));
}

} // namespace

TEST_CASE("sphere loads: sphereLoad is the load the step integrated, bit for bit",
          "[contact][load]") {
    for (int threads : {1, 2}) {
        ScopedThreads t(threads);
        Simulation sim = loadedScene();
        Workspace ws;
        REQUIRE(run(sim, ws, 3));
        const Particles& P = sim.particles;
        const std::vector<Vec3> v0 = P.vel, w0 = P.angVel;
        REQUIRE(advance(sim, ws));
        // Without damping the step adds dt (F/m + g) to the velocity and dt T/I to the angular
        // velocity (Step.cpp, integrate), which the same operations on sphereLoad() reproduce.
        size_t pairs = 0, obstacles = 0, forced = 0, mismatched = 0;
        for (size_t p = 0; p < P.size(); ++p) {
            const SphereLoad load = sphereLoad(sim, p);
            const double invM = 1 / P.mass(p), invI = 1 / P.inertia(p);
            for (int c = 0; c < 3; ++c) {
                const double v = v0[p][c] + sim.dt * (load.force[c] * invM + sim.gravity[c]);
                const double w = w0[p][c] + sim.dt * (load.torque[c] * invI);
                mismatched += v != P.vel[p][c] || w != P.angVel[p][c];
            }
            for (uint32_t k = sim.pairs.start[p]; k < sim.pairs.start[p + 1]; ++k)
                pairs += sim.pairs.touching(k);
            for (uint32_t e = sim.obstacleContacts.start[p]; e < sim.obstacleContacts.start[p + 1];
                 ++e)
                obstacles += sim.obstacleContacts.touching[e];
            forced += P.groups(p) & 1u;
        }
        INFO(threads << " threads: " << pairs << " touching pairs, " << obstacles
                     << " obstacle contacts, " << forced << " pushed spheres");
        CHECK(pairs > P.size());
        CHECK(obstacles > 100);
        CHECK(forced > 0);
        CHECK(mismatched == 0);
    }
}

TEST_CASE("sphere loads: the contact forces cancel in pairs (Newton's third law)",
          "[contact][load]") {
    // The loads of all spheres add up to the constant forces minus what the obstacles receive
    // (their reactions, obstacleReactions), to round-off: 1e-9 of the sum of |F|.
    ScopedThreads t(1);
    Simulation sim = loadedScene();
    Workspace ws;
    REQUIRE(run(sim, ws, 4));
    Vec3 total = Vec3::Zero(), constant = Vec3::Zero();
    double scale = 0;
    for (size_t p = 0; p < sim.particles.size(); ++p) {
        const Vec3 f = sphereLoad(sim, p).force;
        total += f;
        scale += f.norm();
        if (sim.particles.groups(p) & 1u)
            constant += Vec3(0.01, -0.02, 0.03);
    }
    Vec3 reactions = Vec3::Zero();
    for (const RigidObject& o : sim.obstacles.objects)
        reactions += o.force;
    REQUIRE(scale > 0);
    CHECK((total - (constant - reactions)).norm() < 1e-9 * scale);
}
