#pragma once
// Batches beyond one machine: a Slurm job-array script with one array task per job, and the
// collection of the finished jobs' results into batch.json and batch.tsv.
#include "batch/BatchPlan.hpp"
#include "batch/BatchRunner.hpp"

#include <string>
#include <vector>

namespace dem {

struct SlurmOptions {
    std::string partition; // #SBATCH --partition (none when empty)
    std::string time;      // #SBATCH --time (none when empty)
    int cpusPerTask = 0;   // 0: the largest thread count of the jobs
    std::string program;   // dem executable, as the compute nodes see it
    std::string workDir;   // directory the jobs run in (#SBATCH --chdir); paths are relative
    int nice = 10;
    // Per job, how its `dem run` starts (jobStart: --force, --resume, or skipped); empty: every
    // job afresh.
    std::vector<JobStart> starts;
};

// The script text: bash, #SBATCH header, a case over SLURM_ARRAY_TASK_ID running each job's
// `dem run` into its directory of the batch, as `dem batch` would locally; one array task per job
// that is not skipped.
std::string slurmScript(const BatchPlan& plan, const SlurmOptions& options);

// Writes <batch dir>/slurm.sh (executable) and batch.json/batch.tsv with the jobs to run queued
// and the skipped ones as their summaries say.
bool writeSlurmBatch(const BatchPlan& plan, const SlurmOptions& options, std::string& scriptPath,
                     std::string& error);

// `dem batch --collect DIR`: reads batch.json (or, without one, the job directories holding a
// summary.json), fills every job's result from its summary.json and rewrites batch.json and
// batch.tsv; writes merged plots of `merge` columns. Returns the exit code: 0 when every job
// completed, 1 otherwise (the others are listed on stderr), 2 when DIR is not a batch.
int collectBatch(const std::string& dir, const std::vector<std::string>& merge,
                 const std::string& mergeX, bool quiet);

} // namespace dem
