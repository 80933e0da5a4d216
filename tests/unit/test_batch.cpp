// End-to-end tests of dem batch: checks before anything runs, the scheduler, batch.json and
// batch.tsv, failures, interrupt and --resume, hooks, the Slurm script (run here without Slurm)
// and --collect, merged plots.
#include "CommandRunner.hpp"

#include "batch/BatchReport.hpp"
#include "batch/BatchRunner.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <nlohmann/json.hpp>
#include <sstream>
#include <sys/wait.h>
#include <thread>

using namespace demtest;
namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

const fs::path fixtures = fs::path(DEM_SOURCE_DIR) / "tests" / "batch";

// A scratch directory holding the test deck as drop.toml.
ScratchDir batchDir(const std::string& name) {
    auto dir = scratchDir("batch-" + name);
    fs::copy_file(fixtures / "drop.toml", dir / "drop.toml");
    return dir;
}

Json readJson(const fs::path& p) {
    std::ifstream in(p);
    return Json::parse(in, nullptr, false);
}

// batch.tsv as rows of column -> cell.
std::vector<std::map<std::string, std::string>> readTsv(const fs::path& p) {
    std::ifstream in(p);
    std::string line;
    std::vector<std::string> header;
    std::vector<std::map<std::string, std::string>> rows;
    auto split = [](const std::string& s) {
        std::vector<std::string> cells;
        std::stringstream ss(s);
        std::string c;
        while (std::getline(ss, c, '\t'))
            cells.push_back(c);
        return cells;
    };
    if (std::getline(in, line))
        header = split(line);
    while (std::getline(in, line)) {
        const auto cells = split(line);
        REQUIRE(cells.size() == header.size());
        std::map<std::string, std::string> row;
        for (size_t k = 0; k < cells.size(); ++k)
            row[header[k]] = cells[k];
        rows.push_back(row);
    }
    return rows;
}

std::map<std::string, std::string> digestsByJob(const fs::path& batch) {
    std::map<std::string, std::string> out;
    const Json j = readJson(batch / "batch.json");
    for (const auto& job : j["jobs"])
        out[job["name"].get<std::string>()] =
            readJson(batch / job["name"].get<std::string>() / "summary.json")["state_digest"]
                .get<std::string>();
    return out;
}

bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

} // namespace

TEST_CASE("dem batch --dry-run prints every job with its resolved parameters", "[batch]") {
    const auto dir = batchDir("dry");
    fs::copy_file(fixtures / "yade.table", dir / "yade.table");
    const CommandResult r = runDem("batch yade.table drop.toml --dry-run -j 2", dir);
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(contains(r.out, "6 jobs from yade.table with drop.toml into runs/yade"));
    CHECK(contains(r.out, "line 5  reference  (1 thread)"));
    CHECK(contains(r.out, "line 6  hi_v  (1 thread)"));
    CHECK(contains(r.out, "line 9  hi_fric  (2 threads)"));
    CHECK(contains(r.out, "line 10  hi_fric_v  (2 threads)")); // '=' under !THREADS
    // Resolved values: '=' gives 20 on line 7, '*' the deck's default friction 30 on line 11.
    CHECK(contains(r.out, "params  friction=20 v0=-0.5 nsteps=300 r=0.01"));
    CHECK(contains(r.out, "params  friction=30 v0=-0.5 nsteps=300 r=0.01"));
    CHECK(contains(r.out, "run drop.toml --set friction=40 --set v0=-1 --out runs/yade/hi_fric_v "
                          "--threads 2"));
    CHECK_FALSE(fs::exists(dir / "runs")); // nothing was run or created
}

TEST_CASE("dem batch accepts CSV tables", "[batch]") {
    const auto dir = batchDir("csv");
    fs::copy_file(fixtures / "friction.csv", dir / "friction.csv");
    const CommandResult r = runDem("batch friction.csv drop.toml --dry-run", dir);
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(contains(r.out, "line 3  soft,_short"));
    CHECK(contains(r.out, "line 4  medium"));
    CHECK(contains(r.out, "--set friction=20 --set nsteps=300"));
}

TEST_CASE("a quoted table value with spaces reaches the deck without its quotes", "[batch]") {
    const auto dir = batchDir("quoted");
    writeText(dir / "q.table", "description friction\nx \"2 * 5\"\n");
    const CommandResult r = runDem("batch q.table drop.toml --dry-run", dir);
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(contains(r.out, "params  friction=10 "));
    CHECK(contains(r.out, "run drop.toml --set 'friction=2 * 5' --out runs/q/x"));
}

TEST_CASE("a bad value stops the batch before any job starts, at its table line and column",
          "[batch]") {
    const auto dir = batchDir("badvalue");
    writeText(dir / "bad.table", "# friction is an angle in [0, 90)\n"
                                 "description friction nsteps\n"
                                 "ok          30       300\n"
                                 "too_steep   95       300\n"
                                 "typo        30       3OO\n");
    const CommandResult r = runDem("batch bad.table drop.toml", dir);
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(contains(r.err, "bad.table:4:13: error: friction = 95: drop.toml:"));
    CHECK(contains(r.err, "out of range"));
    CHECK(contains(r.err, "bad.table:5:22: error: nsteps = 3OO:"));
    CHECK(contains(r.err, "2 errors; nothing was run"));
    CHECK(r.out.empty());
    CHECK_FALSE(fs::exists(dir / "runs"));

    SECTION("an unknown column is reported at the header") {
        writeText(dir / "col.table", "friction frction\n10 20\n");
        const CommandResult c = runDem("batch col.table drop.toml", dir);
        CHECK(c.code == 2);
        CHECK(contains(c.err, "col.table:1:10: error: column 'frction' is not a parameter of deck "
                              "'drop.toml'"));
        CHECK(contains(c.err, "did you mean 'friction'?"));
    }
    SECTION("a duplicate job name names both lines") {
        writeText(dir / "dup.table", "description friction\nx 10\nx 20\n");
        const CommandResult c = runDem("batch dup.table drop.toml", dir);
        CHECK(c.code == 2);
        CHECK(contains(c.err, "dup.table:3:1: error: job name 'x' is also the name of line 2"));
    }
    SECTION("a job named like a file of the batch directory") {
        writeText(dir / "files.table", "description friction\ntiming.tsv 10\n");
        const CommandResult c = runDem("batch files.table drop.toml --dry-run", dir);
        CHECK(c.code == 2);
        CHECK(contains(c.err, "files.table:2:1: error: job name 'timing.tsv' is that of a file"));
        fs::copy_file(dir / "drop.toml", dir / "batch.tsv.toml");
        const CommandResult d = runDem("batch drop.toml batch.tsv.toml --dry-run", dir);
        CHECK(d.code == 2);
        CHECK(contains(d.err, "deck 2 would run in a directory named 'batch.tsv'"));
    }
    SECTION("--lines naming a line without a job") {
        writeText(dir / "ok.table", "friction\n10\n\n20\n");
        const CommandResult c = runDem("batch ok.table drop.toml --lines 3", dir);
        CHECK(c.code == 2);
        CHECK(contains(c.err, "line 3 holds no job of ok.table (jobs are on lines 2, 4)"));
    }
    CHECK_FALSE(fs::exists(dir / "runs"));
}

TEST_CASE("a job failing at run time does not stop the others and the batch exits non-zero",
          "[batch]") {
    const auto dir = batchDir("fail");
    // v0 = 1000 throws the spheres out of the domain: a valid deck whose run fails.
    writeText(dir / "fail.table", "description friction v0\n"
                                  "first       10       0\n"
                                  "thrown      20       1000\n"
                                  "last        30       0\n");
    const CommandResult r = runDem("batch fail.table drop.toml -j 2", dir);
    INFO(r.err);
    CHECK(r.code == 1);
    CHECK(contains(r.err, "1 of 3 jobs did not complete, lines: 3 (thrown: failed)"));
    const auto rows = readTsv(dir / "runs/fail/batch.tsv");
    REQUIRE(rows.size() == 3);
    CHECK(rows[0].at("line") == "2");
    CHECK(rows[0].at("status") == "completed");
    CHECK(rows[0].at("exit_code") == "0");
    CHECK(rows[1].at("name") == "thrown");
    CHECK(rows[1].at("status") == "failed");
    CHECK(rows[1].at("exit_code") == "1");
    CHECK(rows[2].at("status") == "completed");
    CHECK(rows[2].at("friction") == "30");
    CHECK(rows[2].at("steps") == "300");
    CHECK(rows[2].count("kinetic_energy") == 1); // the final values of the summaries
    const Json j = readJson(dir / "runs/fail/batch.json");
    CHECK(j["status"] == "failed");
    CHECK(j["failed_lines"] == Json::array({3}));
    CHECK(contains(j["jobs"][1]["error"].get<std::string>(), "left the domain"));
    for (const char* job : {"first", "thrown", "last"}) {
        CHECK(fs::exists(dir / "runs/fail" / job / "log.txt"));
        CHECK(fs::exists(dir / "runs/fail" / job / "summary.json"));
    }
    // The failed job holds the state before its failure, which a batch started again over it
    // would delete: that is refused, as dem run refuses it; --resume runs the job again.
    REQUIRE(fs::exists(dir / "runs/fail/thrown/checkpoints/latest"));
    const CommandResult again = runDem("batch fail.table drop.toml --lines 3", dir);
    CHECK(again.code == 2);
    CHECK(contains(again.err, "completed, failed, interrupted or killed run"));
    writeText(dir / "runs/fail/thrown/log.txt", "");
    const CommandResult resumed = runDem("batch fail.table drop.toml --resume", dir);
    INFO(resumed.err);
    CHECK(resumed.code == 1);
    CHECK(contains(resumed.err, "1 of 3 jobs did not complete, lines: 3 (thrown: failed)"));
    CHECK(contains(readJson(dir / "runs/fail/batch.json")["jobs"][1]["error"].get<std::string>(),
                   "left the domain"));
    CHECK(contains(slurp(dir / "runs/fail/thrown/log.txt"), "left the domain")); // run again
}

TEST_CASE("a crashing job does not take the batch down", "[batch]") {
    const auto dir = batchDir("crash");
    writeText(dir / "crash.table", "description nsteps\nshort 300\nlong 3000000\nafter 300\n");
    const pid_t batch =
        dem::spawnProcess(DEM_BINARY,
                          {"batch", (dir / "crash.table").string(), (dir / "drop.toml").string(),
                           "-j", "1", "--out", (dir / "runs").string()},
                          {}, (dir / "batch-output.txt").string(), 0);
    REQUIRE(batch > 0);
    // Kill the long job as a crash would, once it runs.
    int victim = 0;
    for (int k = 0; k < 3000 && !victim; ++k) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        const Json j = readJson(dir / "runs/batch.json");
        if (j.is_object() && j["jobs"][1]["status"] == "running")
            victim = j["jobs"][1]["pid"].get<int>();
    }
    REQUIRE(victim > 0);
    kill(victim, SIGKILL);
    int status = 0;
    REQUIRE(waitpid(batch, &status, 0) == batch);
    INFO(slurp(dir / "batch-output.txt"));
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 1);
    const auto rows = readTsv(dir / "runs/batch.tsv");
    REQUIRE(rows.size() == 3);
    CHECK(rows[0].at("status") == "completed");
    CHECK(rows[1].at("status") == "crashed");
    CHECK(rows[1].at("exit_code") == "nan");
    CHECK(rows[2].at("status") == "completed");
    CHECK(readJson(dir / "runs/batch.json")["jobs"][1]["error"] == "killed by SIGKILL");
}

TEST_CASE("interrupt and --resume: completed jobs are not rerun, results equal an "
          "uninterrupted batch",
          "[batch]") {
    const auto dir = batchDir("resume");
    writeText(dir / "int.table", "# two quick jobs, then two that run long enough to interrupt\n"
                                 "description nsteps   friction\n"
                                 "a           300      10\n"
                                 "b           400      20\n"
                                 "c           300000   30\n"
                                 "d           300000   40\n");
    const fs::path runs = dir / "runs/int";
    const pid_t batch =
        dem::spawnProcess(DEM_BINARY,
                          {"batch", (dir / "int.table").string(), (dir / "drop.toml").string(),
                           "-j", "2", "--out", runs.string()},
                          {}, (dir / "batch-output.txt").string(), 0);
    REQUIRE(batch > 0);
    // Wait until a and b have completed and c and d are simulating.
    bool ready = false;
    for (int k = 0; k < 3000 && !ready; ++k) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        const Json j = readJson(runs / "batch.json");
        ready = j.is_object() && j["counts"]["completed"] == 2 && j["counts"]["running"] == 2 &&
                fs::exists(runs / "c/history.tsv") && fs::exists(runs / "d/history.tsv");
    }
    REQUIRE(ready);
    kill(batch, SIGINT);
    int status = 0;
    REQUIRE(waitpid(batch, &status, 0) == batch);
    const std::string output = slurp(dir / "batch-output.txt");
    INFO(output);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 3);
    CHECK(contains(output, "SIGINT: telling 2 running jobs to stop"));
    auto rows = readTsv(runs / "batch.tsv");
    REQUIRE(rows.size() == 4);
    CHECK(rows[0].at("status") == "completed");
    CHECK(rows[1].at("status") == "completed");
    CHECK(rows[2].at("status") == "interrupted");
    CHECK(rows[2].at("exit_code") == "3");
    CHECK(rows[3].at("status") == "interrupted");
    CHECK(readJson(runs / "batch.json")["status"] == "interrupted");
    CHECK(readJson(runs / "c/summary.json")["status"] == "interrupted");

    // Without --resume the completed runs are in the way.
    const std::string args = "batch int.table drop.toml -j 2 --out runs/int";
    const CommandResult refused = runDem(args, dir);
    CHECK(refused.code == 2);
    CHECK(contains(refused.err, "use --resume"));

    const auto aTime = fs::last_write_time(runs / "a/summary.json");
    const auto bTime = fs::last_write_time(runs / "b/summary.json");
    writeText(runs / "batch.json.tmp-99999", "{"); // as a batch killed while writing leaves it
    const CommandResult resumed = runDem(args + " --resume", dir);
    INFO(resumed.err);
    REQUIRE(resumed.code == 0);
    CHECK(contains(resumed.err, "2 already completed"));
    CHECK(contains(resumed.err, "started     line 5 c (1 thread, resuming)"));
    CHECK_FALSE(contains(resumed.err, "started     line 3 a"));
    CHECK(fs::last_write_time(runs / "a/summary.json") == aTime); // not rerun
    CHECK(fs::last_write_time(runs / "b/summary.json") == bTime);
    CHECK_FALSE(fs::exists(runs / "batch.json.tmp-99999"));
    const Json j = readJson(runs / "batch.json");
    CHECK(j["status"] == "completed");
    CHECK(j["jobs"][0]["skipped"] == true);
    CHECK(j["jobs"][2]["skipped"] == false);
    rows = readTsv(runs / "batch.tsv");
    for (const auto& row : rows)
        CHECK(row.at("status") == "completed");
    CHECK(rows[2].at("steps") == "300000");
    // The interrupted jobs went on from the checkpoint their SIGINT wrote, not from the start.
    CHECK(readJson(runs / "c/summary.json")["restart"]["step"].get<uint64_t>() > 0);
    CHECK(readJson(runs / "d/summary.json")["restart"]["step"].get<uint64_t>() > 0);

    // A second --resume has nothing left to do.
    const CommandResult again = runDem(args + " --resume", dir);
    CHECK(again.code == 0);
    CHECK(contains(again.err, "4 already completed"));

    // The same table without interruption gives the same final states.
    const CommandResult reference = runDem("batch int.table drop.toml -j 2 --out runs/ref", dir);
    INFO(reference.err);
    REQUIRE(reference.code == 0);
    const auto resumedDigests = digestsByJob(runs);
    CHECK(resumedDigests.size() == 4);
    CHECK(resumedDigests == digestsByJob(dir / "runs/ref"));
}

TEST_CASE("batch --force reruns completed jobs and --resume reruns jobs whose parameters changed",
          "[batch]") {
    const auto dir = batchDir("force");
    writeText(dir / "t.table", "description friction\nx 10\n");
    REQUIRE(runDem("batch t.table drop.toml", dir).code == 0);
    const CommandResult forced = runDem("batch t.table drop.toml --force", dir);
    CHECK(forced.code == 0);
    CHECK(contains(forced.err, "started     line 2 x"));
    writeText(dir / "t.table", "description friction\nx 20\n");
    const CommandResult changed = runDem("batch t.table drop.toml --resume", dir);
    INFO(changed.err);
    CHECK(changed.code == 0);
    CHECK(contains(changed.err, "used other parameters or another deck; running it again"));
    CHECK(readJson(dir / "runs/t/x/summary.json")["params"]["friction"] == 20.0);
}

TEST_CASE("batch --resume starts afresh an interrupted or killed job whose parameters changed",
          "[batch]") {
    const auto dir = batchDir("resumechanged");
    writeText(dir / "t.table", "description friction\nx 10\ny 20\nz 30\n");
    REQUIRE(runDem("batch t.table drop.toml", dir).code == 0);
    // What an interrupt (x) and a SIGKILL (y, z) leave: the summary says so, checkpoints remain.
    const auto setStatus = [&](const char* job, const char* status) {
        const fs::path summary = dir / "runs/t" / job / "summary.json";
        Json s = readJson(summary);
        s["status"] = status;
        writeText(summary, s.dump(2));
    };
    setStatus("x", "interrupted");
    setStatus("y", "running");
    setStatus("z", "running");
    writeText(dir / "t.table", "description friction\nx 11\ny 21\nz 30\n");
    const CommandResult r = runDem("batch t.table drop.toml --resume", dir);
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK(contains(r.err, "line 2 x: the interrupted run in runs/t/x used other parameters or "
                          "another deck; running it again from the start"));
    CHECK(contains(r.err, "line 3 y: the unfinished run in runs/t/y used other parameters"));
    CHECK(contains(r.err, "started     line 4 z (1 thread, resuming)"));
    for (const auto& [job, friction] : {std::pair("x", 11.0), {"y", 21.0}, {"z", 30.0}}) {
        const Json s = readJson(dir / "runs/t" / job / "summary.json");
        CHECK(s["status"] == "completed");
        CHECK(s["params"]["friction"] == friction);
    }
    CHECK_FALSE(readJson(dir / "runs/t/x/summary.json").contains("restart")); // from the start
    CHECK(runDem("batch t.table drop.toml --resume", dir).code == 0);         // not stuck
}

TEST_CASE("a list of decks with /N threads, the core budget packs jobs first-fit", "[batch]") {
    const auto dir = batchDir("decks");
    fs::copy_file(dir / "drop.toml", dir / "other.toml");
    const CommandResult r = runDem("batch drop.toml other.toml/2 -j 3 --out runs/d", dir);
    INFO(r.err);
    REQUIRE(r.code == 0);
    const Json j = readJson(dir / "runs/d/batch.json");
    REQUIRE(j["jobs"].size() == 2);
    CHECK(j["jobs"][0]["name"] == "drop");
    CHECK(j["jobs"][0]["threads"] == 1);
    CHECK(j["jobs"][1]["name"] == "other");
    CHECK(j["jobs"][1]["threads"] == 2);
    CHECK(j["core_budget"] == 3);
    CHECK(readJson(dir / "runs/d/other/summary.json")["threads"] == 2);

    // A job wider than the budget runs alone instead of never.
    const CommandResult wide = runDem("batch drop.toml/4 -j 2 --out runs/w", dir);
    CHECK(wide.code == 0);
    CHECK(contains(wide.err, "more than the budget of 2: running alone"));
}

TEST_CASE("a !DECK column picks each line's deck, relative to the table", "[batch]") {
    const auto dir = batchDir("deckcol");
    fs::create_directories(dir / "tables");
    writeText(dir / "tables/decks.table", "!DECK          friction\n"
                                          "../drop.toml   10\n"
                                          "../drop.toml   20\n");
    const CommandResult r = runDem("batch tables/decks.table", dir);
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(fs::exists(dir / "runs/decks/drop,friction=10/summary.json"));
    CHECK(fs::exists(dir / "runs/decks/drop,friction=20/summary.json"));
    writeText(dir / "tables/nodeck.table", "friction\n10\n");
    const CommandResult none = runDem("batch tables/nodeck.table", dir);
    CHECK(none.code == 2);
    CHECK(contains(none.err, "tables/nodeck.table:1:1: error: no deck"));
}

TEST_CASE("batch --lines runs only the listed lines", "[batch]") {
    const auto dir = batchDir("lines");
    fs::copy_file(fixtures / "yade.table", dir / "yade.table");
    const CommandResult r = runDem("batch yade.table drop.toml --lines 5,9-10 -j 2", dir);
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto rows = readTsv(dir / "runs/yade/batch.tsv");
    REQUIRE(rows.size() == 3);
    CHECK(rows[0].at("line") == "5");
    CHECK(rows[1].at("line") == "9");
    CHECK(rows[2].at("line") == "10");
    CHECK_FALSE(fs::exists(dir / "runs/yade/hi_v"));
}

TEST_CASE("batch --lines into a batch directory keeps the other jobs' records", "[batch]") {
    const auto dir = batchDir("linesagain");
    writeText(dir / "t.table", "description friction\nx 10\ny 20\nz 30\n");
    REQUIRE(runDem("batch t.table drop.toml", dir).code == 0);
    writeText(dir / "t.table", "description friction\nx 10\ny 25\nz 30\n");
    const CommandResult r = runDem("batch t.table drop.toml --force --lines 3", dir);
    INFO(r.err);
    REQUIRE(r.code == 0);
    auto rows = readTsv(dir / "runs/t/batch.tsv");
    REQUIRE(rows.size() == 3);
    CHECK(rows[0].at("name") == "x");
    CHECK(rows[1].at("name") == "y");
    CHECK(rows[1].at("friction") == "25"); // the new record replaced the old one
    CHECK(rows[2].at("name") == "z");
    for (const auto& row : rows)
        CHECK(row.at("status") == "completed");
    CHECK(readJson(dir / "runs/t/batch.json")["jobs"].size() == 3);
    // --collect finds them all again.
    REQUIRE(runDem("batch --collect runs/t", dir).code == 0);
    CHECK(readTsv(dir / "runs/t/batch.tsv").size() == 3);
    // A job whose run directory is gone leaves no record behind.
    fs::remove_all(dir / "runs/t/x");
    REQUIRE(runDem("batch t.table drop.toml --force --lines 4", dir).code == 0);
    rows = readTsv(dir / "runs/t/batch.tsv");
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].at("name") == "y");
    CHECK(rows[1].at("name") == "z");
}

TEST_CASE("!COUNT repeats a line and reports its timing", "[batch]") {
    const auto dir = batchDir("count");
    writeText(dir / "t.table", "description !COUNT\nx 3\ny *\n");
    const CommandResult r = runDem("batch t.table drop.toml", dir);
    INFO(r.err);
    REQUIRE(r.code == 0);
    for (const char* d : {"x.1", "x.2", "x.3", "y"})
        CHECK(fs::exists(dir / "runs/t" / d / "summary.json"));
    CHECK(contains(r.err, "timing (seconds)"));
    const std::string timing = slurp(dir / "runs/t/timing.tsv");
    CHECK(timing.rfind("line\tname\tcount\tavg\tdev\trel_dev\tmin\tmax\n2\tx\t3\t", 0) == 0);
    const auto rows = readTsv(dir / "runs/t/batch.tsv");
    REQUIRE(rows.size() == 4);
    CHECK(rows[2].at("rep") == "3");
}

TEST_CASE("hooks run with the job's directory and status in their environment", "[batch]") {
    const auto dir = batchDir("hooks");
    writeText(dir / "t.table", "description v0\nok 0\nbad 1000\n");
    const CommandResult r = runDem(
        "batch t.table drop.toml -j 1 --on-job-done 'echo \"job $DEM_JOB_LINE $DEM_JOB_NAME "
        "$DEM_JOB_STATUS $DEM_JOB_EXIT_CODE $DEM_JOB_DIR\" >> hooks.txt' --on-batch-done 'echo "
        "\"batch $DEM_BATCH_STATUS $DEM_BATCH_FAILED $DEM_BATCH_FAILED_LINES $DEM_BATCH_DIR\" >> "
        "hooks.txt'",
        dir);
    INFO(r.err);
    CHECK(r.code == 1);
    const std::string hooks = slurp(dir / "hooks.txt");
    CHECK(contains(hooks, "job 2 ok completed 0 runs/t/ok\n"));
    CHECK(contains(hooks, "job 3 bad failed 1 runs/t/bad\n"));
    CHECK(contains(hooks, "batch failed 1 3 runs/t\n"));
    CHECK(hooks.substr(hooks.rfind('\n', hooks.size() - 2) + 1).rfind("batch ", 0) == 0); // last
}

TEST_CASE("a hook that fails after the last job has ended is reported", "[batch]") {
    const auto dir = batchDir("hookfails");
    writeText(dir / "t.table", "description friction\nx 10\n");
    const CommandResult r = runDem("batch t.table drop.toml --on-job-done 'sleep 0.5; exit 3' "
                                   "--on-batch-done 'exit 4'",
                                   dir);
    INFO(r.err);
    CHECK(r.code == 0); // a hook does not change the exit status
    CHECK(contains(r.err, "warning: --on-job-done command of line 2 x failed (exit code 3)"));
    CHECK(contains(r.err, "warning: --on-batch-done command failed (exit code 4)"));
}

TEST_CASE("a batch whose records cannot be written starts no job, or exits 1 when they are lost "
          "at the end",
          "[batch]") {
    const auto dir = batchDir("unwritable");
    writeText(dir / "t.table", "description friction\nx 10\ny 20\n");
    fs::create_directories(dir / "runs/t/batch.tsv/in-the-way");
    const CommandResult r = runDem("batch t.table drop.toml", dir);
    CHECK(r.code == 2);
    CHECK(contains(r.err, "error: 'runs/t/batch.tsv': cannot rename the temporary file into "
                          "place (Is a directory); no job was started"));
    CHECK_FALSE(fs::exists(dir / "runs/t/x"));
    fs::remove_all(dir / "runs");
    // The last job's hook puts a directory where batch.tsv goes: the final records are lost.
    const CommandResult lost =
        runDem("batch t.table drop.toml -j 1 --on-job-done 'if [ $DEM_JOB_NAME = y ]; then rm "
               "runs/t/batch.tsv; mkdir -p runs/t/batch.tsv/in-the-way; fi'",
               dir);
    INFO(lost.err);
    CHECK(lost.code == 1);
    CHECK(contains(lost.err, "all 2 jobs completed"));
    CHECK(contains(lost.err, "results in the job directories (batch.tsv could not be written)"));
    const auto warning = lost.err.find("cannot rename the temporary file into place");
    REQUIRE(warning != std::string::npos);
    CHECK(lost.err.find("cannot rename", warning + 1) == std::string::npos); // warned once
}

TEST_CASE("batch --quiet is silent when every job completes", "[batch]") {
    const auto dir = batchDir("quiet");
    writeText(dir / "t.table", "description v0\nok 0\nbad 1000\n");
    const CommandResult ok = runDem("batch t.table drop.toml --quiet --lines 2", dir);
    CHECK(ok.code == 0);
    CHECK(ok.out.empty());
    CHECK(ok.err.empty());
    // A failure: its final line alone; a failing hook: its warning.
    const CommandResult failed = runDem("batch t.table drop.toml --quiet --force "
                                        "--on-job-done 'test $DEM_JOB_NAME = ok'",
                                        dir);
    INFO(failed.err);
    CHECK(failed.code == 1);
    CHECK(failed.err == "dem batch: warning: --on-job-done command of line 3 bad failed (exit "
                        "code 1)\ndem batch: 1 of 2 jobs did not complete, lines: 3 (bad: "
                        "failed); results in runs/t/batch.tsv\n");
}

TEST_CASE("!NAME columns reach the job's environment", "[batch]") {
    const auto dir = batchDir("env");
    writeText(dir / "t.table", "description !GREETING\nx 'hello world'\n");
    const CommandResult dry = runDem("batch t.table drop.toml --dry-run", dir);
    CHECK(contains(dry.out, "run     GREETING='hello world' "));
    REQUIRE(runDem("batch t.table drop.toml", dir).code == 0);
    const Json j = readJson(dir / "runs/t/batch.json");
    CHECK(j["jobs"][0]["env"]["GREETING"] == "hello world");
    // The mechanism the scheduler starts jobs with.
    const pid_t pid = dem::spawnProcess(
        "/bin/sh", {"-c", "echo \"$GREETING|$DEM_X\" > " + (dir / "env.txt").string()},
        {{"GREETING", "hello world"}, {"DEM_X", "1"}}, "", 0);
    REQUIRE(pid > 0);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(slurp(dir / "env.txt") == "hello world|1\n");
}

TEST_CASE("the Slurm array script runs every job into the batch layout and --collect builds "
          "batch.tsv",
          "[batch]") {
    const auto dir = batchDir("slurmscript");
    fs::copy_file(fixtures / "yade.table", dir / "yade.table");
    const CommandResult r = runDem("batch yade.table drop.toml --emit slurm --partition debug "
                                   "--time 0:05:00 --out runs/s",
                                   dir);
    INFO(r.err);
    REQUIRE(r.code == 0);
    const std::string script = slurp(dir / "runs/s/slurm.sh");
    CHECK(contains(script, "#SBATCH --array=0-5\n"));
    CHECK(contains(script, "#SBATCH --cpus-per-task=2\n"));
    CHECK(contains(script, "#SBATCH --partition=debug\n"));
    CHECK(contains(script, "#SBATCH --time=0:05:00\n"));
    CHECK(contains(script, "--set friction=40 --set v0=-1 --out \"$dir\" --threads 2"));
    CHECK(readJson(dir / "runs/s/batch.json")["status"] == "submitted");
    CHECK_FALSE(fs::exists(dir / "runs/s/reference"));

    // Nothing has run yet: --collect says so.
    const CommandResult early = runDem("batch --collect runs/s", dir);
    CHECK(early.code == 1);
    CHECK(contains(early.err, "5 (reference: missing)"));

    // Run the array tasks as Slurm would (without Slurm), then collect.
    for (int task = 0; task < 6; ++task) {
        const std::string cmd = "cd '" + dir.string() +
                                "' && SLURM_ARRAY_TASK_ID=" + std::to_string(task) +
                                " bash runs/s/slurm.sh";
        CHECK(std::system(cmd.c_str()) == 0);
    }
    CHECK(std::system(("cd '" + dir.string() +
                       "' && SLURM_ARRAY_TASK_ID=6 bash runs/s/slurm.sh "
                       "2>/dev/null")
                          .c_str()) != 0);
    const CommandResult collected = runDem("batch --collect runs/s", dir);
    INFO(collected.err);
    REQUIRE(collected.code == 0);
    const auto rows = readTsv(dir / "runs/s/batch.tsv");
    REQUIRE(rows.size() == 6);
    for (const auto& row : rows)
        CHECK(row.at("status") == "completed");
    CHECK(rows[3].at("friction") == "40");

    // Same results as the table run here.
    REQUIRE(runDem("batch yade.table drop.toml -j 2 --out runs/local", dir).code == 0);
    CHECK(digestsByJob(dir / "runs/s") == digestsByJob(dir / "runs/local"));
    const auto local = readTsv(dir / "runs/local/batch.tsv");
    for (size_t k = 0; k < rows.size(); ++k)
        CHECK(rows[k].at("kinetic_energy") == local[k].at("kinetic_energy"));
}

TEST_CASE("a Slurm script emitted with --resume runs again only the jobs that did not complete",
          "[batch]") {
    // As a local batch: without --resume or --force the runs in the way are refused; with
    // --resume the completed jobs are left out of the array, a failed one runs again (--force)
    // and batch.json keeps the completed ones as they are.
    const auto dir = batchDir("slurmresume");
    writeText(dir / "t.table", "description friction v0\n"
                               "first       10       0\n"
                               "thrown      20       1000\n"
                               "last        30       0\n");
    const auto runTask = [&](int task) {
        const std::string cmd = "cd '" + dir.string() +
                                "' && SLURM_ARRAY_TASK_ID=" + std::to_string(task) +
                                " bash runs/t/slurm.sh";
        return std::system(cmd.c_str());
    };
    REQUIRE(runDem("batch t.table drop.toml --emit slurm", dir).code == 0);
    CHECK(runTask(0) == 0);
    CHECK(runTask(1) != 0); // v0 = 1000 throws the spheres out of the domain
    CHECK(runTask(2) == 0);
    const CommandResult collected = runDem("batch --collect runs/t", dir);
    CHECK(collected.code == 1);
    CHECK(contains(collected.err, "3 (thrown: failed)"));

    const CommandResult refused = runDem("batch t.table drop.toml --emit slurm", dir);
    CHECK(refused.code == 2);
    CHECK(contains(refused.err, "3 of the jobs already have a completed, failed, interrupted or "
                                "killed run"));

    const CommandResult again = runDem("batch t.table drop.toml --emit slurm --resume", dir);
    INFO(again.err);
    REQUIRE(again.code == 0);
    CHECK(contains(again.err, "(1 array tasks; 2 completed jobs skipped)"));
    const std::string script = slurp(dir / "runs/t/slurm.sh");
    CHECK(contains(script, "#SBATCH --array=0-0\n"));
    CHECK(contains(script, "0)  # line 3: thrown\n"));
    CHECK(contains(script, "--set v0=1000 --out \"$dir\" --threads 1 --force"));
    CHECK_FALSE(contains(script, "line 2"));
    const Json j = readJson(dir / "runs/t/batch.json");
    CHECK(j["jobs"][0]["status"] == "completed");
    CHECK(j["jobs"][2]["status"] == "completed");
    CHECK(j["jobs"][1]["status"] != "failed");

    // The failed job, mended in the table, runs again from the start and completes.
    writeText(dir / "t.table", "description friction v0\n"
                               "first       10       0\n"
                               "thrown      20       0\n"
                               "last        30       0\n");
    REQUIRE(runDem("batch t.table drop.toml --emit slurm --resume", dir).code == 0);
    CHECK(
        contains(slurp(dir / "runs/t/slurm.sh"), "--set v0=0 --out \"$dir\" --threads 1 --force"));
    CHECK(runTask(0) == 0);
    CHECK(runDem("batch --collect runs/t", dir).code == 0);
    const CommandResult done = runDem("batch t.table drop.toml --emit slurm --resume", dir);
    CHECK(done.code == 0);
    CHECK(contains(done.err, "every job has completed: nothing to submit, removed the earlier "
                             "runs/t/slurm.sh"));
    CHECK_FALSE(fs::exists(dir / "runs/t/slurm.sh"));
}

TEST_CASE("merged plot of one history column of every job", "[batch]") {
    const auto dir = batchDir("merge");
    writeText(dir / "t.table", "friction\n10\n20\n");
    const CommandResult r = runDem("batch t.table drop.toml --merge kinetic_energy", dir);
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(contains(r.err, "merged plot of kinetic_energy"));
    const std::string gp = slurp(dir / "runs/t/merged-kinetic_energy.gp");
    CHECK(contains(gp, "friction=10/history.tsv"));
    CHECK(contains(gp, "friction=20/history.tsv"));

    std::string error, script;
    const auto merged = [&](const fs::path& batch, const std::string& column) {
        return dem::writeBatchMergedPlot(batch.string(), column, "time", script, error);
    };
    // Against another x: a script of its own, beside the one against time.
    CHECK(dem::writeBatchMergedPlot((dir / "runs/t").string(), "kinetic_energy", "step", script,
                                    error));
    CHECK(script == (dir / "runs/t/merged-kinetic_energy-vs-step.gp").string());
    CHECK(contains(slurp(script), "step"));
    CHECK(slurp(dir / "runs/t/merged-kinetic_energy.gp") == gp);
    CHECK(merged(dir / "runs/t", "object:floor.force.z"));
    CHECK(fs::exists(dir / "runs/t/merged-object_floor.force.z.gp"));
    CHECK(script == (dir / "runs/t/merged-object_floor.force.z.gp").string());
    CHECK_FALSE(merged(dir / "runs/t", "nope"));
    CHECK(contains(error, "kinetic_energy"));
    CHECK_FALSE(merged(dir / "nothing", "time"));
    CHECK(contains(error, "is not a batch directory: no such directory"));
    fs::create_directories(dir / "empty");
    CHECK_FALSE(merged(dir / "empty", "time"));
    CHECK(contains(error, "is not a batch directory: it has no batch.json"));
    // A batch.json that cannot be read is not taken for a missing one.
    fs::create_directories(dir / "unreadable" / "batch.json");
    CHECK_FALSE(merged(dir / "unreadable", "time"));
    CHECK(contains(error, "cannot read"));
    CHECK(contains(error, "Is a directory"));
}

TEST_CASE("the oedometer example's table checks against its deck", "[batch][example]") {
    const auto dir = scratchDir("batch-example");
    const fs::path example = fs::path(DEM_SOURCE_DIR) / "examples/oedometer";
    const CommandResult r = runDem("batch '" + (example / "friction.table").string() + "' '" +
                                       (example / "oedometer.toml").string() + "' --dry-run",
                                   dir);
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(contains(r.out, "5 jobs from"));
    for (const char* job : {"line 7  friction=5", "line 8  friction=15", "line 9  friction=25",
                            "line 10  friction=35", "line 11  friction=45"})
        CHECK(contains(r.out, job));
}

TEST_CASE("dem batch usage errors exit 2", "[batch]") {
    const auto dir = batchDir("usage");
    writeText(dir / "t.table", "friction\n10\n");
    CHECK(runDem("batch", dir).code == 2);
    CHECK(runDem("batch t.table", dir).code == 2);                     // no deck
    CHECK(runDem("batch t.table drop.toml drop.toml", dir).code == 2); // three inputs
    CHECK(runDem("batch t.table drop.toml/2", dir).code == 2);         // /N with a table
    // A bad thread count after a deck is said so, not taken for a table.
    for (const char* decks : {"drop.toml drop.toml/0", "drop.toml/x", "drop.toml/4097"}) {
        const CommandResult bad = runDem(std::string("batch ") + decks, dir);
        CHECK(bad.code == 2);
        CHECK(contains(bad.err, "a deck's thread count, after the '/', must be a whole number"));
        CHECK(countLines(bad.err) == 1);
    }
    CHECK(runDem("batch t.table drop.toml --lines 2-x", dir).code == 2);
    const CommandResult noLines = runDem("batch t.table drop.toml --lines ''", dir);
    CHECK(noLines.code == 2);
    CHECK(contains(noLines.err, "--lines '': no line given"));
    CHECK(runDem("batch t.table drop.toml --set nope=1", dir).code == 2);
    CHECK(runDem("batch t.table drop.toml --partition x", dir).code == 2);
    CHECK(runDem("batch --collect runs/none", dir).code == 2);
    CHECK(runDem("batch t.table drop.toml --emit pbs", dir).code == 2);
    CHECK_FALSE(fs::exists(dir / "runs"));
    // dem-batch is dem batch.
    const CommandResult alias = runDem("t.table drop.toml --dry-run", dir,
                                       fs::path(DEM_BINARY).parent_path() / "dem-batch");
    CHECK(alias.code == 0);
    CHECK(contains(alias.out, "line 2  friction=10"));
}
