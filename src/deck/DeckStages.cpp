// [[stage]]: engines (gravity, damping, velocity gradient, motions, forces, friction changes) and
// stop criteria.
#include "core/Measures.hpp"
#include "core/StopCriteria.hpp"
#include "deck/DeckBuild.hpp"

#include <fmt/format.h>
#include <numbers>

namespace dem {

namespace {

double radians(double degrees) {
    return degrees * std::numbers::pi / 180.0;
}

int readObjectRef(TableReader& t, DeckBuild& b) {
    const auto name = t.string("object");
    if (!name)
        return -1;
    const int object = b.sim.obstacles.findObject(*name);
    if (object >= 0)
        return object;
    std::vector<std::string_view> names;
    for (const RigidObject& o : b.sim.obstacles.objects)
        names.push_back(o.name);
    t.error("object", fmt::format("undefined object '{}' (defined: {}){}", *name, joinNames(names),
                                  didYouMean(*name, names)));
    return -1;
}

std::optional<Motion> readMotion(TableReader& t, DeckBuild& b) {
    Motion m;
    if (t.has("object"))
        m.object = readObjectRef(t, b);
    if (t.has("group"))
        m.group = readGroupRef(t, "group", b);
    if (t.has("velocity") && !t.has("servo_force")) {
        m.kind = Motion::Kind::Translation;
        m.velocity = t.vec3("velocity").value_or(Vec3::Zero());
    } else if (t.has("angular_velocity")) {
        m.kind = Motion::Kind::Rotation;
        m.angularVelocity = t.number("angular_velocity").value_or(0.0);
        m.axis = readDirection(t, "axis").value_or(Vec3::UnitZ());
        if (t.has("center")) {
            m.center = t.vec3("center").value_or(Vec3::Zero());
        } else if (m.object >= 0) {
            m.centerAtObject = true; // where the object is when the stage begins
        } else if (t.has("group")) {
            t.error("the rotation of a group needs a center");
        }
    } else if (t.has("amplitude")) {
        m.kind = Motion::Kind::Harmonic;
        m.amplitude = t.vec3("amplitude").value_or(Vec3::Zero());
        m.frequency = t.number("frequency").value_or(0.0);
        m.phase = radians(t.number("phase").value_or(0.0));
    } else if (t.has("servo_force")) {
        m.kind = Motion::Kind::Servo;
        if (t.has("group"))
            t.error("servo_force", "a servo moves a rigid object (a wall, box or facets) by the "
                                   "force on it; a group has no such force: use object");
        m.servoForce = t.number("servo_force").value_or(0.0);
        m.direction = readDirection(t, "direction").value_or(Vec3::UnitZ());
        m.maxSpeed = t.number("max_speed").value_or(0.0);
        // A sliding velocity across the servo's direction (Motion::velocity).
        if (t.has("velocity")) {
            m.velocity = t.vec3("velocity").value_or(Vec3::Zero());
            const double along = m.velocity.dot(m.direction);
            if (std::abs(along) > 1e-12 * m.velocity.norm())
                t.error("velocity",
                        fmt::format("with servo_force, velocity slides the object across "
                                    "direction, which the servo moves it along, but it has {} "
                                    "m/s along direction: give a velocity across it",
                                    along));
        }
        // By default the object slows in proportion to what is left of the target: full speed
        // with nothing pushing on it, standing still at the target.
        if (t.has("gain")) {
            m.gain = t.number("gain").value_or(0.0);
        } else if (m.servoForce > 0) {
            m.gain = m.maxSpeed / m.servoForce;
            t.put("gain", m.gain);
        }
        m.integralTime = t.number("integral_time").value_or(0.0);
    }
    if (t.failed())
        return std::nullopt;
    return m;
}

// [[stage]] stress_control; `gradient` is the stage's velocity_gradient, whose controlled
// diagonal entries the servo sets.
std::optional<StressControl> readStressControl(TableReader& t, DeckBuild& b,
                                               const std::optional<Mat3>& gradient) {
    if (!b.periodic)
        t.error("stress_control is a servo on the stresses of a periodic cell, but the deck has "
                "no [periodic] table: add one, or use a motion with servo_force on a wall");
    StressControl c;
    const char* names[] = {"xx", "yy", "zz"};
    for (int a = 0; a < 3; ++a) {
        const auto target = t.number(names[a]);
        if (!target)
            continue;
        c.axes |= uint8_t(1u << a);
        c.target[a] = *target;
        if (gradient && (*gradient)(a, a) != 0)
            t.error(names[a],
                    fmt::format("the servo sets the stage's velocity_gradient[{0}][{0}], which "
                                "is {1}: give 0 there, or leave {2} out of stress_control to "
                                "strain the cell along it by velocity_gradient",
                                a, (*gradient)(a, a), names[a]));
    }
    c.maxRate = t.number("max_strain_rate").value_or(0.0);
    const double largest = c.target.cwiseAbs().maxCoeff();
    if (t.has("gain"))
        c.gain = t.number("gain").value_or(0.0);
    else if (largest > 0) {
        c.gain = c.maxRate / largest;
        t.put("gain", c.gain);
    } else if (c.axes != 0)
        t.error("every target stress is 0, so the default gain (max_strain_rate / the largest "
                "|target|) is undefined: give gain");
    c.integralTime = t.number("integral_time").value_or(0.0);
    if (t.failed() || c.axes == 0)
        return std::nullopt;
    return c;
}

std::string stopLabel(std::string_view name, std::string_view op, double value) {
    return fmt::format("{} {} {}", name, op, value);
}

// Whether a servo runs while `stage` runs: on an object (one of its own motions, or one it
// carries over from the stages before it) or on the periodic cell (its own stress control or
// one carried over; a velocity_gradient ends it), as beginStage sets them.
bool servoRuns(const std::vector<Stage>& before, const Stage& stage) {
    const auto hasServo = [](const Stage& s) {
        for (const Motion& m : s.motions)
            if (m.kind == Motion::Kind::Servo)
                return true;
        return false;
    };
    const auto setsMotions = [](const Stage& s) { return !s.motions.empty() || s.clearMotions; };
    const auto setsCell = [](const Stage& s) { return s.stressControl || s.velocityGradient; };
    bool motions = setsMotions(stage) && hasServo(stage);
    bool cell = stage.stressControl.has_value();
    bool motionsKnown = setsMotions(stage), cellKnown = setsCell(stage);
    for (auto s = before.rbegin(); s != before.rend(); ++s) {
        if (!motionsKnown && setsMotions(*s)) {
            motions = hasServo(*s);
            motionsKnown = true;
        }
        if (!cellKnown && setsCell(*s)) {
            cell = s->stressControl.has_value();
            cellKnown = true;
        }
    }
    return motions || cell;
}

void readStop(TableReader& t, DeckBuild& b, Stage& stage) {
    const uint64_t checkEvery = uint64_t(t.integer("check_every").value_or(1));
    const uint64_t minSteps = uint64_t(t.integer("min_steps").value_or(0));
    const double servoTolerance = t.number("servo_tolerance").value_or(0.0);
    if (t.has("servo_tolerance") && !servoRuns(b.sim.stages, stage))
        t.error("servo_tolerance",
                "servo_tolerance waits for servos, but no servo runs in this stage: give a "
                "motion with servo_force or a stress_control here or in an earlier stage, or "
                "remove servo_tolerance");
    else if (t.has("servo_tolerance") && !t.has("unbalanced_force") && !t.has("kinetic_energy") &&
             !t.has("measure"))
        t.error("servo_tolerance",
                "servo_tolerance holds back only unbalanced_force, kinetic_energy and measure, "
                "and this stop table has none of them: add one (e.g. unbalanced_force = 0.01) "
                "or remove servo_tolerance");
    const auto add = [&](StopCriterion::Kind kind, double value, std::string label) {
        StopCriterion c;
        c.kind = kind;
        c.value = value;
        c.checkEvery = checkEvery;
        c.minSteps = minSteps;
        if (isMeasured(kind) && servoTolerance > 0) {
            c.servoTolerance = servoTolerance;
            label += fmt::format(" (servos within {})", servoTolerance);
        }
        c.label = std::move(label);
        stage.stop.push_back(std::move(c));
    };
    if (const auto n = t.integer("steps"))
        add(StopCriterion::Kind::Steps, double(*n), stopLabel("steps", ">=", double(*n)));
    // The step nearest to the time ends the stage (StopCriteria.cpp), possibly half a step before
    // it: "~", not ">=".
    if (const auto x = t.number("time"))
        add(StopCriterion::Kind::Time, *x, stopLabel("time", "~", *x));
    if (const auto x = t.number("wall_time"))
        add(StopCriterion::Kind::WallTime, *x, stopLabel("wall_time", ">=", *x));
    if (const auto x = t.number("unbalanced_force"))
        add(StopCriterion::Kind::UnbalancedForce, *x, stopLabel("unbalanced_force", "<", *x));
    if (const auto x = t.number("kinetic_energy"))
        add(StopCriterion::Kind::KineticEnergy, *x, stopLabel("kinetic_energy", "<", *x));
    const auto name = t.string("measure");
    if (!name)
        return;
    MeasureRef ref;
    std::string why;
    if (!parseMeasure(*name, b.sim, ref, why)) {
        t.error("measure", "bad measure: " + why);
        return;
    }
    const auto above = t.number("above");
    const auto below = t.number("below");
    if (!above && !below)
        return;
    add(StopCriterion::Kind::Measure, above ? *above : *below,
        stopLabel(*name, above ? ">" : "<", above ? *above : *below));
    stage.stop.back().above = above.has_value();
    stage.stop.back().measure = ref;
}

void readStage(TableReader& t, size_t k, DeckBuild& b) {
    Stage stage;
    stage.name = t.string("name").value_or(fmt::format("stage{}", k));
    t.put("name", stage.name);
    for (const Stage& s : b.sim.stages)
        if (s.name == stage.name)
            t.error("name", fmt::format("duplicate stage name '{}'", stage.name));
    stage.gravity = t.vec3("gravity");
    stage.damping = t.number("damping");
    if (const auto gradient = t.mat3("velocity_gradient")) {
        if (b.periodic)
            stage.velocityGradient = *gradient;
        else
            t.error("velocity_gradient",
                    "velocity_gradient is the velocity gradient of a periodic cell, but the deck "
                    "has no [periodic] table: add one (e.g. [periodic] with size = [Lx, Ly, Lz]) "
                    "or remove velocity_gradient");
    }
    t.table("stress_control", [&](TableReader& c) {
        stage.stressControl = readStressControl(c, b, stage.velocityGradient);
    });
    t.tables("motion", [&](TableReader& m, size_t) {
        if (auto motion = readMotion(m, b))
            stage.motions.push_back(*motion);
    });
    // stop_motion excludes motion, so it is only read (and resolved) without one.
    if (!t.has("motion"))
        stage.clearMotions = t.boolean("stop_motion").value_or(false);
    t.tables("force", [&](TableReader& f, size_t) {
        const int group = readGroupRef(f, "group", b);
        const auto force = f.vec3("force");
        if (group >= 0 && force)
            stage.forces.push_back(ConstantForce{group, *force});
    });
    t.tables("friction", [&](TableReader& f, size_t) {
        const int material = readMaterialRef(f, "material", b);
        const auto angle = f.number("friction_angle");
        const auto rolling = f.number("rolling_friction");
        const auto twisting = f.number("twisting_friction");
        if (material < 0)
            return;
        if (angle)
            stage.frictionAngles.emplace_back(material, radians(*angle));
        if (rolling || twisting)
            stage.rollingChanges.push_back(RollingChange{material, rolling, twisting});
    });
    t.table("stop", [&](TableReader& s) { readStop(s, b, stage); });
    b.sim.stages.push_back(std::move(stage));
}

} // namespace

void readStages(TableReader& root, DeckBuild& b) {
    root.tables("stage", [&](TableReader& t, size_t k) { readStage(t, k, b); });
    if (b.sim.stages.empty() && root.has("stage") && root.node("stage")->is_array())
        root.error("stage", "the deck has no [[stage]]: a run needs at least one stage with a "
                            "stop criterion");
}

} // namespace dem
