// Imposed motions ([[stage]] motion, dem-deck(5)): objects turning about a pivot, groups released
// by a later stage, harmonic oscillations, against their closed forms.
#include "SceneBuilder.hpp"

#include "core/Measures.hpp"
#include "core/SphereLoad.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace dem;
using namespace dem::test;

namespace {

double measure(const Simulation& sim, const std::string& name) {
    MeasureRef ref;
    std::string why;
    INFO(name << ": " << why);
    REQUIRE(parseMeasure(name, sim, ref, why));
    return evaluate(sim, ref);
}

Motion rotation(int object, double w, const Vec3& axis, const Vec3& pivot) {
    Motion m;
    m.kind = Motion::Kind::Rotation;
    m.object = object;
    m.angularVelocity = w;
    m.axis = axis;
    m.center = pivot;
    return m;
}

} // namespace

TEST_CASE("An object turning about a pivot keeps its own centre on the circle about it",
          "[motion][moving]") {
    // A box centred at c0 = (0.5, 0, 0) turning at w = pi rad/s about the z axis through the
    // origin. Its centre, which is its position, goes round the circle c(t) = Rz(w t) c0, and its
    // velocity is that of the centre, w z x c at the start of the step that moved it last; its
    // own orientation turns by w t. The object moves by exact rotations, so the only error is
    // round-off: ~n ulps of 0.5 m after n = 1000 steps, ~1e-13; tolerance 1e-12 m (1e-12 m/s).
    ScopedThreads single(1);
    SceneBuilder b;
    const int m = b.material(linear(2500, 1e8, 0.25));
    const Vec3 c0(0.5, 0, 0), half(0.05, 0.05, 0.05);
    const int rot = b.box(c0, half, m, Quat::Identity(), "rot");
    const double w = pi, dt = 1e-4;
    b.motion(rotation(rot, w, Vec3::UnitZ(), Vec3::Zero()));
    Simulation sim = b.build(dt);
    Workspace ws;
    const RigidObject& o = sim.obstacles.objects[size_t(rot)];
    const Box& box = sim.obstacles.boxes[0];
    const auto circle = [&](double t) {
        return Vec3(Eigen::AngleAxisd(w * t, Vec3::UnitZ()) * c0);
    };
    for (int n = 100; n <= 1000; n += 100) {
        REQUIRE(run(sim, ws, 100));
        const double t = n * dt;
        INFO("step " << n);
        const Vec3 c = circle(t);
        CHECK((o.center - c).norm() < 1e-12);
        CHECK(std::abs(measure(sim, "object:rot.position.x") - c.x()) < 1e-12);
        CHECK(std::abs(measure(sim, "object:rot.position.y") - c.y()) < 1e-12);
        CHECK(std::abs(measure(sim, "object:rot.displacement.x") - (c.x() - c0.x())) < 1e-12);
        const Vec3 v = w * Vec3::UnitZ().cross(circle(t - dt));
        CHECK((o.vel - v).norm() < 1e-12);
        CHECK(measure(sim, "object:rot.velocity") == Approx(w * c0.norm()).epsilon(1e-12));
        CHECK(o.angVel == w * Vec3::UnitZ());
        // The box's geometry: its centre is the object's, and it has turned by w t.
        CHECK((box.center - c).norm() < 1e-12);
        CHECK(box.ori.angularDistance(Quat(Eigen::AngleAxisd(w * t, Vec3::UnitZ()))) < 1e-12);
        // The neighbour lists' bound on the obstacle's travel since the only rebuild (the first
        // step's: no spheres) covers the arc of its farthest corner from the pivot.
        const double arc = w * (t - dt) * (c0 + half).norm();
        CHECK(o.travel >= arc);
    }
}

TEST_CASE("An object turning about a pivot reports the torque about its own centre",
          "[motion][moving]") {
    // The box of the test above, turning about the origin; a blocked sphere rests on its +y face
    // above the box's centre, overlapping by u. After one step the frictionless linear contact
    // (e = 1: no dashpot) pushes the box along -y with E R u through its centre: no torque about
    // its centre (about the pivot it would be 0.5 E R u about -z). Tolerance 1e-12 relative.
    ScopedThreads single(1);
    SceneBuilder b;
    const double E = 1e8, R = 0.01, u = 1e-5;
    const int m = b.material(linear(2500, E, 0.25));
    const int rot = b.box(Vec3(0.5, 0, 0), Vec3(0.05, 0.05, 0.05), m, Quat::Identity(), "rot");
    b.sphere(Vec3(0.5, 0.05 + R - u, 0), R, m);
    b.motion(rotation(rot, pi, Vec3::UnitZ(), Vec3::Zero()));
    Simulation sim = b.build(1e-6);
    sim.particles.setBlocked(0, BlockAll);
    Workspace ws;
    REQUIRE(advance(sim, ws));
    const RigidObject& o = sim.obstacles.objects[size_t(rot)];
    const double F = E * R * u;
    CHECK(o.force.y() == Approx(-F).epsilon(1e-12));
    CHECK(o.torque.norm() < 1e-12 * F);
    CHECK(std::abs(measure(sim, "object:rot.torque")) < 1e-12 * F);
}
