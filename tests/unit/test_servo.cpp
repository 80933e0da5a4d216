// Servo-controlled objects ([[stage]] motion with servo_force, dem-deck(5)): a plate pressing one
// Hertz sphere onto a floor comes to rest where Hertz's law gives the target force.
#include "SceneBuilder.hpp"

#include "core/ServoLaw.hpp"
#include "core/StateDigest.hpp"
#include "core/StopCriteria.hpp"
#include "io/CheckpointSerialize.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace dem;
using namespace dem::test;

namespace {

constexpr double R = 0.01, young = 1e7, poisson = 0.25, target = 1.0, maxSpeed = 0.01;
constexpr double dt = 1e-5;

// The overlap at which a sphere pressed on a wall of its own material carries `force`:
// F = (4/3) E* sqrt(R) u^(3/2), E* = E / (2 (1 - nu^2)) (physics.md §5.1).
double hertzOverlap(double force) {
    const double eStar = young / (2 * (1 - poisson * poisson));
    return std::pow(3 * force / (4 * eStar * std::sqrt(R)), 2.0 / 3.0);
}

struct Press {
    Simulation sim;
    int floor = 0, plate = 0;
};

// A floor at z = 0, the sphere resting on it (no gravity), the plate's face at `plateZ` moved
// down by a servo to press with `target` newtons. Friction (mu = 0.5) acts only when the plate
// slides.
Press press(double plateZ) {
    SceneBuilder b;
    const int m = b.material(hertz(2500, young, poisson, 0.5, std::atan(0.5)));
    Press p;
    p.floor = b.wall(Vec3::Zero(), Vec3::UnitZ(), m, "floor");
    p.plate = b.wall(Vec3(0, 0, plateZ), -Vec3::UnitZ(), m, "plate");
    b.sphere(Vec3(0, 0, R), R, m);
    Motion servo;
    servo.kind = Motion::Kind::Servo;
    servo.object = p.plate;
    servo.direction = -Vec3::UnitZ();
    servo.servoForce = target;
    servo.maxSpeed = maxSpeed;
    servo.gain = maxSpeed / target; // the deck's default
    b.motion(servo);
    p.sim = b.build(dt);
    return p;
}

double plateZ(const Press& p) {
    return p.sim.obstacles.walls[1].point.z();
}

} // namespace

TEST_CASE("A servo approaches at its largest speed and holds the target force", "[motion][servo]") {
    // Nothing touches the plate for the first 0.05 s (a gap of 0.5 mm at 1 cm/s): it moves at
    // max_speed, exactly (round-off of n additions, tolerance 1e-12 m). Then the sphere between
    // plate and floor, two Hertz contacts in series, stiffens to K = (3/4) F*/u* at the target,
    // and the force error decays with tau = 1 / (gain K) = 17 ms (dem-deck(5)); after 20 tau,
    // and the sphere's oscillations damped by its contacts, the error is below 1e-8 of F*:
    // tolerance 1e-5 on the force, and 1e-3 of the Hertz overlap u* on both positions.
    ScopedThreads single(1);
    const double gap = 5e-4;
    Press p = press(2 * R + gap);
    Workspace ws;
    REQUIRE(run(p.sim, ws, 4000));
    CHECK(std::abs(plateZ(p) - (2 * R + gap - 4000 * maxSpeed * dt)) < 1e-12);
    CHECK(p.sim.obstacles.objects[size_t(p.plate)].vel == Vec3(0, 0, -maxSpeed));
    CHECK(p.sim.obstacles.objects[size_t(p.plate)].force.isZero());

    const double uStar = hertzOverlap(target);
    const double tau = 1 / ((maxSpeed / target) * 0.75 * target / uStar);
    REQUIRE(tau == Approx(0.0168).epsilon(0.01));
    REQUIRE(run(p.sim, ws, uint64_t(20 * tau / dt)));
    const RigidObject& plate = p.sim.obstacles.objects[size_t(p.plate)];
    const RigidObject& floor = p.sim.obstacles.objects[size_t(p.floor)];
    CHECK(plate.force.z() == Approx(target).epsilon(1e-5));
    CHECK(floor.force.z() == Approx(-target).epsilon(1e-5));
    CHECK(std::abs(plate.vel.z()) < 1e-5 * maxSpeed);
    CHECK(std::abs(p.sim.particles.pos[0].z() - (R - uStar)) < 1e-3 * uStar);
    CHECK(std::abs(plateZ(p) - (2 * R - 2 * uStar)) < 1e-3 * uStar);
}

TEST_CASE("A servo backs off when the spheres push harder than the target", "[motion][servo]") {
    // The plate starts pressed 2 u* into the sphere, which pushes back with 2^1.5 F*: the step
    // after the first measured force moves it back at max_speed, and it settles where the first
    // test does.
    ScopedThreads single(1);
    const double uStar = hertzOverlap(target);
    Press p = press(2 * R - 2 * uStar);
    Workspace ws;
    REQUIRE(run(p.sim, ws, 1));
    const RigidObject& plate = p.sim.obstacles.objects[size_t(p.plate)];
    CHECK(plate.force.z() > 2 * target);
    REQUIRE(run(p.sim, ws, 1));
    CHECK(plate.vel == Vec3(0, 0, maxSpeed));
    REQUIRE(run(p.sim, ws, 40000));
    CHECK(plate.force.z() == Approx(target).epsilon(1e-5));
    CHECK(std::abs(plateZ(p) - (2 * R - 2 * uStar)) < 1e-3 * uStar);
}

TEST_CASE("A servo continues bit for bit from a checkpoint", "[motion][servo][checkpoint]") {
    // The servo reads the force of the step before, which the checkpoint keeps with the object.
    ScopedThreads single(1);
    Press p = press(2 * R + 1e-4);
    Workspace ws;
    REQUIRE(run(p.sim, ws, 1500)); // pressing, far from settled
    REQUIRE(!p.sim.obstacles.objects[size_t(p.plate)].force.isZero());
    Simulation back;
    std::string error;
    REQUIRE(deserializeSimulation(serializeSimulation(p.sim), back, error));
    Workspace ws2;
    REQUIRE(run(p.sim, ws, 500));
    REQUIRE(run(back, ws2, 500));
    CHECK(stateDigest(back) == stateDigest(p.sim));
    CHECK(back.motions == p.sim.motions);
}

TEST_CASE("servo_tolerance holds the measured stop criteria back until the servo is near its "
          "target",
          "[motion][servo][stop]") {
    // While the plate approaches, the sphere rests: its kinetic energy is zero, below any
    // threshold, but the push on the plate (none) is far from the target. Only once the force is
    // within 1% does the criterion fire; a step count is never held back.
    ScopedThreads single(1);
    Press p = press(2 * R + 5e-4);
    Stage& stage = p.sim.stages[0];
    stage.stop.clear();
    StopCriterion rest;
    rest.kind = StopCriterion::Kind::KineticEnergy;
    rest.value = 1e-9;
    rest.servoTolerance = 0.01;
    rest.label = "at rest";
    StopCriterion steps;
    steps.kind = StopCriterion::Kind::Steps;
    steps.value = 1e9;
    steps.servoTolerance = 0.01;
    stage.stop = {steps, rest};
    Workspace ws;
    REQUIRE(run(p.sim, ws, 10));
    CHECK(!checkStop(p.sim, 0).fired);
    // The progress line says what it waits for.
    CHECK(stopProgress(p.sim, 0) == "at rest (now 0; servo on plate: 0 N of 1)");
    stage.stop[1].servoTolerance = 0;
    CHECK(checkStop(p.sim, 0).reason == "at rest");
    stage.stop[1].servoTolerance = 0.01;
    // Run until the criterion fires: the force is then within 1% of the target, and the sphere
    // has come to rest at the overlap it gives (within the 1% of force, 2/3% of overlap).
    uint64_t stepsRun = 10;
    while (!checkStop(p.sim, 0).fired && stepsRun < 200000) {
        if (!run(p.sim, ws, 1))
            FAIL(ws.error);
        ++stepsRun;
    }
    const double pushed = p.sim.obstacles.objects[size_t(p.plate)].force.z();
    CHECK(std::abs(pushed - target) <= 0.01 * target);
    CHECK(stepsRun > 5000); // not before the plate arrived (0.05 s)
    stage.stop[0].value = 1;
    CHECK(checkStop(p.sim, 0).fired); // the step count, not held back
    stage.stop[0].value = 1e9;
    stage.stop[1].servoTolerance = 1e-9;
    CHECK(!checkStop(p.sim, 0).fired);
}

TEST_CASE("A servo slides its object across its direction at the given velocity",
          "[motion][servo]") {
    // A shear box's lid under a constant normal load: once the plate holds F*, it also slides
    // along x at u = 1 cm/s. Its x advances by u dt each step (tolerance: round-off, 1e-12 m), and
    // the sphere, rolling between plate and floor with friction, keeps pushing it with F*
    // (tolerance 1e-3: the rolling contact's small changes of overlap, which the servo follows).
    ScopedThreads single(1);
    Press p = press(2 * R + 1e-4);
    Workspace ws;
    REQUIRE(run(p.sim, ws, 30000));
    const RigidObject& plate = p.sim.obstacles.objects[size_t(p.plate)];
    REQUIRE(plate.force.z() == Approx(target).epsilon(1e-5));
    const double u = 0.01, x0 = p.sim.obstacles.walls[1].point.x();
    p.sim.motions[0].velocity = Vec3(u, 0, 0);
    REQUIRE(run(p.sim, ws, 2000));
    CHECK(std::abs(p.sim.obstacles.walls[1].point.x() - (x0 + 2000 * u * dt)) < 1e-12);
    CHECK(plate.vel.x() == u);
    CHECK(plate.force.z() == Approx(target).epsilon(1e-3));
    // The sphere rolls between them without slip: its centre at u / 2, spinning at u / (2 R)
    // about +y (the top of it moving with the plate); within 1% after 20 ms.
    CHECK(p.sim.particles.vel[0].x() == Approx(u / 2).epsilon(1e-2));
    CHECK(p.sim.particles.angVel[0].y() == Approx(u / (2 * R)).epsilon(1e-2));
}

TEST_CASE("The servo law: proportional, or with an integral term that does not wind up",
          "[motion][servo]") {
    // servoOutput with gain 2, limit 1, dt 0.01.
    double integral = 0;
    CHECK(servoOutput(0.25, 2, 1, 0, 0.01, integral) == 0.5); // proportional: gain e
    CHECK(servoOutput(3, 2, 1, 0, 0.01, integral) == 1);      // at most the limit
    CHECK(integral == 0);
    // With T_i = 0.5: I grows by gain e dt / T_i = 0.01 per step for e = 0.25.
    CHECK(servoOutput(0.25, 2, 1, 0.5, 0.01, integral) == Approx(0.51).epsilon(1e-15));
    CHECK(integral == Approx(0.01).epsilon(1e-15));
    // At the limit with the error pushing further, I holds; the other way, it unwinds.
    CHECK(servoOutput(3, 2, 1, 0.5, 0.01, integral) == 1);
    CHECK(integral == Approx(0.01).epsilon(1e-15));
    CHECK(servoOutput(-0.25, 2, 1, 0.5, 0.01, integral) == Approx(-0.5).epsilon(1e-14));
    CHECK(std::abs(integral) < 1e-15);
    // Near the limit, I grows only as far as u stays within it: 0.8 + 1 would take u to 1.9.
    integral = 0.8;
    CHECK(servoOutput(0.05, 2, 1, 1e-3, 0.01, integral) == Approx(1).epsilon(1e-15));
    CHECK(integral == Approx(0.9).epsilon(1e-15));
    CHECK(servoOutput(0.05, 2, 1, 1e-3, 0.01, integral) == Approx(1).epsilon(1e-15));
    CHECK(integral == Approx(0.9).epsilon(1e-15));
}

TEST_CASE("A proportional servo lags yielding spheres by v / gain, an integral term removes the "
          "lag",
          "[motion][servo]") {
    // The floor sinks at v = 1 mm/s and the sphere with it, so in the steady state the plate
    // follows at v. A proportional servo moves at gain e, so it holds F* - v / gain = 0.9 N
    // (Motion's law; tolerance 1e-4 of F*). With integral_time T_i = 4 tau (tau = 1 / (gain K) =
    // 17 ms, K the stiffness at F*, first test) the loop e'' + e' / tau + e / (tau T_i) = 0 is
    // critically damped: the integral term takes over the speed, v, and the error decays as
    // (a + b t) e^(-t / (2 tau)), below 1e-10 of F* after 2 s (tolerance 1e-5, and 1e-5 of v).
    // On the approach (0.05 s at max_speed, first test) the integral term stays 0.
    ScopedThreads single(1);
    const double v = 1e-3, tau = 0.0168;
    for (const double integralTime : {0.0, 4 * tau}) {
        INFO("integral_time " << integralTime);
        Press p = press(2 * R + 5e-4);
        Motion sink;
        sink.object = p.floor;
        sink.velocity = Vec3(0, 0, -v);
        p.sim.motions.at(0).integralTime = integralTime; // the scene's stage has begun
        p.sim.motions.push_back(sink);
        Workspace ws;
        REQUIRE(run(p.sim, ws, 4000));
        CHECK(p.sim.motions.at(0).integral == 0);
        REQUIRE(run(p.sim, ws, 3000)); // touching since about step 5600
        // A stage that carries the servo over shows its velocity at its start without advancing
        // the integral term, which the stage's first step does.
        const double integral = p.sim.motions.at(0).integral;
        CHECK((integral != 0) == (integralTime > 0));
        Stage next = p.sim.stages[0];
        next.name = "next";
        next.motions.clear();
        p.sim.stages.push_back(next);
        p.sim.stage = 1;
        beginStage(p.sim);
        CHECK(p.sim.motions.at(0).integral == integral);
        REQUIRE(run(p.sim, ws, 197000));
        const RigidObject& plate = p.sim.obstacles.objects[size_t(p.plate)];
        CHECK(plate.vel.z() == Approx(-v).epsilon(1e-5));
        if (integralTime == 0) {
            CHECK(plate.force.z() == Approx(target - v / (maxSpeed / target)).epsilon(1e-4));
        } else {
            CHECK(plate.force.z() == Approx(target).epsilon(1e-5));
            CHECK(p.sim.motions.at(0).integral == Approx(v).epsilon(1e-5));
        }
    }
}
