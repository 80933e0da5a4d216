#include "app/Commands.hpp"

#include "Version.hpp"
#include "app/ExitCodes.hpp"
#include "app/IntegerCheck.hpp"
#include "app/Runner.hpp"
#include "app/SnapshotCommand.hpp"
#include "batch/BatchCommand.hpp"
#include "batch/BatchReport.hpp"
#include "deck/Deck.hpp"
#include "deck/DeckKeys.hpp"
#include "deck/Diagnostics.hpp"
#include "io/Checkpoint.hpp"
#include "io/Gnuplot.hpp"
#include "io/JsonFile.hpp"
#include "io/WholeFile.hpp"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace dem {

namespace {

constexpr const char* exitCodesText =
    "Exit status:\n"
    "  0  the run reached its last stop criterion (other commands: success)\n"
    "  1  the run failed (non-finite state, I/O error, out of memory); plot, snapshot: gnuplot\n"
    "     is missing or failed, or plot --merge could not write its script; batch: some job\n"
    "     failed, crashed or could not be started (the others still ran)\n"
    "  2  bad usage, deck, table or checkpoint file, or a run directory holding a completed,\n"
    "     failed, interrupted or killed run (ask for --resume, --restart or --force): nothing\n"
    "     was run\n"
    "  3  interrupted by SIGINT or SIGTERM, after writing a checkpoint (continue with --resume)\n";

// "NAME=VALUE" -> pair; false when there is no '=' or no name.
bool splitOverride(const std::string& s, std::pair<std::string, std::string>& out) {
    const size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
        return false;
    out = {s.substr(0, eq), s.substr(eq + 1)};
    return true;
}

int parseOverrides(const std::vector<std::string>& sets, ParamOverrides& out) {
    for (const std::string& s : sets) {
        std::pair<std::string, std::string> kv;
        if (!splitOverride(s, kv)) {
            std::cerr << "dem: error: --set '" << s << "': expected NAME=VALUE\n";
            return ExitBadInput;
        }
        out.push_back(kv);
    }
    return ExitOk;
}

// Loads a deck, printing every error; returns ExitOk or ExitBadInput.
int loadOrReport(const std::string& path, const std::vector<std::string>& sets, Deck& deck) {
    ParamOverrides overrides;
    if (int code = parseOverrides(sets, overrides))
        return code;
    std::vector<DeckError> errors;
    if (loadDeck(path, overrides, deck, errors))
        return ExitOk;
    for (const DeckError& e : errors)
        std::cerr << formatError(e) << '\n';
    if (errors.size() > 1)
        std::cerr << "dem: " << errors.size() << " errors in '" << path << "'\n";
    return ExitBadInput;
}

struct Options {
    std::string deck, table, target, topic;
    std::vector<std::string> sets;
    RunOptions run;
    std::string restart;
    bool allowChanges = false;
    bool json = false;
    std::string format = "png", merge, mergeX = "time";
    bool manKeys = false;
};

void addRun(CLI::App& app, Options& o) {
    CLI::App* run = app.add_subcommand("run", "Run the simulation a deck describes");
    run->footer(std::string("\nThe run directory holds deck.toml, resolved.toml, log.txt, "
                            "summary.json and the outputs.\n\n") +
                exitCodesText);
    run->add_option("DECK", o.deck, "Deck file (TOML); not needed with --restart");
    run->add_option(
        "--set", o.sets,
        "Override a deck parameter: NAME=VALUE (VALUE may be an expression); repeatable");
    run->add_option("--out", o.run.out, "Run directory (default: runs/<deck file stem>)");
    run->add_option(
           "--threads", o.run.threads,
           "OpenMP threads (default: OMP_NUM_THREADS or all cores); results do not depend on it")
        ->check(integerAtLeast(1));
    auto* restart = run->add_option(
        "--restart", o.restart,
        "Continue from this checkpoint file, with the deck stored in it (run directory: --out, "
        "default runs/<deck stem>)");
    run->add_flag("--resume", o.run.resume,
                  "Continue from the newest good checkpoint in the run directory, or start fresh")
        ->excludes(restart);
    run->add_flag("--allow-changes", o.allowChanges,
                  "With --restart: apply --set to the stored deck; its stages and outputs then "
                  "change, bodies, materials, contacts, the time step and the engines of the "
                  "stage under way stay as checkpointed (a change only they use is warned of)")
        ->needs(restart);
    run->add_option("--progress", o.run.progress,
                    "Progress display: auto (live line on a terminal), always, never")
        ->check(CLI::IsMember({"auto", "always", "never"}));
    run->add_flag("--quiet", o.run.quiet, "Print only warnings and errors on stderr");
    run->add_flag("--json", o.run.json, "Print summary.json on stdout at the end");
    run->add_flag("--force", o.run.force,
                  "Overwrite a run directory that holds a finished or failed run, or start afresh "
                  "over an interrupted or killed one");
}

// Parameters as stored in a checkpoint, as overrides that rebuild the same deck exactly.
ParamOverrides storedParams(const CheckpointMeta& meta) {
    ParamOverrides out;
    for (const auto& [name, value] : meta.params)
        out.emplace_back(name, fmt::format("{}", value)); // shortest form that reads back exactly
    return out;
}

// Whether a run continued from `at` takes the same from the decks `a` and `b`: the outputs and the
// stages still to run; of the stage under way (or the last of a finished run) only the stop
// criteria, as its engines were set when it began and are the checkpoint's.
bool sameContinuation(const Deck& a, const Deck& b, const Simulation& at, bool finished) {
    const std::vector<Stage>&sa = a.sim.stages, &sb = b.sim.stages;
    if (!(a.output == b.output) || sa.size() != sb.size())
        return false;
    for (size_t k = at.stage; k < sa.size(); ++k) {
        const bool begun = k == at.stage && (at.stageStarted || finished);
        if (begun ? !(sa[k].stop == sb[k].stop) : !(sa[k] == sb[k]))
            return false;
    }
    return true;
}

// The --set changes of a restart that cannot take effect, found by rebuilding the deck without
// each (the others kept) rather than by reading its expressions: a parameter that reaches only
// what is the checkpoint's (bodies, materials, time step, the engines of the stage under way)
// leaves the continuation the same. `changed` is the deck with all of them, from `overrides`.
std::vector<std::string> changesWithoutEffect(const RestartPoint& point,
                                              const ParamOverrides& overrides,
                                              const Deck& changed) {
    const nlohmann::json state = nlohmann::json::parse(point.meta.runState, nullptr, false);
    const bool finished = state.is_object() && state.value("completed", nlohmann::json()) == true;
    const ParamOverrides stored = storedParams(point.meta);
    std::vector<std::string> without;
    for (const std::string& change : point.changes) {
        const std::string name = change.substr(0, change.find('='));
        ParamOverrides undone = overrides;
        std::erase_if(undone, [&](const auto& kv) { return kv.first == name; });
        for (const auto& kv : stored)
            if (kv.first == name)
                undone.push_back(kv);
        Deck other;
        std::vector<DeckError> errors; // a deck that needs the change too tells nothing
        if (loadDeckText(point.meta.deckPath, point.meta.deckText, undone, other, errors) &&
            sameContinuation(changed, other, point.sim, finished))
            without.push_back(change);
    }
    return without;
}

// `dem run --restart FILE`: the deck stored in the checkpoint is rebuilt with its parameters
// (and, with --allow-changes, the --set overrides); the checkpoint's state then replaces the
// deck's initial state.
int doRestart(Options& o) {
    RestartPoint point;
    std::string error;
    if (!readCheckpoint(o.restart, point.sim, point.meta, error)) {
        std::cerr << "dem: error: " << error << '\n';
        return ExitBadInput;
    }
    point.file = o.restart;
    if (!o.sets.empty() && !o.allowChanges) {
        std::cerr << "dem: error: --set with --restart would change a run that is continued "
                     "exactly; add --allow-changes to apply it on purpose\n";
        return ExitBadInput;
    }
    ParamOverrides overrides = storedParams(point.meta);
    ParamOverrides changes;
    if (int code = parseOverrides(o.sets, changes))
        return code;
    for (const auto& [name, value] : changes) {
        if (!point.meta.params.count(name)) {
            std::cerr << "dem: error: --set " << name << ": the deck stored in '" << o.restart
                      << "' has no parameter '" << name << "'\n";
            return ExitBadInput;
        }
        std::erase_if(overrides, [&](const auto& kv) { return kv.first == name; });
        overrides.emplace_back(name, value);
        point.changes.push_back(name + "=" + value);
    }
    if (!o.deck.empty()) {
        std::string text, error;
        if (const FileRead r = readWholeFile(o.deck, text, maxInputFileBytes); !r) {
            error = r.error == EFBIG ? "'" + o.deck + "' is larger than a deck can be"
                                     : r.message(o.deck);
            std::cerr << "dem: error: " << error << "; --restart uses the deck stored in '"
                      << o.restart << "', so give the checkpoint alone\n";
            return ExitBadInput;
        }
        if (text != point.meta.deckText) {
            std::cerr << "dem: error: '" << o.deck << "' is not the deck stored in '" << o.restart
                      << "'; --restart uses the stored deck, so give the checkpoint alone\n";
            return ExitBadInput;
        }
    }
    Deck deck;
    std::vector<DeckError> errors;
    if (!loadDeckText(point.meta.deckPath, point.meta.deckText, overrides, deck, errors)) {
        for (const DeckError& e : errors)
            std::cerr << formatError(e) << '\n';
        return ExitBadInput;
    }
    deck.name = point.meta.deckName;
    if (point.changes.empty()) {
        deck.resolvedToml = point.meta.resolvedToml;
    } else {
        // Changed parameters reach the stages (engines, stop criteria) and outputs; the bodies,
        // materials, contacts and time step are the checkpoint's.
        if (deck.sim.stages.size() <= point.sim.stage) {
            std::cerr << "dem: error: with the changed parameters the deck has "
                      << deck.sim.stages.size() << " stages; the checkpoint is in stage "
                      << point.sim.stage + 1 << '\n';
            return ExitBadInput;
        }
        point.withoutEffect = changesWithoutEffect(point, overrides, deck);
        point.sim.stages = deck.sim.stages;
    }
    return runDeck(deck, o.run, &point);
}

int doRun(Options& o) {
    if (!o.restart.empty())
        return doRestart(o);
    if (o.deck.empty()) {
        std::cerr << "dem: error: run: give a DECK file (or --restart CHECKPOINT)\n";
        return ExitBadInput;
    }
    Deck deck;
    if (int code = loadOrReport(o.deck, o.sets, deck))
        return code;
    return runDeck(deck, o.run);
}

int doCheck(Options& o) {
    Deck deck;
    if (int code = loadOrReport(o.deck, o.sets, deck))
        return code;
    const Simulation& sim = deck.sim;
    if (o.json) {
        nlohmann::json j = {{"deck", o.deck},
                            {"valid", true},
                            {"particles", sim.particles.size()},
                            {"objects", sim.obstacles.objects.size()},
                            {"stages", sim.stages.size()},
                            {"dt", sim.dt}};
        std::cout << j.dump(2) << std::endl;
    } else {
        std::cerr << fmt::format("{}: ok ({} spheres, {} objects, {} stages, dt = {:.6g} s)\n",
                                 o.deck, sim.particles.size(), sim.obstacles.objects.size(),
                                 sim.stages.size(), sim.dt);
    }
    return ExitOk;
}

// Where a checkpoint's state is in its run's stages, in words: the stage under way, the next one
// to start, or the end of the last.
std::string stageText(size_t stage, bool started, size_t stages, size_t ended) {
    if (ended == stages)
        return stages == 1 ? "1 of 1, ended" : fmt::format("all {} stages ended", stages);
    if (started)
        return fmt::format("{} of {}, under way", stage, stages);
    return ended == 0 ? fmt::format("{} of {}, not started", stage, stages)
                      : fmt::format("{} of {}, not started (stage {} ended)", stage, stages, ended);
}

// The servos in force in a checkpoint's state: the cell's stress control (its settings, and per
// controlled axis the target and the stress now) and the servo-controlled objects (target and
// push now).
void servoJson(const CheckpointInfo& info, nlohmann::json& j) {
    const StressControl& c = info.stressControl;
    if (c.axes != 0) {
        nlohmann::json s = {{"max_strain_rate", c.maxRate}, {"gain", c.gain}};
        if (c.integralTime > 0)
            s["integral_time"] = c.integralTime;
        const char* names[] = {"xx", "yy", "zz"};
        for (int a = 0; a < 3; ++a)
            if (c.axes & (1u << a))
                s[names[a]] = {{"target", c.target[a]}, {"stress", info.cellStress[a]}};
        j["stress_control"] = s;
    }
    if (!info.servos.empty()) {
        nlohmann::json list = nlohmann::json::array();
        for (const CheckpointInfo::Servo& s : info.servos)
            list.push_back({{"object", s.object}, {"servo_force", s.target}, {"force", s.push}});
        j["servos"] = list;
    }
}

std::string stressControlText(const CheckpointInfo& info) {
    const StressControl& c = info.stressControl;
    std::string text;
    const char* names[] = {"xx", "yy", "zz"};
    for (int a = 0; a < 3; ++a)
        if (c.axes & (1u << a))
            text +=
                fmt::format("{} {:.6g} Pa of {:.6g}, ", names[a], info.cellStress[a], c.target[a]);
    text += fmt::format("max_strain_rate {:.6g} /s, gain {:.6g} /(s Pa)", c.maxRate, c.gain);
    return c.integralTime > 0 ? text + fmt::format(", integral_time {:.6g} s", c.integralTime)
                              : text;
}

std::string servosText(const CheckpointInfo& info) {
    std::string text;
    for (const CheckpointInfo::Servo& s : info.servos)
        text += fmt::format("{}{} {:.6g} N of {:.6g}", text.empty() ? "" : "; ", s.object, s.push,
                            s.target);
    return text;
}

// `dem info FILE` on a checkpoint: what is inside, after verifying the whole file. A file that
// does not verify is described by its error alone: what could be read of it may be made up.
int infoCheckpoint(const Options& o) {
    CheckpointInfo info;
    std::string error;
    if (!inspectCheckpoint(o.target, info, error)) {
        std::cerr << "dem: error: " << error << '\n';
        return ExitBadInput;
    }
    // The stages before the one the state is in have ended; at the end of the run, all have.
    const size_t ended = runStateCompleted(info.runState) ? info.stages : info.stage;
    nlohmann::json j = {{"path", info.path},
                        {"compression", info.compression},
                        {"format_version", info.formatVersion},
                        {"version", info.programVersion},
                        {"deck", info.deckName},
                        {"step", info.step},
                        {"sim_time", info.time},
                        {"stage", info.stage + 1},
                        {"stage_started", info.stageStarted},
                        {"stages", info.stages},
                        {"stages_ended", ended},
                        {"particles", info.particles},
                        {"contacts", info.contacts},
                        {"file_bytes", info.fileBytes},
                        {"checksum_ok", info.checksumOk},
                        {"state_digest", info.stateDigest}};
    if (info.cell.enabled) { // matrices as their rows; the cell's edge vectors are h's columns
        auto rows = [](const Mat3& m) {
            nlohmann::json r = nlohmann::json::array();
            for (int k = 0; k < 3; ++k)
                r.push_back({m(k, 0), m(k, 1), m(k, 2)});
            return r;
        };
        j["cell_min"] = {info.cell.origin.x(), info.cell.origin.y(), info.cell.origin.z()};
        j["cell_edges"] = rows(info.cell.h.transpose());
        j["velocity_gradient"] = rows(info.cell.velGrad);
    }
    servoJson(info, j);
    if (o.json) {
        std::cout << j.dump(2) << std::endl;
        return ExitOk;
    }
    for (const auto& [k, v] : j.items()) {
        if (k == "stage_started" || k == "stages" || k == "stages_ended")
            continue; // in the stage's line
        const std::string text =
            k == "stage" ? stageText(info.stage + 1, info.stageStarted, info.stages, ended)
            : k == "stress_control" ? stressControlText(info)
            : k == "servos"         ? servosText(info)
            : v.is_string()         ? v.get<std::string>()
                                    : v.dump();
        std::cout << fmt::format("{:<28}{}\n", k, text);
    }
    return ExitOk;
}

// The checkpoints of a run directory, as `dem info` reports them: how many, and the newest step.
nlohmann::json checkpointCount(const fs::path& runDir) {
    std::vector<CheckpointEntry> checkpoints;
    std::string error;
    listCheckpoints((runDir / "checkpoints").string(), checkpoints, error); // none: none listed
    return {{"count", checkpoints.size()},
            {"newest_step", checkpoints.empty() ? nlohmann::json(nullptr)
                                                : nlohmann::json(checkpoints.front().step)}};
}

int doInfo(Options& o) {
    fs::path target(o.target);
    std::error_code ec;
    if (fs::is_directory(target, ec))
        target /= "summary.json";
    else if (fs::exists(target, ec) && target.filename() != "summary.json")
        return infoCheckpoint(o);
    nlohmann::json j;
    std::string error;
    if (!readJsonObject(target.string(), j, error)) {
        std::cerr << "dem: error: " << error << "; no run summary there\n";
        return ExitBadInput;
    }
    j["checkpoints"] = checkpointCount(target.parent_path());
    if (o.json) {
        std::cout << j.dump(2) << std::endl;
        return ExitOk;
    }
    auto show = [&](const char* key) { // what is null says nothing
        if (j.contains(key) && !j[key].is_null())
            std::cout << fmt::format(
                "{:<28}{}\n", key, j[key].is_string() ? j[key].get<std::string>() : j[key].dump());
    };
    for (const char* key : {"deck", "status", "stop_reason", "error", "steps", "sim_time",
                            "wall_seconds", "threads", "particles", "contacts",
                            "particle_steps_per_second", "version", "state_digest", "checkpoint"})
        show(key);
    if (j.contains("restart") && j["restart"].is_object())
        for (const auto& [k, v] : j["restart"].items())
            std::cout << fmt::format("restart.{:<20}{}\n", k,
                                     v.is_string() ? v.get<std::string>() : v.dump());
    const nlohmann::json& count = j["checkpoints"];
    std::cout << fmt::format(
        "{:<28}{}{}\n", "checkpoints", count["count"].get<size_t>(),
        count["newest_step"].is_null()
            ? ""
            : fmt::format(" (newest at step {})", count["newest_step"].get<uint64_t>()));
    if (j.contains("final"))
        for (const auto& [k, v] : j["final"].items())
            std::cout << fmt::format("final.{:<22}{}\n", k, v.dump());
    return ExitOk;
}

// `dem plot DIR`: renders a run's plots/*.gp, or a batch's merged plot of one history column.
// Nothing to plot (no scripts, no such batch or column) is bad input; a merged script that cannot
// be written, and gnuplot missing or failing, are failures, as for `dem snapshot`.
int doPlot(const Options& o) {
    std::string error;
    std::vector<std::string> written;
    const auto fail = [&](int code) {
        std::cerr << "dem: error: " << error << '\n';
        return code;
    };
    if (!o.merge.empty()) {
        MergedPlot plot;
        if (!planBatchMergedPlot(o.target, o.merge, o.mergeX, plot, error))
            return fail(ExitBadInput);
        if (!writeMergedScript(plot.script, plot.runs, o.mergeX, o.merge, error) ||
            !renderScript(plot.script, o.format, "", error))
            return fail(ExitFailed);
        written.push_back(fs::path(plot.script).replace_extension(o.format).string());
    } else {
        std::vector<std::string> scripts;
        if (!listPlotScripts(o.target, scripts, error))
            return fail(ExitBadInput);
        if (!renderPlotScripts(scripts, o.format, written, error))
            return fail(ExitFailed);
    }
    for (const std::string& w : written)
        std::cout << w << '\n';
    return ExitOk;
}

int doHelp(CLI::App& app, const std::string& topic) {
    if (topic.empty()) { // the footer gives the exit status
        // app.help() would describe the parsed subcommand, `help` itself.
        std::cout << app.get_formatter()->make_help(&app, "dem", CLI::AppFormatMode::Normal);
        return ExitOk;
    }
    if (topic == "exit-codes") {
        std::cout << exitCodesText;
        return ExitOk;
    }
    if (topic == "deck") {
        std::cout << "Decks are TOML files; see dem-deck(5) (man -l man/dem-deck.5) and the JSON "
                     "Schema printed by 'dem schema'.\n";
        return ExitOk;
    }
    // The topics the error lists come from the commands themselves, so that a new one is listed.
    std::vector<std::string> topics;
    for (CLI::App* sub : app.get_subcommands({})) {
        if (sub->get_name() == topic) {
            std::cout << sub->help("dem");
            return ExitOk;
        }
        if (sub->get_name() != "help")
            topics.push_back(sub->get_name());
    }
    topics.insert(topics.end(), {"deck", "exit-codes"});
    std::cerr << fmt::format("dem: error: no help topic '{}' (topics: {})\n", topic,
                             fmt::join(topics, ", "));
    return ExitBadInput;
}

bool isCommand(const CLI::App& app, const std::string& word) {
    const auto subs = app.get_subcommands({});
    return std::any_of(subs.begin(), subs.end(),
                       [&](const CLI::App* sub) { return sub->get_name() == word; });
}

// An unknown first word: CLI11 would only say that a subcommand is required.
int unknownCommand(const CLI::App& app, const std::string& word) {
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands({}))
        names.push_back(sub->get_name());
    const std::vector<std::string_view> candidates(names.begin(), names.end());
    std::cerr << fmt::format("dem: error: unknown {} '{}'{} (commands: {}; see 'dem --help')\n",
                             word.rfind('-', 0) == 0 ? "option" : "command", word,
                             didYouMean(word, candidates), joinNames(names));
    return ExitBadInput;
}

// The help to point to after a usage error: the subcommand's when one was given.
std::string usageHint(const CLI::App& app) {
    const auto given = app.get_subcommands();
    return given.empty() ? "see 'dem --help'"
                         : fmt::format("see 'dem {} --help'", given.front()->get_name());
}

} // namespace

int runCommandLine(int argc, char** argv) {
    CLI::App app{"dem: discrete element simulations of granular materials, described by TOML decks",
                 "dem"};
    app.set_version_flag("--version", std::string("dem ") + DEM_VERSION);
    app.require_subcommand(1);
    app.footer(
        std::string("\nRun 'dem help SUBCOMMAND' or 'dem SUBCOMMAND --help' for details.\n\n") +
        exitCodesText);
    Options o;
    addRun(app, o);
    const std::function<int()> runBatch = addBatchCommand(app);
    CLI::App* check = app.add_subcommand("check", "Validate a deck without running it");
    check->add_option("DECK", o.deck, "Deck file (TOML)")->required();
    check->add_option("--set", o.sets, "Override a deck parameter: NAME=VALUE; repeatable");
    check->add_flag("--json", o.json, "Print a JSON description on stdout");
    CLI::App* info = app.add_subcommand(
        "info", "Describe a run directory (its summary.json) or a checkpoint file");
    info->add_option("TARGET", o.target, "Run directory, summary.json or checkpoint file")
        ->required();
    info->add_flag("--json", o.json,
                   "Print the description as JSON on stdout (of a run directory: its summary.json "
                   "with the count of its checkpoints)");
    CLI::App* schema = app.add_subcommand("schema", "Print the JSON Schema of decks");
    schema->add_flag("--man", o.manKeys, "Print the key reference of dem-deck(5) (roff) instead");
    CLI::App* plot = app.add_subcommand(
        "plot", "Render a run's gnuplot scripts (plots/*.gp), or a batch's merged plot");
    plot->add_option("DIR", o.target, "Run directory, or batch directory with --merge")->required();
    plot->add_option("--format", o.format, "Image format")
        ->check(CLI::IsMember({"png", "svg", "pdf"}));
    CLI::Option* merge = plot->add_option(
        "--merge", o.merge, "Batch directory: plot this history column of every job on one figure");
    plot->add_option("--x", o.mergeX,
                     "x column of the merged plot (default: time); the script is "
                     "merged-COLUMN-vs-X.gp for another x")
        ->needs(merge);
    const std::function<int()> runSnapshot = addSnapshotCommand(app);
    CLI::App* help =
        app.add_subcommand("help", "Show help on a subcommand or topic (deck, exit-codes)");
    help->add_option("TOPIC", o.topic, "Subcommand or topic");

    // dem-run and dem-batch imply their subcommand.
    const std::string self = fs::path(argv[0]).filename().string();
    std::vector<std::string> args;
    for (int k = argc - 1; k >= 1; --k)
        args.emplace_back(argv[k]);
    const bool versionOnly = argc == 2 && std::string_view(argv[1]) == "--version";
    if (self == "dem-run" && !versionOnly)
        args.emplace_back("run");
    else if (self == "dem-batch" && !versionOnly)
        args.emplace_back("batch");
    else if (!args.empty() && args.back() != "-h" && args.back() != "--help" &&
             args.back() != "--version" && !isCommand(app, args.back()))
        return unknownCommand(app, args.back());
    try {
        app.parse(args);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::cerr << "dem: error: " << e.what() << " (" << usageHint(app) << ")\n";
        return ExitBadInput;
    }
    if (app.got_subcommand("run"))
        return doRun(o);
    if (app.got_subcommand("check"))
        return doCheck(o);
    if (app.got_subcommand("info"))
        return doInfo(o);
    if (app.got_subcommand("schema")) {
        std::cout << (o.manKeys ? deckKeysRoff() : deckSchemaJson());
        return ExitOk;
    }
    if (app.got_subcommand("help"))
        return doHelp(app, o.topic);
    if (app.got_subcommand("batch"))
        return runBatch();
    if (app.got_subcommand("plot"))
        return doPlot(o);
    if (app.got_subcommand("snapshot"))
        return runSnapshot();
    return ExitBadInput;
}

} // namespace dem
