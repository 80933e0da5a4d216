#include "batch/BatchSlurm.hpp"

#include "app/ExitCodes.hpp"
#include "app/RunLog.hpp"
#include "batch/BatchReport.hpp"
#include "io/DirectoryNames.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>

namespace fs = std::filesystem;

namespace dem {

namespace {

JobStart startOf(const SlurmOptions& o, size_t k) {
    return o.starts.empty() ? JobStart::Fresh : o.starts[k];
}

} // namespace

std::string slurmScript(const BatchPlan& plan, const SlurmOptions& o) {
    std::vector<size_t> tasks; // the jobs, in array task order
    for (size_t k = 0; k < plan.jobs.size(); ++k)
        if (startOf(o, k) != JobStart::Skip)
            tasks.push_back(k);
    if (tasks.empty()) // the caller writes no script then (an array of none is not valid)
        return {};
    int cpus = o.cpusPerTask;
    for (size_t k : tasks)
        if (o.cpusPerTask <= 0)
            cpus = std::max(cpus, plan.jobs[k].threads);
    cpus = std::max(cpus, 1);
    const fs::path work = o.workDir.empty() ? fs::current_path() : fs::path(o.workDir);
    const fs::path dir = fs::path(plan.dir).is_absolute() ? fs::path(plan.dir) : work / plan.dir;
    std::string name = "dem-" + fs::path(plan.dir).filename().string();
    for (char& c : name)
        if (!(std::isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.'))
            c = '_';

    std::string s = "#!/bin/bash\n";
    s += fmt::format("# {} dem jobs of {}, one Slurm array task each; written by dem batch --emit "
                     "slurm.\n",
                     tasks.size(),
                     plan.table.empty()
                         ? "a list of decks"
                         : plan.table + (plan.deck.empty() ? "" : " with " + plan.deck));
    s += fmt::format("# Submit:  sbatch {}\n", shellQuote((dir / "slurm.sh").string()));
    s += fmt::format("# Then:    dem batch --collect {}\n", shellQuote(plan.dir));
    s += fmt::format("#SBATCH --job-name={}\n", name);
    s += fmt::format("#SBATCH --array=0-{}\n", tasks.size() - 1);
    s += fmt::format("#SBATCH --cpus-per-task={}\n", cpus);
    s += "#SBATCH --ntasks=1\n";
    s += fmt::format("#SBATCH --chdir={}\n", work.string());
    s += fmt::format("#SBATCH --output={}\n", (dir / "slurm-%A_%a.out").string());
    if (!o.partition.empty())
        s += fmt::format("#SBATCH --partition={}\n", o.partition);
    if (!o.time.empty())
        s += fmt::format("#SBATCH --time={}\n", o.time);
    s += "set -u\n";
    s += fmt::format("dem={}\n", shellQuote(o.program));
    s += "task=${SLURM_ARRAY_TASK_ID:?submit this script with sbatch}\n";
    s += "case \"$task\" in\n";
    for (size_t t = 0; t < tasks.size(); ++t) {
        const Job& job = plan.jobs[tasks[t]];
        s += fmt::format("{})  # line {}: {}\n", t, job.line, job.name);
        s += fmt::format("    dir={}\n", shellQuote(job.dir));
        s += "    mkdir -p \"$dir\"\n";
        std::string exports;
        for (const auto& [n, v] : jobEnvironment(plan, job))
            exports += " " + n + "=" + shellQuote(v);
        s += "    export";
        s += exports;
        s += '\n';
        std::vector<std::string> args = runArguments(job);
        // The directory is "$dir" so that the line stays readable.
        const auto out = std::find(args.begin(), args.end(), "--out");
        std::string cmd = o.nice > 0 ? fmt::format("exec nice -n {} \"$dem\"", o.nice)
                                     : std::string("exec \"$dem\"");
        for (auto it = args.begin(); it != args.end(); ++it) {
            if (out != args.end() && it == out + 1)
                cmd += " \"$dir\"";
            else {
                cmd += ' ';
                cmd += shellQuote(*it);
            }
        }
        if (const std::string flag = runFlag(startOf(o, tasks[t])); !flag.empty())
            cmd += " " + flag;
        s += "    ";
        s += cmd;
        s += " > \"$dir/console.txt\" 2>&1\n    ;;\n";
    }
    s += "*)  echo \"dem batch: no job for array task $task\" >&2\n    exit 2\n    ;;\nesac\n";
    return s;
}

bool writeSlurmBatch(const BatchPlan& plan, const SlurmOptions& o, std::string& scriptPath,
                     std::string& error) {
    std::error_code ec;
    fs::create_directories(plan.dir, ec);
    const fs::path path = fs::path(plan.dir) / "slurm.sh";
    {
        std::ofstream f(path, std::ios::trunc);
        f << slurmScript(plan, o);
        if (!f.flush()) {
            error = fmt::format("cannot write '{}'", path.string());
            return false;
        }
    }
    fs::permissions(path, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                    fs::perm_options::add, ec);
    scriptPath = path.string();
    BatchInfo info;
    info.status = "submitted";
    info.started = timestampNow();
    info.program = o.program;
    info.emitted = "slurm";
    BatchPlan recorded = plan;
    for (size_t k = 0; k < recorded.jobs.size(); ++k)
        if (startOf(o, k) == JobStart::Skip) { // completed before: as --resume records it locally
            Job& job = recorded.jobs[k];
            readJobSummary(job);
            job.result.skipped = true;
            job.result.exitCode = ExitOk;
        }
    if (!plan.someLines)
        return writeBatchFiles(recorded, info, error);
    return writeBatchFiles(withOtherJobs(recorded, otherRecordedJobs(recorded)), info, error);
}

namespace {

// Without batch.json: every subdirectory holding a summary.json is a job.
bool scanJobDirectories(const std::string& dir, BatchPlan& plan) {
    plan = BatchPlan{};
    plan.dir = dir;
    std::error_code ec;
    std::vector<fs::path> dirs;
    std::vector<std::string> names;
    directoryNames(dir, names, ec);
    for (const std::string& name : names)
        if (const fs::path d = fs::path(dir) / name;
            fs::is_directory(d, ec) && fs::exists(d / "summary.json", ec))
            dirs.push_back(d);
    std::sort(dirs.begin(), dirs.end());
    int line = 0;
    for (const fs::path& d : dirs) {
        Job job;
        job.line = ++line;
        job.name = d.filename().string();
        job.dir = d.string();
        plan.jobs.push_back(std::move(job));
    }
    return !plan.jobs.empty();
}

} // namespace

int collectBatch(const std::string& dir, const std::vector<std::string>& merge,
                 const std::string& mergeX, bool quiet) {
    BatchPlan plan;
    BatchInfo info;
    std::string error;
    if (!readBatchJson(dir, plan, info, error)) {
        if (!fs::is_directory(dir) || fs::exists(fs::path(dir) / "batch.json") ||
            !scanJobDirectories(dir, plan)) {
            std::cerr << "dem batch: error: --collect: " << error << '\n';
            return ExitBadInput;
        }
        info = BatchInfo{};
        info.started = timestampNow();
    }
    std::vector<std::string> notDone;
    int completed = 0;
    for (Job& job : plan.jobs) {
        job.result = JobResult{};
        if (!readJobSummary(job)) {
            job.result.status = "missing";
            job.result.error = "no summary.json: the job has not run or did not start";
        } else if (job.result.status == "completed") {
            job.result.exitCode = ExitOk;
        } else if (job.result.status == "interrupted") {
            job.result.exitCode = ExitInterrupted;
        } else if (job.result.status == "failed") {
            job.result.exitCode = ExitFailed;
        }
        if (job.result.status == "completed")
            ++completed;
        else
            notDone.push_back(fmt::format("{} ({}: {})", job.line, job.name, job.result.status));
    }
    info.status = notDone.empty() ? "completed" : "failed";
    info.finished = timestampNow();
    if (!writeBatchFiles(plan, info, error)) {
        std::cerr << "dem batch: error: " << error << '\n';
        return ExitFailed;
    }
    for (const std::string& column : merge) {
        std::string script;
        if (writeBatchMergedPlot(dir, column, mergeX, script, error)) {
            if (!quiet)
                std::cerr << "dem batch: merged plot of " << column << ": gnuplot " << script
                          << '\n';
        } else {
            std::cerr << "dem batch: warning: --merge " << column << ": " << error << '\n';
        }
    }
    const std::string tsv = (fs::path(dir) / "batch.tsv").string();
    if (notDone.empty()) {
        if (!quiet)
            std::cerr << fmt::format("dem batch: collected {} completed jobs into {}\n", completed,
                                     tsv);
        return ExitOk;
    }
    std::cerr << fmt::format(
        "dem batch: collected {} jobs into {}; {} did not complete, lines: {}\n", plan.jobs.size(),
        tsv, notDone.size(), fmt::join(notDone, ", "));
    return ExitFailed;
}

} // namespace dem
