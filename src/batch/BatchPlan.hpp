#pragma once
// The jobs of a batch: read from a table (and a deck) or from a list of decks, checked against
// the decks before anything runs, each with its run directory and `dem run` command.
#include "batch/BatchTable.hpp"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace dem {

// What happened to a job (filled in by the scheduler, --resume or --collect).
struct JobResult {
    std::string status = "queued"; // queued running completed failed crashed interrupted
    int exitCode = -1;             // -1: none (not run, or killed by a signal)
    int signal = 0;                // the signal that killed the process, if any
    int pid = 0;                   // process id of `dem run` while it runs
    double duration = NAN;         // wall-clock seconds seen by the batch
    std::string started, finished; // ISO 8601
    std::string stopReason, error, stateDigest;
    double steps = NAN, simTime = NAN;
    nlohmann::json final = nlohmann::json::object(); // summary.json "final"
    bool skipped = false;                            // --resume found it completed
};

struct Job {
    int line = 0;             // table line, or position of the deck on the command line
    std::string name;         // directory name under the batch directory
    std::string deck;         // path as given (or relative to the current directory)
    ParamOverrides overrides; // global --set first, then the table's values
    std::map<std::string, std::string> tableValues; // parameter columns as written (not '*')
    std::map<std::string, std::string> env;         // !NAME columns
    int threads = 1;
    int rep = 1, count = 1;               // !COUNT repetitions
    std::string dir;                      // <batch dir>/<name>
    std::map<std::string, double> params; // resolved by the deck, after the overrides
    std::string deckSha256;
    double plannedSteps = 0; // steps until the last stage ends if every stage stops on steps or
                             // time; 0 when unknown (used for the ETA)
    JobResult result;

    std::string logPath() const { return dir + "/log.txt"; }
};

struct BatchPlan {
    std::string table;                     // table path, empty for a list of decks
    std::string deck;                      // the deck given on the command line (may be empty)
    std::string dir;                       // batch directory
    std::vector<Job> jobs;                 // selected jobs, in table order
    std::vector<std::string> paramColumns; // the table's parameter columns, in order
    int totalLines = 0;                    // data lines in the table
    bool someLines = false;                // --lines chose the jobs
};

struct PlanOptions {
    std::vector<std::string> inputs;  // TABLE [DECK] or DECK[/N]...
    std::vector<std::string> sets;    // --set for every job
    std::string out;                  // --out
    std::optional<std::string> lines; // --lines
    int threads = 0;                  // --threads (0: 1)
};

// Builds and checks the plan. Every problem is appended to `errors` (table or deck location,
// message); returns false when there was any: nothing may run then.
bool makePlan(const PlanOptions& options, BatchPlan& plan, std::vector<DeckError>& errors);

// The `dem run` arguments of a job (without the program), e.g.
// {"run", "deck.toml", "--set", "friction=30", "--out", "runs/t/friction=30", "--threads", "1"}.
std::vector<std::string> runArguments(const Job& job);

// The environment a job gets on top of the batch's own: DEM_BATCH (table:line), DEM_BATCH_DIR,
// DEM_JOB_NAME, OMP_NUM_THREADS and the table's !NAME columns.
std::map<std::string, std::string> jobEnvironment(const BatchPlan& plan, const Job& job);

// `s` quoted for a POSIX shell when it needs it.
std::string shellQuote(const std::string& s);

// The whole command as a shell line: NAME=value ... dem run ...
std::string shellCommand(const BatchPlan& plan, const Job& job, const std::string& program);

// Path of the running program (/proc/self/exe), or "dem" when it cannot be read.
std::string selfExecutable();

} // namespace dem
