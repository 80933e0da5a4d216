// Running out of memory ends dem with exit status 1 and a message, never an abort
// (app/OutOfMemory.hpp): in the probe's parallel region, and in whole runs under a memory limit.
// tests/alloc/test_failing_allocations.cpp fails each allocation in turn instead.
#include "CommandRunner.hpp"
#include "LatticeDeck.hpp"
#include "app/OutOfMemory.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace demtest;
namespace fs = std::filesystem;

namespace {

// AddressSanitizer replaces operator new (no new-handler is called; a failed allocation is its own
// report), and no limit on the address space lets it start (runUnderMemoryLimit).
bool skippedUnderAddressSanitizer() {
    if (underAddressSanitizer)
        WARN("SKIPPED: AddressSanitizer (DEM_SANITIZE) handles running out of memory itself");
    return underAddressSanitizer;
}

// About 30,000 spheres: the spheres, the first neighbour lists and the steps each need some
// megabytes more.
const std::string deck = latticeDeck(0.0114, 1e8);

// Runs `dem ARGS` in `dir` under a limit on its address space that grows by a tenth from 8 MB
// until the command succeeds; checks that each run in between that got started ends with status
// 1 and says it ran out of memory, and hands its stderr to `stopped`. False if it never succeeded.
template <class Stopped>
bool underGrowingLimits(const fs::path& dir, const std::string& args, Stopped&& stopped) {
    for (double limit = 8000; limit < 4e6; limit *= 1.1) {
        INFO("ulimit -v " << int64_t(limit) << "; dem " << args);
        const auto r = runUnderMemoryLimit(DEM_BINARY, args, int64_t(limit), dir);
        INFO(r.err);
        // Too little for the program to start: the dynamic loader's own exit (whether it fails at
        // a library or at the main thread's TLS depends on where the limit falls).
        if (r.code == 127 && (has(r.err, "error while loading shared libraries") ||
                              has(r.err, "cannot allocate TLS data structures")))
            continue;
        REQUIRE((r.code == 0 || r.code == 1));
        if (r.code == 0)
            return true;
        // Too little for the OpenMP runtime's threads or its own data: its message ("Thread
        // creation failed", "Out of memory allocating") and exit status 1.
        if (has(r.err, "libgomp: "))
            continue;
        REQUIRE(has(r.err, "out of memory"));
        stopped(r.err);
    }
    return false;
}

} // namespace

TEST_CASE("out of memory in a parallel region ends the process with status 1", "[cli]") {
    if (skippedUnderAddressSanitizer())
        return;
    const auto dir = scratchDir("oom-probe");
    const auto r = runDem("", dir, DEM_OOM_PROBE_BINARY);
    CHECK(r.code == 1);
    CHECK(r.out == "std::bad_alloc outside a parallel region\n");
    CHECK(r.err == dem::outOfMemoryInParallelMessage);
}

// Some runs stop after they started (in a step, a VTK output or the checkpoint at the end): the
// summary then says so (for the checkpoint, that it was not written), or the parallel loops'
// message does.
TEST_CASE("a run under a memory limit too small ends with status 1 and says so", "[cli]") {
    if (skippedUnderAddressSanitizer())
        return;
    const auto dir = scratchDir("oom-runs");
    writeText(dir / "lattice.toml", deck + "\n[output]\nvtk = { every = 15 }\n"
                                           "\n[output.checkpoint]\nat_end = true\n");
    int duringRun = 0;
    const bool completed = underGrowingLimits(
        dir, "run lattice.toml --out run --force --quiet --threads 2", [&](const std::string& err) {
            if (has(err, dem::outOfMemoryInParallelMessage) || has(err, dem::outOfMemoryMessage)) {
                ++duringRun;
                return;
            }
            if (!has(err, "out of memory after step ") && !has(err, "checkpoint not written")) {
                CHECK(has(err, "dem: error: out of memory\n")); // before the run's directory
                return;
            }
            const auto summary = nlohmann::json::parse(slurp(dir / "run" / "summary.json"));
            const std::string error = summary["error"];
            if (has(err, "checkpoint not written")) { // the run went on to its end
                CHECK(summary["status"] == "completed");
                CHECK(error.starts_with("checkpoint not written: "));
                CHECK(has(error, "(out of memory)"));
            } else {
                CHECK(summary["status"] == "failed");
                CHECK(error.starts_with("out of memory after step "));
                CHECK(!summary.contains("state_digest"));
            }
            ++duringRun;
        });
    CHECK(completed);
    CHECK(duringRun > 0);
}

// Reading a checkpoint with too little memory is not a bad file (status 2): status 1.
TEST_CASE("reading a checkpoint under a memory limit too small ends with status 1", "[cli]") {
    if (skippedUnderAddressSanitizer())
        return;
    const auto dir = scratchDir("oom-checkpoint");
    writeText(dir / "lattice.toml", deck + "\n[output.checkpoint]\nat_end = true\n");
    REQUIRE(runDem("run lattice.toml --out run --quiet", dir).code == 0);
    int stopped = 0;
    const bool read = underGrowingLimits(dir, "info run/checkpoints/step-000000030.dem.gz",
                                         [&](const std::string& err) {
                                             CHECK((has(err, "dem: error: out of memory\n") ||
                                                    has(err, dem::outOfMemoryInParallelMessage) ||
                                                    has(err, dem::outOfMemoryMessage)));
                                             ++stopped;
                                         });
    CHECK(read);
    CHECK(stopped > 0);
}
