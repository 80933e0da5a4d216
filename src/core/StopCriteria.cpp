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

double servoPush(const Simulation& sim, const Motion& m) {
    return -m.direction.dot(sim.obstacles.objects[size_t(m.object)].force);
}

// The first servo whose push F is not within `tolerance` F* of its target F*; null when none.
const Motion* servoOffTarget(const Simulation& sim, double tolerance) {
    for (const Motion& m : sim.motions)
        if (m.kind == Motion::Kind::Servo &&
            !(std::abs(servoPush(sim, m) - m.servoForce) <= tolerance * m.servoForce))
            return &m;
    return nullptr;
}

bool due(const Simulation& sim, const StopCriterion& c) {
    const uint64_t inStage = sim.step - sim.stageStartStep;
    if (inStage < c.minSteps)
        return false;
    if (c.checkEvery > 1 && inStage % c.checkEvery != 0)
        return false;
    return c.servoTolerance <= 0 || !servoOffTarget(sim, c.servoTolerance);
}

} // namespace

StopStatus checkStop(const Simulation& sim, double wallSeconds) {
    const Stage& stage = sim.stages[sim.stage];
    for (const StopCriterion& c : stage.stop) {
        // Time criteria compare against time accumulated in steps, so a stage of duration T stops
        // after round(T/dt) steps rather than one step late because of round-off.
        const bool always = c.kind == StopCriterion::Kind::Steps ||
                            c.kind == StopCriterion::Kind::Time ||
                            c.kind == StopCriterion::Kind::WallTime;
        if (!always && !due(sim, c))
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
        if (c.kind == StopCriterion::Kind::Steps || c.kind == StopCriterion::Kind::Time ||
            c.kind == StopCriterion::Kind::WallTime)
            continue;
        const Motion* servo =
            c.servoTolerance > 0 ? servoOffTarget(sim, c.servoTolerance) : nullptr;
        if (servo)
            return fmt::format("{} (now {:.3g}; servo on {}: {:.3g} N of {:.3g})", c.label,
                               watched(sim, c, wallSeconds),
                               sim.obstacles.objects[size_t(servo->object)].name,
                               servoPush(sim, *servo), servo->servoForce);
        return fmt::format("{} (now {:.3g})", c.label, watched(sim, c, wallSeconds));
    }
    return stage.stop.empty() ? std::string() : stage.stop.front().label;
}

} // namespace dem
