// Stress-controlled periodic cells ([[stage]] stress_control, dem-deck(5)): a cubic lattice
// compressed by the servo comes to the spacing at which its Hertz contacts carry the target.
#include "SceneBuilder.hpp"

#include "core/Measures.hpp"
#include "core/StateDigest.hpp"
#include "core/StopCriteria.hpp"
#include "io/CheckpointSerialize.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace dem;
using namespace dem::test;

namespace {

constexpr double r = 0.01, young = 1e8, poisson = 0.25, dt = 1e-5, maxRate = 1.0;
constexpr double overlapAtTarget = 2e-4;

// The Hertz force of two equal spheres overlapping by u: 4/3 E* sqrt(r/2) u^(3/2),
// E* = E / (2 (1 - nu^2)) (physics.md §5.1).
double hertzForce(double u) {
    return 4.0 / 3 * young / (2 * (1 - poisson * poisson)) * std::sqrt(r / 2) * std::pow(u, 1.5);
}

// In a simple cubic lattice of spacing a every pair along x carries F over a branch a, one pair
// per sphere in a volume a^3 per sphere: sigma_xx = -F / a^2 (test_periodic.cpp).
const double spacingAtTarget = 2 * r - overlapAtTarget;
const double targetStress = -hertzForce(overlapAtTarget) / (spacingAtTarget * spacingAtTarget);

// 4 x 4 x 4 spheres at spacing 2r + gap filling the cell (no contact), with friction, which holds
// the lattice against the sideways buckling a frictionless cubic lattice is prone to.
Simulation lattice(const StressControl& control, const Mat3& L = Mat3::Zero()) {
    const double a = 2 * r + 1e-4;
    SceneBuilder b;
    const int m = b.material(hertz(2500, young, poisson, 0.5, std::atan(0.5)));
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
            for (int k = 0; k < 4; ++k)
                b.sphere(a * (Vec3(i, j, k) + Vec3::Constant(0.5)), r, m);
    b.periodic(Vec3::Constant(4 * a)).velocityGradient(L);
    Simulation sim = b.build(dt);
    sim.stages[0].stressControl = control;
    beginStage(sim);
    return sim;
}

StressControl isotropic() {
    StressControl c;
    c.axes = 7;
    c.target = Vec3::Constant(targetStress);
    c.maxRate = maxRate;
    c.gain = maxRate / std::abs(targetStress); // the deck's default
    return c;
}

// The lattice at rest at the target: stresses within 1e-6, each edge's four spacings within 1e-3
// of the overlap, the cell standing still.
void checkAtTarget(const Simulation& sim) {
    const Mat3 sigma = cellStress(sim);
    for (int a = 0; a < 3; ++a) {
        INFO("axis " << a);
        CHECK(sigma(a, a) == Approx(targetStress).epsilon(1e-6));
        CHECK(std::abs(sim.cell.h(a, a) - 4 * spacingAtTarget) < 4e-3 * overlapAtTarget);
        CHECK(std::abs(sim.cell.velGrad(a, a)) < 1e-6 * maxRate);
    }
}

} // namespace

TEST_CASE("stress control: a cubic lattice comes to the spacing of the target stress",
          "[periodic][servo]") {
    // Apart, the cell shrinks at max_strain_rate along each axis, exactly. Touching, the stress
    // follows the strain with the modulus M = 1.5 F / (u a) = 5.4 MPa, and the error decays with
    // tau = 1 / (gain M) = 6.7 ms (dem-deck(5)); the lattice moves with the mean flow, so there is
    // no other lag. After 20 tau the error is e^-20 of the target: tolerance 1e-6 on the stresses,
    // and 1e-3 of the overlap on each of the four spacings of an edge.
    ScopedThreads single(1);
    Simulation sim = lattice(isotropic());
    Workspace ws;
    REQUIRE(run(sim, ws, 10));
    CHECK(sim.cell.velGrad == Mat3(-maxRate * Mat3::Identity()));
    const double modulus = 1.5 * hertzForce(overlapAtTarget) / (overlapAtTarget * spacingAtTarget);
    const double tau = std::abs(targetStress) / (maxRate * modulus);
    REQUIRE(tau == Approx(6.7e-3).epsilon(0.01));
    REQUIRE(run(sim, ws, uint64_t((5e-3 + 20 * tau) / dt)));
    checkAtTarget(sim);
    const Mat3 sigma = cellStress(sim);
    CHECK(std::abs(sigma(0, 1)) < 1e-9 * std::abs(targetStress));
    // The cell's measures: its edges, volume and porosity (64 spheres of r in (4 a)^3).
    std::string error;
    MeasureRef edge, volume, porosity;
    REQUIRE(parseMeasure("cell_zz", sim, edge, error));
    REQUIRE(parseMeasure("cell_volume", sim, volume, error));
    REQUIRE(parseMeasure("porosity", sim, porosity, error));
    CHECK(evaluate(sim, edge) == sim.cell.h(2, 2));
    CHECK(evaluate(sim, volume) == Approx(sim.cell.h.determinant()).epsilon(1e-15));
    const double solid = 64 * 4.0 / 3 * pi * r * r * r;
    CHECK(evaluate(sim, porosity) == Approx(1 - solid / sim.cell.h.determinant()).epsilon(1e-12));
    CHECK(evaluate(sim, porosity) ==
          Approx(1 - pi / 6 * std::pow(2 * r / spacingAtTarget, 3)).epsilon(1e-4));
}

TEST_CASE("stress control with an integral term settles at the target stress too",
          "[periodic][servo]") {
    // With integral_time T_i = 4 tau the loop is critically damped (dem-deck(5)): the error
    // decays as (a + b t) e^(-t / (2 tau)), below 1e-9 of the target after 60 tau, with
    // no integral term left once the cell stands still (tolerances as in the first test). The
    // integral term does not grow while the cell shrinks at max_strain_rate.
    ScopedThreads single(1);
    const double tau = 6.7e-3;
    StressControl control = isotropic();
    control.integralTime = 4 * tau;
    Simulation sim = lattice(control);
    Workspace ws;
    REQUIRE(run(sim, ws, 300));                                                // apart until 5 ms
    CHECK(sim.stressControl.integral.cwiseAbs().maxCoeff() < 1e-15 * maxRate); // round-off of gain
    REQUIRE(run(sim, ws, uint64_t(60 * tau / dt)));
    checkAtTarget(sim);
    CHECK(sim.stressControl.integral.cwiseAbs().maxCoeff() < 1e-6 * maxRate);
}

TEST_CASE("stress control: uncontrolled axes keep the stage's velocity gradient",
          "[periodic][servo]") {
    // A triaxial test: x and y at the target stress, z shortened at 0.5 /s by the stage's gradient.
    // The lateral axes start shrinking at the largest rate; L_zz stays the stage's.
    ScopedThreads single(1);
    StressControl lateral = isotropic();
    lateral.axes = 3;
    lateral.target.z() = 0;
    Mat3 L = Mat3::Zero();
    L(2, 2) = -0.5;
    Simulation sim = lattice(lateral, L);
    Workspace ws;
    REQUIRE(run(sim, ws, 10));
    CHECK(sim.cell.velGrad(0, 0) == -maxRate);
    CHECK(sim.cell.velGrad(1, 1) == -maxRate);
    CHECK(sim.cell.velGrad(2, 2) == -0.5);
    // The stop criteria wait for the lateral stresses, and the progress line says which.
    StopCriterion still;
    still.kind = StopCriterion::Kind::KineticEnergy;
    still.value = 1e300;
    still.servoTolerance = 0.01;
    still.label = "still";
    sim.stages[0].stop = {still};
    CHECK(!checkStop(sim, 0).fired);
    CHECK(stopProgress(sim, 0).find("cell stress_xx: 0 Pa of -3.") != std::string::npos);
}

TEST_CASE("stress control continues bit for bit from a checkpoint", "[periodic][servo]") {
    // With an integral term, whose state the checkpoint keeps.
    ScopedThreads single(1);
    StressControl control = isotropic();
    control.integralTime = 0.03;
    Simulation sim = lattice(control);
    Workspace ws;
    REQUIRE(run(sim, ws, 800)); // compressing
    REQUIRE(cellStress(sim)(0, 0) < 0);
    REQUIRE(sim.stressControl.integral.x() != 0);
    Simulation back;
    std::string error;
    REQUIRE(deserializeSimulation(serializeSimulation(sim), back, error));
    CHECK(back.stressControl == sim.stressControl);
    CHECK(back.stages[0].stressControl == sim.stages[0].stressControl);
    Workspace ws2;
    REQUIRE(run(sim, ws, 300));
    REQUIRE(run(back, ws2, 300));
    CHECK(stateDigest(back) == stateDigest(sim));
}
