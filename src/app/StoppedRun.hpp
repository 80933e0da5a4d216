#pragma once
// What a run directory holds that a fresh run there would replace: dem run and dem batch refuse,
// unless forced, to delete a finished run, the progress of a stopped one, or the last good state
// of a failed one.
#include <filesystem>

namespace dem {

enum class StoppedRun {
    None,        // nothing to keep (no run, or one without checkpoints that did not complete)
    Completed,   // summary.json says completed
    Failed,      // summary.json says failed, with checkpoints: the last one holds the state before
                 // the failure (or the newest before it), which --restart branches from
    Interrupted, // summary.json says interrupted: --resume continues it
    Killed,      // summary.json still says running, with checkpoints: killed (SIGKILL, the
                 // out-of-memory killer, a lost node) or still running; --resume continues it
};

StoppedRun stoppedRunIn(const std::filesystem::path& dir);

} // namespace dem
