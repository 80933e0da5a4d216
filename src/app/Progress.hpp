#pragma once
// Progress of a long run: a live line on a terminal, a plain line every few seconds otherwise, or
// a plain line every `everySteps` steps when the deck asks for that ([output] progress_every).
#include "core/Simulation.hpp"

#include <chrono>
#include <cstdint>
#include <string>

namespace dem {

class RunLog;

class Progress {
public:
    Progress(const std::string& mode, bool quiet, uint64_t everySteps = 0);
    // Called every step; prints only when the interval has passed.
    void update(const Simulation& sim, double stageWallSeconds, double particleStepsPerSecond,
                RunLog& log);
    void finish(); // ends a live line

private:
    bool live_ = false, plain_ = false, dirty_ = false;
    double interval_ = 5;
    uint64_t everySteps_ = 0; // 0: by wall time
    std::chrono::steady_clock::time_point last_, lastLogged_;
};

} // namespace dem
