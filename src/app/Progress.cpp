#include "app/Progress.hpp"

#include "app/RunLog.hpp"
#include "core/Measures.hpp"
#include "core/StopCriteria.hpp"

#include <fmt/format.h>
#include <iostream>
#include <unistd.h>

namespace dem {

Progress::Progress(const std::string& mode, bool quiet, uint64_t everySteps)
    : everySteps_(everySteps) {
    const bool tty = isatty(STDERR_FILENO);
    if (quiet || mode == "never")
        return;
    // Lines at fixed steps are a record of the run, like a log: never overwritten in place.
    live_ = tty && (mode == "always" || mode == "auto") && everySteps == 0;
    plain_ = !live_;
    interval_ = live_ ? 0.25 : 5.0;
    last_ = lastLogged_ = std::chrono::steady_clock::now();
}

void Progress::update(const Simulation& sim, double stageWallSeconds, double rate, RunLog& log) {
    if (!live_ && !plain_)
        return;
    const auto now = std::chrono::steady_clock::now();
    if (everySteps_ > 0 ? sim.step % everySteps_ != 0
                        : std::chrono::duration<double>(now - last_).count() < interval_)
        return;
    last_ = now;
    const Stage& stage = sim.stages[sim.stage];
    std::string eta;
    for (const StopCriterion& c : stage.stop) {
        // An ETA is known only for criteria that advance at a steady pace.
        if (c.kind == StopCriterion::Kind::Time && rate > 0 && sim.particles.size()) {
            const double stepsLeft = (c.value - (sim.time - sim.stageStartTime)) / sim.dt;
            eta = fmt::format(" eta {:.0f} s", stepsLeft * double(sim.particles.size()) / rate);
        } else if (c.kind == StopCriterion::Kind::Steps && rate > 0 && sim.particles.size()) {
            const double stepsLeft = c.value - double(sim.step - sim.stageStartStep);
            eta = fmt::format(" eta {:.0f} s", stepsLeft * double(sim.particles.size()) / rate);
        }
    }
    const std::string line = fmt::format("stage {}/{} '{}' step {} t={:.6g} s  {:.3g} "
                                         "particle-steps/s  {} spheres  {} contacts  stop: {}{}",
                                         sim.stage + 1, sim.stages.size(), stage.name, sim.step,
                                         sim.time, rate, sim.particles.size(), contactCount(sim),
                                         stopProgress(sim, stageWallSeconds), eta);
    if (live_) {
        std::cerr << "\r\033[K" << line << std::flush;
        dirty_ = true;
        if (std::chrono::duration<double>(now - lastLogged_).count() >= 5) {
            log.fileOnly(line); // the log keeps one line every few seconds, as without a terminal
            lastLogged_ = now;
        }
    } else {
        log.info(line);
    }
}

void Progress::finish() {
    if (dirty_)
        std::cerr << "\r\033[K" << std::flush;
    dirty_ = false;
}

} // namespace dem
