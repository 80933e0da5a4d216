#include "app/SnapshotCommand.hpp"

#include "app/Checkpointer.hpp"
#include "app/ExitCodes.hpp"
#include "app/IntegerCheck.hpp"
#include "io/Checkpoint.hpp"
#include "io/Snapshot.hpp"

#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <memory>

namespace fs = std::filesystem;

namespace dem {

namespace {

struct SnapshotOptions {
    std::string target, png, colourBy = "velocity", size = "1000x800";
    int64_t step = -1; // -1: the newest checkpoint
};

int fail(int code, const std::string& message) {
    std::cerr << "dem: error: " << message << '\n';
    return code;
}

// The checkpoint of run directory `run` at `step` (or the newest readable one when step < 0).
int chooseCheckpoint(const fs::path& run, int64_t step, std::string& path) {
    const std::string dir = (run / "checkpoints").string();
    std::vector<CheckpointEntry> entries;
    std::string error;
    if (!fs::is_directory(dir) || !listCheckpoints(dir, entries, error) || entries.empty())
        return fail(ExitBadInput,
                    fmt::format("no checkpoints in '{}': a run writes one at its end, more when "
                                "the deck's [output.checkpoint] asks",
                                dir));
    if (step < 0) {
        path = resumeCandidates(dir).front();
        return ExitOk;
    }
    std::string steps;
    for (const CheckpointEntry& e : entries) {
        if (e.headerOk && e.step == uint64_t(step)) {
            path = e.path;
            return ExitOk;
        }
        if (e.headerOk)
            steps = fmt::format("{}{}{}", e.step, steps.empty() ? "" : ", ", steps);
    }
    return fail(ExitBadInput,
                fmt::format("no checkpoint at step {} in '{}' (steps: {})", step, dir, steps));
}

int runSnapshot(const SnapshotOptions& o) {
    int width = 0, height = 0;
    char x = 0;
    if (std::sscanf(o.size.c_str(), "%d%c%d", &width, &x, &height) != 3 || x != 'x')
        return fail(ExitBadInput,
                    fmt::format("--size {}: expected WIDTHxHEIGHT, e.g. 1000x800", o.size));
    const fs::path target(o.target);
    std::error_code ec;
    if (!o.png.empty() && fs::is_directory(o.png, ec))
        return fail(ExitBadInput, fmt::format("--png {}: is a directory; give the picture's "
                                              "file name",
                                              o.png));
    // gnuplot writes PNG whatever the name says.
    if (const std::string ext = fs::path(o.png).extension().string();
        !ext.empty() && ext != ".png" && ext != ".PNG")
        return fail(
            ExitBadInput,
            fmt::format("--png {}: the picture is a PNG; give a name ending in .png", o.png));
    std::string path = o.target;
    fs::path run = target.parent_path();
    if (fs::is_directory(target, ec)) {
        run = target;
        if (int code = chooseCheckpoint(run, o.step, path))
            return code;
    } else if (!fs::exists(target, ec)) {
        return fail(ExitBadInput,
                    fmt::format("'{}': no such run directory or checkpoint file", o.target));
    } else if (o.step >= 0) {
        return fail(ExitBadInput, "--step selects a checkpoint of a run directory, not of a file");
    }
    if (run.filename() == "checkpoints")
        run = run.parent_path(); // a run's own checkpoint: the picture goes into the run
    Simulation sim;
    CheckpointMeta meta;
    std::string error;
    if (!readCheckpoint(path, sim, meta, error))
        return fail(ExitBadInput, error);
    if (sim.particles.size() == 0) // bad input, not a gnuplot failure
        return fail(ExitBadInput, fmt::format("'{}' holds no spheres to draw", path));
    const std::string png =
        !o.png.empty() ? o.png : (run / fmt::format("snapshot-{:09d}.png", sim.step)).string();
    if (!renderSnapshot(sim, png, o.colourBy, width, height, error))
        return fail(error.find("cannot colour") == 0 || error.find("snapshot size") == 0
                        ? ExitBadInput
                        : ExitFailed,
                    error);
    std::cout << png << '\n';
    return ExitOk;
}

} // namespace

std::function<int()> addSnapshotCommand(CLI::App& app) {
    auto o = std::make_shared<SnapshotOptions>();
    CLI::App* s = app.add_subcommand(
        "snapshot", "Draw the spheres of a run (or a checkpoint) as a PNG, with gnuplot");
    s->add_option("TARGET", o->target, "Run directory (uses its checkpoints) or checkpoint file")
        ->required();
    s->add_option("--step", o->step,
                  "Checkpoint at this step (default: the newest); run directories only")
        ->check(integerAtLeast(0));
    s->add_option("--png", o->png, "Output file (default: <run>/snapshot-<step>.png)");
    s->add_option("--colour-by", o->colourBy, "Colour of the spheres (default: velocity)")
        ->check(CLI::IsMember({"velocity", "z", "material", "radius"}));
    s->add_option("--size", o->size, "Picture size in pixels, WIDTHxHEIGHT (default: 1000x800)");
    s->footer("\nA side view: x to the right, z up, looking along +y; spheres at their true "
              "radius, nearer ones over farther ones, with the outlines of walls, facets and "
              "boxes.\nPrints the file written. Exit status: 0 done, 1 gnuplot missing or failed, "
              "2 bad usage, no such run, checkpoint or step.\n");
    return [o] { return runSnapshot(*o); };
}

} // namespace dem
