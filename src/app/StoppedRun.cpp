#include "app/StoppedRun.hpp"

#include "app/Checkpointer.hpp"
#include "io/JsonFile.hpp"

namespace dem {

StoppedRun stoppedRunIn(const std::filesystem::path& dir) {
    const std::string status = jsonText(readJsonObject((dir / "summary.json").string()), "status");
    if (status == "completed")
        return StoppedRun::Completed;
    if (status == "interrupted")
        return StoppedRun::Interrupted;
    if (status != "running" && status != "failed")
        return StoppedRun::None;
    if (resumeCandidates((dir / "checkpoints").string()).empty())
        return StoppedRun::None; // nothing to continue or branch from
    return status == "failed" ? StoppedRun::Failed : StoppedRun::Killed;
}

} // namespace dem
