#pragma once
// The run's checkpoint policy: when a checkpoint is due (steps, simulated time, wall time, stage
// end, run end, signal), the file name, the `latest` pointer, and the keep=k rotation. Which
// checkpoint a resume starts from is chosen here too.
#include "deck/Deck.hpp"
#include "io/Checkpoint.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace dem {

// Why a checkpoint is written; stage ends get their own name so rotation can spare them.
enum class CheckpointReason { Periodic, StageEnd, RunEnd, Signal, Failure };

class Checkpointer {
public:
    // `dir` is <run>/checkpoints (created on the first write).
    Checkpointer(const CheckpointSpec& spec, std::string dir);

    // After a fresh start: the first time-based checkpoint is at every_time.
    // After a restart: `nextTime` as stored in the checkpoint's run state.
    void start(double nextTime);
    double nextTime() const { return nextTime_; }

    // True when the step/time/wall-time period says the state after this step is to be saved.
    bool periodicDue(const Simulation& sim);

    // Writes the checkpoint of `sim` (a second call at the same step does nothing and returns
    // true), updates `latest` and deletes checkpoints beyond `keep`. `path` is the file written.
    // `endedStage` (0-based) names a stage-end checkpoint.
    bool write(const Simulation& sim, const CheckpointMeta& meta, CheckpointReason reason,
               size_t endedStage, std::string& path, std::string& error);

    // Whether the last write left checkpoints beyond `keep` in place: listing them ran out of
    // memory. The next write's rotation removes them.
    bool rotationPostponed() const { return rotationPostponed_; }

    const std::string& dir() const { return dir_; }
    uint64_t lastStep() const { return lastStep_; }
    double lastWriteSeconds() const { return lastWriteSeconds_; }

    // File name of a checkpoint: step-000120000.dem.gz, step-000120000.stage2.dem.gz.
    std::string fileName(uint64_t step, CheckpointReason reason, size_t endedStage) const;

private:
    bool rotate();

    CheckpointSpec spec_;
    std::string dir_, ending_;
    double nextTime_ = 0;
    uint64_t lastStep_ = UINT64_MAX;
    bool rotationPostponed_ = false;
    double lastWriteSeconds_ = 0;
    std::chrono::steady_clock::time_point lastWall_;
};

// Removes checkpoint files of a previous run (and stale temporary files) from `dir`: a fresh
// start must never be resumed from another run's state.
void clearCheckpoints(const std::string& dir);

// Removes checkpoints with a step beyond `step` and stale temporary files: after a restart from
// step n, the old future of this run directory is rewritten. Returns the removed names.
std::vector<std::string> dropCheckpointsAfter(const std::string& dir, uint64_t step);

// Candidates for --resume, best first: the `latest` pointer's target, then every checkpoint file
// newest first (as listCheckpoints orders them).
std::vector<std::string> resumeCandidates(const std::string& dir);

} // namespace dem
