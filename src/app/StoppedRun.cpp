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
    if (status == "running" && !resumeCandidates((dir / "checkpoints").string()).empty())
        return StoppedRun::Killed;
    return StoppedRun::None;
}

} // namespace dem
