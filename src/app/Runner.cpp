#include "app/Runner.hpp"

#include "Version.hpp"
#include "app/ExitCodes.hpp"
#include "app/History.hpp"
#include "app/Interrupt.hpp"
#include "app/Progress.hpp"
#include "app/RunLog.hpp"
#include "core/Measures.hpp"
#include "core/StateDigest.hpp"
#include "core/StopCriteria.hpp"
#include "core/Workspace.hpp"
#include "io/Gnuplot.hpp"
#include "io/VtkWriter.hpp"

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <omp.h>
#include <sys/resource.h>

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace dem {

namespace {

// Peak resident memory of this process (for the benchmark's memory per particle).
uint64_t maxResidentBytes() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return uint64_t(usage.ru_maxrss) * 1024;
}

double secondsSince(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

bool writeFile(const fs::path& path, const std::string& text) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << text;
    return bool(f.flush());
}

// Summary values are plain numbers in JSON; NaN and infinities become null.
nlohmann::json number(double v) {
    return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

struct RunRecord {
    std::string status = "running";
    std::string stopReason;
    std::string error;
    nlohmann::json stages = nlohmann::json::array();
    double wallSeconds = 0;
    double particleSteps = 0;
    int threads = 1;
    std::string started;
};

nlohmann::json summaryJson(const Deck& deck, const Simulation& sim, const RunRecord& r) {
    nlohmann::json j;
    j["status"] = r.status;
    j["stop_reason"] =
        r.stopReason.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.stopReason);
    if (!r.error.empty())
        j["error"] = r.error;
    j["steps"] = sim.step;
    j["sim_time"] = sim.time;
    j["wall_seconds"] = r.wallSeconds;
    j["threads"] = r.threads;
    j["particles"] = sim.particles.size();
    j["contacts"] = contactCount(sim);
    j["particle_steps_per_second"] = r.wallSeconds > 0 ? r.particleSteps / r.wallSeconds : 0.0;
    nlohmann::json final = nlohmann::json::object();
    for (const MeasureRef& m : deck.output.history.columns)
        final[m.name] = number(evaluate(sim, m));
    j["final"] = final;
    nlohmann::json params = nlohmann::json::object();
    for (const auto& [name, value] : deck.params)
        params[name] = number(value);
    j["params"] = params;
    j["stages"] = r.stages;
    j["deck"] = deck.path;
    j["deck_sha256"] = sha256Hex(deck.text);
    j["version"] = DEM_VERSION;
    j["started"] = r.started;
    j["max_rss_bytes"] = maxResidentBytes();
    j["state_digest"] = stateDigest(sim);
    return j;
}

// Creates the run directory; refuses to overwrite a finished run unless forced.
int prepareRunDirectory(const fs::path& dir, bool force, std::string& error) {
    std::error_code ec;
    const fs::path summary = dir / "summary.json";
    if (fs::exists(summary, ec) && !force) {
        std::ifstream in(summary);
        const nlohmann::json old = nlohmann::json::parse(in, nullptr, false);
        if (!old.is_discarded() && old.value("status", "") == "completed") {
            error = fmt::format("'{}' holds a finished run; use --force to overwrite it or --out "
                                "to choose another directory",
                                dir.string());
            return ExitBadInput;
        }
    }
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir)) {
        error = fmt::format("cannot create run directory '{}': {}", dir.string(),
                            ec ? ec.message() : "not a directory");
        return ExitFailed;
    }
    const fs::path probe = dir / ".dem-write-test";
    if (!writeFile(probe, "")) {
        error = fmt::format("cannot write in run directory '{}'", dir.string());
        return ExitFailed;
    }
    fs::remove(probe, ec);
    return ExitOk;
}

PlotSpec toPlotSpec(const PlotSpecDeck& p) {
    PlotSpec spec;
    spec.name = p.name;
    spec.title = p.title;
    spec.x = p.x;
    spec.y = p.y;
    spec.y2 = p.y2;
    spec.logX = p.logX;
    spec.logY = p.logY;
    spec.logY2 = p.logY2;
    return spec;
}

bool openVtk(VtkRecorder& vtk, const VtkSpec& spec, const fs::path& dir, std::string& error) {
    VtkKinds kinds;
    VtkFieldSelection fields;
    return parseVtkKinds(spec.kinds, kinds, error) && parseVtkFields(spec.fields, fields, error) &&
           vtk.open((dir / "vtk").string(), kinds, fields, VtkFormat{}, -1, error);
}

void writeSummary(const fs::path& dir, const nlohmann::json& summary, RunLog& log) {
    const fs::path tmp = dir / "summary.json.tmp";
    if (!writeFile(tmp, summary.dump(2) + "\n")) {
        log.error(fmt::format("cannot write '{}'", (dir / "summary.json").string()));
        return;
    }
    std::error_code ec;
    fs::rename(tmp, dir / "summary.json", ec);
}

} // namespace

int runDeck(Deck& deck, const RunOptions& opt) {
    const fs::path dir = opt.out.empty() ? fs::path("runs") / deck.name : fs::path(opt.out);
    std::string error;
    if (int code = prepareRunDirectory(dir, opt.force, error); code != ExitOk) {
        std::cerr << "dem: error: " << error << '\n';
        return code;
    }
    RunLog log(opt.quiet);
    if (!writeFile(dir / "deck.toml", deck.text) ||
        !writeFile(dir / "resolved.toml", deck.resolvedToml) || !writeFile(dir / "log.txt", "") ||
        !log.open((dir / "log.txt").string())) {
        std::cerr << "dem: error: cannot write in run directory '" << dir.string() << "'\n";
        return ExitFailed;
    }
    if (opt.threads > 0)
        omp_set_num_threads(opt.threads);
    RunRecord rec;
    rec.threads = omp_get_max_threads();
    rec.started = timestampNow();
    Simulation& sim = deck.sim;
    log.info(fmt::format("dem {}: running '{}' into '{}' ({} spheres, {} objects, {} stages, dt = "
                         "{:.6g} s, {} threads)",
                         DEM_VERSION, deck.path, dir.string(), sim.particles.size(),
                         sim.obstacles.objects.size(), sim.stages.size(), sim.dt, rec.threads));

    HistoryWriter history;
    const uint64_t historyEvery = deck.output.history.every;
    if (historyEvery > 0 &&
        !history.open((dir / "history.tsv").string(), deck.output.history.columns)) {
        log.error(fmt::format("cannot write '{}'", (dir / "history.tsv").string()));
        return ExitFailed;
    }
    VtkRecorder vtk;
    const uint64_t vtkEvery = deck.output.vtk.every;
    if (vtkEvery > 0 && !openVtk(vtk, deck.output.vtk, dir, error)) {
        log.error(error);
        return ExitFailed;
    }
    for (const PlotSpecDeck& p : deck.output.plots) {
        if (!writeGnuplotScript(dir.string(), toPlotSpec(p), error)) {
            log.error(error);
            return ExitFailed;
        }
    }
    installInterruptHandlers();
    Workspace ws;
    Progress progress(opt.progress, opt.quiet);
    const auto start = Clock::now();
    auto stageWall = start;
    int exitCode = ExitOk;
    const auto startStage = [&] {
        beginStage(sim);
        stageWall = Clock::now();
        log.info(fmt::format("stage {} '{}' starts at step {}, t = {:.6g} s", sim.stage + 1,
                             sim.stages[sim.stage].name, sim.step, sim.time));
    };
    // Outputs of the initial state, with the first stage's engines (gravity) in place and the
    // contacts present at the start found.
    startStage();
    if (!rebuildNeighbours(sim, ws)) {
        log.error(ws.error);
        return ExitFailed;
    }
    if (historyEvery > 0)
        history.record(sim);
    if (vtkEvery > 0 && !vtk.write(sim, error)) {
        log.error(error);
        return ExitFailed;
    }
    while (true) {
        if (!sim.stageStarted)
            startStage();
        if (!advance(sim, ws)) {
            progress.finish();
            rec.status = "failed";
            rec.error = ws.error;
            log.error(ws.error);
            exitCode = ExitFailed;
            break;
        }
        rec.particleSteps += double(sim.particles.size());
        if (vtkEvery > 0 && sim.step % vtkEvery == 0 && !vtk.write(sim, error)) {
            progress.finish();
            rec.status = "failed";
            rec.error = error;
            log.error(error);
            exitCode = ExitFailed;
            break;
        }
        if (historyEvery > 0 && sim.step % historyEvery == 0)
            history.record(sim);
        const StopStatus stop = checkStop(sim, secondsSince(stageWall));
        if (stop.fired) {
            progress.finish();
            rec.stopReason = stop.reason;
            rec.stages.push_back({{"name", sim.stages[sim.stage].name},
                                  {"stop_reason", stop.reason},
                                  {"end_step", sim.step},
                                  {"end_time", sim.time}});
            log.info(fmt::format("stage {} '{}' ends at step {}, t = {:.6g} s: {}", sim.stage + 1,
                                 sim.stages[sim.stage].name, sim.step, sim.time, stop.reason));
            sim.stageStarted = false;
            if (sim.stage + 1 == sim.stages.size()) {
                rec.status = "completed";
                break;
            }
            ++sim.stage;
        }
        if (int sig = pendingInterrupt()) {
            progress.finish();
            rec.status = "interrupted";
            rec.stopReason = sig == SIGINT ? "SIGINT" : "SIGTERM";
            log.error(fmt::format("interrupted by {} at step {}", rec.stopReason, sim.step));
            exitCode = ExitInterrupted;
            break;
        }
        progress.update(sim, secondsSince(stageWall),
                        rec.particleSteps / std::max(secondsSince(start), 1e-9), log);
    }
    if (historyEvery > 0)
        history.record(sim);
    if (vtkEvery > 0 && exitCode != ExitFailed && !vtk.write(sim, error))
        log.error(error);
    if (!deck.output.plots.empty() && historyEvery > 0) {
        // A figure that cannot be drawn (no gnuplot) does not fail the run: its script remains.
        std::vector<std::string> written;
        if (!renderPlots(dir.string(), "png", written, error))
            log.info("warning: plots not rendered: " + error);
    }
    rec.wallSeconds = secondsSince(start);
    const nlohmann::json summary = summaryJson(deck, sim, rec);
    writeSummary(dir, summary, log);
    log.info(fmt::format(
        "{} after {} steps, t = {:.6g} s, {:.2f} s wall ({:.3g} particle-steps/s); summary in '{}'",
        rec.status, sim.step, sim.time, rec.wallSeconds,
        summary["particle_steps_per_second"].get<double>(), (dir / "summary.json").string()));
    if (opt.json)
        std::cout << summary.dump(2) << std::endl;
    return exitCode;
}

} // namespace dem
