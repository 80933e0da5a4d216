// Running out of memory is never a crash, a wrong exit status or a silent loss: each test here
// makes one allocation fail, for every allocation in turn, until the operation under test runs
// through without reaching the failing one (FailingNew.hpp): checkpoint writing and reading in
// this process, whole commands in the dem program built with that operator new.
#include "../unit/CommandRunner.hpp"
#include "../unit/DeterminismScene.hpp"
#include "../unit/LatticeDeck.hpp"
#include "FailingNew.hpp"
#include "app/Checkpointer.hpp"
#include "app/ExitCodes.hpp"
#include "app/OutOfMemory.hpp"
#include "core/StateDigest.hpp"
#include "io/Checkpoint.hpp"
#include "io/Gnuplot.hpp"
#include "io/VtkWriter.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string_view>

using namespace dem;
using namespace dem::test;
using namespace demtest;
namespace fs = std::filesystem;

namespace {

// An environment variable set for a scope, unset at its end (also when a REQUIRE leaves it).
struct ScopedEnvironment {
    ScopedEnvironment(const char* name, const std::string& value) : name(name) {
        ::setenv(name, value.c_str(), 1);
    }
    ~ScopedEnvironment() { ::unsetenv(name); }
    ScopedEnvironment(const ScopedEnvironment&) = delete;
    ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;
    const char* name;
};

// A child's environment: this process's (the sanitizers' options among it) without the variables
// whose entries start with one of `dropped`, and with `set` ("NAME=value" each).
class ChildEnvironment {
public:
    ChildEnvironment(std::vector<std::string> set, const std::vector<std::string_view>& dropped)
        : set_(std::move(set)) {
        for (const std::string& e : set_)
            env_.push_back(const_cast<char*>(e.c_str()));
        for (char** e = environ; *e; ++e)
            if (std::none_of(dropped.begin(), dropped.end(), [&](std::string_view d) {
                    return std::string_view(*e).starts_with(d);
                }))
                env_.push_back(*e);
        env_.push_back(nullptr);
    }
    ChildEnvironment(const ChildEnvironment&) = delete; // env_ points into set_
    ChildEnvironment& operator=(const ChildEnvironment&) = delete;
    char* const* get() const { return env_.data(); }

private:
    std::vector<std::string> set_;
    std::vector<char*> env_;
};

struct Attempt {
    bool failed = false; // the failing allocation was reached
    bool thrown = false; // std::bad_alloc came out of the operation
};

// Runs `operation` with allocation k (from 0, outside parallel regions) failing.
template <class Operation> Attempt withFailingAllocation(long k, Operation&& operation) {
    failAllocationAfter(k);
    Attempt a;
    try {
        operation();
    } catch (const std::bad_alloc&) {
        a.thrown = true;
    }
    a.failed = allocationFailed();
    failAllocationAfter(-1);
    return a;
}

// Runs `operation` with each of its allocations failing in turn, calling `check(attempt)` after
// each, until it runs without reaching the failing one. Returns how many attempts failed.
template <class Operation, class Check>
long failEachAllocation(Operation&& operation, Check&& check) {
    constexpr long enough = 1000000; // far beyond any operation tested here: a guard against a loop
    for (long k = 0; k < enough; ++k) {
        const Attempt a = withFailingAllocation(k, operation);
        if (!a.failed) {
            CHECK(!a.thrown);
            return k;
        }
        INFO("allocation " << k << " failed");
        check(a);
    }
    FAIL("an operation made a million allocations");
    return enough;
}

Simulation smallPacking() {
    Simulation sim = densePacking(3, 3, 3);
    Workspace ws;
    for (int k = 0; k < 5; ++k)
        REQUIRE(advance(sim, ws));
    return sim;
}

// A small packing, and the same a step later.
std::pair<Simulation, Simulation> packingAndNextStep() {
    Simulation before = smallPacking(), after = before;
    Workspace ws;
    REQUIRE(advance(after, ws));
    return {std::move(before), std::move(after)};
}

CheckpointMeta someMeta() {
    CheckpointMeta meta;
    meta.deckName = "packing";
    meta.deckText = "# a deck\n";
    meta.params["r"] = 0.01;
    meta.runState = R"({"stages": []})";
    return meta;
}

} // namespace

TEST_CASE("writing a checkpoint out of memory keeps the previous file and no temporary one",
          "[failing-allocations]") {
    const auto dir = scratchDir("failing-write");
    const auto [before, after] = packingAndNextStep();
    const CheckpointMeta meta = someMeta();
    for (const char* ending : {".dem", ".dem.gz", ".dem.bz2", ".dem.xz", ".dem.zst"}) {
        INFO(ending);
        const std::string path = (dir / ("state" + std::string(ending))).string();
        std::string error;
        REQUIRE(writeCheckpoint(path, before, meta, 1, error));
        const std::string previous = slurp(path);
        const std::vector<std::string> names = namesIn(dir);
        bool written = false;
        const long failures = failEachAllocation(
            [&] {
                error.clear();
                written = writeCheckpoint(path, after, meta, 1, error);
            },
            [&](const Attempt& a) {
                CHECK(!a.thrown);
                CHECK(!written);
                CHECK(has(error, "out of memory"));
                CHECK((slurp(path) == previous));
                CHECK(namesIn(dir) == names);
            });
        CHECK(failures > 0);
        CHECK(written);
        Simulation read;
        CheckpointMeta readMeta;
        REQUIRE(readCheckpoint(path, read, readMeta, error));
        CHECK(stateDigest(read) == stateDigest(after));
    }
}

// The checkpointer's write is reported done exactly when the new checkpoint is in place and
// `latest` names it; otherwise `latest` still names the previous one. Rotating the old files out
// comes after: running out of memory there must not turn a written checkpoint into a failure.
TEST_CASE("a checkpoint out of memory is reported written exactly when it is in place",
          "[failing-allocations]") {
    const auto root = scratchDir("failing-checkpointer");
    const auto [before, after] = packingAndNextStep();
    const CheckpointMeta meta = someMeta();
    CheckpointSpec spec;
    spec.keep = 1; // every successful write rotates the previous checkpoint out
    long k = 0;
    for (;; ++k) {
        REQUIRE(k < 100000);
        const std::string dir = (root / std::to_string(k)).string(); // a fresh one per attempt
        std::string previous, path, error;
        REQUIRE(Checkpointer(spec, dir).write(before, meta, CheckpointReason::Periodic, 0, previous,
                                              error));
        Checkpointer checkpointer(spec, dir);
        bool written = false;
        const Attempt a = withFailingAllocation(k, [&] {
            written = checkpointer.write(after, meta, CheckpointReason::Periodic, 0, path, error);
        });
        INFO("allocation " << k << (a.failed ? " failed" : " not reached") << ": " << error);
        std::string latest;
        REQUIRE(readLatestPointer(dir, latest, error));
        CheckpointInfo info;
        if (written) {
            CHECK_FALSE(a.thrown);
            CHECK(latest == path);
            CHECK(inspectCheckpoint(path, info, error));
            CHECK(info.step == after.step);
            // keep = 1: the previous one is gone unless removing it was put off, and said so.
            CHECK(fs::exists(previous) == checkpointer.rotationPostponed());
        } else {
            CHECK(latest == previous);
            CHECK(inspectCheckpoint(previous, info, error));
        }
        if (!a.failed) {
            CHECK(written);
            CHECK_FALSE(checkpointer.rotationPostponed());
            break;
        }
        fs::remove_all(dir);
    }
    CHECK(k > 0);
}

// Too little memory is not a bad file: std::bad_alloc reaches main (exit status 1), and the
// simulation and metadata read into are as they were.
TEST_CASE("reading a checkpoint out of memory passes std::bad_alloc on and changes nothing",
          "[failing-allocations]") {
    const auto dir = scratchDir("failing-read");
    const Simulation stored = smallPacking();
    const std::string path = (dir / "step-000000005.dem.gz").string();
    std::string error;
    REQUIRE(writeCheckpoint(path, stored, someMeta(), 1, error));
    REQUIRE(writeLatestPointer(dir.string(), "step-000000005.dem.gz", error));
    const Simulation other = densePacking(2, 2, 2);
    const std::string otherDigest = stateDigest(other);

    Simulation sim = other; // as it must stay whenever the read runs out of memory
    CheckpointMeta meta;
    bool read = false;
    CHECK(failEachAllocation([&] { read = readCheckpoint(path, sim, meta, error); },
                             [&](const Attempt& a) {
                                 CHECK(a.thrown);
                                 CHECK(stateDigest(sim) == otherDigest);
                                 CHECK(meta.deckName.empty());
                             }) > 0);
    CHECK(read);
    CHECK(stateDigest(sim) == stateDigest(stored));

    CheckpointInfo info;
    bool inspected = false;
    CHECK(failEachAllocation([&] { inspected = inspectCheckpoint(path, info, error); },
                             [&](const Attempt& a) { CHECK(a.thrown); }) > 0);
    CHECK(inspected);
    CHECK(info.checksumOk);

    std::vector<CheckpointEntry> entries;
    bool listed = false;
    CHECK(failEachAllocation([&] { listed = listCheckpoints(dir.string(), entries, error); },
                             [&](const Attempt& a) { CHECK(a.thrown); }) > 0);
    CHECK(listed);
    CHECK(entries.size() == 1);

    std::string latest;
    bool pointed = false;
    CHECK(failEachAllocation([&] { pointed = readLatestPointer(dir.string(), latest, error); },
                             [&](const Attempt& a) { CHECK(a.thrown); }) > 0);
    CHECK(pointed);
    CHECK(latest == path);

    std::vector<std::string> candidates;
    CHECK(failEachAllocation([&] { candidates = resumeCandidates(dir.string()); },
                             [&](const Attempt& a) { CHECK(a.thrown); }) > 0);
    CHECK(candidates == std::vector<std::string>{path}); // the pointer's target, listed once
}

// Running out of memory while a VTK file is written, also inside zlib (whose memory comes from
// operator new: VtkWriter.cpp), is std::bad_alloc, not a failed write, and leaves no file. 512
// spheres: arrays over 8 KiB, whose blocks deflate a sample first (worthCompressing), in one
// block each. The failing allocation's call stack (DEM_FAIL_REPORT) shows zlib's are reached.
TEST_CASE("writing a VTK file out of memory passes std::bad_alloc on and leaves no file",
          "[failing-allocations]") {
    const auto dir = scratchDir("failing-vtk");
    const auto reportDir = scratchDir("failing-vtk-report");
    const std::string report = (reportDir / "stack.txt").string();
    Simulation sim = densePacking(8, 8, 8);
    Workspace ws;
    REQUIRE(advance(sim, ws));
    const ScopedEnvironment reporting("DEM_FAIL_REPORT", report);
    for (const VtkEncoding encoding : {VtkEncoding::Base64Zlib, VtkEncoding::Ascii}) {
        INFO((encoding == VtkEncoding::Ascii ? "ascii" : "binary"));
        const VtkFormat format{encoding};
        for (const char* name : {"spheres.vtu", "contacts.vtp"}) {
            INFO(name);
            const std::string path = (dir / name).string();
            const bool spheres = std::string_view(name) == "spheres.vtu";
            auto write = [&](std::string& error) {
                return spheres ? writeParticlesVtu(path, sim, VtkFieldSelection{}, error, format)
                               : writeContactsVtp(path, sim, error, format);
            };
            std::string error;
            REQUIRE(write(error));
            const std::string expected = slurp(path);
            fs::remove(path);
            bool written = false, inZlib = false;
            CHECK(failEachAllocation([&] { written = write(error); },
                                     [&](const Attempt& a) {
                                         CHECK(a.thrown);
                                         CHECK(namesIn(dir).empty());
                                         inZlib = inZlib || has(slurp(report), "deflate");
                                     }) > 0);
            CHECK(inZlib == (encoding == VtkEncoding::Base64Zlib));
            CHECK(written);
            CHECK(slurp(path) == expected);
            fs::remove(path);
        }
    }
}

// An array of more than two zlib blocks (64 KiB each) is compressed in a parallel loop, where
// running out of memory would end the process (OutOfMemory.cpp): the blocks' memory is had
// before it, and running out there is std::bad_alloc. 6,400 spheres: positions, velocities and
// the like in three blocks each.
TEST_CASE("a VTK file of many blocks asks for memory outside its parallel loop only",
          "[failing-allocations]") {
    const auto dir = scratchDir("failing-vtk-blocks");
    Simulation sim = densePacking(20, 20, 16);
    REQUIRE(sim.particles.size() * sizeof(Vec3) > 2 * (size_t(1) << 16));
    Workspace ws;
    REQUIRE(advance(sim, ws));
    const std::string path = (dir / "spheres.vtu").string();
    const VtkFormat format{VtkEncoding::Base64Zlib};
    std::string error;
    const long before = allocationsInParallel();
    REQUIRE(writeParticlesVtu(path, sim, VtkFieldSelection{}, error, format));
    CHECK(allocationsInParallel() == before);
    const std::string expected = slurp(path);
    fs::remove(path);
    bool written = false;
    CHECK(failEachAllocation(
              [&] { written = writeParticlesVtu(path, sim, VtkFieldSelection{}, error, format); },
              [&](const Attempt& a) {
                  CHECK(a.thrown);
                  CHECK(namesIn(dir).empty());
              }) > 0);
    CHECK(written);
    CHECK(slurp(path) == expected);
    CHECK(allocationsInParallel() == before);
}

namespace {

// `dem args` (the program with FailingNew.hpp's operator new) run in `dir` with allocation k
// failing; `failure` is where it was made (the call stack, addresses in the program), empty when
// the command ran through without reaching it.
struct FailingCommand {
    CommandResult result;
    std::string failure;
};

FailingCommand runFailing(const std::vector<std::string>& args, const fs::path& dir, long k) {
    const fs::path report = dir / "failure.txt", err = dir / "stderr.txt";
    fs::remove(report);
    fs::create_directories(dir / "tmp");
    // glibc's heap is neither trimmed nor grown in small steps: the VTK writer's compressor is set
    // up and torn down for every block, and each of those moved the heap's top with a system call
    // (70% of an attempt's time was the kernel's). What the program asks of operator new, and so
    // which allocation fails, is the same.
    const ChildEnvironment env({"DEM_FAIL_ALLOCATION=" + std::to_string(k),
                                "DEM_FAIL_REPORT=" + report.string(),
                                "TMPDIR=" + (dir / "tmp").string(), // checked for leftovers
                                "GLIBC_TUNABLES=glibc.malloc.trim_threshold=1073741824:"
                                "glibc.malloc.top_pad=134217728"},
                               {"DEM_FAIL_", "TMPDIR=", "GLIBC_TUNABLES="});
    fs::remove(err);
    // Without a shell: half the time of std::system for each attempt.
    const pid_t pid = spawnProgram(DEM_FAILING_BINARY, args, dir, "/dev/null", err, env.get());
    FailingCommand c;
    c.result.code = waitExitCode(pid);
    c.result.err = slurp(err);
    if (fs::exists(report))
        c.failure = slurp(report) + "(failing allocation " + std::to_string(k) + ")";
    return c;
}

// Runs `dem args` in `dir` with its allocations failing in turn, calling `check(result, failure)`
// after each attempt that reached the failing one, until one runs through; returns that one's
// result. No attempt may leave a temporary file in its $TMPDIR (dir/tmp). Every third allocation
// fails (every twentieth under AddressSanitizer), for the time of the default test suite: each
// attempt is a process. DEM_FAIL_EVERY=1 tries them all.
template <class Check>
CommandResult failEachAllocationOf(const std::vector<std::string>& args, const fs::path& dir,
                                   Check&& check) {
    const char* every = std::getenv("DEM_FAIL_EVERY");
    const long stride = every                   ? std::max(1L, std::strtol(every, nullptr, 10))
                        : underAddressSanitizer ? 20 // each process starts far slower
                                                : 3;
    constexpr long enough = 100000; // far beyond any command tested here: a guard against a loop
    for (long k = 0; k < enough; k += stride) {
        FailingCommand c = runFailing(args, dir, k);
        INFO(c.failure);
        CHECK(namesIn(dir / "tmp").empty());
        if (c.failure.empty()) {
            CHECK(k > 0);
            return c.result;
        }
        INFO("stderr: " << c.result.err);
        check(c.result, c.failure);
    }
    FAIL("a command made 100,000 allocations");
    return {};
}

// The function that asked for the failing allocation, as `failure` names it: the first named frame
// that is not the failing operator new's own or the standard library's.
std::string askingFrame(const std::string& failure) {
    std::istringstream lines(failure);
    for (std::string line; std::getline(lines, line);) {
        const bool skipped = !has(line, "(_Z") || has(line, "(_Z12testAllocate") ||
                             has(line, "(_Znwm") || has(line, "(_Znam") || has(line, "(_ZNSt") ||
                             has(line, "(_ZSt") || has(line, "(_ZNKSt") ||
                             has(line, "(_ZN9__gnu_cxx");
        if (!skipped)
            return line;
    }
    return {};
}

// What every command owes when memory runs out: exit status 1 with a message saying so, or (a
// run that went on) the loss recorded in the run's summary. The terminate handler's message
// (OutOfMemory.hpp) only where a library asked for the memory in a function that may not throw:
// nlohmann::json freeing a value, toml++ parsing; not for dem's own code.
void checkOutOfMemory(const CommandResult& r, const std::string& failure) {
    // Built with AddressSanitizer, toml++'s parser ends in std::terminate without the exception
    // (as "terminate called without an active exception"): nothing tells it is out of memory.
    if (underAddressSanitizer && r.code == 128 + SIGABRT && has(askingFrame(failure), "(_ZN4toml"))
        return;
    CHECK((r.code == ExitFailed || r.code == ExitOk));
    if (r.code == ExitFailed)
        CHECK(has(r.err, "out of memory"));
    if (has(r.err, outOfMemoryMessage)) {
        const std::string frame = askingFrame(failure);
        INFO("asked for by " << frame);
        CHECK((has(frame, "(_ZN8nlohmann") || has(frame, "(_ZN4toml")));
    }
}

// And a run's summary.json, when there is one, is whole and says what happened: the run failed
// for want of memory, or completed without a checkpoint or an output it could not write (or with
// its old checkpoints left for the next rotation to remove, which its log says), or (exit
// status 1) it stopped before the summary could say so, or where the error could not be passed on
// (OutOfMemory.hpp).
void checkRunOutOfMemory(const CommandResult& r, const std::string& failure, const fs::path& run) {
    checkOutOfMemory(r, failure);
    const fs::path summaryPath = run / "summary.json";
    if (!fs::exists(summaryPath)) {
        CHECK(r.code != ExitOk);
        return;
    }
    const auto summary = nlohmann::json::parse(slurp(summaryPath), nullptr, false);
    REQUIRE(!summary.is_discarded()); // written atomically: whole or not at all
    const std::string status = summary.value("status", "");
    if (status == "running" || has(r.err, outOfMemoryMessage)) {
        CHECK(r.code == ExitFailed); // it stopped before the summary could say so
        return;
    }
    CHECK((status == "failed" || status == "completed"));
    const std::string log = slurp(run / "log.txt");
    CHECK(has(log, "out of memory"));
    // Housekeeping put off (old checkpoints not rotated out) loses nothing: a warning only.
    if (!has(log, "not removed (out of memory)"))
        CHECK(has(summary.value("error", ""), "out of memory"));
}

std::string runDeckText() {
    return latticeDeck(0.1, 1e7) + R"(
[output]
history = { every = 10, columns = ["kinetic_energy", "contacts"] }
vtk = { every = 15 }
checkpoint = { every = 10, keep = 2 }
)";
}

const std::vector<std::string> runOptions = {"--quiet", "--threads", "1", "--progress", "never"};

std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

} // namespace

// Running out of memory inside a parallel region ends the process without the run's summary
// (OutOfMemory.cpp), and the tests above fail no allocation there: a run asks for none. Three
// decks of decks/ (walls, facets, a moving plate), a lattice of over 5,462 spheres (active
// regions on two threads, positions in three zlib blocks of a VTK file) with VTK files,
// checkpoints and a restart, and a periodic cell of 4,000 spheres compressed and sheared.
TEST_CASE("runs ask for no memory inside parallel regions", "[failing-allocations]") {
    const auto dir = scratchDir("parallel-allocations");
    writeText(dir / "lattice.toml", latticeDeck(0.018, 1e7) + R"(
[output]
vtk = { every = 10 }
checkpoint = { every = 10, keep = 2 }
)");
    const std::string decks = std::string(DEM_SOURCE_DIR) + "/decks/";
    const std::vector<std::string> two = {"--quiet", "--threads", "2", "--progress", "never"};
    const std::vector<std::vector<std::string>> runs = {
        {"run", decks + "quickstart.toml", "--out", "quickstart"},
        {"run", decks + "deposition.toml", "--out", "deposition"},
        {"run", decks + "plate-push.toml", "--out", "plate-push"},
        {"run", "lattice.toml", "--out", "lattice"},
        {"run", "--restart", "lattice/checkpoints/step-000000020.dem.gz", "--out", "again"},
        {"run", decks + "bench/shear-cell.toml", "--set", "count=4000", "--out", "shear"}};
    const fs::path count = dir / "count.txt";
    const ChildEnvironment env({"DEM_COUNT_PARALLEL_ALLOCATIONS=" + count.string()}, {"DEM_"});
    for (const std::vector<std::string>& args : runs) {
        INFO(fmt::format("dem {}", fmt::join(args, " ")));
        fs::remove(count);
        const pid_t pid = spawnProgram(DEM_FAILING_BINARY, args + two, dir, dir / "out.txt",
                                       dir / "err.txt", env.get());
        REQUIRE(waitExitCode(pid) == ExitOk);
        REQUIRE(fs::exists(count));
        CHECK(std::stol(slurp(count)) == 0);
    }
    const auto summary = nlohmann::json::parse(slurp(dir / "lattice" / "summary.json"));
    CHECK(summary["particles"].get<size_t>() * 3 * sizeof(double) > 2 * (size_t(1) << 16));
}

TEST_CASE("a run out of memory at any allocation ends with status 1 or records what was lost",
          "[failing-allocations]") {
    const auto dir = scratchDir("failing-run");
    writeText(dir / "lattice.toml", runDeckText());
    const CommandResult last = failEachAllocationOf(
        std::vector<std::string>{"run", "lattice.toml", "--out", "run"} + runOptions, dir,
        [&](const CommandResult& r, const std::string& failure) {
            checkRunOutOfMemory(r, failure, dir / "run");
            fs::remove_all(dir / "run");
        });
    CHECK(last.code == ExitOk);
    CHECK(nlohmann::json::parse(slurp(dir / "run" / "summary.json"))["status"] == "completed");
}

TEST_CASE("a restart out of memory at any allocation ends with status 1 or records what was lost",
          "[failing-allocations]") {
    const auto dir = scratchDir("failing-restart");
    writeText(dir / "lattice.toml", runDeckText());
    REQUIRE(runDem("run lattice.toml --out base --quiet", dir).code == ExitOk);
    const CommandResult last = failEachAllocationOf(
        std::vector<std::string>{"run", "--restart", "base/checkpoints/step-000000020.dem.gz",
                                 "--out", "again"} +
            runOptions,
        dir, [&](const CommandResult& r, const std::string& failure) {
            checkRunOutOfMemory(r, failure, dir / "again");
            fs::remove_all(dir / "again");
        });
    CHECK(last.code == ExitOk);
}

// A run whose second stage throws the spheres beyond the neighbour grid's reach (the deck has no
// domain) at step 31 saves the state before the failure, replayed from its checkpoint at step 20:
// running out of memory on the way, in the replay too, is said beside the failure.
TEST_CASE("a failing run out of memory at any allocation ends with status 1 and says so",
          "[failing-allocations]") {
    const auto dir = scratchDir("failing-failure");
    writeText(dir / "blow.toml", latticeDeck(0.1, 1e7) + R"(
[[group]]
name = "all"
region = { box = { min = [-1, -1, -1], max = [1, 1, 1] } }

[[stage]]
name = "blow"
force = [{ group = "all", force = [0, 0, 1e308] }]
stop = { steps = 10 }

[output]
checkpoint = { every = 20 }
)");
    const std::vector<std::string> args =
        std::vector<std::string>{"run", "blow.toml", "--out", "run"} + runOptions;
    const CommandResult last =
        failEachAllocationOf(args, dir, [&](const CommandResult& r, const std::string& failure) {
            checkOutOfMemory(r, failure);
            CHECK(r.code != ExitOk); // the run fails in any case
            if (fs::exists(dir / "run" / "summary.json"))
                CHECK(!nlohmann::json::parse(slurp(dir / "run" / "summary.json"), nullptr, false)
                           .is_discarded());
            fs::remove_all(dir / "run");
        });
    CHECK(last.code == ExitFailed);
    CHECK(has(last.err, "too far from the origin at step 31"));
    CHECK(has(slurp(dir / "run" / "log.txt"),
              "replayed from 'run/checkpoints/step-000000020.dem.gz'"));
}

TEST_CASE("commands that check a deck or describe or draw a run end with status 1 out of memory",
          "[failing-allocations]") {
    const auto dir = scratchDir("failing-commands");
    writeText(dir / "lattice.toml", runDeckText() + R"(
[[output.plot]]
name = "energy"
x = "time"
y = ["kinetic_energy"]
)");
    REQUIRE(runDem("run lattice.toml --out base --quiet", dir).code == ExitOk);
    fs::remove(dir / "base" / "plots" / "energy.png"); // for `dem plot` to draw again
    std::vector<std::vector<std::string>> commands{
        {"check", "lattice.toml"},
        {"info", "base/checkpoints/step-000000020.dem.gz"},
        {"info", "base"}};
    if (findGnuplot().empty())
        WARN("SKIPPED plot and snapshot: gnuplot is not installed (apt-get install gnuplot-nox)");
    else
        commands.insert(commands.end(),
                        {{"plot", "base"}, {"snapshot", "base", "--png", "snapshot.png"}});
    for (const std::vector<std::string>& command : commands) {
        INFO(command[0] << " " << command[1]);
        CHECK(failEachAllocationOf(command, dir, checkOutOfMemory).code == ExitOk);
    }
    if (!findGnuplot().empty()) {
        CHECK(fs::exists(dir / "base" / "plots" / "energy.png"));
        CHECK(fs::exists(dir / "snapshot.png"));
    }
}

// The batch's own allocations fail in turn (its jobs, the same program, inherit no failure:
// failing_dem.cpp). A batch out of memory ends with status 1 and says so, with batch.json whole
// and its jobs stopped first (a job's summary no longer says running); --resume then finishes it.
TEST_CASE("a batch out of memory at any allocation ends with status 1 and can be resumed",
          "[failing-allocations]") {
    const auto dir = scratchDir("failing-batch");
    fs::copy_file(fs::path(DEM_SOURCE_DIR) / "tests" / "batch" / "drop.toml", dir / "drop.toml");
    writeText(dir / "one.table", "description  friction\nonly         20\n");
    const std::vector<std::string> args{"batch",  "one.table", "drop.toml", "--out",
                                        "runs/b", "-j",        "1",         "--quiet"};
    const fs::path batch = dir / "runs" / "b";
    int attempts = 0;
    const CommandResult last =
        failEachAllocationOf(args, dir, [&](const CommandResult& r, const std::string& failure) {
            checkOutOfMemory(r, failure);
            CHECK(r.code == ExitFailed);
            if (fs::exists(batch / "batch.json"))
                CHECK(!nlohmann::json::parse(slurp(batch / "batch.json"), nullptr, false)
                           .is_discarded());
            if (fs::exists(batch / "only" / "summary.json"))
                CHECK(nlohmann::json::parse(slurp(batch / "only" / "summary.json"), nullptr, false)
                          .value("status", "") != "running");
            // Now and then, what a user would do next: the batch resumed with memory enough.
            if (++attempts % 40 == 0) {
                const CommandResult resumed =
                    runDem("batch one.table drop.toml --out runs/b -j 1 --quiet --resume", dir);
                CHECK(resumed.code == ExitOk);
                const auto summary =
                    nlohmann::json::parse(slurp(batch / "only" / "summary.json"), nullptr, false);
                CHECK(summary.value("status", "") == "completed");
            }
            fs::remove_all(dir / "runs");
        });
    CHECK(last.code == ExitOk);
    const auto report = nlohmann::json::parse(slurp(batch / "batch.json"), nullptr, false);
    CHECK(report.value("status", "") == "completed");
}
