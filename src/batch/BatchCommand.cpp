#include "batch/BatchCommand.hpp"

#include "app/ExitCodes.hpp"
#include "app/History.hpp"
#include "app/IntegerCheck.hpp"
#include "batch/BatchPlan.hpp"
#include "batch/BatchReport.hpp"
#include "batch/BatchRunner.hpp"
#include "batch/BatchSlurm.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <memory>
#include <unistd.h>

namespace dem {

namespace {

struct BatchOptions {
    PlanOptions plan;
    int jobs = 0;
    int nice = 10;
    bool dryRun = false, resume = false, force = false, quiet = false;
    std::string onJobDone, onBatchDone;
    std::vector<std::string> merge;
    std::string mergeX = "time";
    std::string emit, partition, time, collect;
    int cpusPerTask = 0;
};

constexpr const char* footer = R"(
Tables: whitespace-separated columns (Yade's format), or .tsv/.csv with a header. The first
line that is not blank or a comment names the columns; '#' starts a comment; blank lines count,
so jobs are known by their line numbers in an editor. A cell '=' repeats the value above, '*'
keeps the deck's default. Columns: deck parameters, 'description' (names the job; otherwise
name=value of the columns marked name!, or of all), and directives !THREADS, !DECK, !COUNT and
!NAME (exported to the job's environment).

Each job runs as 'dem run' in <batch dir>/<job name>/; batch.json and batch.tsv in the batch
directory hold every job's parameters, status and final values.

Exit status:
  0  every job completed
  1  some job failed, crashed or was not run (the lines are listed), or the final
     batch.json/batch.tsv could not be written
  2  bad usage, table or deck, job directories holding completed, failed, interrupted or
     killed runs (ask for --resume or --force), or batch files that cannot be written:
     nothing was run
  3  interrupted by SIGINT or SIGTERM (continue with --resume)
)";

int reportErrors(const std::vector<DeckError>& errors) {
    for (const DeckError& e : errors)
        std::cerr << formatError(e) << '\n';
    if (errors.size() > 1)
        std::cerr << fmt::format("dem batch: {} errors; nothing was run\n", errors.size());
    return ExitBadInput;
}

void printDryRun(const BatchPlan& plan, const BatchOptions& o, const std::string& program) {
    std::cout << fmt::format("dem batch: {} job{} from {} into {} (dry run: nothing is run)\n",
                             plan.jobs.size(), plan.jobs.size() == 1 ? "" : "s",
                             plan.table.empty()
                                 ? "the deck list"
                                 : plan.table + (plan.deck.empty() ? "" : " with " + plan.deck),
                             plan.dir);
    const int budget = o.jobs > 0 ? o.jobs : availableCores();
    std::cout << fmt::format("core budget {}, nice {}\n", budget, o.nice);
    for (const Job& job : plan.jobs) {
        std::cout << fmt::format("\nline {}  {}  ({} thread{}{})\n", job.line, job.name,
                                 job.threads, job.threads == 1 ? "" : "s",
                                 job.threads > budget ? ", runs alone: wider than the budget" : "");
        std::string params;
        for (const std::string& name : plan.paramColumns)
            if (const auto it = job.params.find(name); it != job.params.end())
                params += fmt::format(" {}={}", name, formatNumber(it->second));
        for (const auto& [name, value] : job.params)
            if (std::find(plan.paramColumns.begin(), plan.paramColumns.end(), name) ==
                plan.paramColumns.end())
                params += fmt::format(" {}={}", name, formatNumber(value));
        std::cout << "  params " << params << '\n';
        if (!job.env.empty()) {
            std::string env;
            for (const auto& [name, value] : job.env)
                env += " " + name + "=" + shellQuote(value);
            std::cout << "  env    " << env << '\n';
        }
        std::cout << "  dir     " << job.dir << '\n';
        std::cout << "  run     " << shellCommand(plan, job, program) << '\n';
    }
}

int runCommand(BatchOptions& o) {
    if (!o.collect.empty()) {
        if (!o.plan.inputs.empty()) {
            std::cerr << "dem batch: error: --collect takes only the batch directory\n";
            return ExitBadInput;
        }
        return collectBatch(o.collect, o.merge, o.mergeX, o.quiet);
    }
    if (o.emit.empty() && (!o.partition.empty() || !o.time.empty() || o.cpusPerTask > 0)) {
        std::cerr << "dem batch: error: --partition, --time and --cpus-per-task go with --emit "
                     "slurm\n";
        return ExitBadInput;
    }
    BatchPlan plan;
    std::vector<DeckError> errors;
    if (!makePlan(o.plan, plan, errors))
        return reportErrors(errors);
    const std::string program = selfExecutable();
    if (o.dryRun) {
        printDryRun(plan, o, program);
        return ExitOk;
    }
    if (o.emit == "slurm") {
        SlurmOptions s;
        s.partition = o.partition;
        s.time = o.time;
        s.cpusPerTask = o.cpusPerTask;
        s.program = program;
        s.nice = o.nice;
        // As the jobs would start here: --resume leaves the completed ones out of the array.
        std::vector<std::string> inTheWay;
        size_t tasks = 0;
        for (const Job& job : plan.jobs) {
            const JobStart start = jobStart(job, o.resume, o.force);
            s.starts.push_back(start);
            if (start == JobStart::InTheWay)
                inTheWay.push_back(job.dir);
            else if (start == JobStart::Changed)
                std::cerr << "dem batch: " << changedText(job) << '\n';
            tasks += start != JobStart::Skip;
        }
        if (!inTheWay.empty()) {
            std::cerr << "dem batch: error: " << inTheWayMessage(inTheWay.size(), inTheWay.front())
                      << '\n';
            return ExitBadInput;
        }
        if (tasks == 0) {
            // An earlier script would run completed jobs again if submitted by mistake.
            std::error_code ec;
            const bool removed = std::filesystem::remove(plan.dir + "/slurm.sh", ec);
            std::cerr << fmt::format(
                "dem batch: every job has completed: nothing to submit{} "
                "(dem batch --collect {})\n",
                removed ? fmt::format(", removed the earlier {}/slurm.sh", plan.dir) : "",
                shellQuote(plan.dir));
            return ExitOk;
        }
        std::string script, error;
        if (!writeSlurmBatch(plan, s, script, error)) {
            std::cerr << "dem batch: error: " << error << '\n';
            return ExitFailed;
        }
        std::cerr << fmt::format(
            "dem batch: wrote {} ({} array tasks{})\n  submit:  sbatch {}\n  "
            "then:    dem batch --collect {}\n",
            script, tasks,
            tasks < plan.jobs.size()
                ? fmt::format("; {} completed jobs skipped", plan.jobs.size() - tasks)
                : "",
            shellQuote(script), shellQuote(plan.dir));
        return ExitOk;
    }
    RunnerOptions r;
    r.budget = o.jobs > 0 ? o.jobs : availableCores();
    r.nice = o.nice;
    r.quiet = o.quiet;
    r.resume = o.resume;
    r.force = o.force;
    r.onJobDone = o.onJobDone;
    r.onBatchDone = o.onBatchDone;
    r.merge = o.merge;
    r.mergeX = o.mergeX;
    r.program = program;
    if (access("/proc/self/exe", X_OK) == 0)
        r.executable = "/proc/self/exe";
    return runBatch(plan, r);
}

} // namespace

std::function<int()> addBatchCommand(CLI::App& app) {
    auto o = std::make_shared<BatchOptions>();
    CLI::App* b = app.add_subcommand(
        "batch", "Run a deck for every line of a parameter table, or a list of decks");
    b->footer(footer);
    b->add_option("INPUTS", o->plan.inputs,
                  "TABLE DECK, TABLE (with a !DECK column), or DECK[/THREADS]...");
    b->add_option("--out", o->plan.out,
                  "Batch directory (default: runs/<table stem>, or runs/batch for decks)");
    b->add_option("-j,--jobs", o->jobs, "Core budget of the running jobs (default: all cores)")
        ->check(integerAtLeast(1));
    b->add_option("--threads", o->plan.threads,
                  "Threads per job unless the table's !THREADS says otherwise (default 1)")
        ->check(integerAtLeast(1));
    b->add_option("--lines", o->plan.lines, "Run only these table lines, e.g. 2,5-9");
    b->add_option("--set", o->plan.sets,
                  "Set a deck parameter for every job: NAME=VALUE (the table wins); repeatable");
    CLI::Option* dryRun =
        b->add_flag("--dry-run", o->dryRun,
                    "Check the table, print the jobs with their resolved parameters; run nothing");
    CLI::Option* resume = b->add_flag(
        "--resume", o->resume,
        "Skip completed jobs, continue interrupted and killed ones, run failed ones and "
        "those whose parameters changed again (with --emit slurm: in the script)");
    CLI::Option* force =
        b->add_flag("--force", o->force,
                    "Run again jobs whose directory holds a completed, failed, interrupted or "
                    "killed run");
    b->add_option("--nice", o->nice, "Niceness added to the jobs (default 10)")
        ->check(CLI::Range(0, 19));
    b->add_flag("--quiet", o->quiet,
                "Print only errors, warnings and, unless every job completed, the final line");
    b->add_option("--on-job-done", o->onJobDone,
                  "Shell command run after each job (DEM_JOB_DIR, DEM_JOB_STATUS, DEM_JOB_NAME, "
                  "DEM_JOB_LINE, DEM_JOB_EXIT_CODE, DEM_JOB_LOG, DEM_BATCH_DIR in its "
                  "environment)");
    b->add_option("--on-batch-done", o->onBatchDone,
                  "Shell command run at the end (DEM_BATCH_DIR, DEM_BATCH_STATUS, "
                  "DEM_BATCH_FAILED, DEM_BATCH_FAILED_LINES, DEM_BATCH_TSV, DEM_BATCH_JSON)");
    b->add_option("--merge", o->merge,
                  "Write <batch dir>/merged-COLUMN.gp plotting this history column of every job "
                  "on one figure; repeatable");
    b->add_option("--merge-x", o->mergeX,
                  "History column on the x axis of the merged plots (default: time)");
    CLI::Option* emit =
        b->add_option("--emit", o->emit,
                      "Write a job-array script instead of running: slurm (<batch dir>/slurm.sh)")
            ->check(CLI::IsMember({"slurm"}));
    b->add_option("--partition", o->partition, "Slurm partition (with --emit slurm)");
    b->add_option("--time", o->time, "Slurm time limit per job, e.g. 1:00:00 (with --emit slurm)");
    b->add_option("--cpus-per-task", o->cpusPerTask,
                  "Slurm CPUs per array task (default: the largest thread count of the jobs)")
        ->check(integerAtLeast(1));
    auto* collect =
        b->add_option("--collect", o->collect,
                      "Build batch.json and batch.tsv of BATCH_DIR from its jobs' summaries");
    // The options themselves, not looked up by name: CLI11's lookup is noexcept yet allocates, so
    // running out of memory there would end the process instead of reporting it.
    collect->excludes(emit);
    dryRun->excludes(emit);
    resume->excludes(force);
    return [o] { return runCommand(*o); };
}

} // namespace dem
