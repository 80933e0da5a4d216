// Periodic cell (PeriodicCell.hpp, physics.md §11): images across the faces, the mean flow of a
// deforming cell, wrapping at rebuilds, thread-count independence.
#include "DeterminismScene.hpp"
#include "SceneBuilder.hpp"

#include "core/Measures.hpp"
#include "core/StateDigest.hpp"
#include "io/Checkpoint.hpp"

#include <catch2/catch.hpp>
#include <cmath>

using namespace dem;
using namespace dem::test;

namespace {

// Index of the sphere with body id `id` (rebuilds reorder the spheres).
size_t indexOf(const Simulation& sim, uint32_t id) {
    const auto& ids = sim.particles.id;
    return size_t(std::find(ids.begin(), ids.end(), id) - ids.begin());
}

// Velocity relative to the mean flow of the cell, v - L (x - origin).
Vec3 fluctuation(const Simulation& sim, size_t p) {
    return sim.particles.vel[p] - sim.cell.velGrad * (sim.particles.pos[p] - sim.cell.origin);
}

// Two spheres (r = 5 cm, Hertz-Mindlin, friction, e = 0.5) meeting obliquely: a at `a` and b at
// a + bOffset, approaching at 1 m/s along x with a sliding component along z, both drifting at
// `drift`.
Simulation collidingPair(const Vec3& a, const Vec3& bOffset, bool periodic, const Mat3& L,
                         const Vec3& drift = Vec3::Zero()) {
    SceneBuilder b;
    const int m = b.material(hertz(2500, 1e8, 0.25, 0.5, std::atan(0.4)));
    b.sphere(a, 0.05, m, Vec3(0.5, 0, 0.2) + drift);
    b.sphere(a + bOffset, 0.05, m, Vec3(-0.5, 0, -0.2) + drift);
    if (periodic)
        b.periodic(Vec3(1, 1, 1)).velocityGradient(L);
    return b.build(5e-5);
}

} // namespace

TEST_CASE("periodic: a pair meeting across a face acts as the same pair inside the cell",
          "[periodic]") {
    // Reference: the pair in the middle of a space without a cell. Across the x face: a at
    // x = 0.97 and b at 0.08, whose image at 1.08 is the reference's partner. The contact lasts
    // about 100 steps from step 290; 1000 steps cover approach, impact and rebound, while the
    // drift of 2 m/s along x carries a through the face.
    const Vec3 offset(0.11, 0.03, 0), drift(2, 0, 0);
    Simulation inside = collidingPair(Vec3(0.47, 0.5, 0.5), offset, false, Mat3::Zero(), drift);
    Simulation across =
        collidingPair(Vec3(0.97, 0.5, 0.5), offset - Vec3(1, 0, 0), true, Mat3::Zero(), drift);
    Workspace w1, w2;
    REQUIRE(run(inside, w1, 1000));
    REQUIRE(run(across, w2, 1000));
    // The impact happened: a rebounds (e = 0.5 on the normal, friction on the tangent).
    REQUIRE(inside.particles.vel[indexOf(inside, 0)].x() < 2 - 0.1);
    for (uint32_t id = 0; id < 2; ++id) {
        // Velocities (of order 1 m/s) and spins (of order 10/s) the same up to round-off: the
        // positions differ by a cell vector, so the arithmetic differs in the last bits.
        // Displacements continue through the wrapping.
        const size_t p = indexOf(inside, id), q = indexOf(across, id);
        CHECK((across.particles.vel[q] - inside.particles.vel[p]).norm() < 1e-9);
        CHECK((across.particles.angVel[q] - inside.particles.angVel[p]).norm() < 1e-8);
        const Vec3 d1 = inside.particles.pos[p] - inside.particles.pos0[p];
        const Vec3 d2 = across.particles.pos[q] - across.particles.pos0[q];
        CHECK((d1 - d2).norm() < 1e-12);
    }
    // a crossed the face (about 0.1 m from 0.97) and was moved into the cell at a rebuild.
    CHECK(across.particles.pos[indexOf(across, 0)].x() < 0.5);
}

TEST_CASE("periodic: in a sheared cell the image across the face moves with the mean flow",
          "[periodic]") {
    // Simple shear at 2/s. A pair in the middle and the same pair across the y face (b's image
    // one cell height above) see the same relative mean flow, 2/s x 0.11 m along x: translating
    // the pair along y only adds a uniform velocity, so the velocities relative to the mean flow
    // must agree. Without the image's shift velocity L h c the pair across would not slide.
    Mat3 L = Mat3::Zero();
    L(0, 1) = 2;
    const Vec3 offset(0.03, 0.11, 0);
    Simulation middle = collidingPair(Vec3(0.5, 0.47, 0.5), offset, true, L);
    Simulation across = collidingPair(Vec3(0.5, 0.97, 0.5), offset - Vec3(0, 1, 0), true, L);
    // Approach along y instead of x: swap the x and y parts of the velocities relative to the
    // flow.
    for (Simulation* s : {&middle, &across})
        for (size_t p = 0; p < 2; ++p) {
            const Vec3 u = fluctuation(*s, p);
            s->particles.vel[p] += Vec3(u.y() - u.x(), u.x() - u.y(), 0);
        }
    Workspace w1, w2;
    REQUIRE(run(middle, w1, 1000));
    REQUIRE(run(across, w2, 1000));
    REQUIRE(fluctuation(middle, indexOf(middle, 0)).y() < -0.1); // the impact happened
    for (uint32_t id = 0; id < 2; ++id) {
        const size_t p = indexOf(middle, id), q = indexOf(across, id);
        CHECK((fluctuation(across, q) - fluctuation(middle, p)).norm() < 1e-9);
        CHECK((across.particles.angVel[q] - middle.particles.angVel[p]).norm() < 1e-8);
    }
    // The flow's sliding turned the spheres beyond the flow's own spin (-1/s about z).
    CHECK(std::abs(middle.particles.angVel[0].z() + 1) > 1e-2);
}

TEST_CASE("periodic: kinetic_energy_fluctuation leaves the mean flow out", "[periodic]") {
    // A sphere moving at u relative to the flow of a sheared cell: the stage adds the flow
    // L (x - origin) to its velocity, which kinetic_energy counts and the fluctuation does not.
    Mat3 L = Mat3::Zero();
    L(0, 1) = 10;
    SceneBuilder b;
    const int m = b.material(hertz(2500, 1e8, 0.25));
    const Vec3 u(0.1, -0.2, 0.3), x(0.4, 1.3, 0.6), origin(-0.5, 0.5, 0);
    b.sphere(x, 0.05, m, u);
    b.periodic(Vec3(1, 2, 1.5), origin).velocityGradient(L);
    const Simulation sim = b.build(1e-4);
    const double mass = sim.particles.mass(0);
    std::string error;
    MeasureRef total, fluctuation;
    REQUIRE(parseMeasure("kinetic_energy_translational", sim, total, error));
    REQUIRE(parseMeasure("kinetic_energy_fluctuation", sim, fluctuation, error));
    CHECK(evaluate(sim, total) ==
          Approx(0.5 * mass * (u + L * (x - origin)).squaredNorm()).epsilon(1e-14));
    CHECK(evaluate(sim, fluctuation) == Approx(0.5 * mass * u.squaredNorm()).epsilon(1e-14));
}

TEST_CASE("periodic: a lone sphere follows the deforming cell", "[periodic]") {
    // Shear, stretch and compression at once. The sphere starts at rest; the stage gives it the
    // mean flow L (x - origin) and the flow's spin, then it has no force: its coordinates in the
    // cell, s = h^-1 (x - origin), stay fixed up to the scheme's O((L dt)^2) error per step.
    Mat3 L;
    L << -0.5, 1.0, 0.0, //
        0.0, 0.3, 0.0,   //
        0.2, 0.0, -0.1;
    SceneBuilder b;
    const int m = b.material(hertz(2500, 1e8, 0.25));
    b.sphere(Vec3(0.4, 1.3, 0.6), 0.05, m);
    b.periodic(Vec3(1, 2, 1.5), Vec3(-0.5, 0.5, 0)).velocityGradient(L);
    Simulation sim = b.build(1e-3);
    const Vec3 s0 = sim.cell.h.inverse() * (sim.particles.pos[0] - sim.cell.origin);
    // The flow's spin: (-W_12, W_02, -W_01) with W the skew part of L.
    CHECK(sim.particles.angVel[0].isApprox(Vec3(0, -0.1, -0.5), 1e-15));
    Workspace ws;
    const int steps = 500;
    REQUIRE(run(sim, ws, steps));
    const Vec3 s = sim.cell.h.inverse() * (sim.particles.pos[0] - sim.cell.origin);
    const double perStep = std::pow(L.norm() * sim.dt, 2);
    CHECK((s - s0).norm() < 4 * steps * perStep); // 5e-4 here; without the flow it would be ~0.3
    // h(t) = (I + L dt)^n h(0).
    Mat3 h = Vec3(1, 2, 1.5).asDiagonal();
    for (int k = 0; k < steps; ++k)
        h += sim.dt * (L * h);
    CHECK((sim.cell.h - h).norm() < 1e-12);
}

TEST_CASE("periodic: a sphere crossing the sheared face keeps its velocity relative to the flow",
          "[periodic]") {
    // Lees-Edwards: moved from the top face to the bottom, a sphere takes the velocity of the
    // image it becomes (v -= L h c), so that its velocity relative to the flow is unchanged.
    Mat3 L = Mat3::Zero();
    L(0, 1) = 3;
    SceneBuilder b;
    const int m = b.material(hertz(2500, 1e8, 0.25));
    b.sphere(Vec3(0.5, 0.8, 0.5), 0.05, m, Vec3(0.1, 2, -0.3));
    b.periodic(Vec3(1, 1, 1)).velocityGradient(L);
    Simulation sim = b.build(1e-4);
    const Vec3 u = fluctuation(sim, 0);
    Workspace ws;
    bool wrapped = false;
    for (int k = 0; k < 2000; ++k) {
        const double y = sim.particles.pos[0].y();
        REQUIRE(advance(sim, ws));
        wrapped = wrapped || sim.particles.pos[0].y() < y - 0.5;
        REQUIRE((fluctuation(sim, 0) - u).norm() < 1e-12);
    }
    CHECK(wrapped); // 2 m/s for 0.2 s from y = 0.8: through the top face once
    CHECK(sim.particles.pos[0].y() >= 0);
    CHECK(sim.particles.pos[0].y() < 1);
}

TEST_CASE("periodic: a cell sheared thinner than three grid cells stops the run", "[periodic]") {
    // Shear tilts the cell's x axis towards y: its x-z faces come closer, 0.5 / sqrt(1 + gamma^2)
    // apart. With spheres of 5 cm and a skin of 2.5 cm the grid needs 3 x 0.125 m, so the cell is
    // too thin from gamma = 0.88 (0.88 s at 1/s), found at the next rebuild: the strain uses the
    // skin up every 0.2 (rebuildDue: 0.1 gamma / (1 - gamma) = 0.025), i.e. every 0.2 s.
    Mat3 L = Mat3::Zero();
    L(1, 0) = 1;
    SceneBuilder b;
    const int m = b.material(hertz(2500, 1e8, 0.25));
    b.sphere(Vec3(0.25, 0.25, 0.25), 0.05, m);
    b.periodic(Vec3(0.5, 0.5, 0.5)).velocityGradient(L);
    Simulation sim = b.build(1e-3);
    Workspace ws;
    CHECK_FALSE(run(sim, ws, 2000));
    CHECK(ws.error.find("periodic cell is too thin") != std::string::npos);
    CHECK(sim.time > 0.88);
    CHECK(sim.time < 0.88 + 0.2 + 2e-3);
}

TEST_CASE("periodic: thread count does not change a sheared packing", "[periodic][determinism]") {
    // Above the parallel threshold, so that every part of the step runs in parallel; spheres
    // fast enough (3 m/s) to need rebuilds, which wrap them into the cell.
    const Simulation sim = shearedPacking(layersAboveThreshold(), 20, 3);
    const std::vector<std::string> one = digests(sim, 1, 300, 100);
    CHECK(digests(sim, 2, 300, 100) == one);
    CHECK(digests(sim, 3, 300, 100) == one);
}

TEST_CASE("periodic: a run continued from a snapshot ends in the same state", "[periodic]") {
    // The cell, its velocity gradient and the pairs' images are part of the saved state: a run
    // continued from a snapshot taken between two rebuilds matches the one that went on. At
    // 3 m/s the spheres use the skin up in about 100 steps.
    Simulation sim = shearedPacking(4, 100, 3);
    Workspace ws;
    REQUIRE(run(sim, ws, 150));
    REQUIRE_FALSE(sim.neighbours.needRebuild);
    REQUIRE(sim.neighbours.rebuilds > 1);
    const std::string saved = serializeSimulation(sim);
    REQUIRE(run(sim, ws, 150));
    Simulation back;
    std::string error;
    REQUIRE(deserializeSimulation(saved, back, error));
    Workspace fresh;
    REQUIRE(run(back, fresh, 150));
    CHECK(stateDigest(back) == stateDigest(sim));
    CHECK(back.cell.h == sim.cell.h);
}

TEST_CASE("periodic: the cell's stress of a compressed cubic lattice", "[periodic]") {
    // 4 x 4 x 4 spheres (r = 1 cm) on a cubic lattice of spacing a = 2r - delta filling the cell:
    // every sphere presses on its six neighbours (across the faces too) with the Hertz force
    // F = 4/3 E* sqrt(r/2) delta^(3/2), E* = E / (2 (1 - nu^2)). Each of the 64 pairs along x
    // carries F over a branch a, in a volume (4a)^3: sigma_xx = -64 F a / (4a)^3 = -F / a^2, the
    // same along y and z, no shear, and the pressure is F / a^2.
    const double r = 0.01, delta = 2e-4, a = 2 * r - delta, E = 1e8, nu = 0.25;
    SceneBuilder b;
    const int m = b.material(hertz(2500, E, nu));
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
            for (int k = 0; k < 4; ++k)
                b.sphere(a * (Vec3(i, j, k) + Vec3::Constant(0.5)), r, m);
    b.periodic(Vec3::Constant(4 * a));
    Simulation sim = b.build(1e-6);
    Workspace ws;
    REQUIRE(advance(sim, ws));
    REQUIRE(contactCount(sim) == 3 * 64);
    const double F = 4.0 / 3 * E / (2 * (1 - nu * nu)) * std::sqrt(r / 2) * std::pow(delta, 1.5);
    const Mat3 sigma = cellStress(sim);
    CHECK(sigma.isApprox(Mat3(-F / (a * a) * Mat3::Identity()), 1e-9));
    std::string error;
    MeasureRef xy, p;
    REQUIRE(parseMeasure("stress_xy", sim, xy, error));
    REQUIRE(parseMeasure("pressure", sim, p, error));
    CHECK(std::abs(evaluate(sim, xy)) < 1e-9 * F / (a * a));
    CHECK(evaluate(sim, p) == Approx(F / (a * a)).epsilon(1e-9));
    // Without a cell there is no volume to average over.
    Simulation closed = sim;
    closed.cell.enabled = false;
    CHECK_FALSE(parseMeasure("stress_xx", closed, xy, error));
    CHECK(error.find("needs a periodic cell") != std::string::npos);
}

TEST_CASE("periodic: the mean flow uses the skin up by its strain, not by the cell's size",
          "[periodic]") {
    // Spheres apart (r = 5 cm on a lattice of 25 cm) carried by simple shear at 1/s: their
    // displacements beside the flow stay zero, so the lists are rebuilt only as the strain makes
    // a pair listed out come closer, every 0.2 of strain here (skin 2.5 cm over reach 10 cm),
    // in a 1 m cell as in a 4 m one. Counting the flow's own displacements, which grow with the
    // cell, would rebuild the larger one four times as often.
    auto rebuilds = [](int perSide) {
        SceneBuilder b;
        const int m = b.material(hertz(2500, 1e8, 0.25));
        for (int i = 0; i < perSide; ++i)
            for (int j = 0; j < perSide; ++j)
                for (int k = 0; k < perSide; ++k)
                    b.sphere(0.25 * (Vec3(i, j, k) + Vec3::Constant(0.5)), 0.05, m);
        Mat3 L = Mat3::Zero();
        L(0, 1) = 1;
        b.periodic(Vec3::Constant(0.25 * perSide)).velocityGradient(L);
        Simulation sim = b.build(1e-3);
        Workspace ws;
        REQUIRE(run(sim, ws, 500));
        return sim.neighbours.rebuilds;
    };
    const uint64_t small = rebuilds(4), large = rebuilds(16);
    CHECK(small == large);
    CHECK(small >= 2);
    CHECK(small <= 4); // the first one and one per 0.2 of strain over 0.5
}

TEST_CASE("periodic: the lists miss no contact of a sheared packing", "[periodic]") {
    // The same sheared packing with the lists rebuilt when due and at every step: the same
    // contacts step by step.
    const Simulation start = shearedPacking(4, 200, 1);
    Simulation due = start, always = start;
    Workspace w1, w2;
    for (int k = 0; k < 300; ++k) {
        REQUIRE(advance(due, w1));
        always.neighbours.needRebuild = true;
        REQUIRE(advance(always, w2));
        INFO("step " << k + 1);
        REQUIRE(contactCount(due) == contactCount(always));
    }
    CHECK(due.neighbours.rebuilds > 1);
    CHECK(due.neighbours.rebuilds < 100);
}
