// Running out of memory ends dem with exit status 1 and a message, never an abort
// (app/OutOfMemory.hpp): in the probe's parallel region, and in whole runs under a memory limit.
#include "CommandRunner.hpp"
#include "app/OutOfMemory.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace demtest;
namespace fs = std::filesystem;

namespace {

// AddressSanitizer replaces operator new (no new-handler is called; a failed allocation is its own
// report) and reserves terabytes of address space at start, which no memory limit allows.
bool underAddressSanitizer() {
#if defined(__SANITIZE_ADDRESS__)
    WARN("SKIPPED: AddressSanitizer (DEM_SANITIZE) handles running out of memory itself");
    return true;
#else
    return false;
#endif
}

// About 30,000 spheres on a lattice in a box of facets, 30 steps: the spheres, the first neighbour
// lists and the steps each need some megabytes more.
const char* latticeDeck = R"(
[[material]]
name = "grain"
law = "hertz_mindlin"
density = 2300
young = 1e8
poisson = 0.3
friction_angle = 35
restitution = 0.5

[[facets]]
name = "box"
material = "grain"
box = { min = [-0.525, -0.525, -0.525], max = [0.525, 0.525, 0.525] }

[[spheres]]
kind = "hexagonal"
region = { sphere = { center = [0, 0, 0], radius = 0.5 } }
radius = 0.0114
gap = 0.0057
material = "grain"

[[stage]]
name = "fall"
gravity = [0, -9.81, 0]
stop = { steps = 30 }

[simulation]
dt = 1e-4
)";

} // namespace

TEST_CASE("out of memory in a parallel region ends the process with status 1", "[cli]") {
    if (underAddressSanitizer())
        return;
    const auto dir = scratchDir("oom-probe");
    const auto r = runDem("", dir, DEM_OOM_PROBE_BINARY);
    CHECK(r.code == 1);
    CHECK(r.out == "std::bad_alloc outside a parallel region\n");
    CHECK(r.err == dem::outOfMemoryInParallelMessage);
}

// Runs `dem ARGS` in `dir` under a limit on its address space that grows by a tenth from 8 MB
// until the command succeeds; checks that each run in between that got started ends with status
// 1 and says it ran out of memory, and hands its stderr to `stopped`. False if it never succeeded.
template <class Stopped>
bool underGrowingLimits(const fs::path& dir, const std::string& args, Stopped&& stopped) {
    for (double limit = 8000; limit < 4e6; limit *= 1.1) {
        const std::string kb = std::to_string(int64_t(limit));
        INFO("ulimit -v " << kb << "; dem " << args);
        const auto r = runDem("-c 'ulimit -v " + kb + " && exec \"$0\" " + args + "' '" +
                                  std::string(DEM_BINARY) + "'",
                              dir, "/bin/sh");
        INFO(r.err);
        if (r.code == 127 &&
            r.err.find("error while loading shared libraries") != std::string::npos)
            continue; // too little for the program to start: the dynamic loader's own exit
        REQUIRE((r.code == 0 || r.code == 1));
        if (r.code == 0)
            return true;
        // Too little for the stack of a second thread: the OpenMP runtime's own message and
        // exit status 1, at the first parallel loop.
        if (r.err.find("libgomp: Thread creation failed") != std::string::npos)
            continue;
        REQUIRE(r.err.find("out of memory") != std::string::npos);
        stopped(r.err);
    }
    return false;
}

// Some runs stop after they started: the summary then says so, or the parallel loops' message
// does.
TEST_CASE("a run under a memory limit too small ends with status 1 and says so", "[cli]") {
    if (underAddressSanitizer())
        return;
    const auto dir = scratchDir("oom-runs");
    writeText(dir / "lattice.toml", latticeDeck);
    int duringRun = 0;
    const bool completed = underGrowingLimits(
        dir, "run lattice.toml --out run --force --quiet --threads 2", [&](const std::string& err) {
            if (err == dem::outOfMemoryInParallelMessage) {
                ++duringRun;
            } else if (err.find("dem: error: out of memory after step ") != std::string::npos) {
                const auto summary = nlohmann::json::parse(slurp(dir / "run" / "summary.json"));
                CHECK(summary["status"] == "failed");
                CHECK(summary["error"].get<std::string>().starts_with("out of memory after step "));
                CHECK(!summary.contains("state_digest"));
                ++duringRun;
            } else {
                CHECK(err == "dem: error: out of memory\n");
            }
        });
    CHECK(completed);
    CHECK(duringRun > 0);
}

// Reading a checkpoint with too little memory is not a bad file (status 2): status 1.
TEST_CASE("reading a checkpoint under a memory limit too small ends with status 1", "[cli]") {
    if (underAddressSanitizer())
        return;
    const auto dir = scratchDir("oom-checkpoint");
    writeText(dir / "lattice.toml",
              std::string(latticeDeck) + "\n[output.checkpoint]\nat_end = true\n");
    REQUIRE(runDem("run lattice.toml --out run --quiet", dir).code == 0);
    int stopped = 0;
    const bool read = underGrowingLimits(dir, "info run/checkpoints/step-000000030.dem.gz",
                                         [&](const std::string& err) {
                                             CHECK(err == "dem: error: out of memory\n");
                                             ++stopped;
                                         });
    CHECK(read);
    CHECK(stopped > 0);
}
