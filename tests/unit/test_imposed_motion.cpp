// Imposed motions ([[stage]] motion, dem-deck(5)): objects turning about a pivot, groups released
// by a later stage, harmonic oscillations, against their closed forms.
#include "SceneBuilder.hpp"

#include "core/Measures.hpp"
#include "core/SphereLoad.hpp"
#include "io/Checkpoint.hpp"
#include "io/CheckpointSerialize.hpp"

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

TEST_CASE("A rotation without a center turns the object where it is when its stage begins",
          "[motion][moving]") {
    // A box moved by 0.1 m along x in a first stage (1 m/s for 1000 steps of 1e-4 s), then
    // turned at pi rad/s by a stage whose motion gives no center: it turns in place, about its
    // centre at that stage's start (its centre stands still, to round-off), not about where the
    // deck placed it, around which it would move at pi x 0.1 m/s.
    ScopedThreads single(1);
    SceneBuilder b;
    const int m = b.material(linear(2500, 1e8, 0.25));
    const Vec3 c0(0.5, 0, 0);
    const int box = b.box(c0, Vec3(0.05, 0.05, 0.05), m, Quat::Identity(), "box");
    Motion push;
    push.object = box;
    push.velocity = Vec3(1, 0, 0);
    b.motion(push);
    const double dt = 1e-4;
    Simulation sim = b.build(dt);
    Workspace ws;
    REQUIRE(run(sim, ws, 1000));
    const RigidObject& o = sim.obstacles.objects[size_t(box)];
    const Vec3 c1 = o.center;
    REQUIRE((c1 - (c0 + Vec3(0.1, 0, 0))).norm() < 1e-12);
    Motion turn = rotation(box, pi, Vec3::UnitZ(), Vec3::Zero());
    turn.centerAtObject = true; // the deck's rotation without center
    Stage second = sim.stages[0];
    second.name = "turn";
    second.motions = {turn};
    sim.stages.push_back(second);
    sim.stage = 1;
    beginStage(sim);
    CHECK(sim.motions.at(0).center == c1);
    CHECK(sim.stages[1].motions.at(0).center == Vec3::Zero()); // the stage keeps the deck's motion
    REQUIRE(run(sim, ws, 500));
    CHECK((o.center - c1).norm() < 1e-12);
    CHECK(o.vel.norm() < 1e-12);
    CHECK(o.angVel == pi * Vec3::UnitZ());
    CHECK(sim.obstacles.boxes[0].ori.angularDistance(
              Quat(Eigen::AngleAxisd(pi * 500 * dt, Vec3::UnitZ()))) < 1e-12);
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

namespace {

// Starts the simulation's next stage, one that stops after `steps` steps, with `edit` setting its
// engines (SceneBuilder builds the first).
template <class Edit> void nextStage(Simulation& sim, uint64_t steps, Edit edit) {
    Stage s;
    s.name = "stage" + std::to_string(sim.stages.size());
    StopCriterion c;
    c.kind = StopCriterion::Kind::Steps;
    c.value = double(steps);
    c.label = "steps >= " + std::to_string(steps);
    s.stop.push_back(c);
    edit(s);
    sim.stages.push_back(s);
    sim.stage = sim.stages.size() - 1;
    beginStage(sim);
}

// Three spheres of group "mover" pushed along x at 1 m/s under gravity for 100 steps: free, fixed
// and with z blocked in the deck.
struct Pushed {
    Simulation sim;
    int group = 0, wall = 0;
};

Pushed pushed(double dt) {
    SceneBuilder b;
    const int m = b.material(linear(2500, 1e8, 0.25));
    Pushed p;
    p.group = b.group("mover");
    p.wall = b.wall(Vec3(0, 0, -10), Vec3::UnitZ(), m, "far");
    for (int k = 0; k < 3; ++k)
        b.sphere(Vec3(k, 0, 0.5), 0.01, m, Vec3::Zero(), Vec3::Zero(), -1, 1u << p.group);
    Motion push;
    push.group = p.group;
    push.velocity = Vec3(1, 0, 0);
    b.motion(push).gravity(Vec3(0, 0, -9.81));
    p.sim = b.build(dt);
    p.sim.particles.setBlocked(1, BlockAll);
    p.sim.particles.setBlocked(2, BlockZ);
    return p;
}

} // namespace

TEST_CASE("A stopped group motion releases its spheres at rest to gravity", "[motion]") {
    // While pushed, every sphere of the group moves at the imposed 1 m/s and does not fall. Once a
    // stage stops the motion (stop_motion, or motions of its own replacing it), the spheres start
    // at rest with the degrees of freedom the deck blocks blocked again: the free sphere falls as
    // the leapfrog closed form says, z_n = z_r - g dt^2 n (n + 1) / 2 and v_z = -g n dt
    // (round-off only: tolerance 1e-12 relative), without moving along x; the fixed one and the
    // one with z blocked stay where they were released.
    ScopedThreads single(1);
    const double dt = 1e-4, g = 9.81;
    Pushed p = pushed(dt);
    Simulation& sim = p.sim;
    const Particles& P = sim.particles;
    Workspace ws;
    REQUIRE(run(sim, ws, 100));
    for (size_t k = 0; k < 3; ++k) {
        INFO("sphere " << k);
        CHECK(P.pos[k].x() == Approx(double(k) + 100 * dt).epsilon(1e-12));
        CHECK(P.pos[k].z() == 0.5);
        CHECK(P.blocked(k) == BlockAll);
    }
    SECTION("stop_motion") {
        nextStage(sim, 1000, [](Stage& s) { s.clearMotions = true; });
    }
    SECTION("a motion of another object replaces it") {
        Motion slide;
        slide.object = p.wall;
        slide.velocity = Vec3(0.1, 0, 0);
        nextStage(sim, 1000, [&](Stage& s) { s.motions = {slide}; });
    }
    const std::vector<Vec3> released = {P.pos[0], P.pos[1], P.pos[2]};
    CHECK(P.blocked(0) == 0);
    CHECK(P.blocked(1) == BlockAll);
    CHECK(P.blocked(2) == BlockZ);
    for (size_t k = 0; k < 3; ++k)
        CHECK((P.vel[k].isZero() && P.angVel[k].isZero()));
    for (int n = 100; n <= 1000; n += 100) {
        REQUIRE(run(sim, ws, 100));
        INFO("step " << n << " of the release");
        CHECK(P.pos[0].x() == released[0].x());
        CHECK(P.pos[0].z() - released[0].z() ==
              Approx(-g * dt * dt * n * (n + 1) / 2).epsilon(1e-12));
        CHECK(P.vel[0].z() == Approx(-g * dt * n).epsilon(1e-12));
        CHECK(P.pos[1] == released[1]);
        CHECK(P.pos[2] == released[2]);
    }
}

TEST_CASE("A checkpoint keeps which spheres a motion holds, apart from their own blocking",
          "[motion][checkpoint]") {
    // Written while the group is pushed and read back, the spheres are still held, and released
    // they get their own blocking back, as without the checkpoint. A version 5 file, which had no
    // bit for the hold, stores a held sphere as blocked in every degree of freedom.
    ScopedThreads single(1);
    Pushed p = pushed(1e-4);
    Workspace ws;
    REQUIRE(run(p.sim, ws, 10));
    Simulation back;
    std::string error;
    REQUIRE(deserializeSimulation(serializeSimulation(p.sim), back, error));
    CHECK(back.particles.blockedBits == p.sim.particles.blockedBits);
    for (size_t k = 0; k < 3; ++k)
        CHECK((back.particles.held(k) && back.particles.blocked(k) == BlockAll));
    nextStage(back, 10, [](Stage& s) { s.clearMotions = true; });
    CHECK(back.particles.blocked(0) == 0);
    CHECK(back.particles.blocked(1) == BlockAll);
    CHECK(back.particles.blocked(2) == BlockZ);

    std::string bytes;
    ckpt::Writer w([&](const char* b, size_t k) { bytes.append(b, k); });
    w.version = 5;
    ckpt::io(w, p.sim);
    w.flush();
    Simulation old;
    ckpt::Reader r(bytes.data(), bytes.size(), 5);
    ckpt::io(r, old);
    for (size_t k = 0; k < 3; ++k)
        CHECK(old.particles.blockedBits[k] == BlockAll);
}

namespace {

// A wall and a group of one sphere, both oscillating with amplitude A = (0, 0, 0.01) at 10 Hz
// from phase 90 degrees.
struct Shaken {
    Simulation sim;
    int wall = 0;
};

Motion harmonic(int object, int group, const Vec3& a, double f, double phase) {
    Motion m;
    m.kind = Motion::Kind::Harmonic;
    m.object = object;
    m.group = group;
    m.amplitude = a;
    m.frequency = f;
    m.phase = phase;
    return m;
}

Shaken shaken(double dt, const Vec3& a, double f, double phase) {
    SceneBuilder b;
    const int m = b.material(linear(2500, 1e8, 0.25));
    Shaken s;
    s.wall = b.wall(Vec3::Zero(), Vec3::UnitZ(), m, "osc");
    const int group = b.group("shaken");
    b.sphere(Vec3(0, 0, 0.5), 0.01, m, Vec3::Zero(), Vec3::Zero(), -1, 1u << group);
    b.motion(harmonic(s.wall, -1, a, f, phase)).motion(harmonic(-1, group, a, f, phase));
    s.sim = b.build(dt);
    return s;
}

} // namespace

TEST_CASE("A harmonic motion moves as dem-deck(5) says", "[motion]") {
    // The velocity imposed is A w cos(w t + phase) at the middle of each step (t from the start
    // of the stage that set the motion), so the displacement after n steps is the midpoint sum
    // A w dt sum_k cos(w (k + 1/2) dt + phase) = 2 A sin(w t/2) cos(w t/2 + phase) (h/2)/sin(h/2),
    // h = w dt: the documented A (sin(w t + phase) - sin(phase)) times 1 + h^2/24 + 7 h^4/5760 +
    // ... < 1 + h^2/20. With A = 0.01 m, w = 20 pi, dt = 1e-4 (h^2/24 = 1.6e-6): tolerance
    // 2 A h^2/20 + 1e-14 m. With phase
    // 90 the wall goes down from its start by up to 2 A. A carried-over motion goes on in the
    // next stage as if the stage had not ended.
    ScopedThreads single(1);
    const double dt = 1e-4, f = 10, w = 2 * pi * f, phase = pi / 2, h = w * dt;
    const Vec3 A(0, 0, 0.01);
    Shaken s = shaken(dt, A, f, phase);
    Simulation& sim = s.sim;
    Workspace ws;
    const double tolerance = 2 * A.z() * h * h / 20 + 1e-14;
    const auto check = [&](int n) {
        const double t = n * dt;
        INFO("step " << n);
        const double documented = A.z() * (std::sin(w * t + phase) - std::sin(phase));
        CHECK(std::abs(measure(sim, "object:osc.displacement.z") - documented) < tolerance);
        CHECK(std::abs(sim.particles.pos[0].z() - 0.5 - documented) < tolerance);
        // The velocity of the last step, at its middle.
        const double v = A.z() * w * std::cos(w * (t - dt / 2) + phase);
        CHECK(std::abs(measure(sim, "object:osc.velocity.z") - v) < 1e-12);
        CHECK(std::abs(sim.particles.vel[0].z() - v) < 1e-12);
    };
    for (int n = 100; n <= 500; n += 100) {
        REQUIRE(run(sim, ws, 100));
        check(n);
    }
    CHECK(measure(sim, "object:osc.displacement.z") == Approx(-2 * A.z()).epsilon(1e-5));
    SECTION("carried over into the next stage") {
        nextStage(sim, 750, [](Stage&) {});
        for (int n = 550; n <= 1250; n += 50) {
            REQUIRE(run(sim, ws, 50));
            check(n);
        }
    }
}

TEST_CASE("The start of a stage shows the velocities its motions impose", "[motion]") {
    // Before the first step (history row 0), a moved object or group has the velocity the first
    // step gives it: the imposed translation, or A w cos(w dt/2 + phase) at the step's middle for
    // a harmonic motion. That step sets the same values again, so the run does not change.
    // Tolerance 1e-12 relative.
    ScopedThreads single(1);
    SECTION("translation") {
        Pushed p = pushed(1e-4);
        CHECK(measure(p.sim, "group:mover.velocity.x") == Approx(1).epsilon(1e-12));
        CHECK(measure(p.sim, "body:0.velocity.x") == Approx(1).epsilon(1e-12));
        CHECK(p.sim.particles.blocked(0) == BlockAll);
    }
    SECTION("harmonic") {
        const double dt = 1e-4, f = 10, w = 2 * pi * f, phase = pi / 3;
        Shaken s = shaken(dt, Vec3(0, 0, 0.01), f, phase);
        const double v = 0.01 * w * std::cos(w * dt / 2 + phase);
        CHECK(measure(s.sim, "object:osc.velocity.z") == Approx(v).epsilon(1e-12));
        CHECK(s.sim.particles.vel[0].z() == Approx(v).epsilon(1e-12));
        Workspace ws;
        REQUIRE(advance(s.sim, ws));
        CHECK(measure(s.sim, "object:osc.velocity.z") == v);
    }
    SECTION("rotation about a pivot") {
        SceneBuilder b;
        const int m = b.material(linear(2500, 1e8, 0.25));
        const int rot = b.box(Vec3(0.5, 0, 0), Vec3(0.05, 0.05, 0.05), m, Quat::Identity(), "rot");
        b.motion(rotation(rot, pi, Vec3::UnitZ(), Vec3::Zero()));
        const Simulation sim = b.build(1e-4);
        CHECK(measure(sim, "object:rot.velocity.y") == Approx(0.5 * pi).epsilon(1e-12));
        CHECK(measure(sim, "object:rot.position.x") == 0.5);
    }
}
