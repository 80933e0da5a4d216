// tools/peers/dense_export.py decodes dem's checkpoint format by hand (man/dem-checkpoint.5) to
// give the peers of the dense benchmark the packing dem settled. This checks that it still reads
// what the current code writes: a change of the format that leaves the exporter behind fails here,
// not silently in a benchmark.
#include "CommandRunner.hpp"
#include "DeterminismScene.hpp"
#include "io/Checkpoint.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sched.h>
#include <set>
#include <sstream>

using namespace dem;
using namespace dem::test;

namespace {

// The scripts run under Debian's interpreter (its modules import only there): without it a test
// says it skipped, and why, and passes.
bool python3Missing(const char* purpose) {
    if (std::filesystem::exists("/usr/bin/python3"))
        return false;
    WARN("SKIPPED: no /usr/bin/python3 " << purpose);
    return true;
}

// tools/bench with these arguments, run from `dir` under Debian's interpreter.
demtest::CommandResult runBench(const std::string& arguments, const std::filesystem::path& dir) {
    return demtest::runDem("'" DEM_SOURCE_DIR "/tools/bench' " + arguments, dir,
                           "/usr/bin/python3");
}

// A small shear-cell.toml: a few hundred spheres in a periodic cube, sheared for 20 steps, with
// `materialExtra` (keys of [[material]]) added to its material.
std::string shearCellDeck(const std::string& materialExtra = "") {
    return R"deck([params]
count = 300
L = "(count*4.57e-9/0.3)^(1/3)"
rate = 10

[simulation]
dt_factor = 0.3

[periodic]
size = ["L", "L", "L"]

[[material]]
name = "grain"
law = "hertz_mindlin"
density = 2600
young = 1e8
poisson = 0.3
friction_angle = 20
restitution = 0.3
)deck" + materialExtra +
           R"deck(
[[spheres]]
kind = "random"
material = "grain"
region = { box = { min = [0, 0, 0], max = ["L", "L", "L"] } }
radius = 0.001
spread = 0.3
count = "count"
seed = 5

[[stage]]
name = "shear"
damping = 0.2
velocity_gradient = [[0, "rate", 0], [0, 0, 0], [0, 0, 0]]
stop = { steps = 20 }

[output]
checkpoint = { at_stage_end = true, keep = 0 }
)deck";
}

} // namespace

TEST_CASE("the dense-scene exporter reads the checkpoints dem writes", "[bench][checkpoint]") {
    if (python3Missing("to run tools/peers/dense_export.py"))
        return;
    Simulation sim = densePacking(4, 3, 4); // six walls, Hertz-Mindlin, gravity, damping
    Workspace ws;
    REQUIRE(run(sim, ws, 50));
    const auto dir = demtest::scratchDir("dense-export");
    const std::string checkpoint = (dir / "settled.dem.gz").string();
    std::string error;
    REQUIRE(writeCheckpoint(checkpoint, sim, CheckpointMeta{}, 1, error));
    const std::string cmd = "/usr/bin/python3 '" DEM_SOURCE_DIR "/tools/peers/dense_export.py' '" +
                            checkpoint + "' '" + (dir / "packing").string() + "' > /dev/null";
    REQUIRE(std::system(cmd.c_str()) == 0);

    const nlohmann::json j = nlohmann::json::parse(demtest::slurp(dir / "packing.json"));
    CHECK(j["dt"].get<double>() == sim.dt);
    CHECK(j["skin"].get<double>() == sim.neighbours.skin);
    CHECK(j["damping"].get<double>() == sim.damping);
    CHECK(j["walls"].size() == sim.obstacles.walls.size());
    const Particles& P = sim.particles;
    REQUIRE(j["spheres"].size() == P.size());
    // Each entry: x y z r vx vy vz wx wy wz, in the order of the spheres' ids, printed exactly.
    std::vector<size_t> byId(P.size());
    for (size_t p = 0; p < P.size(); ++p)
        byId[P.id[p]] = p; // densePacking numbers its spheres 0..n-1
    for (size_t k = 0; k < P.size(); ++k) {
        const auto& s = j["spheres"][k];
        const size_t p = byId[k];
        for (int a = 0; a < 3; ++a) {
            CHECK(s[a].get<double>() == P.pos[p][a]);
            CHECK(s[4 + a].get<double>() == P.vel[p][a]);
            CHECK(s[7 + a].get<double>() == P.angVel[p][a]);
        }
        CHECK(s[3].get<double>() == P.radius[p]);
    }
}

// The peers' scenes have no rolling resistance: a packing that has it is refused, not exported
// as if it had none.
TEST_CASE("the dense-scene exporter refuses rolling resistance", "[bench][checkpoint][rolling]") {
    if (python3Missing("to run tools/peers/dense_export.py"))
        return;
    const Simulation sim = densePacking(4, 3, 4, false, true);
    const auto dir = demtest::scratchDir("dense-export-rolling");
    const std::string checkpoint = (dir / "settled.dem.gz").string();
    std::string error;
    REQUIRE(writeCheckpoint(checkpoint, sim, CheckpointMeta{}, 1, error));
    const demtest::CommandResult r =
        demtest::runDem("'" DEM_SOURCE_DIR "/tools/peers/dense_export.py' '" + checkpoint + "' '" +
                            (dir / "packing").string() + "'",
                        dir, "/usr/bin/python3");
    CHECK(r.code == 1);
    CHECK(r.err.find("rolling or twisting resistance is not exported") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir / "packing.json"));
}

// tools/peers/shear_export.py does the same for the shear scene: a periodic cell (format version
// 3's CELL section), exported for yade_shear.py and LIGGGHTS. The deck (shearCellDeck) is sheared
// for a few steps, so that the cell is tilted and a few spheres may have left it since the lists
// were built.
TEST_CASE("the shear-scene exporter reads the periodic checkpoints dem writes",
          "[bench][checkpoint]") {
    if (python3Missing("to run tools/peers/shear_export.py"))
        return;
    const auto dir = demtest::scratchDir("shear-export");
    demtest::writeText(dir / "cell.toml", shearCellDeck());
    REQUIRE(demtest::runDem("run cell.toml --quiet --threads 1 --out run", dir).code == 0);
    const auto checkpoint = dir / "run" / "checkpoints" / "step-000000020.stage1.dem.gz";
    REQUIRE(std::filesystem::exists(checkpoint));
    Simulation sim;
    CheckpointMeta meta;
    std::string error;
    REQUIRE(readCheckpoint(checkpoint.string(), sim, meta, error));
    REQUIRE(sim.cell.enabled);
    const std::string script = "/usr/bin/python3 '" DEM_SOURCE_DIR "/tools/peers/shear_export.py' ";
    const auto prefix = dir / "packing";
    REQUIRE(
        std::system((script + "'" + checkpoint.string() + "' '" + prefix.string() + "' > /dev/null")
                        .c_str()) == 0);

    const nlohmann::json j = nlohmann::json::parse(demtest::slurp(dir / "packing.json"));
    const Particles& P = sim.particles;
    CHECK(P.size() == 300);
    REQUIRE(j["spheres"].size() == P.size());
    CHECK(j["dt"].get<double>() == sim.dt);
    CHECK(j["skin"].get<double>() == sim.neighbours.skin);
    CHECK(j["damping"].get<double>() == sim.damping);
    // h and L row by row, exactly; the cell has been sheared: h(0,1) = 20 dt rate L.
    const Mat3& h = sim.cell.h;
    const Mat3& L = sim.cell.velGrad;
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) {
            CHECK(j["cell"]["h"][r][c].get<double>() == h(r, c));
            CHECK(j["cell"]["vel_grad"][r][c].get<double>() == L(r, c));
        }
    CHECK(L(0, 1) == 10);
    CHECK(h(0, 1) == Approx(20 * sim.dt * 10 * h(1, 1)).epsilon(1e-9));
    // Each entry: x y z r vx vy vz wx wy wz in the order of the spheres' ids, the position relative
    // to the corner and wrapped into the cell, the velocity that of the image taken: relative to
    // the mean flow L (x - origin) it is dem's.
    std::vector<size_t> byId(P.size());
    for (size_t p = 0; p < P.size(); ++p)
        byId[P.id[p]] = p; // the deck's spheres are numbered 0..n-1
    const Mat3 hInv = h.inverse();
    for (size_t k = 0; k < P.size(); ++k) {
        const auto& s = j["spheres"][k];
        const size_t p = byId[k];
        const Vec3 x(s[0].get<double>(), s[1].get<double>(), s[2].get<double>());
        const Vec3 v(s[4].get<double>(), s[5].get<double>(), s[6].get<double>());
        const Vec3 inCell = hInv * x;
        CHECK(inCell.minCoeff() >= 0);
        CHECK(inCell.maxCoeff() < 1);
        const Vec3 shift = hInv * ((P.pos[p] - sim.cell.origin) - x); // the image index c
        const Vec3 fluct = v - L * x, demFluct = P.vel[p] - L * (P.pos[p] - sim.cell.origin);
        for (int a = 0; a < 3; ++a) {
            CHECK(std::abs(shift[a] - std::round(shift[a])) < 1e-9); // moved by whole edges only
            CHECK(fluct[a] == Approx(demFluct[a]).margin(1e-12));
            CHECK(s[7 + a].get<double>() == P.angVel[p][a]);
        }
        CHECK(s[3].get<double>() == P.radius[p]);
    }
    // The LIGGGHTS files: a triclinic box with the xy tilt h(0,1), and the rate.
    std::istringstream data(demtest::slurp(dir / "packing.data"));
    std::string line;
    double xy = 0;
    while (std::getline(data, line))
        if (line.find("xy xz yz") != std::string::npos)
            xy = std::stod(line);
    CHECK(xy == h(0, 1));
    CHECK(demtest::slurp(dir / "packing.vars").find("-var rate 10") != std::string::npos);

    // A sphere out of the cell (dem wraps at rebuilds only) is wrapped back with the velocity of
    // its image: moved here by +b (one cell along y, where the image moves faster by L b) and
    // another by -a - c, the export gives them back their place and velocity in the cell.
    const std::pair<size_t, Vec3> moves[] = {{byId[0], Vec3(0, 1, 0)}, {byId[1], Vec3(-1, 0, -1)}};
    std::vector<std::pair<Vec3, Vec3>> before;
    for (const auto& [p, c] : moves) {
        before.emplace_back(sim.particles.pos[p] - sim.cell.origin, sim.particles.vel[p]);
        sim.particles.pos[p] += h * c;
        sim.particles.vel[p] += L * h * c;
    }
    const auto moved = dir / "moved.dem.gz";
    REQUIRE(writeCheckpoint(moved.string(), sim, meta, 1, error));
    REQUIRE(std::system(
                (script + "'" + moved.string() + "' '" + (dir / "moved").string() + "' > /dev/null")
                    .c_str()) == 0);
    const nlohmann::json jm = nlohmann::json::parse(demtest::slurp(dir / "moved.json"));
    for (size_t k = 0; k < 2; ++k) {
        const auto& s = jm["spheres"][k];
        for (int a = 0; a < 3; ++a) {
            CHECK(s[a].get<double>() == Approx(before[k].first[a]).margin(1e-15));
            CHECK(s[4 + a].get<double>() == Approx(before[k].second[a]).margin(1e-14));
        }
    }

    // --state: the touching pairs of the checkpoint, per sphere.
    const size_t touching = sim.pairs.touchingCount();
    REQUIRE(std::system((script + "--state '" + checkpoint.string() + "' > '" +
                         (dir / "state.txt").string() + "'")
                            .c_str()) == 0);
    CHECK(demtest::slurp(dir / "state.txt")
              .find(fmt::format("STATE N=300 step=20 contacts_per_particle={:.4f} ",
                                2.0 * double(touching) / 300)) != std::string::npos);
}

// Python that loads tools/bench (a script without the .py suffix) as the module `bench`.
constexpr const char* loadBench = R"(
import importlib.machinery, importlib.util
loader = importlib.machinery.SourceFileLoader("bench", ")" DEM_SOURCE_DIR R"(/tools/bench")
spec = importlib.util.spec_from_loader("bench", loader)
bench = importlib.util.module_from_spec(spec)
loader.exec_module(bench)
)";

// tools/bench --repeat reports each code's median run of a row: the middle one by particle-steps/s
// over steps 1000-3000 (the lower middle one for an even count), with every run's figures, and
// leaves out runs that failed (None).
TEST_CASE("tools/bench picks the median run of a row", "[bench]") {
    if (python3Missing("to load tools/bench"))
        return;
    const auto dir = demtest::scratchDir("bench-median");
    const std::string script = std::string(loadBench) + R"(
run = lambda a, b, tag: {"ps_1000_3000": a, "ps_last_300": b, "tag": tag}
three = bench.median_run([run(3, 30, "a"), run(1, 10, "b"), None, run(2, 20, "c")])
assert three["tag"] == "c", three
assert three["runs_ps_1000_3000"] == [3, 1, 2] and three["runs_ps_last_300"] == [30, 10, 20]
assert bench.median_run([run(5, 1, "x"), run(4, 1, "y")])["tag"] == "y"
one = bench.median_run([run(7, 1, "z")])
assert one["tag"] == "z" and "runs_ps_1000_3000" not in one
assert bench.median_run([None, None]) is None
# The machine's speed around each run goes with the runs' figures, in the same order.
timed = [dict(run(3, 30, "a"), cpu_speed={"0": 7.0}, memory_bytes_per_second=6e10), run(1, 10, "b"),
         dict(run(2, 20, "c"), cpu_speed={"0": 4.0}, memory_bytes_per_second=4e10)]
assert bench.median_run(timed)["runs_cpu_speed"] == [{"0": 7.0}, None, {"0": 4.0}]
assert bench.median_run(timed)["runs_memory_bytes_per_second"] == [6e10, None, 4e10]
assert "runs_cpu_speed" not in three
print("ok")
)";
    demtest::writeText(dir / "median.py", script);
    const std::string cmd = "/usr/bin/python3 '" + (dir / "median.py").string() + "'";
    CHECK(std::system(cmd.c_str()) == 0);
}

// The bandwidth bound's bytes per particle-step count the neighbour rebuilds at the rate of the
// timed stages alone (the warm-up and settling stages rebuild at other rates): a step's estimate
// (106 + 2 x 72 B per sphere, 20 B per listed pair, 240 per touching pair) plus the rebuilds per
// step times a rebuild's (640 B per sphere, 60 per listed pair, 280 per touching pair); the bound
// is those bytes over the stream bandwidth measured with the run's thread count.
TEST_CASE("tools/bench's bandwidth bound counts the timed stages' rebuilds", "[bench]") {
    if (python3Missing("to load tools/bench"))
        return;
    const auto dir = demtest::scratchDir("bench-bound");
    demtest::writeText(dir / "log.txt", "");
    const std::string script = std::string(loadBench) + R"(
import sys
stage = lambda name, rebuilds, end: {"name": name, "neighbour_rebuilds": rebuilds,
                                     "end_step": end, "wall_seconds": 1.0, "phase_seconds": {}}
summary = {"particles": 1000, "listed_pairs": 4000, "obstacle_candidates": 0,
           "final": {"coordination_number": 1.0}, "max_rss_bytes": 1}
step = 106 + 2 * 72 + 20 * 4 + 240 * 0.5
rebuild = 640 + 60 * 4 + 280 * 0.5
# The falling ball: steps 1000-3000 in two stages.
summary["stages"] = [stage("warm-up", 500, 1000), stage("timed", 150, 2700), stage("last-300", 50, 3000)]
f = bench.figures(summary, sys.argv[1])
assert abs(f["rebuilds_per_step"] - 0.1) < 1e-12, f
assert abs(f["bytes_per_particle_step"] - (step + 0.1 * rebuild)) < 1e-9, f
# The dense box and the shear cell: the stage "timed" after a settling one.
summary["stages"] = [stage("settle", 900, 30000), stage("timed", 20, 31000)]
f = bench.figures(summary, sys.argv[1], ("timed",))
assert abs(f["rebuilds_per_step"] - 0.02) < 1e-12, f
assert abs(f["bytes_per_particle_step"] - (step + 0.02 * rebuild)) < 1e-9, f
# The bound: those bytes over the stream bandwidth of the run's thread count, when measured.
f["threads"] = 2
bench.add_bound(f, {1: 1e10, 2: 2e10})
assert abs(f["bound_ns"] - 1e9 * f["bytes_per_particle_step"] / 2e10) < 1e-9, f
del f["bound_ns"]
bench.add_bound(f, {1: 1e10, 2: None})
assert "bound_ns" not in f, f
print("ok")
)";
    demtest::writeText(dir / "bound.py", script);
    const std::string cmd =
        "/usr/bin/python3 '" + (dir / "bound.py").string() + "' '" + dir.string() + "'";
    CHECK(std::system(cmd.c_str()) == 0);
}

// LIGGGHTS's figures as tools/bench reads them from its output: the "Loop time" and the time
// breakdown of the runs after the MARK_TIMED_ lines only (the warm-up run before them is not
// timed), summed over those runs, as dem's phases per particle-step (Neigh, Pair, the rest); a
// peer's marginal memory from its row at a smaller size; Yade's phases, as its scripts print them
// from its engines' times; and a peer's exit status, output and peak memory.
TEST_CASE("tools/bench reads the peers' phases and memory", "[bench]") {
    if (python3Missing("to load tools/bench"))
        return;
    const auto dir = demtest::scratchDir("bench-liggghts");
    const std::string script = std::string(loadBench) + R"(
def run(steps, loop, pair, neigh, comm, other):
    return (f"Loop time of {loop} on 1 procs for {steps} steps with 1000 atoms, finish time x\n\n\n"
            f"Pair  time (%) = {pair} (50)\nNeigh time (%) = {neigh} (10)\n"
            f"Comm  time (%) = {comm} (1)\nOutpt time (%) = 0 (0)\nOther time (%) = {other} (39)\n")
out = ("1000 1000 1.5 0.2 1.25\n" + run(1000, 9.0, 5.0, 1.0, 0.0, 3.0) + "MARK_TIMED_A\n" +
       run(1700, 2.0, 1.0, 0.25, 0.125, 0.625) + "MARK_TIMED_B\n" + run(300, 0.5, 0.25, 0.125, 0, 0.125) +
       "3000 1000 1.5 0.2 1.75\n")
loops, sections, atoms, cpp = bench.liggghts_output(out)
assert loops == {"A": 2.0, "B": 0.5}, loops
assert sections == {"Pair": 1.25, "Neigh": 0.375, "Comm": 0.125, "Outpt": 0.0, "Other": 0.75}, sections
assert atoms == 1000 and cpp == 1.75, (atoms, cpp)
phases = bench.liggghts_phases(sections, 1000 * 2000)
assert phases == {"neighbours": 187.5, "contacts": 625.0, "integration": 437.5}, phases
assert bench.liggghts_phases({"Other": 1.0}, 1000) is None
# Marginal memory: from the first size's row with as many ranks, when it is smaller and both
# have a peak.
small = {"particles": 10000, "max_rss_bytes": 20e6}
big = {"particles": 110000, "max_rss_bytes": 95e6}
bench.add_marginal_memory(big, small)
assert big["bytes_per_particle"] == 750.0, big
bench.add_marginal_memory(small, small)
assert "bytes_per_particle" not in small, small
several = {"particles": 110000}
bench.add_marginal_memory(several, small)
assert "bytes_per_particle" not in several, several
bench.add_marginal_memory(None, small)
# Yade's phases: the PHASES line yade_packing prints from its engines' times (a collider, an
# interaction loop, the rest; nanoseconds since `before`), read back as tools/bench reads it.
import contextlib, io, sys
sys.path.insert(0, ")" DEM_SOURCE_DIR R"(/tools/peers")
import yade_packing
engine = lambda name, t: type(name, (), {"execTime": t})()
class Sim: engines = [engine("ForceResetter", 10), engine("InsertionSortCollider", 1000),
                      engine("InteractionLoop", 5000), engine("NewtonIntegrator", 3000)]
before = yade_packing.engine_times(Sim)
for e, extra in zip(Sim.engines, [90, 1000, 45000, 13910]):
    e.execTime += extra
printed = io.StringIO()
with contextlib.redirect_stdout(printed):
    yade_packing.print_phases(Sim, before, 10, 100)
assert bench.yade_phases("RESULT x\n" + printed.getvalue()) == \
    {"neighbours": 1.0, "contacts": 45.0, "integration": 14.0}, printed.getvalue()
assert bench.yade_phases("PHASES neighbours_ns=nan contacts_ns=1 integration_ns=1\n") is None
assert bench.yade_phases("RESULT x\n") is None
rc, o, e, rss = bench.run_peer(["/bin/sh", "-c", "echo out; echo err >&2; exit 3"], ".")
assert (rc, o, e) == (3, "out\n", "err\n"), (rc, o, e)
assert rss > 0, rss
print("ok")
)";
    demtest::writeText(dir / "liggghts.py", script);
    const std::string cmd = "/usr/bin/python3 '" + (dir / "liggghts.py").string() + "'";
    CHECK(std::system(cmd.c_str()) == 0);
}

// tools/bench --from-json writes the README's table from the results of an earlier run: dem's rows
// with their phases and bound, each peer's row with the ratio of the medians (steps 1000-3000 /
// the last 300 on the falling ball, the timed steps alone on the dense packing) and, when it has
// them, its phases and time per particle-step (no bound), rows without particle-steps (the
// output-cost run) left out.
TEST_CASE("tools/bench writes the README's table from a results file", "[bench]") {
    if (python3Missing("to run tools/bench"))
        return;
    const auto dir = demtest::scratchDir("bench-markdown");
    demtest::writeText(dir / "results.json", R"json({"machine": "test", "cores": 2,
  "commit": "abc1234", "stream_bytes_per_second": {"1": 3e10}, "results": [
  {"code": "dem", "scene": "hertz", "particles": 10005, "threads": 1, "ps_1000_3000": 2e7,
   "ps_last_300": 1.2e7, "runs_ps_1000_3000": [1.8e7, 2e7, 2.1e7], "contacts_per_particle": 1.6239,
   "phase_ns": {"neighbours": 10.4, "contacts": 20.6, "integration": 30.2}, "bound_ns": 12.3},
  {"code": "LIGGGHTS", "scene": "hertz", "particles": 10009, "threads": 1, "ps_1000_3000": 1e7,
   "ps_last_300": 8e6, "runs_ps_1000_3000": [9e6, 1e7, 1.1e7], "contacts_per_particle": 1.79,
   "phase_ns": {"neighbours": 12.4, "contacts": 66.6, "integration": 24.2}},
  {"code": "dem", "scene": "dense", "particles": 50000, "threads": 2, "ps_1000_3000": 1.5e7,
   "ps_last_300": 1.5e7, "contacts_per_particle": 4.24,
   "phase_ns": {"neighbours": 1, "contacts": 34, "integration": 25}},
  {"code": "LIGGGHTS", "scene": "dense", "particles": 50000, "threads": 2, "ps_1000_3000": 1e7,
   "ps_last_300": 1e7, "contacts_per_particle": 4.16},
  {"code": "dem", "scene": "hertz-vtk", "particles": 105549, "vtk_seconds": 1.0}]})json");
    const auto result = runBench("--from-json results.json --markdown table.md", dir);
    REQUIRE(result.code == 0);
    std::vector<std::string> lines;
    std::istringstream table(demtest::slurp(dir / "table.md"));
    for (std::string line; std::getline(table, line);)
        lines.push_back(line);
    REQUIRE(lines.size() == 6); // header, rule, four rows
    CHECK(lines[0].find("| range of 3 |") != std::string::npos);
    CHECK(lines[2] == "| dem | hertz | 10,005 | 1 | 2.00e7 | 1.80e7–2.10e7 | 1.20e7 | 1.62 |  | "
                      "10 / 21 / 30 | 50, 12 |");
    CHECK(lines[3] == "| LIGGGHTS | hertz | 10,009 | 1 rank | 1.00e7 | 9.00e6–1.10e7 | 8.00e6 | "
                      "1.79 | 2.00 / 1.50 | 12 / 67 / 24 | 100 |");
    CHECK(lines[4] == "| dem | dense | 50,000 | 2 | 1.50e7 | 1.50e7–1.50e7 |  | 4.24 |  | "
                      "1 / 34 / 25 | 67 |");
    CHECK(lines[5] == "| LIGGGHTS | dense | 50,000 | 2 ranks | 1.00e7 | 1.00e7–1.00e7 |  | 4.16 | "
                      "1.50 |  |  |");

    // Not a results file: a message saying so, and a failing exit status.
    demtest::writeText(dir / "other.json", R"json({"jobs": []})json");
    const auto wrong = runBench("--from-json other.json --markdown -", dir);
    CHECK(wrong.code != 0);
    CHECK(wrong.err.find("not the results of tools/bench --json") != std::string::npos);
    // A table it cannot write: a message naming the file, and a failing exit status.
    const auto unwritable =
        runBench("--from-json results.json --markdown no-such-dir/table.md", dir);
    CHECK(unwritable.code != 0);
    CHECK(unwritable.err.find("cannot write the table to no-such-dir/table.md") !=
          std::string::npos);
    // A run whose results file it could not write is refused before it builds or runs anything
    // (--sizes names no size it knows: had it run, it would have failed otherwise).
    const auto early = runBench("--json no-such-dir/r.json --no-build --sizes none", dir);
    CHECK(early.code != 0);
    CHECK(early.err.find("cannot write the results to no-such-dir/r.json: no directory "
                         "no-such-dir") != std::string::npos);
}

// dem-stream --machine-speed measures each CPU the process may run on, one line each, in adds per
// ns (at least one add per ns on any CPU of this century, a few at 3 GHz and more), then the memory
// bandwidth (at least 1 GB/s), and an unknown argument is refused with its usage.
TEST_CASE("dem-stream probes the speed of each CPU and of the memory", "[bench]") {
    const auto dir = demtest::scratchDir("stream-machine-speed");
    const auto probe = demtest::runDem("--machine-speed", dir, DEM_STREAM_BINARY);
    REQUIRE(probe.code == 0);
    std::istringstream lines(probe.out);
    std::set<int> cpus;
    double memory = 0;
    for (std::string line; std::getline(lines, line);) {
        if (std::sscanf(line.c_str(), "memory_bytes_per_second %lf", &memory) == 1)
            continue;
        int cpu = -1;
        double speed = 0;
        REQUIRE(std::sscanf(line.c_str(), "cpu_speed %d %lf", &cpu, &speed) == 2);
        CHECK(speed > 1.0);
        CHECK(speed < 100.0);
        cpus.insert(cpu);
    }
    cpu_set_t allowed;
    REQUIRE(sched_getaffinity(0, sizeof allowed, &allowed) == 0);
    CHECK(cpus.size() == size_t(CPU_COUNT(&allowed)));
    CHECK(memory > 1e9);
    const auto wrong = demtest::runDem("--speed", dir, DEM_STREAM_BINARY);
    CHECK(wrong.code == 2);
    CHECK(wrong.err.find("usage: dem-stream [--machine-speed]") != std::string::npos);
}

// Under a memory limit too small for its arrays (the bandwidth's three of 256 MiB, the probe's
// three of 32 MiB) dem-stream exits 1 with the reason, as tools/bench expects of a figure not
// measured; it aborted on the uncaught std::bad_alloc (exit 134). The program and its libraries
// start in under 10 MB of address space: 300 MB hold them and one array of 256 MiB, 60 MB one of
// 32 MiB.
TEST_CASE("dem-stream exits 1 when its arrays cannot be allocated", "[bench]") {
    if (demtest::underAddressSanitizer) {
        WARN("SKIPPED: a limit on the address space stops AddressSanitizer itself (DEM_SANITIZE)");
        return;
    }
    const auto dir = demtest::scratchDir("stream-no-memory");
    auto limited = [&](int64_t kilobytes, const std::string& args) {
        return demtest::runUnderMemoryLimit(DEM_STREAM_BINARY, args, kilobytes, dir);
    };
    const auto bandwidth = limited(300000, "");
    CHECK(bandwidth.code == 1);
    CHECK(bandwidth.out.empty());
    CHECK(bandwidth.err == "dem-stream: cannot allocate the triad's three arrays of 256 MiB\n");
    const auto probe = limited(60000, "--machine-speed");
    CHECK(probe.code == 1);
    CHECK(probe.out.find("memory_bytes_per_second") == std::string::npos);
    CHECK(probe.err == "dem-stream: cannot allocate the triad's three arrays of 32 MiB\n");
}

// Each run is bracketed by a probe of every CPU's speed: the table is followed by the runs with a
// CPU probed below 85% of the fastest probe of the bench (the lower of the two probes around the
// run counts), each with its particle-steps/s and the slow CPUs' share of that speed.
TEST_CASE("tools/bench lists the runs with a CPU probed slow", "[bench]") {
    if (python3Missing("to run tools/bench"))
        return;
    const auto dir = demtest::scratchDir("bench-slow-cpu");
    demtest::writeText(dir / "results.json", R"json({"machine": "test", "cores": 2,
  "commit": "abc1234", "stream_bytes_per_second": {"1": 3e10}, "results": [
  {"code": "dem", "scene": "visc", "particles": 105549, "threads": 2, "ps_1000_3000": 2e7,
   "ps_last_300": 1e7, "runs_ps_1000_3000": [2.4e7, 1.9e7, 2e7], "contacts_per_particle": 1.6,
   "runs_cpu_speed": [{"0": 8.0, "1": 7.9}, {"0": 5.2, "1": 7.0}, {"0": 6.9, "1": 6.7}]},
  {"code": "LIGGGHTS", "scene": "hertz", "particles": 10009, "threads": 2, "ps_1000_3000": 1e7,
   "ps_last_300": 8e6, "contacts_per_particle": 1.79, "cpu_speed": {"0": 6.7, "1": 6.0}}]})json");
    const auto result = runBench("--from-json results.json --markdown table.md", dir);
    REQUIRE(result.code == 0);
    // 8.0 adds/ns the fastest; 85% of it is 6.8: 5.2 (65%), 6.7 (84%) and 6.0 (75%) are slow.
    CHECK(
        demtest::slurp(dir / "table.md")
            .find("\nRuns with a CPU probed slow just before or just after them (below 85% of the "
                  "fastest probe, 8.00 adds/ns): dem visc 105,549 2 threads "
                  "1.90e7 (CPU 0 at 65%); dem visc 105,549 2 threads 2.00e7 (CPU 1 at 84%); "
                  "LIGGGHTS hertz 10,009 2 ranks 1.00e7 (CPU 0 at 84%, CPU 1 at 75%).\n") !=
        std::string::npos);

    // No run slow: the line says so; no run probed (results of an older tools/bench): no line.
    demtest::writeText(dir / "fast.json", R"json({"results": [
  {"code": "dem", "scene": "visc", "particles": 10005, "threads": 1, "ps_1000_3000": 2e7,
   "ps_last_300": 1e7, "cpu_speed": {"0": 7.0, "1": 6.9}}]})json");
    const auto fast = runBench("--from-json fast.json --markdown -", dir);
    CHECK(fast.out.find("(below 85% of the fastest probe, 7.00 adds/ns): none.") !=
          std::string::npos);
    demtest::writeText(dir / "old.json", R"json({"results": [
  {"code": "dem", "scene": "visc", "particles": 10005, "threads": 1, "ps_1000_3000": 2e7,
   "ps_last_300": 1e7}]})json");
    const auto old = runBench("--from-json old.json --markdown -", dir);
    CHECK(old.code == 0);
    CHECK(old.out.find("CPU") == std::string::npos);
}

// Unknown sizes, scenes and thread counts, and a thread count given twice, are refused before
// anything runs (no build, no stream measurement), each with the value and what was expected, exit
// status 2: a misspelt name had ended a run in a traceback after its first scenes.
TEST_CASE("tools/bench refuses unknown sizes, scenes and thread counts", "[bench]") {
    if (python3Missing("to run tools/bench"))
        return;
    const auto dir = demtest::scratchDir("bench-refused");
    const std::pair<const char*, const char*> refused[] = {
        {"--sizes s1,s9", "--sizes: unknown size 's9' (expected s1, s2 or s3"},
        {"--sizes mem", "--sizes: unknown size 'mem'"},
        {"--scenes hertz,vsc", "--scenes: unknown scene 'vsc' (expected hertz, visc, dense, shear"},
        {"--threads 1,0", "--threads: '0' is not a thread count"},
        {"--threads 1,2,1", "--threads: 1 given more than once"}};
    for (const auto& [arguments, message] : refused) {
        INFO(arguments);
        const auto bad = runBench("--no-build " + std::string(arguments), dir);
        CHECK(bad.code == 2);
        CHECK(bad.err.find(message) != std::string::npos);
        CHECK(bad.out.find("stream bandwidth") == std::string::npos);
    }
}

// tools/bench --repeat: the codes and the thread counts of a row take turns (dem, then each peer,
// on 1 thread, then on 2, N times over), so that a drift of the machine's speed during a row biases
// neither the ratios to the peers nor the speed-up from one thread count to the next; each thread
// count's row is the median of its own runs, and the console line under a row gives each run's
// slowest CPU and lower memory bandwidth probed around it (the header, the machine's at the start).
// main() runs with the runs of dem and the peers replaced by recorders (no build, no dem run).
TEST_CASE("tools/bench interleaves the codes and thread counts of a row", "[bench]") {
    if (python3Missing("to load tools/bench"))
        return;
    const auto dir = demtest::scratchDir("bench-turns");
    const std::string script = std::string(loadBench) + R"(
import contextlib, io, json, os, sys
calls = []
log = []  # the runs and the CPU probes, in order
def figure(code, threads):
    calls.append((code, threads))
    log.append(code)
    return {"code": code, "particles": 500 if code == "mem" else 1000, "ps_1000_3000": float(len(calls)),
            "ps_last_300": float(len(calls)), "max_rss_bytes": 1000 * len(calls)}
def run(dem, deck, ratio, threads, out, extra=None):
    os.makedirs(out, exist_ok=True)
    open(os.path.join(out, "log.txt"), "w").close()
    return {"code": "mem" if ratio == bench.SIZES["mem"] else "dem", "threads": threads}
bench.run = run
bench.figures = lambda summary, out, stages=None: figure(summary["code"], summary["threads"])
bench.stream_bandwidth = lambda threads: None
def probe():  # each probe slower than the one before; CPU 1, listed first, always the faster
    log.append("probe")
    return {"cpu_speed": {"1": 200.0, "0": 100.0 - len(log)},
            "memory_bytes_per_second": 1e9 * (100 - len(log))}
bench.machine_speed = probe
bench.run_liggghts = lambda size, ranks, work: figure("liggghts", ranks)
bench.run_yade = lambda scene, size, threads, work: figure("yade", threads)
bench.prepared = lambda dem, work, scene, count: "packing.dem.gz"
bench.dense_export = lambda ckpt, work: "packing"
bench.timed_steps = lambda summary: 1000
bench.run_liggghts_dense = lambda packing, steps, ranks, work: figure("liggghts", ranks)
bench.run_yade_dense = lambda packing, steps, threads, work: figure("yade", threads)
for scene, first in (("hertz", [("mem", 1)]), ("dense", [])):
    calls.clear()
    log.clear()
    sys.argv = ["bench", "--no-build", "--sizes", "s1", "--scenes", scene, "--threads", "1,2",
                "--peers", "--repeat", "2", "--json", "results.json"]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        bench.main()
    turn = [(c, t) for t in (1, 2) for c in ("dem", "liggghts", "yade")]
    assert calls == first + 2 * turn, (scene, calls)
    document = json.load(open("results.json"))
    # The machine's speed when the bench started: the first probe, before any run.
    assert log[0] == "probe", (scene, log)
    assert document["machine_speed_at_start"] == {"cpu_speed": {"1": 200.0, "0": 99.0},
                                                  "memory_bytes_per_second": 9.9e10}, document
    rows = document["results"]
    dem1 = [r for r in rows if r["code"] == "dem" and r["threads"] == 1][0]
    dem2 = [r for r in rows if r["code"] == "dem" and r["threads"] == 2][0]
    k = len(first)  # each figure is its call's number: each row has its own thread count's runs
    assert dem1["runs_ps_1000_3000"] == [k + 1, k + 7], (scene, dem1)
    assert dem2["runs_ps_1000_3000"] == [k + 4, k + 10], (scene, dem2)
    # Every run has a CPU probe just before and just after it, and records the lower of the two.
    for i, code in enumerate(log):
        if code in ("dem", "liggghts", "yade"):
            assert log[i - 1] == "probe" and log[i + 1] == "probe", (scene, log)
    # The probes after dem's runs, counted from 1. Its runs take turns with one and two threads:
    # its first and third are its one-thread runs.
    dems = [i + 2 for i, code in enumerate(log) if code == "dem"]
    after, second = dems[0], dems[2]
    assert dem1["runs_cpu_speed"][0] == {"1": 200.0, "0": 100.0 - after}, (scene, dem1, log)
    assert dem1["runs_memory_bytes_per_second"][0] == 1e9 * (100 - after), (scene, dem1, log)
    # Under its row, the console names each run's slowest CPU and lower bandwidth, in run order.
    assert dem1["runs_cpu_speed"][1]["0"] == 100.0 - second, (scene, dem1, log)
    line = (f"just before or after each run, the slowest CPU (adds/ns): {100.0 - after:.2f}, "
            f"{100.0 - second:.2f}; the lower memory bandwidth (GB/s): {100 - after:.1f}, "
            f"{100 - second:.1f}")
    assert line in printed.getvalue(), (scene, line, printed.getvalue())
    # The header gives the first probe's figures.
    header = "; CPU speed CPU 1 200.00, CPU 0 99.00 adds/ns, memory 99.0 GB/s\n"
    assert header in printed.getvalue(), (scene, printed.getvalue())
print("ok")
)";
    demtest::writeText(dir / "turns.py", script);
    const auto result = demtest::runDem("turns.py", dir, "/usr/bin/python3");
    INFO(result.out << result.err);
    CHECK(result.code == 0);
    CHECK(result.out.find("ok") != std::string::npos);
}

TEST_CASE("the shear-scene exporter refuses rolling resistance", "[bench][checkpoint][rolling]") {
    if (python3Missing("to run tools/peers/shear_export.py"))
        return;
    const auto dir = demtest::scratchDir("shear-export-rolling");
    demtest::writeText(dir / "cell.toml", shearCellDeck("rolling_friction = 0.1\n"));
    REQUIRE(demtest::runDem("run cell.toml --quiet --threads 1 --out run", dir).code == 0);
    const auto checkpoint = dir / "run" / "checkpoints" / "step-000000020.stage1.dem.gz";
    REQUIRE(std::filesystem::exists(checkpoint));
    const demtest::CommandResult r =
        demtest::runDem("'" DEM_SOURCE_DIR "/tools/peers/shear_export.py' '" + checkpoint.string() +
                            "' '" + (dir / "packing").string() + "'",
                        dir, "/usr/bin/python3");
    CHECK(r.code == 1);
    CHECK(r.err.find("rolling or twisting resistance is not exported") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir / "packing.json"));
}
