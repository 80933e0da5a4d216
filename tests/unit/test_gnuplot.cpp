// gnuplot scripts for history.tsv, merged batch plots and snapshots, rendered with the real
// gnuplot (Debian: gnuplot-nox). The tests skip with a warning where gnuplot is not installed.
#include "PngSize.hpp"
#include "ScratchDir.hpp"
#include "io/Gnuplot.hpp"
#include "io/Snapshot.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace fs = std::filesystem;
using dem::Vec3;
using demtest::pngSize;
using demtest::scratchDir;

namespace {

#define REQUIRE_GNUPLOT_OR_SKIP()                                                                  \
    do {                                                                                           \
        if (dem::findGnuplot().empty()) {                                                          \
            WARN("SKIPPED: gnuplot is not installed (apt-get install gnuplot-nox)");               \
            return;                                                                                \
        }                                                                                          \
    } while (0)

void writeHistory(const fs::path& path, double scale) {
    std::ofstream f(path);
    f << "step\ttime\tkinetic_energy\tunbalanced_force\tobject:top.force.z\n";
    for (int k = 0; k <= 40; ++k) {
        f << k * 100 << '\t' << k * 1e-3 << '\t';
        if (k == 7)
            f << "nan";
        else
            f << scale * std::exp(-0.1 * k) * (k + 1);
        f << '\t' << 1.0 / (k + 1) << '\t' << -0.5 * k << '\n';
    }
}

std::string slurp(const fs::path& p) {
    std::ifstream f(p);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

dem::PlotSpec energySpec() {
    dem::PlotSpec spec;
    spec.name = "energy";
    spec.title = "Kinetic energy and unbalanced force";
    spec.x = "time";
    spec.y = {"kinetic_energy"};
    spec.y2 = {"unbalanced_force", "object:top.force.z"};
    spec.logY = true;
    return spec;
}

} // namespace

TEST_CASE("gnuplot script of a run renders to PNG, SVG and PDF", "[gnuplot]") {
    const auto run = scratchDir("gnuplot-run");
    writeHistory(run / "history.tsv", 1.0);
    std::string error;
    REQUIRE(dem::writeGnuplotScript(run.string(), energySpec(), error));
    REQUIRE(fs::exists(run / "plots" / "energy.gp"));
    const std::string script = slurp(run / "plots" / "energy.gp");
    CHECK(script.find("'time':'kinetic_energy'") != std::string::npos);
    CHECK(script.find("axes x1y2") != std::string::npos);
    CHECK(script.find("set logscale y\n") != std::string::npos);

    dem::PlotSpec bad = energySpec();
    bad.y.clear();
    bad.y2.clear();
    CHECK_FALSE(dem::writeGnuplotScript(run.string(), bad, error));

    REQUIRE_GNUPLOT_OR_SKIP();
    std::vector<std::string> written;
    REQUIRE(dem::renderPlots(run.string(), "png", written, error, {640, 480}));
    REQUIRE(written.size() == 1);
    CHECK(fs::path(written[0]) == run / "plots" / "energy.png");
    CHECK(pngSize(written[0]) == std::pair{640, 480});

    written.clear();
    REQUIRE(dem::renderPlots(run.string(), "svg", written, error));
    REQUIRE(written.size() == 1);
    CHECK(slurp(written[0]).find("<svg") != std::string::npos);
    written.clear();
    REQUIRE(dem::renderPlots(run.string(), "pdf", written, error));
    REQUIRE(written.size() == 1);
    CHECK(slurp(written[0]).rfind("%PDF", 0) == 0);
    CHECK_FALSE(dem::renderPlots(run.string(), "gif", written, error));

    // The script works by itself, from the run directory and from anywhere else.
    fs::remove(run / "plots" / "energy.png");
    const std::string fromRun = "cd '" + run.string() + "' && gnuplot plots/energy.gp 2> /dev/null";
    REQUIRE(std::system(fromRun.c_str()) == 0);
    CHECK(pngSize(run / "plots" / "energy.png") == std::pair{1000, 700});
    fs::remove(run / "plots" / "energy.png");
    const std::string fromRoot = "cd / && gnuplot -e \"width=300; height=200\" '" +
                                 (run / "plots" / "energy.gp").string() + "' 2> /dev/null";
    REQUIRE(std::system(fromRoot.c_str()) == 0);
    CHECK(pngSize(run / "plots" / "energy.png") == std::pair{300, 200});
}

TEST_CASE("gnuplot failures are reported with gnuplot's message", "[gnuplot]") {
    REQUIRE_GNUPLOT_OR_SKIP();
    const auto run = scratchDir("gnuplot-fail");
    writeHistory(run / "history.tsv", 1.0);
    std::string error;
    dem::PlotSpec spec = energySpec();
    REQUIRE(dem::writeGnuplotScript(run.string(), spec, error));
    spec.name = "missing";
    spec.y = {"no_such_column"};
    spec.y2.clear();
    REQUIRE(dem::writeGnuplotScript(run.string(), spec, error));
    std::vector<std::string> written;
    CHECK_FALSE(dem::renderPlots(run.string(), "png", written, error));
    INFO(error);
    CHECK(error.find("missing.gp") != std::string::npos);
    CHECK(error.find("no_such_column") != std::string::npos);
    CHECK(written.size() == 1); // energy still rendered
    CHECK_FALSE(fs::exists(run / "plots" / "missing.png"));

    const auto empty = scratchDir("gnuplot-noplots");
    CHECK_FALSE(dem::renderPlots(empty.string(), "png", written, error));
    CHECK(error.find("no plots") != std::string::npos);

    // Without gnuplot: a clear message.
    ::setenv("DEM_GNUPLOT", "/nonexistent/gnuplot", 1);
    CHECK_FALSE(dem::renderPlots(run.string(), "png", written, error));
    CHECK(error == "gnuplot not found: DEM_GNUPLOT='/nonexistent/gnuplot' is not an executable "
                   "file");
    ::unsetenv("DEM_GNUPLOT");
    const std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
    ::setenv("PATH", "/nonexistent", 1);
    CHECK_FALSE(dem::renderPlots(run.string(), "png", written, error));
    ::setenv("PATH", path.c_str(), 1);
    CHECK(error == "gnuplot not found: install gnuplot-nox");
}

TEST_CASE("merged plot of several runs", "[gnuplot]") {
    const auto batch = scratchDir("gnuplot-batch");
    fs::create_directories(batch / "runs" / "a");
    fs::create_directories(batch / "runs" / "b");
    writeHistory(batch / "runs" / "a" / "history.tsv", 1.0);
    writeHistory(batch / "runs" / "b" / "history.tsv", 2.0);
    const fs::path script = batch / "merged-kinetic_energy.gp";
    const auto outside = scratchDir("gnuplot-outside");
    writeHistory(outside / "history.tsv", 3.0);
    std::string error;
    // One path relative to the current directory, one absolute inside the batch directory, one
    // absolute elsewhere.
    const fs::path cwd = fs::current_path();
    fs::current_path(batch);
    const bool ok = dem::writeMergedScript(script.string(),
                                           {{"run a", "runs/a/history.tsv"},
                                            {"run b", (batch / "runs/b/history.tsv").string()},
                                            {"run c", (outside / "history.tsv").string()}},
                                           "time", "kinetic_energy", error);
    fs::current_path(cwd);
    REQUIRE(ok);
    const std::string text = slurp(script);
    CHECK(text.find("gp_dir.\"/\".'runs/a/history.tsv'") != std::string::npos);
    CHECK(text.find("gp_dir.\"/\".'runs/b/history.tsv'") != std::string::npos);
    CHECK(text.find(batch.string()) == std::string::npos); // the batch directory can move
    CHECK(text.find(dem::gnuplotQuote((outside / "history.tsv").string())) !=
          std::string::npos); // outside it: absolute
    CHECK(text.find("'run b'") != std::string::npos);
    CHECK_FALSE(dem::writeMergedScript(script.string(), {}, "time", "kinetic_energy", error));

    REQUIRE_GNUPLOT_OR_SKIP();
    REQUIRE(dem::renderScript(script.string(), "png", "", error, {800, 600}));
    CHECK(pngSize(batch / "merged-kinetic_energy.png") == std::pair{800, 600});
    // The batch directory can move.
    const auto moved = scratchDir("gnuplot-batch-moved");
    fs::remove_all(moved);
    fs::rename(batch, moved);
    INFO(error);
    CHECK(dem::renderScript((moved / "merged-kinetic_energy.gp").string(), "png",
                            (moved / "m.png").string(), error, {400, 300}));
    CHECK(pngSize(moved / "m.png") == std::pair{400, 300});
}

TEST_CASE("snapshot PNG of the spheres", "[gnuplot]") {
    dem::Simulation sim;
    sim.materials.resize(2);
    for (int k = 0; k < 200; ++k) {
        const Vec3 x(0.01 * (k % 10), 0.01 * ((k / 10) % 4), 0.01 * (k / 40) + 0.005);
        sim.particles.add(uint32_t(k), x, 0.004 + 0.0005 * (k % 3), 2500, k % 2, 1);
        sim.particles.vel.back() = Vec3(0, 0, -0.01 * k);
    }
    dem::RigidObject o;
    o.name = "floor";
    sim.obstacles.objects.push_back(o);
    sim.obstacles.walls.push_back({Vec3::Zero(), Vec3::UnitZ(), 0});
    dem::Facet f{};
    f.v[0] = Vec3(0, 0, 0.05);
    f.v[1] = Vec3(0.05, 0, 0.07);
    f.v[2] = Vec3(0.05, 0.05, 0.07);
    f.normal = Vec3::UnitZ();
    f.object = 0;
    sim.obstacles.facets.push_back(f);
    sim.obstacles.boxes.push_back(
        {Vec3(0.05, 0.02, 0.03), Vec3(0.06, 0.03, 0.04), dem::Quat::Identity(), 0});
    sim.step = 12;
    sim.time = 3.5e-4;

    const auto dir = scratchDir("gnuplot-snapshot");
    std::string error;
    CHECK_FALSE(dem::renderSnapshot(sim, (dir / "x.png").string(), "temperature", 640, 400, error));
    CHECK(error.find("temperature") != std::string::npos);
    CHECK_FALSE(
        dem::renderSnapshot(dem::Simulation{}, (dir / "x.png").string(), "z", 640, 400, error));

    REQUIRE_GNUPLOT_OR_SKIP();
    for (const char* colour : {"velocity", "z", "material", "radius"}) {
        INFO(colour);
        const fs::path png = dir / (std::string(colour) + ".png");
        REQUIRE(dem::renderSnapshot(sim, png.string(), colour, 640, 400, error));
        CHECK(pngSize(png) == std::pair{640, 400});
    }
    // All at rest: a constant colour value still renders.
    for (auto& v : sim.particles.vel)
        v.setZero();
    REQUIRE(dem::renderSnapshot(sim, (dir / "rest.png").string(), "velocity", 320, 240, error));
    CHECK(pngSize(dir / "rest.png") == std::pair{320, 240});
}
