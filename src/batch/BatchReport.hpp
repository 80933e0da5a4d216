#pragma once
// What a batch leaves in its directory: batch.json (everything, for programs) and batch.tsv (one
// row per job, for gnuplot and pandas), rebuilt from the jobs' summary.json files by --collect,
// and merged gnuplot scripts of one history column of every job.
#include "batch/BatchPlan.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace dem {

// Batch-level facts written into batch.json.
struct BatchInfo {
    std::string status = "running"; // running completed failed interrupted submitted
    std::string started, finished;
    int coreBudget = 0;
    std::string program; // the dem executable the jobs run
    std::string emitted; // "slurm" when the jobs were written as a script instead of run
};

// Fills the result from <job dir>/summary.json (status, stop reason, final values, digest...).
// The exit code and duration are kept when already known. Returns false when there is no
// readable summary.
bool readJobSummary(Job& job);

nlohmann::json batchJson(const BatchPlan& plan, const BatchInfo& info);
// Rows of batch.tsv: line, name, [rep,] every parameter, status, exit_code, duration,
// stop_reason, steps, sim_time, then every final value of the summaries. Tab-separated, "nan"
// for a missing number and "-" for a missing word.
std::string batchTsv(const BatchPlan& plan);

// Writes batch.json (synced) and batch.tsv atomically (AtomicFile.hpp).
bool writeBatchFiles(const BatchPlan& plan, const BatchInfo& info, std::string& error);

// The records in <plan.dir>/batch.json of the jobs the plan does not hold (another line and
// another name) whose run directories still exist: a batch of some lines (--lines) keeps them, so
// that batch.json still lists every job run in the directory. Empty without a batch.json.
std::vector<Job> otherRecordedJobs(const BatchPlan& plan);

// The plan with `others` among its jobs, in line order.
BatchPlan withOtherJobs(const BatchPlan& plan, const std::vector<Job>& others);

// Reads <dir>/batch.json back into a plan (jobs, their parameters and results). The error tells a
// directory without batch.json from a batch.json that cannot be read or is not valid.
bool readBatchJson(const std::string& dir, BatchPlan& plan, BatchInfo& info, std::string& error);

// A batch's merged plot: the script <batchDir>/merged-<column>.gp draws `column` against `x`
// from every job's history.tsv that has both, one line per job titled with its name (and its
// status when not completed).
struct MergedPlot {
    std::string script;
    std::vector<std::pair<std::string, std::string>> runs; // title, history.tsv
};

// Finds the jobs of the merged plot. False with `error` set when batchDir holds no batch.json (or
// one that cannot be read or parsed) or no job has a history with both columns: nothing to plot,
// which the caller reports as bad input.
bool planBatchMergedPlot(const std::string& batchDir, const std::string& column,
                         const std::string& x, MergedPlot& plot, std::string& error);

// For `dem batch --merge` and `--collect`, which only warn when it fails: planBatchMergedPlot,
// then writes the script (`dem plot --merge` does the two itself, to tell the failures apart).
// False with `error` set when either fails. `scriptPath` receives the script's path.
bool writeBatchMergedPlot(const std::string& batchDir, const std::string& column,
                          const std::string& x, std::string& scriptPath, std::string& error);

// File name of the merged script of a column against x: merged-<column>.gp against time, else
// merged-<column>-vs-<x>.gp (characters unsafe in file names as _), so that plots of one column
// against different x axes do not overwrite each other.
std::string mergedPlotFileName(const std::string& column, const std::string& x);

} // namespace dem
