#pragma once
// What a deck's stages set: engines (gravity, damping, imposed motions, forces) and stop criteria.
#include "core/Types.hpp"

#include <optional>
#include <string>
#include <vector>

namespace dem {

// Imposed motion of a rigid object (wall, box, mesh) or of a group of spheres.
struct Motion {
    enum class Kind : uint8_t { Translation, Rotation, Harmonic, Servo };
    Kind kind = Kind::Translation;
    int object = -1; // rigid object index, or -1 when `group` is used
    int group = -1;  // sphere group (its spheres get all DOFs blocked and this velocity)
    Vec3 velocity = Vec3::Zero(); // translation
    Vec3 axis = Vec3::UnitZ();
    Vec3 center = Vec3::Zero();
    // A rotation of an object given no center: about the object's centre where it is when the
    // stage that sets the motion begins (beginStage sets `center`).
    bool centerAtObject = false;
    double angularVelocity = 0; // rotation
    Vec3 amplitude = Vec3::Zero();
    double frequency = 0, phase = 0; // harmonic
    // Servo (objects only): the object translates along `direction` at
    // clamp(gain (servoForce - F) + integral, -maxSpeed, maxSpeed) (servoOutput), F the spheres'
    // push on it against `direction` in the step before, and slides at `velocity` (across
    // `direction`). `integral` is the running simulation's state (0 in a stage's copy).
    Vec3 direction = Vec3::UnitZ();
    double servoForce = 0, maxSpeed = 0, gain = 0;
    double integralTime = 0; // [s]; 0: proportional only
    double integral = 0;     // [m/s]

    bool operator==(const Motion&) const = default;
};

// A servo on the periodic cell's normal stresses (Yade's PeriTriaxController, without its cell
// mass): along each controlled axis a, the cell stretches at
// L_aa = clamp(gain (target_a - sigma_aa) + integral_a, -maxRate, maxRate) (servoOutput), sigma
// the cell's stress at the start of the step (compression negative); the other entries of L are
// the stage's. `integral` is the running simulation's state (0 in a stage's copy).
struct StressControl {
    uint8_t axes = 0;           // bit a set: the stress along axis a is controlled; 0 = no control
    Vec3 target = Vec3::Zero(); // [Pa]
    double maxRate = 0;         // [1/s]
    double gain = 0;            // [1/(s Pa)]
    double integralTime = 0;    // [s]; 0: proportional only
    Vec3 integral = Vec3::Zero(); // [1/s]

    bool operator==(const StressControl&) const = default;
};

// New rolling and/or twisting friction coefficients of a material from a stage on.
struct RollingChange {
    int material = 0;
    std::optional<double> rolling, twisting;

    bool operator==(const RollingChange&) const = default;
};

// Constant force added to every sphere of a group.
struct ConstantForce {
    int group = -1;
    Vec3 force = Vec3::Zero();

    bool operator==(const ConstantForce&) const = default;
};

// A measured quantity addressed by name (see Measures.hpp for the grammar).
struct MeasureRef {
    enum class Scope : uint8_t { Global, Object, Body, Group };
    enum class Quantity : uint8_t {
        Step,
        Time,
        Dt,
        KineticEnergy,
        KineticTranslational,
        KineticRotational,
        ElasticEnergy,
        PotentialEnergy,
        TotalEnergy,
        DissipatedDamping,
        DissipatedContacts,
        UnbalancedForce,
        CoordinationNumber,
        Contacts,
        Particles,
        Position,
        Displacement,
        Velocity,
        AngularVelocity,
        Force,
        Torque,
        Stress,            // of a periodic cell; component 3 row + column
        Pressure,          // of a periodic cell, -trace(stress) / 3
        CellEdge,          // of a periodic cell: h, component 3 row + column
        CellVolume,        // of a periodic cell: det h
        Porosity,          // of a periodic cell: 1 - the spheres' volume / det h
        KineticFluctuation // of a periodic cell: the translational one relative to the mean flow
    };
    std::string name; // as written in the deck
    Scope scope = Scope::Global;
    Quantity quantity = Quantity::Time;
    int target = -1;    // object index, sphere body id or group index
    int component = -1; // 0,1,2 for x,y,z (0-8 for Stress); -1 = magnitude or the scalar

    bool operator==(const MeasureRef&) const = default;
};

struct StopCriterion {
    enum class Kind : uint8_t { Steps, Time, WallTime, UnbalancedForce, KineticEnergy, Measure };
    Kind kind = Kind::Steps;
    double value = 0;          // steps, seconds, threshold
    bool above = false;        // Measure: fire when value > threshold (else when below)
    MeasureRef measure;        // Measure only
    uint64_t checkEvery = 1;   // evaluated every n steps of the stage
    uint64_t minSteps = 0;     // not evaluated before this many steps of the stage
    double servoTolerance = 0; // > 0: not evaluated unless every servo is this near its target
    std::string label;         // how summary.json names it, e.g. "unbalanced_force < 0.05"

    bool operator==(const StopCriterion&) const = default;
};

struct Stage {
    std::string name;
    std::optional<Vec3> gravity;          // unset: keep the previous stage's
    std::optional<double> damping;        // Cundall's numerical damping coefficient
    std::optional<Mat3> velocityGradient; // of the periodic cell, L[r][c] = dv_r / dx_c
    // Replaces the previous stage's; a stage that sets only velocityGradient ends it.
    std::optional<StressControl> stressControl;
    std::vector<Motion> motions; // replace the previous stage's motions when non-empty
    bool clearMotions = false;   // stop all imposed motions at the start of this stage
    std::vector<ConstantForce> forces;
    std::vector<std::pair<int, double>> frictionAngles; // material index, new friction angle (rad)
    std::vector<RollingChange> rollingChanges;
    std::vector<StopCriterion> stop; // the first to fire ends the stage

    bool operator==(const Stage&) const = default;
};

} // namespace dem
