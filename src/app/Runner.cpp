#include "app/Runner.hpp"

#include "Version.hpp"
#include "app/Checkpointer.hpp"
#include "app/EarlierOutputs.hpp"
#include "app/ExitCodes.hpp"
#include "app/History.hpp"
#include "app/Interrupt.hpp"
#include "app/LastGoodState.hpp"
#include "app/Progress.hpp"
#include "app/RunLog.hpp"
#include "app/StoppedRun.hpp"
#include "core/Lanes.hpp"
#include "core/Measures.hpp"
#include "core/Parallel.hpp"
#include "core/StateDigest.hpp"
#include "core/StopCriteria.hpp"
#include "core/Workspace.hpp"
#include "io/AtomicFile.hpp"
#include "io/Gnuplot.hpp"
#include "io/JsonFile.hpp"
#include "io/VtkWriter.hpp"
#include "io/WholeFile.hpp"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <new>
#include <nlohmann/json.hpp>
#include <omp.h>
#include <sys/resource.h>

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace dem {

namespace {

// Peak resident memory of this process (for the benchmark's memory per particle): VmHWM, the
// high-water mark of this program's own memory. getrusage's ru_maxrss is only the fallback: Linux
// carries it over exec, so a run started by a larger process (a Python script, a test) reported
// its parent's resident size whenever that was the larger.
uint64_t maxResidentBytes() {
    std::string status;
    if (readWholeFile("/proc/self/status", status))
        if (const size_t at = status.find("\nVmHWM:"); at != std::string::npos)
            return std::strtoull(status.c_str() + at + 7, nullptr, 10) * 1024; // "VmHWM: 1234 kB"
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
    std::string stopReason; // what ended the run (completed, interrupted); empty otherwise
    std::string error;
    nlohmann::json stages = nlohmann::json::array(); // one record per finished stage
    double wallSeconds = 0;                          // this process plus earlier ones (restarts)
    double particleSteps = 0;
    int threads = 1;
    std::string started;
    nlohmann::json restart; // null, or where this run continued from
    std::string lastCheckpoint;
    double vtkSeconds = 0, checkpointSeconds = 0; // wall time spent writing outputs
    double historySeconds = 0;
    PhaseTimes phases;          // step-loop phases, this process plus earlier ones
    PhaseTimes stagePhases;     // `phases` when the running stage started
    uint64_t stageRebuilds = 0; // neighbour rebuilds when the running stage started
};

nlohmann::json phaseJson(const PhaseTimes& t, const PhaseTimes& since, double output) {
    return {{"neighbours", t.neighbours - since.neighbours},
            {"contacts", t.contacts - since.contacts},
            {"integration", t.integration - since.integration},
            {"other", t.other - since.other},
            {"output", output}};
}

PhaseTimes phasesFromJson(const nlohmann::json& j) {
    PhaseTimes t;
    if (j.is_object()) {
        t.neighbours = j.value("neighbours", 0.0);
        t.contacts = j.value("contacts", 0.0);
        t.integration = j.value("integration", 0.0);
        t.other = j.value("other", 0.0);
    }
    return t;
}

PhaseTimes operator+(const PhaseTimes& a, const PhaseTimes& b) {
    return {a.neighbours + b.neighbours, a.contacts + b.contacts, a.integration + b.integration,
            a.other + b.other};
}

// `stateKnown` false (before the first step, after running out of memory part way through one,
// or after a failed step whose state before could not be recomputed): without the figures read
// from the state, its contacts, lists, measured quantities and digest.
nlohmann::json summaryJson(const Deck& deck, const Simulation& sim, const RunRecord& r,
                           bool stateKnown = true) {
    // An object from the start: nlohmann::json 3.11's operator[] on a null value that cannot
    // allocate its object leaves the value broken, and its destructor then crashes.
    nlohmann::json j = nlohmann::json::object();
    j["status"] = r.status;
    j["stop_reason"] =
        r.stopReason.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.stopReason);
    if (!r.error.empty())
        j["error"] = r.error;
    j["steps"] = sim.step;
    j["sim_time"] = sim.time;
    j["wall_seconds"] = r.wallSeconds;
    j["threads"] = r.threads;
    j["contact_lanes"] = pairLaneWidth();
    j["particles"] = sim.particles.size();
    j["particle_steps_per_second"] = r.wallSeconds > 0 ? r.particleSteps / r.wallSeconds : 0.0;
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
    j["checkpoint"] =
        r.lastCheckpoint.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.lastCheckpoint);
    j["output_seconds"] = {
        {"vtk", r.vtkSeconds}, {"checkpoints", r.checkpointSeconds}, {"history", r.historySeconds}};
    j["phase_seconds"] =
        phaseJson(r.phases, PhaseTimes{}, r.vtkSeconds + r.checkpointSeconds + r.historySeconds);
    j["neighbour_rebuilds"] = sim.neighbours.rebuilds;
    if (!r.restart.is_null())
        j["restart"] = r.restart;
    if (stateKnown) { // the keys come out sorted, whatever the order they are set in
        j["contacts"] = contactCount(sim);
        j["listed_pairs"] = sim.pairs.size();
        j["obstacle_candidates"] = sim.obstacleContacts.size();
        nlohmann::json final = nlohmann::json::object();
        for (const MeasureRef& m : deck.output.history.columns)
            final[m.name] = number(evaluate(sim, m));
        j["final"] = final;
        j["state_digest"] = stateDigest(sim);
    }
    return j;
}

// The checkpoint a failed run named in its summary (the state before the failure), as a path to
// give --restart; a placeholder when it named none.
std::string failedRunCheckpoint(const fs::path& dir) {
    const std::string name =
        jsonText(readJsonObject((dir / "summary.json").string()), "checkpoint");
    return name.empty() ? "CHECKPOINT" : (dir / name).string();
}

// Unless forced, a run does not replace a finished run, nor start afresh over a stopped or failed
// one: that would delete its checkpoints, the progress --resume continues from, or the state
// before the failure, which --restart branches from to find out what went wrong.
int refuseToReplace(const fs::path& dir, bool fresh, std::string& error) {
    const StoppedRun stopped = stoppedRunIn(dir);
    if (stopped == StoppedRun::Completed) {
        error = fmt::format("'{}' holds a finished run; use --force to overwrite it or --out "
                            "to choose another directory",
                            dir.string());
        return ExitBadInput;
    }
    if (fresh && stopped == StoppedRun::Failed) {
        error = fmt::format("'{}' holds a failed run; use --force to replace it, --restart {} to "
                            "branch from its last good state, or --out to choose another "
                            "directory",
                            dir.string(), failedRunCheckpoint(dir));
        return ExitBadInput;
    }
    if (fresh && stopped != StoppedRun::None) {
        error = fmt::format("'{}' holds {} run; use --resume to continue it, --force to start "
                            "afresh (deleting its checkpoints) or --out to choose another "
                            "directory",
                            dir.string(),
                            stopped == StoppedRun::Interrupted
                                ? "an interrupted"
                                : "a killed (or still running) checkpointed");
        return ExitBadInput;
    }
    return ExitOk;
}

// Creates the run directory, after refuseToReplace unless forced. `fresh`: the run starts from
// the deck's initial state.
int prepareRunDirectory(const fs::path& dir, bool fresh, bool force, std::string& error) {
    if (!force)
        if (int code = refuseToReplace(dir, fresh, error))
            return code;
    std::error_code ec;
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
    removeAtomicWriteTemporaries(dir.string()); // a summary a killed run was writing
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

bool openVtk(VtkRecorder& vtk, const VtkSpec& spec, const fs::path& dir,
             const std::optional<VtkContinuation>& from, std::string& error) {
    VtkKinds kinds;
    VtkFieldSelection fields;
    return parseVtkKinds(spec.kinds, kinds, error) && parseVtkFields(spec.fields, fields, error) &&
           vtk.open((dir / "vtk").string(), kinds, fields, VtkFormat{}, from, error);
}

// Writes summary.json atomically, and synced, from its text (without the final newline).
bool writeSummaryText(const fs::path& dir, const std::string& text, RunLog& log) {
    std::string error;
    if (writeTextAtomically((dir / "summary.json").string(), text + "\n", Durability::Synced,
                            error))
        return true;
    log.error(error); // names summary.json and what failed
    return false;
}

void writeSummary(const fs::path& dir, const nlohmann::json& summary, RunLog& log) {
    writeSummaryText(dir, summary.dump(2), log);
}

// The run state a checkpoint carries beside the simulation: what the runner needs to continue
// exactly where it stopped (stage records, the history so far, output and checkpoint counters).
std::string runStateJson(const RunRecord& rec, const HistoryWriter& history,
                         const Checkpointer& ckpt, double stageWallSeconds, bool completed) {
    nlohmann::json j = nlohmann::json::object(); // as in summaryJson
    j["stages"] = rec.stages;
    j["stop_reason"] = rec.stopReason;
    j["completed"] = completed;
    j["wall_seconds"] = rec.wallSeconds;
    j["particle_steps"] = rec.particleSteps;
    j["vtk_seconds"] = rec.vtkSeconds;
    j["checkpoint_seconds"] = rec.checkpointSeconds;
    j["history_seconds"] = rec.historySeconds;
    j["phase_seconds"] = phaseJson(rec.phases, PhaseTimes{}, 0);
    j["stage_phase_seconds"] = phaseJson(rec.stagePhases, PhaseTimes{}, 0);
    j["stage_rebuilds"] = rec.stageRebuilds;
    j["stage_wall_seconds"] = stageWallSeconds;
    j["started"] = rec.started;
    j["next_checkpoint_time"] = ckpt.nextTime();
    j["history"] = history.text();
    j["history_last_step"] = history.lastStep();
    return j.dump();
}

// What the state of a run is restored from: the checkpoint's run state.
struct RestoredState {
    bool completed = false;
    double stageWallSeconds = 0, nextCheckpointTime = 0;
    std::string history;
    uint64_t historyLastStep = UINT64_MAX;
};

bool restoreRunState(const std::string& text, RunRecord& rec, RestoredState& st,
                     std::string& error) {
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        error = "the run state stored in the checkpoint is not valid JSON";
        return false;
    }
    try {
        rec.stages = j.value("stages", nlohmann::json::array());
        rec.wallSeconds = j.value("wall_seconds", 0.0);
        rec.particleSteps = j.value("particle_steps", 0.0);
        rec.vtkSeconds = j.value("vtk_seconds", 0.0);
        rec.checkpointSeconds = j.value("checkpoint_seconds", 0.0);
        rec.historySeconds = j.value("history_seconds", 0.0);
        rec.phases = phasesFromJson(j.value("phase_seconds", nlohmann::json()));
        rec.stagePhases = phasesFromJson(j.value("stage_phase_seconds", nlohmann::json()));
        rec.stageRebuilds = j.value("stage_rebuilds", uint64_t(0));
        rec.started = j.value("started", rec.started);
        st.completed = j.value("completed", false);
        // A stopped run goes on: what stopped it (a signal; in older checkpoints, the stop
        // criterion of a stage that ended before) is not what ends it.
        rec.stopReason = st.completed ? j.value("stop_reason", "") : "";
        st.stageWallSeconds = j.value("stage_wall_seconds", 0.0);
        st.nextCheckpointTime = j.value("next_checkpoint_time", 0.0);
        st.history = j.value("history", "");
        st.historyLastStep = j.value("history_last_step", uint64_t(UINT64_MAX));
    } catch (const nlohmann::json::exception& e) {
        error = std::string("the run state stored in the checkpoint is malformed: ") + e.what();
        return false;
    }
    return true;
}

// --resume: the newest checkpoint of the run directory that reads back completely and belongs to
// this deck. Damaged files are skipped with a warning. Returns ExitOk (found or not) or
// ExitBadInput when the checkpoints were written for another deck or other parameters.
// `force`: checkpoints of another deck or other parameters are a reason to start afresh, as
// --force says, rather than an error.
int findResumePoint(const fs::path& dir, const Deck& deck, RestartPoint& point, bool& found,
                    bool quiet, bool force) {
    found = false;
    for (const std::string& path : resumeCandidates((dir / "checkpoints").string())) {
        RestartPoint p;
        std::string error;
        if (!readCheckpoint(path, p.sim, p.meta, error)) {
            std::cerr << "dem: warning: " << error << "; trying an older checkpoint\n";
            continue;
        }
        if (p.meta.resolvedToml != deck.resolvedToml && force) {
            if (!quiet)
                std::cerr << "dem: the checkpoints in '" << (dir / "checkpoints").string()
                          << "' were written for another deck or other parameters; starting "
                             "afresh (--force)\n";
            return ExitOk;
        }
        if (p.meta.resolvedToml != deck.resolvedToml) {
            std::cerr << fmt::format("dem: error: --resume: '{}' was written for another deck or "
                                     "other parameters than '{}'; use --force to start afresh "
                                     "or --restart FILE to continue that run\n",
                                     path, deck.path);
            return ExitBadInput;
        }
        p.file = path;
        point = std::move(p);
        found = true;
        return ExitOk;
    }
    if (!quiet)
        std::cerr << "dem: no usable checkpoint in '" << (dir / "checkpoints").string()
                  << "'; starting from the beginning\n";
    return ExitOk;
}

// --resume of a completed run: nothing to do, but, as for an interrupted run, only with the deck
// and parameters it was run with (its resolved.toml; without one there is nothing to compare).
int leaveCompletedRun(const fs::path& dir, const Deck& deck, const RunOptions& opt) {
    if (std::string resolved; readWholeFile((dir / "resolved.toml").string(), resolved) &&
                              resolved != deck.resolvedToml) {
        std::cerr << fmt::format("dem: error: --resume: the completed run in '{}' was made with "
                                 "another deck or other parameters than '{}'; use --force to run "
                                 "it again with these, or --out to choose another directory\n",
                                 dir.string(), deck.path);
        return ExitBadInput;
    }
    if (!opt.quiet)
        std::cerr << "dem: the run in '" << dir.string()
                  << "' has completed; nothing to resume (--force runs it again)\n";
    if (std::string text; opt.json && readWholeFile((dir / "summary.json").string(), text))
        std::cout << text;
    return ExitOk;
}

// From the checkpoint at the end of a run, what changed parameters left to run: the last stage
// goes on when its changed stop criteria do not end it in this state (its engines are in place,
// and its record is made again when it ends), else any stage after it. False: nothing.
bool continueFinishedRun(Simulation& sim, RunRecord& rec, double stageWallSeconds, bool changed,
                         RunLog& log) {
    if (changed && !checkStop(sim, stageWallSeconds).fired) {
        sim.stageStarted = true;
        if (rec.stages.size() == sim.stage + 1)
            rec.stages.erase(sim.stage);
        rec.stopReason.clear();
        log.info(fmt::format("stage {} '{}' goes on from step {}: its changed stop criteria do "
                             "not end it there",
                             sim.stage + 1, sim.stages[sim.stage].name, sim.step));
        return true;
    }
    if (sim.stage + 1 < sim.stages.size()) {
        ++sim.stage;
        rec.stopReason.clear(); // the run goes on into that stage
        return true;
    }
    return false;
}

} // namespace

bool runStateCompleted(const std::string& runState) {
    const nlohmann::json j = nlohmann::json::parse(runState, nullptr, false);
    if (!j.is_object())
        return false;
    const auto completed = j.find("completed");
    return completed != j.end() && completed->is_boolean() && completed->get<bool>();
}

int runDeck(Deck& deck, const RunOptions& opt, RestartPoint* restart) {
    const fs::path dir = opt.out.empty() ? fs::path("runs") / deck.name : fs::path(opt.out);
    std::string error;
    RestartPoint resumed;
    // --resume --force of a completed run runs it again from the start.
    if (opt.resume && !restart && stoppedRunIn(dir) == StoppedRun::Completed) {
        if (!opt.force)
            return leaveCompletedRun(dir, deck, opt);
    } else if (opt.resume && !restart) {
        bool found = false;
        if (int code = findResumePoint(dir, deck, resumed, found, opt.quiet, opt.force))
            return code;
        if (found)
            restart = &resumed;
    }
    // Before anything of the run is written (reading a checkpoint for --resume writes nothing, and
    // a signal then ends the program): a signal from here on waits for the first step's check
    // (checkpoint, exit 3), rather than killing a run whose directory already says started.
    installInterruptHandlers();
    // A --resume that found no checkpoint to continue from starts afresh, as asked.
    const bool fresh = !restart && !opt.resume;
    if (int code = prepareRunDirectory(dir, fresh, opt.force, error); code != ExitOk) {
        std::cerr << "dem: error: " << error << '\n';
        return code;
    }
    RunLog log(opt.quiet);
    if (!writeFile(dir / "deck.toml", deck.text) ||
        !writeFile(dir / "resolved.toml", deck.resolvedToml) ||
        (!restart && !writeFile(dir / "log.txt", "")) || !log.open((dir / "log.txt").string())) {
        std::cerr << "dem: error: cannot write in run directory '" << dir.string() << "'\n";
        return ExitFailed;
    }
    RunRecord rec;
    rec.threads = useExactThreads(opt.threads);
    if (opt.threads > rec.threads)
        std::cerr << "dem: warning: --threads " << opt.threads
                  << " is more than the OpenMP thread limit (OMP_THREAD_LIMIT): running on "
                  << rec.threads << '\n';
    rec.started = timestampNow();
    RestoredState restored;
    if (restart) {
        if (!restoreRunState(restart->meta.runState, rec, restored, error)) {
            std::cerr << "dem: error: " << restart->file << ": " << error << '\n';
            return ExitBadInput;
        }
        rec.restart = {{"from", restart->file}, {"step", restart->sim.step}};
        if (!restart->changes.empty())
            rec.restart["changes"] = restart->changes;
        deck.sim = std::move(restart->sim);
    }
    Simulation& sim = deck.sim;
    const double wallBefore = rec.wallSeconds;
    if (restart)
        log.info(fmt::format("dem {}: continuing '{}' from '{}' (step {}, t = {:.6g} s) into '{}' "
                             "({} spheres, {} threads, {} contact lanes)",
                             DEM_VERSION, deck.path, restart->file, sim.step, sim.time,
                             dir.string(), sim.particles.size(), rec.threads, pairLaneWidth()));
    else
        log.info(fmt::format("dem {}: running '{}' into '{}' ({} spheres, {} objects, {} stages, "
                             "dt = {:.6g} s, {} threads, {} contact lanes)",
                             DEM_VERSION, deck.path, dir.string(), sim.particles.size(),
                             sim.obstacles.objects.size(), sim.stages.size(), sim.dt, rec.threads,
                             pairLaneWidth()));
    for (const std::string& change : restart ? restart->changes : std::vector<std::string>{})
        log.info("parameter changed on restart: " + change);
    for (const std::string& change : restart ? restart->withoutEffect : std::vector<std::string>{})
        log.warning(fmt::format("--set {} cannot take effect: none of what a continued run takes "
                                "from the deck (the outputs, the stages to come, the stop "
                                "criteria of the stage under way) depends on it",
                                change));
    // A continued run keeps what its deck reads (Deck.hpp): a checkpoint of the same deck kept
    // the same, one written before this state was optional kept all of it.
    const OptionalState read = optionalStateRead(deck.output, sim);
    sim.particles.keepOptional(read.orientation, read.start);

    // Checkpoints of another run in this directory must never be resumed; after a restart, the
    // ones beyond its step belonged to a future that is being rewritten.
    const std::string ckptDir = (dir / "checkpoints").string();
    if (!restart) {
        clearCheckpoints(ckptDir);
        // Nor may its other outputs pass for this run's when this deck does not ask for them.
        removeEarlierOutputs(dir);
    } else
        for (const std::string& name : dropCheckpointsAfter(ckptDir, sim.step))
            log.info("removed checkpoint '" + name + "' (beyond the restart step)");
    Checkpointer checkpointer(deck.output.checkpoint, ckptDir);
    checkpointer.start(restored.nextCheckpointTime);

    HistoryWriter history;
    const uint64_t historyEvery = deck.output.history.every;
    const std::string historyPath = (dir / "history.tsv").string();
    if (historyEvery > 0 && !(restart && !restored.history.empty()
                                  ? history.reopen(historyPath, deck.output.history.columns,
                                                   restored.history, restored.historyLastStep)
                                  : history.open(historyPath, deck.output.history.columns))) {
        log.error(fmt::format("cannot write '{}'", historyPath));
        return ExitFailed;
    }
    VtkRecorder vtk;
    const uint64_t vtkEvery = deck.output.vtk.every;
    const auto vtkFrom =
        restart ? std::optional(VtkContinuation{sim.time, sim.step}) : std::nullopt;
    if (vtkEvery > 0 && !openVtk(vtk, deck.output.vtk, dir, vtkFrom, error)) {
        log.error(error);
        return ExitFailed;
    }
    for (const PlotSpecDeck& p : deck.output.plots) {
        if (!writeGnuplotScript(dir.string(), toPlotSpec(p), error)) {
            log.error(error);
            return ExitFailed;
        }
    }
    Workspace ws;
    const PhaseTimes phasesBefore = rec.phases;
    const auto syncPhases = [&] { rec.phases = phasesBefore + ws.times; };
    Progress progress(opt.progress, opt.quiet, deck.output.progressEverySteps);
    const auto start = Clock::now();
    // Wall time of the running stage: a restarted stage keeps what it had used before.
    auto stageWall = start - std::chrono::duration_cast<Clock::duration>(
                                 std::chrono::duration<double>(restored.stageWallSeconds));
    int exitCode = ExitOk;
    bool completed = false;

    const auto checkpointMeta = [&] {
        CheckpointMeta meta;
        meta.deckName = deck.name;
        meta.deckPath = deck.path;
        meta.deckText = deck.text;
        meta.resolvedToml = deck.resolvedToml;
        meta.params = deck.params;
        rec.wallSeconds = wallBefore + secondsSince(start);
        syncPhases();
        meta.runState =
            runStateJson(rec, history, checkpointer, secondsSince(stageWall), completed);
        return meta;
    };
    const auto warnIfRotationPostponed = [&] {
        if (checkpointer.rotationPostponed())
            log.warning(fmt::format("checkpoints beyond keep = {} not removed (out of memory); the "
                                    "next checkpoint removes them",
                                    deck.output.checkpoint.keep));
    };
    // Writes a checkpoint and a summary saying where it is; false (logged) when it failed.
    const auto checkpoint = [&](CheckpointReason reason, size_t endedStage) {
        std::string path;
        if (!checkpointer.write(sim, checkpointMeta(), reason, endedStage, path, error)) {
            // The run goes on (its results are not lost), but it ends with the I/O error's exit
            // code: a checkpoint the deck asked for is missing.
            log.error("checkpoint not written: " + error);
            rec.error = "checkpoint not written: " + error;
            exitCode = ExitFailed;
            return false;
        }
        if (path.empty())
            return true; // already written at this step
        rec.lastCheckpoint = fs::relative(path, dir).string();
        rec.checkpointSeconds += checkpointer.lastWriteSeconds();
        log.fileOnly(fmt::format("checkpoint '{}' written ({:.3f} s)", rec.lastCheckpoint,
                                 checkpointer.lastWriteSeconds()));
        warnIfRotationPostponed();
        if (!completed && rec.status == "running") {
            syncPhases();
            writeSummary(dir, summaryJson(deck, sim, rec), log);
        }
        return true;
    };
    const auto startStage = [&] {
        beginStage(sim);
        stageWall = Clock::now();
        syncPhases();
        rec.stagePhases = rec.phases;
        rec.stageRebuilds = sim.neighbours.rebuilds;
        log.info(fmt::format("stage {} '{}' starts at step {}, t = {:.6g} s", sim.stage + 1,
                             sim.stages[sim.stage].name, sim.step, sim.time));
    };
    const auto fail = [&](const std::string& message) {
        progress.finish();
        rec.status = "failed";
        rec.stopReason.clear(); // no stop criterion ended it; `error` says what did
        rec.error = message;
        log.error(message);
        exitCode = ExitFailed;
    };

    // The state before a failed step, recomputed (the step overwrote part of it), takes the place
    // of the state at hand, so that the summary and the last history row describe the state at
    // the step they name. False when it cannot be recomputed: the state at hand is not finite,
    // and is not read again.
    const auto recomputeLastGoodState = [&](std::string& from) {
        ReplaySources sources;
        sources.checkpointDir = ckptDir;
        if (restart) {
            sources.restartFile = restart->file;
            sources.restartStep = rec.restart["step"].get<uint64_t>();
        }
        sources.stages = &sim.stages;
        for (const nlohmann::json& s : rec.stages)
            sources.stageEnds.push_back(s["end_step"].get<uint64_t>());
        // The replay holds a second simulation: the summary of the failure is written first, in
        // case the memory runs out in one of its parallel loops (OutOfMemory.hpp).
        rec.wallSeconds = wallBefore + secondsSince(start);
        syncPhases();
        writeSummary(dir, summaryJson(deck, sim, rec, false), log);
        Simulation good;
        try {
            if (!replayToStep(deck, sources, sim.step, good, from, error)) {
                log.error("the state before the failing step could not be recomputed: " + error);
                return false;
            }
        } catch (const std::bad_alloc&) {
            log.error("the state before the failing step could not be recomputed: out of memory");
            return false;
        }
        sim = std::move(good);
        return true;
    };
    // After a failed step: a checkpoint of the state before it, for inspection and restart.
    const auto saveLastGoodState = [&](const std::string& from) {
        if (checkpointer.lastStep() == sim.step)
            return; // written already
        std::string path;
        try {
            if (!checkpointer.write(sim, checkpointMeta(), CheckpointReason::Failure, 0, path,
                                    error)) {
                log.error("the state before the failing step was not saved: " + error);
                return;
            }
        } catch (const std::bad_alloc&) {
            log.error("the state before the failing step was not saved: out of memory");
            return;
        }
        rec.lastCheckpoint = fs::relative(path, dir).string();
        log.info(fmt::format("the state after step {}, before the failure, is in '{}' (replayed "
                             "from {})",
                             sim.step, rec.lastCheckpoint,
                             from == "the initial state" ? from : "'" + from + "'"));
        warnIfRotationPostponed();
    };

    // A summary saying the run is under way replaces any earlier one in the directory (a run
    // that runs out of memory in a parallel loop ends without its own: OutOfMemory.hpp).
    writeSummary(dir, summaryJson(deck, sim, rec, false), log);
    // Failed before the first step: no step to take, no history to record again or to plot.
    bool failedAtStart = false;
    // False once the state is not to be read: a failed step spoilt it and the state before could
    // not be recomputed, or the memory ran out part way through a step.
    bool stateKnown = true;
    // The steps and their outputs. Running out of memory ends the run with its summary.
    try {
        if (!restart) {
            // Outputs of the initial state, with the first stage's engines (gravity) in place and
            // the contacts present at the start found.
            startStage();
            if (!rebuildNeighbours(sim, ws)) {
                fail(ws.error); // e.g. a sphere outside the domain from the start
                failedAtStart = true;
            } else {
                if (historyEvery > 0)
                    history.record(sim);
                if (vtkEvery > 0 && !vtk.write(sim, error)) {
                    fail(error);
                    failedAtStart = true;
                }
            }
        } else if (restored.completed) {
            if (!continueFinishedRun(sim, rec, restored.stageWallSeconds, !restart->changes.empty(),
                                     log)) {
                completed = true;
                rec.status = "completed";
                log.info(
                    "the checkpoint was written at the end of the run; nothing is left to run");
            }
        } else if (sim.stage >= sim.stages.size()) {
            log.error(fmt::format("the checkpoint is in stage {} but the deck has {} stages",
                                  sim.stage + 1, sim.stages.size()));
            return ExitBadInput;
        }
        // The step loop: one step, its outputs, the stop criteria, then checkpoints and signals.
        while (!completed && !failedAtStart) {
            if (!sim.stageStarted)
                startStage();
            if (!advance(sim, ws)) {
                fail(ws.error);
                std::string from;
                stateKnown = recomputeLastGoodState(from);
                if (stateKnown)
                    saveLastGoodState(from);
                break;
            }
            rec.particleSteps += double(sim.particles.size());
            if (vtkEvery > 0 && sim.step % vtkEvery == 0) {
                const auto t0 = Clock::now();
                const bool written = vtk.write(sim, error);
                rec.vtkSeconds += secondsSince(t0);
                if (!written) {
                    fail(error);
                    break;
                }
            }
            if (historyEvery > 0 && sim.step % historyEvery == 0) {
                const auto t0 = Clock::now();
                history.record(sim);
                rec.historySeconds += secondsSince(t0);
            }
            const StopStatus stop = checkStop(sim, secondsSince(stageWall));
            bool stageEnded = false;
            const size_t stage = sim.stage;
            if (stop.fired) {
                progress.finish();
                stageEnded = true;
                syncPhases();
                rec.stages.push_back(
                    {{"name", sim.stages[sim.stage].name},
                     {"stop_reason", stop.reason},
                     {"end_step", sim.step},
                     {"end_time", sim.time},
                     {"wall_seconds", secondsSince(stageWall)},
                     {"phase_seconds", phaseJson(rec.phases, rec.stagePhases, 0)},
                     {"neighbour_rebuilds", sim.neighbours.rebuilds - rec.stageRebuilds}});
                log.info(fmt::format("stage {} '{}' ends at step {}, t = {:.6g} s: {}",
                                     sim.stage + 1, sim.stages[sim.stage].name, sim.step, sim.time,
                                     stop.reason));
                sim.stageStarted = false;
                if (sim.stage + 1 == sim.stages.size()) {
                    completed = true;
                    rec.status = "completed";
                    rec.stopReason = stop.reason; // the stage records keep those before
                } else {
                    ++sim.stage;
                    stageWall = Clock::now();
                }
            }
            // The state saved is the one the next iteration starts from.
            const bool periodic = checkpointer.periodicDue(sim);
            if (stageEnded && deck.output.checkpoint.atStageEnd)
                checkpoint(CheckpointReason::StageEnd, stage);
            if (completed && deck.output.checkpoint.atEnd)
                checkpoint(CheckpointReason::RunEnd, stage);
            if (completed)
                break;
            if (periodic)
                checkpoint(CheckpointReason::Periodic, 0);
            if (int sig = pendingInterrupt()) {
                progress.finish();
                rec.stopReason = sig == SIGINT ? "SIGINT" : "SIGTERM";
                log.error(fmt::format("interrupted by {} at step {}; --resume continues the run",
                                      rec.stopReason, sim.step));
                if (checkpoint(CheckpointReason::Signal, 0)) {
                    rec.status = "interrupted";
                    exitCode = ExitInterrupted;
                } else {
                    rec.status = "failed";
                    rec.stopReason.clear(); // as for any failed run: `error` says why
                    rec.error = "interrupted, and the checkpoint could not be written: " + error;
                    exitCode = ExitFailed;
                }
                break;
            }
            progress.update(sim, secondsSince(stageWall),
                            (rec.particleSteps) / std::max(wallBefore + secondsSince(start), 1e-9),
                            log);
        }
        // The last state is recorded, except after a signal: the run goes on from the checkpoint,
        // and its outputs then continue as if it had never stopped.
        if (historyEvery > 0 && rec.status != "interrupted" && !failedAtStart && stateKnown)
            history.record(sim);
        if (vtkEvery > 0 && rec.status == "completed" && !vtk.write(sim, error))
            log.error(error);
    } catch (const std::bad_alloc&) {
        // Out of memory outside a parallel loop (OutOfMemory.hpp has those): the step or output
        // under way stopped part way, so the state is not read again. The neighbour lists, the
        // largest part of it, are let go first, for the summary's own few allocations.
        stateKnown = false;
        sim.pairs = SpherePairs{};
        sim.obstacleContacts = ObstacleContacts{};
        fail(fmt::format("out of memory after step {} ({} spheres); the run stopped{}", sim.step,
                         sim.particles.size(),
                         rec.lastCheckpoint.empty()
                             ? ""
                             : fmt::format(" (its last checkpoint: '{}')", rec.lastCheckpoint)));
    }
    if (!deck.output.plots.empty() && historyEvery > 0 && !failedAtStart) {
        // A figure that cannot be drawn (no gnuplot) does not fail the run: its script remains.
        std::vector<std::string> written;
        if (!renderPlots(dir.string(), "png", written, error))
            log.warning("plots not rendered: " + error);
    }
    rec.wallSeconds = wallBefore + secondsSince(start);
    syncPhases();
    // What is printed after the summary is made first: once the summary says how the run ended,
    // running out of memory should not end it otherwise (status 1 from main). Only freeing the
    // run's JSON values on return still allocates (OutOfMemory.hpp).
    std::string text, last;
    {
        const nlohmann::json summary = summaryJson(deck, sim, rec, stateKnown);
        text = summary.dump(2);
        last = fmt::format("{} after {} steps, t = {:.6g} s, {:.2f} s wall ({:.3g} "
                           "particle-steps/s); summary in '{}'",
                           rec.status, sim.step, sim.time, rec.wallSeconds,
                           summary["particle_steps_per_second"].get<double>(),
                           (dir / "summary.json").string());
    }
    if (!writeSummaryText(dir, text, log))
        exitCode = ExitFailed; // the run's result is not where it should be
    log.info(last);
    if (opt.json)
        std::cout << text << std::endl;
    return exitCode;
}

} // namespace dem
