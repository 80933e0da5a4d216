#pragma once
// Stop criteria of the running stage: the first one to fire ends the stage.
#include "core/Simulation.hpp"

#include <string>

namespace dem {

struct StopStatus {
    bool fired = false;
    std::string reason; // the criterion's label, e.g. "unbalanced_force < 0.05"
};

// Whether a criterion watches a measured quantity (checked every check_every steps after
// min_steps, held back by servo_tolerance) rather than a count of steps or time.
inline bool isMeasured(StopCriterion::Kind kind) {
    return kind != StopCriterion::Kind::Steps && kind != StopCriterion::Kind::Time &&
           kind != StopCriterion::Kind::WallTime;
}

// `wallSeconds` is the wall-clock time spent in this stage by the current process.
StopStatus checkStop(const Simulation& sim, double wallSeconds);

// The measure and threshold of the criterion most worth showing in a progress line.
std::string stopProgress(const Simulation& sim, double wallSeconds);

} // namespace dem
