#pragma once
// What a run directory holds that a fresh run there would replace: dem run and dem batch refuse,
// unless forced, to delete a finished run or the progress of a stopped one.
#include <filesystem>

namespace dem {

enum class StoppedRun {
    None,        // nothing to keep (no run, a failed one, one without checkpoints)
    Completed,   // summary.json says completed
    Interrupted, // summary.json says interrupted: --resume continues it
    Killed,      // summary.json still says running, with checkpoints: killed (SIGKILL, the
                 // out-of-memory killer, a lost node) or still running; --resume continues it
};

StoppedRun stoppedRunIn(const std::filesystem::path& dir);

} // namespace dem
