// End-to-end tests of the run contract: exit codes, the run directory and summary.json.
#include "CommandRunner.hpp"
#include "LatticeDeck.hpp"
#include "core/Parallel.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

using namespace demtest;
namespace fs = std::filesystem;

namespace {

// A few spheres dropping onto a wall: runs in well under a second.
const char* tinyDeck = R"(
[params]
r = 0.01

[[material]]
name = "glass"
law = "hertz_mindlin"
density = 2500
young = 1e7
poisson = 0.25
friction_angle = 30
restitution = 0.5

[[wall]]
name = "floor"
point = [0, 0, 0]
normal = [0, 0, 1]
material = "glass"

[[spheres]]
kind = "list"
centers = [[0, 0, 0.011], [0.021, 0, 0.011], [0.0105, 0, 0.03], [0, 0.021, 0.05]]
radius = "r"
material = "glass"

[[stage]]
name = "drop"
gravity = [0, 0, -9.81]
stop = { steps = 400 }

[output]
history = { every = 50, columns = ["kinetic_energy", "object:floor.force.z"] }
)";

fs::path tinyDeckIn(const fs::path& dir) {
    const fs::path deck = dir / "tiny.toml";
    writeText(deck, tinyDeck);
    return deck;
}

} // namespace

// --quiet prints only warnings and errors: a figure that cannot be drawn is a warning, shown and
// logged, and the run still completes.
TEST_CASE("plots that cannot be drawn are a warning, also with --quiet", "[cli]") {
    const auto dir = scratchDir("plot-warning");
    writeText(dir / "tiny.toml", std::string(tinyDeck) + R"(
[[output.plot]]
name = "energy"
x = "time"
y = ["kinetic_energy"]
)");
    const CommandResult r = runDem("DEM_GNUPLOT=/nonexistent/gnuplot '" DEM_BINARY // no gnuplot
                                   "' run tiny.toml --quiet --out run",
                                   dir, "/usr/bin/env");
    CHECK(r.code == 0);
    CHECK(has(r.err, "dem: warning: plots not rendered: gnuplot not found"));
    CHECK(has(slurp(dir / "run" / "log.txt"), "warn  plots not rendered"));
    CHECK(fs::exists(dir / "run" / "plots" / "energy.gp")); // the script stays
}

// Nothing to plot is bad input (2, nothing was done); gnuplot missing, or a merged script that
// cannot be written, is a failure (1), as for `dem snapshot`.
TEST_CASE("dem plot tells nothing to plot from gnuplot missing", "[cli]") {
    const auto dir = scratchDir("plot-status");
    fs::create_directories(dir / "empty");
    const CommandResult none = runDem("plot empty", dir);
    CHECK(none.code == 2);
    CHECK(has(none.err, "dem: error: no plots/*.gp in empty"));
    fs::create_directories(dir / "run" / "plots");
    writeText(dir / "run" / "plots" / "energy.gp", "plot x\n");
    const CommandResult missing =
        runDem("DEM_GNUPLOT=/nonexistent/gnuplot '" DEM_BINARY "' plot run", dir, "/usr/bin/env");
    CHECK(missing.code == 1);
    CHECK(has(missing.err, "dem: error: gnuplot not found"));
    CHECK(runDem("plot empty --merge kinetic_energy", dir).code == 2); // not a batch
    // A batch of one job: a column it lacks is bad input, gnuplot missing a failure.
    tinyDeckIn(dir);
    writeText(dir / "t.csv", "r\n0.01\n");
    REQUIRE(runDem("batch t.csv tiny.toml -j 1", dir).code == 0);
    CHECK(runDem("plot runs/t --merge no_such_column", dir).code == 2);
    CHECK(runDem("plot runs/t --x step", dir).code == 2); // --x is for --merge only
    const CommandResult merged = runDem("DEM_GNUPLOT=/nonexistent/gnuplot '" DEM_BINARY
                                        "' plot runs/t --merge kinetic_energy",
                                        dir, "/usr/bin/env");
    CHECK(merged.code == 1);
    CHECK(has(merged.err, "gnuplot not found"));
    // A merged script that cannot be written (a directory holds its name) is a failure too.
    REQUIRE(fs::remove(dir / "runs" / "t" / "merged-kinetic_energy.gp"));
    fs::create_directories(dir / "runs" / "t" / "merged-kinetic_energy.gp" / "in-the-way");
    const CommandResult unwritable = runDem("plot runs/t --merge kinetic_energy", dir);
    CHECK(unwritable.code == 1);
    CHECK(has(unwritable.err, "merged-kinetic_energy.gp"));
}

TEST_CASE("dem --version and help exit 0", "[cli]") {
    const auto dir = scratchDir("version");
    CommandResult r = runDem("--version", dir);
    CHECK(r.code == 0);
    CHECK(r.out.rfind("dem ", 0) == 0);
    CHECK(runDem("--help", dir).code == 0);
    CHECK(runDem("run --help", dir).code == 0);
    CHECK(runDem("help run", dir).code == 0);
    const CommandResult unknown = runDem("help no-such-topic", dir);
    CHECK(unknown.code == 2);
    // Every topic the error lists has help, and every command is listed.
    const size_t from = unknown.err.find("(topics: "), to = unknown.err.rfind(')');
    REQUIRE((from != std::string::npos && to != std::string::npos && from < to));
    std::stringstream list(unknown.err.substr(from + 9, to - from - 9));
    std::vector<std::string> topics;
    for (std::string t; std::getline(list, t, ',');)
        topics.push_back(t.substr(t.find_first_not_of(' ')));
    for (const std::string& t : topics) {
        INFO(t);
        CHECK(runDem("help " + t, dir).code == 0);
    }
    for (const char* command : {"run", "batch", "check", "info", "plot", "snapshot", "schema"})
        CHECK(std::find(topics.begin(), topics.end(), command) != topics.end());
    CHECK(runDem("help help", dir).out.find("Usage: dem help") != std::string::npos);
    const std::string help = runDem("help", dir).out; // the exit status once, as --help has it
    CHECK(help == runDem("--help", dir).out);         // the commands, not help's own usage
    CHECK(help.find("Exit status:") != std::string::npos);
    CHECK(help.find("Exit status:") == help.rfind("Exit status:"));
}

TEST_CASE("bad usage gives one line on stderr and exit code 2", "[cli]") {
    const auto dir = scratchDir("usage");
    SECTION("missing deck") {
        CommandResult r = runDem("run no-such-deck.toml", dir);
        CHECK(r.code == 2);
        CHECK(countLines(r.err) == 1);
        CHECK(r.err.find("no-such-deck.toml") != std::string::npos);
        CHECK(r.out.empty());
    }
    SECTION("misspelled option") {
        CommandResult r = runDem("run " + tinyDeckIn(dir).string() + " --thread 2", dir);
        CHECK(r.code == 2);
        CHECK(countLines(r.err) == 1);
        CHECK(r.err.find("--thread") != std::string::npos);
    }
    SECTION("no subcommand") {
        CHECK(runDem("", dir).code == 2);
    }
    SECTION("an unknown command is named, with the commands") {
        CommandResult r = runDem("rn deck.toml", dir);
        CHECK(r.code == 2);
        CHECK(countLines(r.err) == 1);
        CHECK(has(r.err, "unknown command 'rn'; did you mean 'run'? (commands: run, batch,"));
        r = runDem("--bogus", dir);
        CHECK(r.code == 2);
        CHECK(has(r.err, "unknown option '--bogus'"));
    }
    SECTION("a subcommand's usage error points to its own help") {
        CommandResult r = runDem("info", dir);
        CHECK(r.code == 2);
        CHECK(has(r.err, "(see 'dem info --help')"));
    }
    SECTION("a thread count of 0") {
        // CLI11's own check printed a 300-digit upper bound.
        CommandResult r = runDem("run " + tinyDeckIn(dir).string() + " --threads 0", dir);
        CHECK(r.code == 2);
        CHECK(countLines(r.err) == 1);
        CHECK(has(r.err, "--threads: expected an integer of at least 1, got '0'"));
        CHECK(r.err.size() < 120);
    }
    SECTION("--set without '='") {
        CHECK(runDem("run " + tinyDeckIn(dir).string() + " --set r", dir).code == 2);
    }
    SECTION("--restart and --resume together") {
        CHECK(
            runDem("run " + tinyDeckIn(dir).string() + " --restart x.dem.gz --resume", dir).code ==
            2);
    }
}

TEST_CASE("an unwritable --out is an I/O error: one line, exit code 1", "[cli]") {
    const auto dir = scratchDir("unwritable");
    writeText(dir / "file", "not a directory");
    CommandResult r = runDem("run " + tinyDeckIn(dir).string() + " --out file/run", dir);
    CHECK(r.code == 1);
    CHECK(countLines(r.err) == 1);
    CHECK(r.err.find("file/run") != std::string::npos);
}

// DEM_LANES asks for fewer contact lanes than the processor runs; the run says what it used, and
// a value it cannot use is a warning (the run goes on with the widest), never a silent default.
TEST_CASE("DEM_LANES sets the contact lanes, or is ignored with a warning", "[cli]") {
    const auto dir = scratchDir("lanes");
    const std::string deck = tinyDeckIn(dir).string();
    // Set for the child processes only, and removed whatever the checks do.
    struct Lanes {
        explicit Lanes(const char* v) { ::setenv("DEM_LANES", v, 1); }
        ~Lanes() { ::unsetenv("DEM_LANES"); }
    };
    {
        const Lanes two("2");
        const CommandResult r = runDem("run " + deck + " --json --quiet --out two", dir);
        REQUIRE(r.code == 0);
        CHECK(nlohmann::json::parse(r.out)["contact_lanes"] == 2);
        CHECK(r.err.empty());
    }
    const Lanes three("3");
    const CommandResult r = runDem("run " + deck + " --json --quiet --out three", dir);
    REQUIRE(r.code == 0);
    CHECK(r.err.find("DEM_LANES=3 ignored") != std::string::npos);
    const int lanes = nlohmann::json::parse(r.out)["contact_lanes"];
    CHECK((lanes == 2 || lanes == 4 || lanes == 8));
}

// OMP_DYNAMIC lets the runtime give a region fewer threads than asked, and OMP_THREAD_LIMIT caps
// them: either crashed a run of more spheres than parallelThreshold. The run now asks for exact
// counts within the limit, says when --threads exceeds it, and ends as on one thread.
TEST_CASE("dem run gets the threads it asks for whatever OMP_DYNAMIC and OMP_THREAD_LIMIT say",
          "[cli]") {
    const auto dir = scratchDir("omp-env");
    const fs::path deck = dir / "lattice.toml";
    // Above parallelThreshold spheres, so that the step's parallel regions run: they share the
    // work out by thread number and need every thread they ask for.
    writeText(deck, latticeDeck(0.025, 1.66e8));
    struct Env {
        const char* name;
        Env(const char* n, const char* v) : name(n) { ::setenv(n, v, 1); }
        ~Env() { ::unsetenv(name); }
    };
    auto run = [&](const std::string& out, int threads) {
        const CommandResult r = runDem("run " + deck.string() + " --json --quiet --threads " +
                                           std::to_string(threads) + " --out " + out,
                                       dir);
        INFO(r.err);
        REQUIRE(r.code == 0);
        return std::make_pair(nlohmann::json::parse(r.out), r.err);
    };
    const auto [one, oneErr] = run("one", 1);
    REQUIRE(one["particles"].get<size_t>() > dem::parallelThreshold);
    {
        const Env dynamic("OMP_DYNAMIC", "true");
        const auto [two, err] = run("dynamic", 2);
        CHECK(two["threads"] == 2);
        CHECK(two["state_digest"] == one["state_digest"]);
        CHECK(err.empty());
    }
    const Env limit("OMP_THREAD_LIMIT", "1");
    const auto [capped, err] = run("limited", 2);
    CHECK(capped["threads"] == 1);
    CHECK(capped["state_digest"] == one["state_digest"]);
    CHECK(err.find("more than the OpenMP thread limit") != std::string::npos);
}

TEST_CASE("dem run writes the run directory and summary.json", "[cli]") {
    const auto dir = scratchDir("run");
    const fs::path deck = tinyDeckIn(dir);
    CommandResult r = runDem("run " + deck.string() + " --json --quiet", dir);
    REQUIRE(r.code == 0);
    const fs::path run = dir / "runs" / "tiny";
    for (const char* f : {"deck.toml", "resolved.toml", "log.txt", "summary.json", "history.tsv"})
        CHECK(fs::exists(run / f));
    CHECK(slurp(run / "deck.toml") == tinyDeck);
    const auto summary = nlohmann::json::parse(r.out); // stdout holds exactly the summary
    CHECK(summary == nlohmann::json::parse(slurp(run / "summary.json")));
    for (const char* key : {"status", "stop_reason", "steps", "sim_time", "wall_seconds", "threads",
                            "particles", "contacts", "particle_steps_per_second", "final", "params",
                            "deck_sha256", "version", "state_digest"})
        CHECK(summary.contains(key));
    CHECK(summary["status"] == "completed");
    CHECK(summary["steps"] == 400);
    CHECK(summary["particles"] == 4);
    const int lanes = summary.value("contact_lanes", 0);
    CHECK((lanes == 2 || lanes == 4 || lanes == 8));
    CHECK(summary["params"]["r"] == 0.01);
    CHECK(summary["final"].contains("kinetic_energy"));
    CHECK(summary["final"].contains("object:floor.force.z"));
    CHECK(summary["state_digest"].get<std::string>().size() == 64);
    // Four spheres and one wall: at most 6 listed pairs and 4 wall candidates. The two spheres
    // placed on the floor stay within its reach and the one dropped on them touches both.
    CHECK(summary["listed_pairs"].get<int>() >= 2);
    CHECK(summary["listed_pairs"].get<int>() <= 6);
    CHECK(summary["obstacle_candidates"].get<int>() >= 2);
    CHECK(summary["obstacle_candidates"].get<int>() <= 4);
    CHECK(summary["contacts"].get<int>() <=
          summary["listed_pairs"].get<int>() + summary["obstacle_candidates"].get<int>());
    // history.tsv: header, rows at steps 0, 50, ..., 400.
    const std::string history = slurp(run / "history.tsv");
    CHECK(history.rfind("step\ttime\tkinetic_energy\tobject:floor.force.z\n", 0) == 0);
    CHECK(countLines(history) == 1 + 9);

    SECTION("a finished run is not overwritten without --force") {
        CommandResult again = runDem("run " + deck.string() + " --quiet", dir);
        CHECK(again.code == 2);
        CHECK(countLines(again.err) == 1);
        CHECK(runDem("run " + deck.string() + " --quiet --force", dir).code == 0);
    }
    SECTION("dem info reads the run directory") {
        CommandResult info = runDem("info runs/tiny --json", dir);
        CHECK(info.code == 0);
        const auto described = nlohmann::json::parse(info.out);
        CHECK(described["state_digest"] == summary["state_digest"]);
        // The checkpoints the text counts, in the JSON too (the run-end checkpoint, at step 400).
        CHECK(described["checkpoints"] == nlohmann::json({{"count", 1}, {"newest_step", 400}}));
        CHECK(has(runDem("info runs/tiny", dir).out,
                  "checkpoints                 1 (newest at step 400)"));
        CHECK(runDem("info runs/none", dir).code == 2);
    }
}

// A forced run over an earlier one left that run's history, figures and VTK series in place when
// its deck did not ask for them: history.tsv went on past the new summary's steps and `dem plot`
// drew the old figure again. A fresh run removes the outputs dem wrote there, by their names, and
// leaves everything else: the user's files, also in dem's own subdirectories.
TEST_CASE("a fresh run removes the outputs of the run it replaces, and only those", "[cli]") {
    const auto dir = scratchDir("run-replaces-outputs");
    std::string full = tinyDeck;
    full += "vtk = { every = 100 }\ncheckpoint = { every = 100 }\n";
    full += "[[output.plot]]\nname = \"energy\"\ny = [\"kinetic_energy\"]\n";
    writeText(dir / "full.toml", full);
    std::string bare = tinyDeck;
    bare.erase(bare.find("[output]"));
    writeText(dir / "bare.toml", bare);
    REQUIRE(runDem("run full.toml --quiet --out out", dir).code == 0);
    const fs::path out = dir / "out";
    REQUIRE(fs::exists(out / "history.tsv"));
    REQUIRE(fs::exists(out / "plots/energy.gp"));
    REQUIRE(fs::exists(out / "vtk/spheres.pvd"));
    REQUIRE(fs::exists(out / "checkpoints/step-000000200.dem.gz"));
    writeText(out / "plots/energy.svg", "");       // as dem plot --format svg draws it
    writeText(out / "snapshot-000000400.png", ""); // as dem snapshot draws it
    for (const char* mine : {"notes.txt", "energy.png", "plots/notes.txt", "checkpoints/notes.txt"})
        writeText(out / mine, "mine\n");

    REQUIRE(runDem("run bare.toml --quiet --force --out out", dir).code == 0);
    CHECK(namesIn(out) == std::vector<std::string>{"checkpoints", "deck.toml", "energy.png",
                                                   "log.txt", "notes.txt", "plots", "resolved.toml",
                                                   "summary.json"});
    CHECK(namesIn(out / "plots") == std::vector<std::string>{"notes.txt"});
    const std::vector<std::string> checkpoints = namesIn(out / "checkpoints");
    CHECK(std::find(checkpoints.begin(), checkpoints.end(), "notes.txt") != checkpoints.end());
    CHECK_FALSE(fs::exists(out / "checkpoints/step-000000200.dem.gz"));
    const CommandResult plot = runDem("plot out", dir);
    CHECK(plot.code == 2); // nothing to plot: the old figure is gone with its history
    CHECK(has(plot.err, "no plots/*.gp"));
}

// Exit 1 means summary.json says failed, also when the run fails before its first step (it used
// to return with the summary still saying running).
TEST_CASE("a run that fails before its first step says so in summary.json", "[cli]") {
    const auto dir = scratchDir("run-fails-at-start");
    std::string deck = tinyDeck;
    SECTION("a sphere outside the domain from the start") {
        // Two of the four spheres are above the domain's top.
        deck += "[simulation]\ndomain = { min = [-1, -1, -1], max = [1, 1, 0.02] }\n";
        deck += "[[output.plot]]\nname = \"energy\"\ny = [\"kinetic_energy\"]\n";
        writeText(dir / "tiny.toml", deck);
        const CommandResult r = runDem("run tiny.toml --json --quiet --out out", dir);
        CHECK(r.code == 1);
        CHECK(r.err.find("left the domain at step 0") != std::string::npos);
        CHECK(countLines(r.err) == 1); // no figure drawn from a history without rows
        const auto s = nlohmann::json::parse(slurp(dir / "out/summary.json"));
        CHECK(s["status"] == "failed");
        CHECK(s["steps"] == 0);
        CHECK(s.value("error", "").find("left the domain at step 0") != std::string::npos);
        CHECK(nlohmann::json::parse(r.out) == s); // --json prints it, as for any other end
    }
    SECTION("the initial state's VTK files cannot be written") {
        deck.replace(deck.find("[output]"), 8, "[output]\nvtk = { every = 100 }");
        writeText(dir / "tiny.toml", deck);
        // A directory in its place, not empty, so that the run's clean-up leaves it.
        fs::create_directories(dir / "out/vtk/spheres.00000000.vtu");
        writeText(dir / "out/vtk/spheres.00000000.vtu/keep", "");
        const CommandResult r = runDem("run tiny.toml --quiet --out out", dir);
        CHECK(r.code == 1);
        const auto s = nlohmann::json::parse(slurp(dir / "out/summary.json"));
        CHECK(s["status"] == "failed");
        CHECK(s["steps"] == 0);
        CHECK_FALSE(s.value("error", "").empty());
    }
}

TEST_CASE("progress_every prints a progress line every that many steps", "[cli]") {
    const auto dir = scratchDir("run-progress-every");
    std::string deck = tinyDeck;
    deck.replace(deck.find("[output]"), 8, "[output]\nprogress_every = 100");
    writeText(dir / "tiny.toml", deck);
    // Steps 100, 200 and 300; the run ends at step 400 with its own line.
    const CommandResult r = runDem("run tiny.toml --progress always --out out", dir);
    REQUIRE(r.code == 0);
    for (const char* step : {"step 100 ", "step 200 ", "step 300 "})
        CHECK(has(r.err, step));
    CHECK_FALSE(has(r.err, "step 50 "));
    CHECK_FALSE(has(r.err, "step 400 "));
    // --progress never silences them.
    CHECK_FALSE(
        has(runDem("run tiny.toml --progress never --force --out out", dir).err, "step 100 "));
}

// It removed the path before gnuplot wrote there: an empty directory was deleted.
TEST_CASE("dem snapshot refuses a --png that is a directory or names another format", "[cli]") {
    const auto dir = scratchDir("snapshot-png-directory");
    tinyDeckIn(dir);
    REQUIRE(runDem("run tiny.toml --quiet --out out", dir).code == 0);
    fs::create_directories(dir / "pics");
    const CommandResult r = runDem("snapshot out --png pics", dir);
    CHECK(r.code == 2);
    CHECK(has(r.err, "is a directory"));
    CHECK(fs::is_directory(dir / "pics"));
    // Nor a name that says another format: the picture is a PNG whatever the name.
    const CommandResult svg = runDem("snapshot out --png pics.svg", dir);
    CHECK(svg.code == 2);
    CHECK(has(svg.err, "give a name ending in .png"));
    CHECK_FALSE(fs::exists(dir / "pics.svg"));
}

// A checkpoint without spheres is bad input (2), not a gnuplot failure (1).
TEST_CASE("dem snapshot of a checkpoint without spheres exits 2", "[cli]") {
    const auto dir = scratchDir("snapshot-no-spheres");
    // Every sphere starts outside the domain and is removed at the first rebuild.
    writeText(dir / "tiny.toml", std::string(tinyDeck) +
                                     "[simulation]\ndomain = { min = [1, 1, 1], max = [2, 2, "
                                     "2], out_of_domain = \"remove\" }\n");
    REQUIRE(runDem("run tiny.toml --quiet --out out", dir).code == 0);
    const CommandResult r = runDem("snapshot out", dir);
    CHECK(r.code == 2);
    CHECK(has(r.err, "holds no spheres to draw"));
}

// A run directory's summary.json may be anything. A status that is not a string, or a directory
// (which an ifstream opens and then throws from), used to end dem run, --resume and dem info with
// an uncaught exception.
TEST_CASE("a summary.json that is not a run's summary ends no command abruptly", "[cli]") {
    const auto dir = scratchDir("odd-summary");
    tinyDeckIn(dir);
    fs::create_directories(dir / "out");
    writeText(dir / "out/summary.json", "{\"status\": 5}");
    CHECK(runDem("run tiny.toml --quiet --out out", dir).code == 0);
    writeText(dir / "out/summary.json", "[1, 2]");
    CHECK(runDem("run tiny.toml --quiet --resume --out out", dir).code == 0);
    writeText(dir / "out/summary.json", "[1, 2]");
    CommandResult info = runDem("info out", dir);
    CHECK(info.code == 2);
    CHECK(has(info.err, "holds array, not a JSON object"));

    fs::remove(dir / "out/summary.json");
    fs::create_directories(dir / "out/summary.json");
    info = runDem("info out", dir);
    CHECK(info.code == 2);
    CHECK(has(info.err, "Is a directory"));
    // The run cannot write its summary there: an I/O failure.
    const CommandResult run = runDem("run tiny.toml --quiet --force --out out", dir);
    CHECK(run.code == 1);
    CHECK(has(run.err, "summary.json"));
}

TEST_CASE("summary.json's max_rss_bytes is the run's own peak, not its parent's", "[cli]") {
    // Linux carries getrusage's ru_maxrss over exec: a run started by a process holding more
    // memory reported that process's size (a shell in between, which forks and execs afresh, hid
    // it). This test holds 256 MB (written, so resident) and starts the tiny deck's run as its
    // direct child, as Python's subprocess does; the run's own peak is about 10 MB, and 64 MB
    // leaves room for any libc. Under AddressSanitizer (DEM_SANITIZE) the run's own peak is about
    // 210 MB (shadow memory, quarantine): the ballast is 1 GB and the bound 512 MB.
#if defined(__SANITIZE_ADDRESS__)
    constexpr size_t ballastMB = 1024, boundMB = 512;
#else
    constexpr size_t ballastMB = 256, boundMB = 64;
#endif
    const auto dir = scratchDir("rss");
    const fs::path deck = tinyDeckIn(dir);
    std::vector<char> ballast(ballastMB << 20);
    for (size_t b = 0; b < ballast.size(); b += 4096)
        ballast[b] = char(b >> 12);
    REQUIRE(waitExitCode(spawnDem({"run", deck.string(), "--out", "run", "--quiet"}, dir,
                                  dir / "log.txt")) == 0);
    const auto summary = nlohmann::json::parse(slurp(dir / "run" / "summary.json"));
    const auto rss = summary["max_rss_bytes"].get<uint64_t>();
    CHECK(ballast[4096] == 1);
    CHECK(rss > (uint64_t(1) << 20));
    CHECK(rss < (uint64_t(boundMB) << 20));
}

namespace {

// 2,500 spheres poured into a box, more than parallelThreshold: below it a step runs on one
// thread whatever --threads says. About 400 contacts and 24 rebuilds in its 1500 steps.
const char* pourDeck = R"(
[params]
r = 0.0025

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
box = { min = [-0.04, -0.04, 0], max = [0.04, 0.04, 0.12], open = ["z+"] }

[[spheres]]
kind = "random"
material = "glass"
region = { box = { min = [-0.04, -0.04, 0], max = [0.04, 0.04, 0.12] } }
radius = "r"
spread = 0.2
count = 2500
seed = 5

[[stage]]
name = "pour"
gravity = [0, 0, -9.81]
stop = { steps = 1500 }

[output]
checkpoint = { every = 500 }
)";

} // namespace

TEST_CASE("identical runs give identical state digests, for any thread count and across a "
          "restart",
          "[cli][determinism]") {
    const auto dir = scratchDir("digest");
    const fs::path deck = dir / "pour.toml";
    writeText(deck, pourDeck);
    auto digest = [&](const std::string& args) {
        CommandResult r = runDem(args + " --json --quiet --force", dir);
        REQUIRE(r.code == 0);
        const auto s = nlohmann::json::parse(r.out);
        REQUIRE(s["particles"].get<size_t>() > dem::parallelThreshold);
        return s["state_digest"].get<std::string>();
    };
    const std::string run = "run " + deck.string() + " ";
    const std::string one = digest(run + "--threads 1 --out a");
    CHECK(digest(run + "--threads 1 --out b") == one);
    CHECK(digest(run + "--threads 2 --out c") == one);
    CHECK(digest("run --restart a/checkpoints/step-000000500.dem.gz --threads 2 --out e") == one);
    CHECK(digest("run --restart c/checkpoints/step-000001000.dem.gz --threads 1 --out f") == one);
    CHECK(digest(run + "--threads 2 --out d --set r=0.00251") != one);
}

TEST_CASE("dem-run is dem run", "[cli]") {
    const auto dir = scratchDir("alias");
    const fs::path deck = tinyDeckIn(dir);
    const std::string alias = (fs::path(DEM_BINARY).parent_path() / "dem-run").string();
    CommandResult r = runDem(deck.string() + " --json --quiet", dir, alias);
    CHECK(r.code == 0);
    CHECK(nlohmann::json::parse(r.out)["status"] == "completed");
    r = runDem("--version", dir, alias);
    CHECK(r.code == 0);
    CHECK(r.out.rfind("dem ", 0) == 0);
}

TEST_CASE("dem check validates without running", "[cli]") {
    const auto dir = scratchDir("check");
    CHECK(runDem("check " + tinyDeckIn(dir).string(), dir).code == 0);
    CHECK(!fs::exists(dir / "runs"));
    writeText(dir / "bad.toml", "[[material]]\nname = \"x\"\nlaw = \"nonsense\"\n");
    CommandResult r = runDem("check bad.toml", dir);
    CHECK(r.code == 2);
    CHECK(r.err.find("bad.toml:") != std::string::npos);
}
