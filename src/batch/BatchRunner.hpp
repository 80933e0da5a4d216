#pragma once
// Runs the jobs of a batch as separate `dem run` processes within a core budget.
#include "batch/BatchPlan.hpp"

#include <map>
#include <string>
#include <sys/types.h>
#include <vector>

namespace dem {

struct RunnerOptions {
    int budget = 1;                 // cores the running jobs may use together
    int nice = 10;                  // added to the jobs' nice value
    bool quiet = false;             // only errors, warnings and a final line saying what failed
    bool resume = false;            // skip completed jobs, resume interrupted ones
    bool force = false;             // rerun jobs whose directory holds a completed run
    std::string onJobDone;          // shell command after each job
    std::string onBatchDone;        // shell command at the end
    std::vector<std::string> merge; // history columns to write merged plots of
    std::string mergeX = "time";    // their x axis
    std::string program;            // the dem executable (shown, and argv[0] of the jobs)
    std::string executable;         // what is executed; empty: program. The batch passes
                                    // /proc/self/exe, which stays valid if dem is rebuilt
};

// Returns the exit code: 0 every job completed, 1 some did not, 2 nothing could be started
// (e.g. completed runs in the way), 3 interrupted by SIGINT/SIGTERM.
int runBatch(BatchPlan& plan, const RunnerOptions& options);

// Cores available to this process (its CPU affinity mask), at least 1.
int availableCores();

// Starts `program` with `args` in its own process group, `env` added to the environment, stdin
// from /dev/null and stdout+stderr to `output` (inherited when empty), its niceness raised by
// `nice`. argv[0] is `argv0`, or `program` when empty. -1 when fork fails.
pid_t spawnProcess(const std::string& program, const std::vector<std::string>& args,
                   const std::map<std::string, std::string>& env, const std::string& output,
                   int nice, const std::string& argv0 = "");

// How a job's `dem run` starts in its directory, locally or in a Slurm array task: Fresh (nothing
// stopped there), Force (--force; with --resume a failed run), Changed (with --resume, a run of
// other parameters or another deck: again from the start, also by --force), Resume (with --resume,
// interrupted, killed or never finished), Skip (with --resume, completed), or InTheWay (neither
// flag, and a completed, failed, interrupted or killed run is there).
enum class JobStart { Fresh, Force, Changed, Resume, Skip, InTheWay };
JobStart jobStart(const Job& job, bool resume, bool force);

// The flag `dem run` takes for that start: "--force", "--resume" or "".
std::string runFlag(JobStart start);

// The note that a Changed job runs again from the start.
std::string changedText(const Job& job);

// The refusal to start when `count` jobs (the first in `first`) have a run in the way.
std::string inTheWayMessage(size_t count, const std::string& first);

} // namespace dem
