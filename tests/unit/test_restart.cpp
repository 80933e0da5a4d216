// End-to-end tests of checkpoints in runs ([output.checkpoint], --restart, --resume): a run
// continued from any checkpoint ends in the same bits and the same history.tsv as a run that never
// stopped — for each compression, with --threads 1 and 2, after SIGINT, and after SIGKILL at random
// moments (including during checkpoint writes); damaged files are refused with exit code 2. The
// 60 beads here step on one thread whatever --threads says (parallelThreshold): restarts across
// thread counts above it are test_cli's ("identical runs ...").
#include "CommandRunner.hpp"
#include "io/Checkpoint.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <fmt/format.h>
#include <fstream>
#include <random>
#include <sys/stat.h>
#include <thread>
#include <tuple>
#include <unistd.h>

using namespace demtest;
namespace fs = std::filesystem;

namespace {

// 60 beads poured into a facet box in two stages; n1 and n2 set the stage lengths. Checkpoints
// every 250 steps and at stage ends; history every 50 steps.
const char* pourDeck = R"(
[params]
n1 = 1000
n2 = 1000
every = 250

[[material]]
name = "glass"
law = "hertz_mindlin"
density = 2500
young = 1e7
poisson = 0.25
friction_angle = 30
restitution = 0.5

[[facets]]
name = "box"
material = "glass"
box = { min = [-0.03, -0.03, 0], max = [0.03, 0.03, 0.1], open = ["z+"] }

[[spheres]]
kind = "random"
material = "glass"
region = { box = { min = [-0.03, -0.03, 0], max = [0.03, 0.03, 0.1] } }
radius = 0.004
spread = 0.2
count = 60
seed = 3

[[stage]]
name = "pour"
gravity = [0, 0, -9.81]
stop = { steps = "n1" }

[[stage]]
name = "settle"
gravity = [0, 0, -9.81]
damping = 0.2
stop = { steps = "n2" }

[output]
history = { every = 50, columns = ["kinetic_energy", "contacts", "object:box.force.z"] }
checkpoint = { every = "every", at_stage_end = true, keep = 4, compression = "COMPRESSION" }
)";

fs::path deckIn(const fs::path& dir, const std::string& compression = "gzip") {
    std::string text = pourDeck;
    text.replace(text.find("COMPRESSION"), 11, compression);
    const fs::path deck = dir / "pour.toml";
    writeText(deck, text);
    return deck;
}

nlohmann::json summaryOf(const fs::path& run) {
    return nlohmann::json::parse(slurp(run / "summary.json"));
}

std::string digestOf(const fs::path& run) {
    return summaryOf(run)["state_digest"].get<std::string>();
}

std::vector<std::string> checkpointNames(const fs::path& run) {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(run / "checkpoints", ec))
        names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

// Waits (up to 60 s) until the run has written a checkpoint file, so a signal finds it running.
bool waitForCheckpoint(const fs::path& run) {
    for (int i = 0; i < 6000; ++i) {
        std::error_code ec;
        if (fs::exists(run / "checkpoints" / "latest", ec))
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

} // namespace

TEST_CASE("restart: continuing from a checkpoint ends in the same state and history", "[restart]") {
    const auto dir = scratchDir("restart-exact");
    for (const std::string compression : {"gzip", "bzip2", "xz", "zstd", "none"}) {
        const fs::path deck = deckIn(dir, compression);
        const std::string ending = compression == "none"    ? ".dem"
                                   : compression == "gzip"  ? ".dem.gz"
                                   : compression == "bzip2" ? ".dem.bz2"
                                   : compression == "xz"    ? ".dem.xz"
                                                            : ".dem.zst";
        const fs::path full = dir / ("full-" + compression);
        REQUIRE(runDem("run pour.toml --quiet --out " + full.string(), dir).code == 0);
        const std::string history = slurp(full / "history.tsv");
        CHECK(countLines(history) == 1 + 41); // header, steps 0, 50, ..., 2000
        for (const std::string from : {"step-000000750", "step-000001000.stage1"}) {
            for (const int threads : {1, 2}) {
                INFO(compression << " from " << from << " with " << threads << " threads");
                const fs::path file = full / "checkpoints" / (from + ending);
                REQUIRE(fs::exists(file));
                const fs::path out = dir / fmt::format("r-{}-{}-{}", compression, from, threads);
                CommandResult r =
                    runDem(fmt::format("run --restart {} --out {} --threads {} --quiet",
                                       file.string(), out.string(), threads),
                           dir);
                REQUIRE(r.code == 0);
                CHECK(digestOf(out) == digestOf(full));
                CHECK(slurp(out / "history.tsv") == history);
                const auto s = summaryOf(out);
                CHECK(s["status"] == "completed");
                CHECK(s["steps"] == 2000);
                CHECK(s["restart"]["step"] == (from == "step-000000750" ? 750 : 1000));
            }
        }
    }
}

TEST_CASE("restart: keep = k keeps the newest k checkpoints and every stage end", "[restart]") {
    const auto dir = scratchDir("restart-keep");
    deckIn(dir);
    REQUIRE(runDem("run pour.toml --quiet --out run", dir).code == 0);
    // Periodic 250 ... 2000; the stage ends 1000 and 2000 are spared and not counted in keep = 4.
    CHECK(checkpointNames(dir / "run") ==
          std::vector<std::string>{"latest", "step-000000750.dem.gz",
                                   "step-000001000.stage1.dem.gz", "step-000001250.dem.gz",
                                   "step-000001500.dem.gz", "step-000001750.dem.gz",
                                   "step-000002000.stage2.dem.gz"});
    CHECK(slurp(dir / "run" / "checkpoints" / "latest") == "step-000002000.stage2.dem.gz\n");
    CHECK(summaryOf(dir / "run")["checkpoint"] == "checkpoints/step-000002000.stage2.dem.gz");
    CommandResult info = runDem("info run", dir);
    CHECK(info.code == 0);
    CHECK(info.out.find("checkpoints                 6 (newest at step 2000)") !=
          std::string::npos);
}

TEST_CASE("restart: SIGINT and SIGTERM write a checkpoint, exit 3, and --resume finishes the run",
          "[restart]") {
    const auto dir = scratchDir("restart-signal");
    deckIn(dir);
    // Long enough (a few seconds) that the signal arrives mid-run.
    const std::string longer = "--set n1=20000 --set n2=20000 --set every=5000";
    REQUIRE(runDem("run pour.toml --quiet --out full " + longer, dir).code == 0);
    for (const int sig : {SIGINT, SIGTERM}) {
        INFO("signal " << sig);
        const std::string out = sig == SIGINT ? "int" : "term";
        const pid_t pid = spawnDem({"run", "pour.toml", "--quiet", "--out", out, "--set",
                                    "n1=20000", "--set", "n2=20000", "--set", "every=5000"},
                                   dir, dir / (out + ".log"));
        REQUIRE(waitForCheckpoint(dir / out));
        kill(pid, sig);
        REQUIRE(waitExitCode(pid) == 3);
        const auto s = summaryOf(dir / out);
        CHECK(s["status"] == "interrupted");
        CHECK(s["stop_reason"] == (sig == SIGINT ? "SIGINT" : "SIGTERM"));
        const uint64_t stopped = s["steps"];
        CHECK(stopped < 40000);
        // The signal's checkpoint is the newest and names the step the run stopped at.
        CHECK(slurp(dir / out / "checkpoints" / "latest") ==
              fmt::format("step-{:09d}.dem.gz\n", stopped));
        CommandResult r = runDem("run pour.toml --quiet --resume --out " + out + " " + longer, dir);
        REQUIRE(r.code == 0);
        CHECK(digestOf(dir / out) == digestOf(dir / "full"));
        CHECK(slurp(dir / out / "history.tsv") == slurp(dir / "full" / "history.tsv"));
        CHECK(summaryOf(dir / out)["restart"]["step"] == stopped);
    }
}

// A signal that arrives while the run sets up is kept for the first step's check, as one during
// the steps is: from the moment the run directory is written (which a batch or a user waiting for
// it may take as the sign that the run started) a signal never kills the run outright. Sent here
// as soon as deck.toml appears; before the handlers were installed first, the first try already
// died of the signal (exit 130, no checkpoint, no summary).
// dem info said "stage 2" for the checkpoint at the end of the first of two stages and for the one
// at the end of the run alike: the stage under way or the next one, without saying which.
TEST_CASE("restart: dem info tells the stage a checkpoint is in, or that all stages have ended",
          "[restart]") {
    const auto dir = scratchDir("restart-info-stage");
    deckIn(dir);
    REQUIRE(runDem("run pour.toml --quiet --out run", dir).code == 0);
    const std::vector<std::tuple<std::string, std::string, int, bool, int>> cases{
        {"step-000000750.dem.gz", "1 of 2, under way", 1, true, 0},
        {"step-000001000.stage1.dem.gz", "2 of 2, not started (stage 1 ended)", 2, false, 1},
        {"step-000001250.dem.gz", "2 of 2, under way", 2, true, 1},
        {"step-000002000.stage2.dem.gz", "all 2 stages ended", 2, false, 2},
    };
    for (const auto& [file, text, stage, started, ended] : cases) {
        INFO(file);
        const std::string path = "run/checkpoints/" + file;
        const CommandResult r = runDem("info " + path, dir);
        CHECK(r.code == 0);
        CHECK(has(r.out, fmt::format("{:<28}{}\n", "stage", text)));
        const auto j = nlohmann::json::parse(runDem("info " + path + " --json", dir).out);
        CHECK(j["stage"] == stage);
        CHECK(j["stages"] == 2);
        CHECK(j["stage_started"] == started);
        CHECK(j["stages_ended"] == ended);
    }
}

TEST_CASE("restart: a signal as soon as the run directory appears still checkpoints and exits 3",
          "[restart]") {
    const auto dir = scratchDir("restart-early-signal");
    deckIn(dir);
    for (int attempt = 0; attempt < 5; ++attempt) {
        INFO("attempt " << attempt);
        const std::string out = "early" + std::to_string(attempt);
        const pid_t pid = spawnDem(
            {"run", "pour.toml", "--quiet", "--out", out, "--set", "n1=20000", "--set", "n2=20000"},
            dir, dir / (out + ".log"));
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (!fs::exists(dir / out / "deck.toml") && std::chrono::steady_clock::now() < deadline)
            ; // no sleep: the signal should land as early as it can
        kill(pid, SIGINT);
        REQUIRE(waitExitCode(pid) == 3);
        const auto s = summaryOf(dir / out);
        CHECK(s["status"] == "interrupted");
        CHECK(s["stop_reason"] == "SIGINT");
        CHECK(fs::exists(dir / out / "checkpoints" / "latest"));
    }
}

// A run writes summary.json with status running when it starts. A run that ends without writing
// its own (killed, or out of memory in a parallel loop: OutOfMemory.hpp) then no longer leaves an
// earlier run's "completed" behind, which made a new run there refuse to start and --resume find
// nothing to do. Killed here before its first checkpoint, whose summary was the first before.
TEST_CASE("restart: a run killed before its first checkpoint leaves a summary saying running",
          "[restart]") {
    const auto dir = scratchDir("restart-killed-summary");
    deckIn(dir);
    REQUIRE(runDem("run pour.toml --quiet --out run", dir).code == 0);
    REQUIRE(summaryOf(dir / "run")["status"] == "completed");
    const pid_t pid = spawnDem({"run", "pour.toml", "--quiet", "--force", "--out", "run", "--set",
                                "n1=100000000", "--set", "every=1000000000"},
                               dir, dir / "run.log");
    std::string status;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (status != "running" && std::chrono::steady_clock::now() < deadline) {
        const auto s = nlohmann::json::parse(slurp(dir / "run" / "summary.json"), nullptr, false);
        status = s.is_object() ? s.value("status", "") : "";
        if (status != "running")
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    kill(pid, SIGKILL);
    waitExitCode(pid);
    REQUIRE(status == "running");
    CHECK(!fs::exists(dir / "run" / "checkpoints" / "latest"));
    const auto s = summaryOf(dir / "run");
    CHECK(s["status"] == "running");
    CHECK(!s.contains("state_digest"));
    // Not a finished run: a run into the directory needs no --force.
    CHECK(runDem("run pour.toml --quiet --out run", dir).code == 0);
}

// Before the run directory is written, while --resume looks for its checkpoint, a signal ends the
// program and leaves the directory as it was (dem-run(1)). The run is held inside that search by
// a FIFO in place of the `latest` pointer: reading it waits until this test, the writer, closes
// its end, which it does only after the signal, so the signal cannot miss the window. With the
// handlers installed too early the signal was held for the first step: the run went on once the
// pointer read back empty, wrote its directory and exited 3.
TEST_CASE(
    "restart: a signal while --resume reads the checkpoints ends the program, writing nothing",
    "[restart]") {
    const auto dir = scratchDir("restart-signal-in-resume");
    deckIn(dir);
    const fs::path checkpoints = dir / "run" / "checkpoints";
    fs::create_directories(checkpoints);
    const fs::path pointer = checkpoints / "latest";
    REQUIRE(mkfifo(pointer.c_str(), 0600) == 0);
    const pid_t pid =
        spawnDem({"run", "pour.toml", "--quiet", "--resume", "--out", "run"}, dir, dir / "run.log");
    // Opening the FIFO for writing succeeds once the run has it open for reading.
    int writer = -1;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (writer < 0 && std::chrono::steady_clock::now() < deadline) {
        writer = open(pointer.c_str(), O_WRONLY | O_NONBLOCK);
        if (writer < 0)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    REQUIRE(writer >= 0);
    kill(pid, SIGINT);
    // A run that survives the signal is let go after a while (the pointer then reads empty).
    int status = 0;
    bool ended = false;
    for (int i = 0; i < 500 && !ended; ++i) {
        ended = waitpid(pid, &status, WNOHANG) == pid;
        if (!ended)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    close(writer);
    const int code = !ended              ? waitExitCode(pid)
                     : WIFEXITED(status) ? WEXITSTATUS(status)
                                         : 128 + WTERMSIG(status);
    CHECK(code == 128 + SIGINT);
    std::vector<std::string> left;
    for (const auto& e : fs::recursive_directory_iterator(dir / "run"))
        left.push_back(fs::relative(e.path(), dir / "run").string());
    std::sort(left.begin(), left.end());
    CHECK(left == std::vector<std::string>{"checkpoints", "checkpoints/latest"});
}

TEST_CASE("restart: SIGKILL at random moments, then --resume, ends as the uninterrupted run",
          "[restart]") {
    const auto dir = scratchDir("restart-kill");
    deckIn(dir);
    // A run of a few seconds with a checkpoint every 250 steps, so that some kills land inside a
    // checkpoint write.
    const std::vector<std::string> set{"--set",    "n1=25000", "--set",
                                       "n2=25000", "--set",    "every=250"};
    std::string setText;
    for (const std::string& s : set)
        setText += " " + s;
    const auto started = std::chrono::steady_clock::now();
    REQUIRE(runDem("run pour.toml --quiet --out full" + setText, dir).code == 0);
    const auto fullMs = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - started)
                            .count();
    const std::string expected = digestOf(dir / "full");

    // Kill delays scale with this machine's speed: at most 4% of the uninterrupted run each, so
    // the 20 kills together cover at most 80% of it and the run cannot finish before the last.
    std::random_device seedSource;
    const unsigned seed = seedSource();
    INFO("kill-time seed " << seed << ", uninterrupted run " << fullMs << " ms");
    std::mt19937 rng(seed);
    const int maxDelay = std::max(12, static_cast<int>(fullMs / 25));
    std::uniform_int_distribution<int> delayMs(std::max(5, maxDelay / 4), maxDelay);
    std::vector<std::string> args{"run", "pour.toml", "--quiet", "--resume", "--out", "run"};
    args.insert(args.end(), set.begin(), set.end());
    int kills = 0;
    for (int attempt = 0; attempt < 60 && kills < 20; ++attempt) {
        const pid_t pid = spawnDem(args, dir, dir / "run.log");
        std::this_thread::sleep_for(std::chrono::milliseconds(delayMs(rng)));
        kill(pid, SIGKILL);
        const int code = waitExitCode(pid);
        if (code == 0)
            break; // finished before the kill: nothing more to interrupt
        REQUIRE(code == 128 + SIGKILL);
        ++kills;
        // Every file under a final name is a complete, valid checkpoint; a write cut short leaves
        // only its temporary file, which the next start removes.
        for (const std::string& name : checkpointNames(dir / "run")) {
            if (name == "latest" || name.find(".tmp-") != std::string::npos)
                continue;
            INFO("after kill " << kills << ": " << name);
            dem::CheckpointInfo info;
            std::string error;
            CHECK(
                dem::inspectCheckpoint((dir / "run" / "checkpoints" / name).string(), info, error));
        }
    }
    CHECK(kills == 20);
    CommandResult r = runDem("run pour.toml --quiet --resume --out run" + setText, dir);
    REQUIRE(r.code == 0);
    for (const std::string& name : checkpointNames(dir / "run"))
        CHECK(name.find(".tmp-") == std::string::npos);
    CHECK(digestOf(dir / "run") == expected);
    CHECK(slurp(dir / "run" / "history.tsv") == slurp(dir / "full" / "history.tsv"));
}

TEST_CASE("restart: damaged checkpoint files are refused with exit code 2", "[restart]") {
    const auto dir = scratchDir("restart-bad");
    deckIn(dir);
    REQUIRE(runDem("run pour.toml --quiet --out run", dir).code == 0);
    const fs::path good = dir / "run" / "checkpoints" / "step-000001500.dem.gz";
    const std::string bytes = slurp(good);
    REQUIRE(bytes.size() > 1000);
    std::string flipped = bytes;
    flipped[bytes.size() / 2] ^= 0x10;
    const std::vector<std::pair<std::string, std::string>> cases{
        {"empty.dem.gz", ""},
        {"truncated.dem.gz", bytes.substr(0, bytes.size() / 2)},
        {"flipped.dem.gz", flipped},
        {"foreign.dem", "# not a checkpoint\n"},
    };
    for (const auto& [name, content] : cases) {
        INFO(name);
        {
            std::ofstream f(dir / name, std::ios::binary);
            f << content;
        }
        CommandResult r = runDem("run --restart " + name + " --out x-" + name, dir);
        CHECK(r.code == 2);
        CHECK(countLines(r.err) == 1);
        CHECK(r.err.find(name) != std::string::npos);
        CHECK_FALSE(fs::exists(dir / ("x-" + name) / "summary.json"));
        // dem info printed a description made up of defaults (contacts 0, stages 0) first.
        for (const std::string json : {"", " --json"}) {
            const CommandResult info = runDem("info " + name + json, dir);
            CHECK(info.code == 2);
            CHECK(info.out.empty());
            CHECK(countLines(info.err) == 1);
            CHECK(has(info.err, name));
        }
    }
    CHECK(runDem("run --restart missing.dem.gz --out y", dir).code == 2);
}

TEST_CASE("restart: --resume falls back past a damaged newest checkpoint and says so",
          "[restart]") {
    const auto dir = scratchDir("restart-fallback");
    deckIn(dir);
    REQUIRE(runDem("run pour.toml --quiet --out full", dir).code == 0);
    REQUIRE(runDem("run pour.toml --quiet --out run --set n2=500", dir).code == 0);
    // Make "run" look interrupted at step 1500: its newest checkpoint is cut short.
    const fs::path ck = dir / "run" / "checkpoints";
    const std::string newest = "step-000001500.stage2.dem.gz";
    REQUIRE(fs::exists(ck / newest));
    const std::string bytes = slurp(ck / newest);
    writeText(ck / newest, bytes.substr(0, bytes.size() / 3));
    auto s = summaryOf(dir / "run");
    s["status"] = "interrupted";
    writeText(dir / "run" / "summary.json", s.dump(2));
    // The stored deck (n2 = 500) differs from what we resume with: refused.
    CommandResult refused = runDem("run pour.toml --quiet --resume --out run", dir);
    CHECK(refused.code == 2);
    // Resuming the same deck falls back to step 1250 and finishes as a run that never stopped.
    CommandResult r = runDem("run pour.toml --quiet --resume --out run --set n2=500", dir);
    REQUIRE(r.code == 0);
    CHECK(r.err.find(newest) != std::string::npos);
    CHECK(r.err.find("older checkpoint") != std::string::npos);
    CHECK(summaryOf(dir / "run")["restart"]["step"] == 1250);
    REQUIRE(runDem("run pour.toml --quiet --out short --set n2=500", dir).code == 0);
    CHECK(digestOf(dir / "run") == digestOf(dir / "short"));
    CHECK(slurp(dir / "run" / "history.tsv") == slurp(dir / "short" / "history.tsv"));

    SECTION("--resume of a completed run does nothing and exits 0") {
        const std::string before = slurp(dir / "full" / "summary.json");
        CommandResult again = runDem("run pour.toml --quiet --resume --out full", dir);
        CHECK(again.code == 0);
        CHECK(slurp(dir / "full" / "summary.json") == before);
    }
    SECTION("--resume without checkpoints starts afresh") {
        CommandResult fresh = runDem("run pour.toml --quiet --resume --out fresh", dir);
        CHECK(fresh.code == 0);
        CHECK(digestOf(dir / "fresh") == digestOf(dir / "full"));
    }
}

// --resume of a completed run left it alone whatever deck and parameters it was given, while the
// same mismatch with an interrupted run is an error; and --resume --force did not run it again,
// as the message of a run left alone says it does.
TEST_CASE("restart: --resume of a completed run checks its deck and --force runs it again",
          "[restart]") {
    const auto dir = scratchDir("restart-resume-completed");
    deckIn(dir);
    REQUIRE(runDem("run pour.toml --quiet --out run", dir).code == 0);
    const std::string before = slurp(dir / "run" / "summary.json");
    const CommandResult same = runDem("run pour.toml --resume --out run", dir);
    CHECK(same.code == 0);
    CHECK(has(same.err, "has completed; nothing to resume (--force runs it again)"));
    for (const std::string changed : {"--set n2=1500", "--set every=500"}) {
        INFO(changed);
        const CommandResult refused = runDem("run pour.toml --resume --out run " + changed, dir);
        CHECK(refused.code == 2);
        CHECK(countLines(refused.err) == 1);
        CHECK(has(refused.err, "another deck or other parameters"));
    }
    CHECK(slurp(dir / "run" / "summary.json") == before);

    const CommandResult again =
        runDem("run pour.toml --resume --force --out run --set n2=500", dir);
    CHECK(again.code == 0);
    const auto s = summaryOf(dir / "run");
    CHECK(s["status"] == "completed");
    CHECK(s["steps"] == 1500);
    CHECK_FALSE(s.contains("restart")); // from the start, not from the end-of-run checkpoint

    // An interrupted run with checkpoints of other parameters: --resume refuses them, and
    // --resume --force starts afresh, as --force says (it exited 2 telling to use --force).
    auto stopped = summaryOf(dir / "run");
    stopped["status"] = "interrupted";
    writeText(dir / "run" / "summary.json", stopped.dump(2));
    CHECK(runDem("run pour.toml --resume --quiet --out run", dir).code == 2);
    const CommandResult afresh = runDem("run pour.toml --resume --force --quiet --out run", dir);
    CHECK(afresh.code == 0);
    CHECK(summaryOf(dir / "run")["steps"] == 2000);
    CHECK_FALSE(summaryOf(dir / "run").contains("restart"));
}

// Starting afresh over an interrupted run deleted its checkpoints, the progress --resume would
// have continued from, without a word. It is refused as overwriting a finished run is, by dem run
// and by dem batch (which would otherwise start the job afresh, or now see it refused), until
// --force says to start afresh.
TEST_CASE("restart: a fresh run over an interrupted or killed run is refused unless forced",
          "[restart]") {
    const auto dir = scratchDir("restart-over-interrupted");
    deckIn(dir);
    REQUIRE(runDem("run pour.toml --quiet --out run", dir).code == 0);
    auto s = summaryOf(dir / "run");
    s["status"] = "interrupted";
    writeText(dir / "run" / "summary.json", s.dump(2));
    const std::vector<std::string> checkpoints = checkpointNames(dir / "run");
    const CommandResult refused = runDem("run pour.toml --quiet --out run", dir);
    CHECK(refused.code == 2);
    CHECK(countLines(refused.err) == 1);
    CHECK(
        has(refused.err, "interrupted run; use --resume to continue it, --force to start afresh"));
    CHECK(checkpointNames(dir / "run") == checkpoints);
    CHECK(summaryOf(dir / "run")["status"] == "interrupted");

    fs::create_directories(dir / "batch");
    fs::rename(dir / "run", dir / "batch" / "pour");
    const CommandResult batch = runDem("batch pour.toml --quiet --out batch", dir);
    CHECK(batch.code == 2);
    CHECK(has(batch.err, "completed, failed, interrupted or killed run"));
    CHECK(checkpointNames(dir / "batch" / "pour") == checkpoints);

    // A killed run (SIGKILL, the out-of-memory killer) left its summary saying running.
    s["status"] = "running";
    writeText(dir / "batch" / "pour" / "summary.json", s.dump(2));
    const CommandResult killed = runDem("run pour.toml --quiet --out batch/pour", dir);
    CHECK(killed.code == 2);
    CHECK(has(killed.err, "killed (or still running) checkpointed run; use --resume"));
    CHECK(runDem("batch pour.toml --quiet --out batch", dir).code == 2);
    CHECK(checkpointNames(dir / "batch" / "pour") == checkpoints);

    REQUIRE(runDem("run pour.toml --quiet --force --out batch/pour", dir).code == 0);
    CHECK(summaryOf(dir / "batch" / "pour")["status"] == "completed");
    CHECK_FALSE(summaryOf(dir / "batch" / "pour").contains("restart"));
}

TEST_CASE("restart: --set on restart needs --allow-changes and is recorded", "[restart]") {
    const auto dir = scratchDir("restart-changes");
    deckIn(dir);
    REQUIRE(runDem("run pour.toml --quiet --out run", dir).code == 0);
    const std::string file = "run/checkpoints/step-000001000.stage1.dem.gz";
    CommandResult refused = runDem("run --restart " + file + " --set n2=2000 --out a", dir);
    CHECK(refused.code == 2);
    CHECK(countLines(refused.err) == 1);
    CHECK(refused.err.find("--allow-changes") != std::string::npos);
    CHECK(runDem("run --restart " + file + " --set nope=1 --allow-changes --out b", dir).code == 2);
    // A deck named beside the checkpoint must be its stored one; a missing file says so.
    CommandResult missing = runDem("run missing.toml --restart " + file + " --out b", dir);
    CHECK(missing.code == 2);
    CHECK(missing.err.find("cannot open") != std::string::npos);
    CommandResult r =
        runDem("run --restart " + file + " --set n2=2000 --allow-changes --quiet --out c", dir);
    REQUIRE(r.code == 0);
    const auto s = summaryOf(dir / "c");
    CHECK(s["steps"] == 3000); // the longer second stage took effect
    CHECK(s["restart"].dump().find("n2") != std::string::npos);
    CHECK(s["params"]["n2"] == 2000);
}

// A changed parameter that reaches only what a restart keeps as checkpointed (here a material's
// friction, and the damping of the stage under way) was recorded as if applied. It is named in a
// warning, and is indeed without effect: the run ends as one continued without it. Changes to the
// stop criteria, and to a stage still to come, are not warned about.
TEST_CASE("restart: --allow-changes warns of changes that cannot take effect", "[restart]") {
    const auto dir = scratchDir("restart-changes-without-effect");
    std::string text = slurp(deckIn(dir));
    text.replace(text.find("friction_angle = 30"), 19, "friction_angle = \"fric\"");
    text.replace(text.find("damping = 0.2"), 13, "damping = \"damp\"");
    text.replace(text.find("[params]"), 8, "[params]\nfric = 30\ndamp = 0.2");
    writeText(dir / "pour.toml", text);
    REQUIRE(runDem("run pour.toml --quiet --out run", dir).code == 0);
    const auto restart = [&](const std::string& from, const std::string& sets,
                             const std::string& out) {
        return runDem("run --restart run/checkpoints/" + from + ".dem.gz --quiet --allow-changes " +
                          sets + " --out " + out,
                      dir);
    };
    const auto warned = [](const CommandResult& r, const std::string& change) {
        return has(r.err, "--set " + change + " cannot take effect");
    };
    // In the first stage: the second stage's damping is still to come.
    CommandResult r = restart("step-000000750", "--set fric=40 --set damp=0.5 --set n2=900", "a");
    REQUIRE(r.code == 0);
    CHECK(warned(r, "fric=40"));
    CHECK_FALSE(warned(r, "damp=0.5"));
    CHECK_FALSE(warned(r, "n2=900"));
    CHECK(has(slurp(dir / "a" / "log.txt"), "fric=40 cannot take effect"));
    CHECK(summaryOf(dir / "a")["params"]["fric"] == 40); // recorded all the same
    // In the second stage, under way: its damping is the checkpoint's.
    r = restart("step-000001250", "--set fric=40 --set damp=0.5", "b");
    REQUIRE(r.code == 0);
    CHECK(warned(r, "fric=40"));
    CHECK(warned(r, "damp=0.5"));
    CHECK(digestOf(dir / "b") == digestOf(dir / "run"));
}

// From the checkpoint at the end of a run, lengthening the last stage said "nothing is left to
// run": the stop criteria rebuilt from the changed deck were not asked. The stage now goes on, and
// ends as a run that had the longer stage from the start.
TEST_CASE("restart: from the end of a run a lengthened last stage goes on", "[restart]") {
    const auto dir = scratchDir("restart-lengthen-last");
    deckIn(dir);
    REQUIRE(runDem("run pour.toml --quiet --out run", dir).code == 0);
    REQUIRE(runDem("run pour.toml --quiet --out longer --set n2=1500", dir).code == 0);
    const std::string end = "run/checkpoints/step-000002000.stage2.dem.gz";
    const CommandResult r =
        runDem("run --restart " + end + " --set n2=1500 --allow-changes --out c", dir);
    REQUIRE(r.code == 0);
    CHECK(has(r.err, "stage 2 'settle' goes on from step 2000"));
    const auto s = summaryOf(dir / "c");
    CHECK(s["steps"] == 2500);
    CHECK(digestOf(dir / "c") == digestOf(dir / "longer"));
    CHECK(slurp(dir / "c" / "history.tsv") == slurp(dir / "longer" / "history.tsv"));
    REQUIRE(s["stages"].size() == 2);
    CHECK(s["stages"][1]["end_step"] == 2500);
    CHECK(s["stages"][1]["neighbour_rebuilds"] ==
          summaryOf(dir / "longer")["stages"][1]["neighbour_rebuilds"]);
    // A change that leaves the last stage ended there leaves nothing to run.
    const CommandResult same =
        runDem("run --restart " + end + " --set every=500 --allow-changes --out d", dir);
    REQUIRE(same.code == 0);
    CHECK(has(same.err, "nothing is left to run"));
    CHECK(summaryOf(dir / "d")["steps"] == 2000);
}

TEST_CASE("restart: a failed run saves the state before the failing step", "[restart]") {
    const auto dir = scratchDir("restart-failure");
    // A third stage pushes every sphere with an overflowing force: step 631 becomes non-finite.
    std::string text = slurp(deckIn(dir));
    text.replace(text.find("at_stage_end = true"), 19, "at_stage_end = false");
    text.replace(text.find("[output]"), 8, R"([[stage]]
name = "blow"
force = [{ group = "all", force = [0, 0, "kick"] }]
stop = { steps = 100 }

[[group]]
name = "all"
region = { box = { min = [-1, -1, -1], max = [1, 1, 1] } }

[output])");
    text.replace(text.find("[params]"), 8, "[params]\nkick = 1e308");
    writeText(dir / "blow.toml", text);
    const std::string common = "run blow.toml --quiet --set n1=300 --set n2=330 ";
    // The reference: no kick, a checkpoint at step 630.
    REQUIRE(runDem(common + "--set kick=0 --set every=630 --out ref", dir).code == 0);
    dem::CheckpointInfo ref;
    std::string error;
    REQUIRE(dem::inspectCheckpoint((dir / "ref/checkpoints/step-000000630.dem.gz").string(), ref,
                                   error));
    const auto check = [&](const std::string& args, const std::string& out,
                           const std::string& replayedFrom) {
        INFO(args);
        CommandResult r = runDem(args + " --out " + out, dir);
        CHECK(r.code == 1);
        CHECK(r.err.find("non-finite state at step 631") != std::string::npos);
        CHECK(slurp(dir / out / "log.txt").find(replayedFrom) != std::string::npos);
        const auto s = summaryOf(dir / out);
        CHECK(s["status"] == "failed");
        CHECK(s["checkpoint"] == "checkpoints/step-000000630.dem.gz");
        dem::CheckpointInfo info;
        REQUIRE(dem::inspectCheckpoint((dir / out / "checkpoints/step-000000630.dem.gz").string(),
                                       info, error));
        CHECK(info.stateDigest == ref.stateDigest);
        // The summary describes that state, the last good one, as its steps and time say: not
        // the non-finite state of the failed step, nor the stop reason of the stage before.
        CHECK(s["steps"] == 630);
        CHECK(s["state_digest"] == ref.stateDigest);
        CHECK(s["final"]["kinetic_energy"].is_number());
        CHECK(s["final"]["object:box.force.z"].is_number());
        CHECK(s["stop_reason"].is_null());
        CHECK(has(s.value("error", ""), "non-finite state at step 631"));
        // So does the last history row, at the same step.
        const std::string history = slurp(dir / out / "history.tsv");
        const std::string lastRow = history.substr(history.rfind('\n', history.size() - 2) + 1);
        CHECK(lastRow.starts_with("630\t"));
        CHECK_FALSE(has(lastRow, "nan"));
        CHECK_FALSE(has(lastRow, "inf"));
        // dem info shows why it failed.
        CHECK(has(runDem("info " + out, dir).out, "non-finite state at step 631"));
    };
    // Replayed from the periodic checkpoint at step 600, or from the deck's initial state.
    check(common + "--set every=100", "a", "replayed from 'a/checkpoints/step-000000600.dem.gz'");
    check(common + "--set every=1000 --threads 1", "b", "replayed from the initial state");
    // A restarted run replays from the checkpoint it was restarted from.
    REQUIRE(fs::exists(dir / "ref/checkpoints/step-000000630.dem.gz"));
    REQUIRE(runDem(common + "--set kick=0 --set every=250 --out mid", dir).code == 0);
    check("run --quiet --restart mid/checkpoints/step-000000500.dem.gz --set kick=1e308 "
          "--set every=1000 --allow-changes",
          "c", "replayed from 'mid/checkpoints/step-000000500.dem.gz'");

    // A plain run over the failed one deleted the state before the failure without a word: it is
    // refused as a finished run is, and --restart branches from that state.
    const std::vector<std::string> kept = checkpointNames(dir / "a");
    const CommandResult refused = runDem(common + "--set every=100 --out a", dir);
    CHECK(refused.code == 2);
    CHECK(countLines(refused.err) == 1);
    CHECK(has(refused.err,
              "'a' holds a failed run; use --force to replace it, --restart "
              "a/checkpoints/step-000000630.dem.gz to branch from its last good state"));
    CHECK(checkpointNames(dir / "a") == kept);
    CHECK(summaryOf(dir / "a")["status"] == "failed");
    CHECK(runDem("run --quiet --restart a/checkpoints/step-000000630.dem.gz --set kick=0 "
                 "--allow-changes --out branch",
                 dir)
              .code == 0);
    CHECK(digestOf(dir / "branch") == digestOf(dir / "ref"));
    CHECK(runDem(common + "--set every=100 --set kick=0 --force --out a", dir).code == 0);
    CHECK(digestOf(dir / "a") == digestOf(dir / "ref"));
}

// A run under way, or killed, kept in its summary the stop reason of the stage that had ended
// before, as if that had ended the run.
TEST_CASE("restart: the summary of a run under way names no stop reason", "[restart]") {
    const auto dir = scratchDir("restart-running-stop-reason");
    deckIn(dir);
    const pid_t pid = spawnDem({"run", "pour.toml", "--quiet", "--out", "run", "--set", "n1=300",
                                "--set", "n2=100000000", "--set", "every=100"},
                               dir, dir / "run.log");
    nlohmann::json s;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!(s.is_object() && s.value("steps", 0) > 300) &&
           std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        s = nlohmann::json::parse(slurp(dir / "run" / "summary.json"), nullptr, false);
    }
    kill(pid, SIGKILL);
    waitExitCode(pid);
    REQUIRE(s.is_object());
    CHECK(s["status"] == "running");
    CHECK(s.value("steps", 0) > 300);
    CHECK(s["stages"].size() == 1); // the first stage has ended
    CHECK(s["stop_reason"].is_null());
    CHECK_FALSE(has(runDem("info run", dir).out, "steps >= 300"));
}

// A checkpoint the deck asks for that cannot be written (here `checkpoints` is a file, which
// fails even for root) must not pass unnoticed: the run goes on to its end, but exits 1 and says
// why in summary.json and on stderr.
TEST_CASE("restart: a checkpoint that cannot be written makes the run exit 1", "[restart]") {
    const auto dir = scratchDir("restart-unwritable");
    deckIn(dir);
    fs::create_directories(dir / "out");
    writeText(dir / "out/checkpoints", "not a directory\n");
    const CommandResult r = runDem("run pour.toml --quiet --set n1=300 --set n2=30 --out out", dir);
    CHECK(r.code == 1);
    CHECK(r.err.find("checkpoint not written") != std::string::npos);
    const auto s = summaryOf(dir / "out");
    CHECK(s["steps"] == 330);
    CHECK(s.value("error", "").find("checkpoint not written") != std::string::npos);
}

TEST_CASE("restart: VTK series continue after --resume as if the run had never stopped",
          "[restart]") {
    const auto dir = scratchDir("restart-vtk");
    std::string text = slurp(deckIn(dir));
    text.replace(text.find("[output]"), 8, "[output]\nvtk = { every = 5000 }");
    writeText(dir / "pour.toml", text);
    const std::string longer = " --set n1=20000 --set n2=20000 --set every=3000";
    REQUIRE(runDem("run pour.toml --quiet --out full" + longer, dir).code == 0);
    // A stale file of an earlier run is removed by a fresh start (--force).
    writeText(dir / "full" / "vtk" / "spheres.00000001.vtu", "stale");
    REQUIRE(runDem("run pour.toml --quiet --force --out full" + longer, dir).code == 0);
    CHECK_FALSE(fs::exists(dir / "full" / "vtk" / "spheres.00000001.vtu"));

    const pid_t pid = spawnDem({"run", "pour.toml", "--quiet", "--out", "run", "--set", "n1=20000",
                                "--set", "n2=20000", "--set", "every=3000"},
                               dir, dir / "run.log");
    REQUIRE(waitForCheckpoint(dir / "run"));
    kill(pid, SIGINT);
    REQUIRE(waitExitCode(pid) == 3);
    // What a run killed while writing would leave: temporary files, removed by the next start.
    for (const fs::path& left : {dir / "run" / "summary.json.tmp-99999",
                                 dir / "run" / "vtk" / "spheres.00040000.vtu.tmp-99999",
                                 dir / "run" / "checkpoints" / "latest.tmp-99999"})
        writeText(left, "part");
    REQUIRE(runDem("run pour.toml --quiet --resume --out run" + longer, dir).code == 0);
    for (const auto& e : fs::recursive_directory_iterator(dir / "run"))
        CHECK(e.path().filename().string().find(".tmp-") == std::string::npos);
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir / "full" / "vtk"))
        names.push_back(e.path().filename().string());
    CHECK(names.size() == 3 * 9 + 3); // spheres, contacts, obstacles at steps 0, 5000, ..., 40000
    for (const std::string& name : names) {
        INFO(name);
        CHECK(slurp(dir / "run" / "vtk" / name) == slurp(dir / "full" / "vtk" / name));
    }
}

// A restart into the run's own directory deleted the checkpoints beyond its step but left the VTK
// frames of those later steps beside the new series (the .pvd files dropped them): a directory
// listing, or a reader taking the files by name, mixed two futures.
TEST_CASE("restart: VTK frames beyond the restart step are removed", "[restart]") {
    const auto dir = scratchDir("restart-vtk-beyond");
    std::string text = slurp(deckIn(dir));
    text.replace(text.find("[output]"), 8, "[output]\nvtk = { every = 250 }");
    writeText(dir / "pour.toml", text);
    REQUIRE(runDem("run pour.toml --quiet --out run", dir).code == 0);
    REQUIRE(fs::exists(dir / "run" / "vtk" / "spheres.00002000.vtu"));
    REQUIRE(runDem("run --restart run/checkpoints/step-000001000.stage1.dem.gz --quiet --force "
                   "--set n2=300 --allow-changes --out run",
                   dir)
                .code == 0);
    std::vector<std::string> listed, files;
    for (const std::string kind : {"spheres", "contacts", "obstacles"}) {
        const std::string pvd = slurp(dir / "run" / "vtk" / (kind + ".pvd"));
        for (size_t at = pvd.find("file=\""); at != std::string::npos;
             at = pvd.find("file=\"", at + 1))
            listed.push_back(pvd.substr(at + 6, pvd.find('"', at + 6) - at - 6));
    }
    for (const std::string& name : namesIn(dir / "run" / "vtk"))
        if (!name.ends_with(".pvd"))
            files.push_back(name);
    std::sort(listed.begin(), listed.end());
    CHECK(files == listed);
    // Steps 0, 250, ..., 1250, and the end at 1300, of each kind.
    CHECK(files.size() == 3 * 7);
    CHECK(fs::exists(dir / "run" / "vtk" / "obstacles.00001300.vtu"));
    CHECK_FALSE(fs::exists(dir / "run" / "vtk" / "spheres.00001500.vtu"));
}

TEST_CASE("restart: state a checkpoint kept that the deck does not read is dropped", "[restart]") {
    // Files written before orientations and start positions became optional keep both. A run
    // continued from one keeps what its deck reads (here neither), so it ends in the state, and
    // the digest, of the run that never stopped.
    const auto dir = scratchDir("restart-optional");
    deckIn(dir);
    REQUIRE(runDem("run pour.toml --quiet --out run", dir).code == 0);
    dem::Simulation sim;
    dem::CheckpointMeta meta;
    std::string error;
    REQUIRE(dem::readCheckpoint((dir / "run/checkpoints/step-000001000.stage1.dem.gz").string(),
                                sim, meta, error));
    CHECK_FALSE(sim.particles.keepsOrientation);
    CHECK_FALSE(sim.particles.keepsStart);
    sim.particles.keepOptional(true, true);
    REQUIRE(dem::writeCheckpoint((dir / "old.dem.gz").string(), sim, meta, -1, error));
    REQUIRE(runDem("run --restart old.dem.gz --quiet --out cont", dir).code == 0);
    CHECK(digestOf(dir / "cont") == digestOf(dir / "run"));
}
