#include "core/StopCriteria.hpp"

#include "core/Measures.hpp"

#include <cmath>
#include <fmt/format.h>

namespace dem {

namespace {

// Value of the quantity a criterion watches (NaN when undefined, which never fires).
double watched(const Simulation& sim, const StopCriterion& c, double wallSeconds) {
    switch (c.kind) {
    case StopCriterion::Kind::Steps:
        return double(sim.step - sim.stageStartStep);
    case StopCriterion::Kind::Time:
        return sim.time - sim.stageStartTime;
    case StopCriterion::Kind::WallTime:
        return wallSeconds;
    case StopCriterion::Kind::UnbalancedForce:
        return unbalancedForce(sim);
    case StopCriterion::Kind::KineticEnergy:
        return kineticEnergyTranslational(sim) + kineticEnergyRotational(sim);
    case StopCriterion::Kind::Measure:
        return evaluate(sim, c.measure);
    }
    return std::nan("");
}

bool fires(const StopCriterion& c, double v) {
    switch (c.kind) {
    case StopCriterion::Kind::Steps:
    case StopCriterion::Kind::Time:
    case StopCriterion::Kind::WallTime:
        return v >= c.value * (1 - 1e-12);
    case StopCriterion::Kind::UnbalancedForce:
    case StopCriterion::Kind::KineticEnergy:
        return v < c.value;
    case StopCriterion::Kind::Measure:
        return c.above ? v > c.value : v < c.value;
    }
    return false;
}

// The first servo not within `tolerance` of its target: a motion's index, or 3 + a cell axis;
// -1 when every servo is. An object's servo is within it when its push F is within tolerance F*
// of F*, the cell's when the stress along each controlled axis is within tolerance times the
// largest |target| (a target may be 0). Allocates nothing: the run loop asks at every check.
int servoOffTarget(const Simulation& sim, double tolerance) {
    for (size_t k = 0; k < sim.motions.size(); ++k) {
        const Motion& m = sim.motions[k];
        if (m.kind == Motion::Kind::Servo &&
            !(std::abs(servoPush(sim, m) - m.servoForce) <= tolerance * m.servoForce))
            return int(k);
    }
    const StressControl& c = sim.stressControl;
    if (c.axes == 0 || !sim.cell.enabled)
        return -1;
    const Mat3 sigma = cellStress(sim);
    const double scale = c.target.cwiseAbs().maxCoeff();
    for (int a = 0; a < 3; ++a)
        if ((c.axes & (1u << a)) && !(std::abs(sigma(a, a) - c.target[a]) <= tolerance * scale))
            return int(sim.motions.size()) + a;
    return -1;
}

// What servoOffTarget found, for the progress line: "servo on plate: 12 N of 50".
std::string describeServo(const Simulation& sim, int off) {
    if (size_t(off) < sim.motions.size()) {
        const Motion& m = sim.motions[size_t(off)];
        return fmt::format("servo on {}: {:.3g} N of {:.3g}",
                           sim.obstacles.objects[size_t(m.object)].name, servoPush(sim, m),
                           m.servoForce);
    }
    const int a = off - int(sim.motions.size());
    return fmt::format("cell stress_{0}{0}: {1:.3g} Pa of {2:.3g}", "xyz"[a], cellStress(sim)(a, a),
                       sim.stressControl.target[a]);
}

bool due(const Simulation& sim, const StopCriterion& c) {
    const uint64_t inStage = sim.step - sim.stageStartStep;
    if (inStage < c.minSteps)
        return false;
    if (c.checkEvery > 1 && inStage % c.checkEvery != 0)
        return false;
    return c.servoTolerance <= 0 || servoOffTarget(sim, c.servoTolerance) < 0;
}

} // namespace

StopStatus checkStop(const Simulation& sim, double wallSeconds) {
    const Stage& stage = sim.stages[sim.stage];
    for (const StopCriterion& c : stage.stop) {
        // Time criteria compare against time accumulated in steps, so a stage of duration T stops
        // after round(T/dt) steps rather than one step late because of round-off.
        if (isMeasured(c.kind) && !due(sim, c))
            continue;
        double v = watched(sim, c, wallSeconds);
        if (c.kind == StopCriterion::Kind::Time)
            v += 0.5 * sim.dt;
        if (fires(c, v))
            return {true, c.label};
    }
    return {};
}

std::string stopProgress(const Simulation& sim, double wallSeconds) {
    const Stage& stage = sim.stages[sim.stage];
    for (const StopCriterion& c : stage.stop) {
        if (!isMeasured(c.kind))
            continue;
        const int off = c.servoTolerance > 0 ? servoOffTarget(sim, c.servoTolerance) : -1;
        if (off >= 0)
            return fmt::format("{} (now {:.3g}; {})", c.label, watched(sim, c, wallSeconds),
                               describeServo(sim, off));
        return fmt::format("{} (now {:.3g})", c.label, watched(sim, c, wallSeconds));
    }
    return stage.stop.empty() ? std::string() : stage.stop.front().label;
}

} // namespace dem
