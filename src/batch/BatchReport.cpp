#include "batch/BatchReport.hpp"

#include "app/History.hpp"
#include "io/AtomicFile.hpp"
#include "io/Gnuplot.hpp"
#include "io/JsonFile.hpp"
#include "io/WholeFile.hpp"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace dem {

namespace {

nlohmann::json number(double v) {
    return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

double toNumber(const nlohmann::json& j) {
    return j.is_number() ? j.get<double>() : NAN;
}

// A cell of batch.tsv: tabs and newlines would break the table.
std::string cell(std::string s) {
    if (s.empty())
        return "-";
    for (char& c : s)
        if (c == '\t' || c == '\n' || c == '\r')
            c = ' ';
    return s;
}

std::string numberCell(double v) {
    return formatNumber(v);
}

// Parameter columns of batch.tsv: the table's, then every other parameter of the decks, sorted.
std::vector<std::string> paramColumns(const BatchPlan& plan) {
    std::vector<std::string> out = plan.paramColumns;
    std::set<std::string> rest;
    for (const Job& job : plan.jobs)
        for (const auto& [name, value] : job.params)
            if (std::find(out.begin(), out.end(), name) == out.end())
                rest.insert(name);
    out.insert(out.end(), rest.begin(), rest.end());
    return out;
}

std::vector<std::string> historyColumns(const fs::path& history) {
    std::ifstream in(history);
    // A failed allocation is thrown, not taken for the end of the line; so is a read error.
    in.exceptions(std::ios::badbit);
    std::string header;
    std::vector<std::string> out;
    try {
        if (!std::getline(in, header))
            return out;
    } catch (const std::bad_alloc&) {
        throw;
    } catch (const std::exception&) { // std::ios_base::failure, of either ABI
        return out;
    }
    std::istringstream s(header);
    s.exceptions(std::ios::badbit);
    std::string name;
    while (std::getline(s, name, '\t'))
        out.push_back(name);
    return out;
}

} // namespace

bool readJobSummary(Job& job) {
    const nlohmann::json s = readJsonObject((fs::path(job.dir) / "summary.json").string());
    if (!s.is_object())
        return false;
    JobResult& r = job.result;
    const std::string status = jsonText(s, "status");
    if (!status.empty())
        r.status = status;
    r.stopReason = jsonText(s, "stop_reason");
    r.error = jsonText(s, "error");
    r.stateDigest = jsonText(s, "state_digest");
    r.steps = s.contains("steps") ? toNumber(s["steps"]) : NAN;
    r.simTime = s.contains("sim_time") ? toNumber(s["sim_time"]) : NAN;
    if (s.contains("final") && s["final"].is_object())
        r.final = s["final"];
    if (!std::isfinite(r.duration) && s.contains("wall_seconds"))
        r.duration = toNumber(s["wall_seconds"]);
    if (job.params.empty() && s.contains("params") && s["params"].is_object())
        for (const auto& [k, v] : s["params"].items())
            job.params[k] = toNumber(v);
    return true;
}

nlohmann::json batchJson(const BatchPlan& plan, const BatchInfo& info) {
    // An object from the start: nlohmann::json 3.11's operator[] on a null value that cannot
    // allocate its object leaves the value broken, and its destructor then crashes.
    nlohmann::json j = nlohmann::json::object();
    j["format"] = 1;
    j["table"] = plan.table.empty() ? nlohmann::json(nullptr) : nlohmann::json(plan.table);
    j["deck"] = plan.deck.empty() ? nlohmann::json(nullptr) : nlohmann::json(plan.deck);
    j["batch_dir"] = plan.dir;
    j["status"] = info.status;
    j["started"] = info.started;
    j["finished"] = info.finished.empty() ? nlohmann::json(nullptr) : nlohmann::json(info.finished);
    j["core_budget"] = info.coreBudget;
    j["program"] = info.program;
    if (!info.emitted.empty())
        j["emitted"] = info.emitted;
    j["param_columns"] = plan.paramColumns;
    std::map<std::string, int> counts{
        {"queued", 0}, {"running", 0}, {"completed", 0}, {"failed", 0}, {"interrupted", 0}};
    std::vector<int> failedLines;
    nlohmann::json jobs = nlohmann::json::array();
    for (const Job& job : plan.jobs) {
        const JobResult& r = job.result;
        ++counts[r.status == "crashed" ? "failed" : r.status];
        if (r.status != "completed" && r.status != "queued" && r.status != "running" &&
            (failedLines.empty() || failedLines.back() != job.line))
            failedLines.push_back(job.line);
        nlohmann::json params = nlohmann::json::object();
        for (const auto& [k, v] : job.params)
            params[k] = number(v);
        nlohmann::json jj = {
            {"line", job.line},
            {"name", job.name},
            {"dir", job.dir},
            {"deck", job.deck},
            {"deck_sha256", job.deckSha256},
            {"threads", job.threads},
            {"rep", job.rep},
            {"count", job.count},
            {"set", job.tableValues},
            {"overrides", job.overrides},
            {"env", job.env},
            {"params", params},
            {"planned_steps", job.plannedSteps},
            {"command", runArguments(job)},
            {"status", r.status},
            {"exit_code", r.exitCode >= 0 ? nlohmann::json(r.exitCode) : nlohmann::json(nullptr)},
            {"signal", r.signal ? nlohmann::json(r.signal) : nlohmann::json(nullptr)},
            {"pid", r.status == "running" ? nlohmann::json(r.pid) : nlohmann::json(nullptr)},
            {"duration", number(r.duration)},
            {"started", r.started},
            {"finished", r.finished},
            {"stop_reason", r.stopReason},
            {"error", r.error},
            {"steps", number(r.steps)},
            {"sim_time", number(r.simTime)},
            {"state_digest", r.stateDigest},
            {"skipped", r.skipped},
            {"log", job.logPath()},
            {"final", r.final}};
        jobs.push_back(std::move(jj));
    }
    j["counts"] = counts;
    j["failed_lines"] = failedLines;
    j["jobs"] = std::move(jobs);
    return j;
}

std::string batchTsv(const BatchPlan& plan) {
    const std::vector<std::string> params = paramColumns(plan);
    std::vector<std::string> finals;
    for (const Job& job : plan.jobs)
        for (const auto& [k, v] : job.result.final.items())
            if (std::find(finals.begin(), finals.end(), k) == finals.end())
                finals.push_back(k);
    const bool reps =
        std::any_of(plan.jobs.begin(), plan.jobs.end(), [](const Job& j) { return j.count > 1; });
    std::vector<std::string> header{"line", "name"};
    if (reps)
        header.push_back("rep");
    header.insert(header.end(), params.begin(), params.end());
    for (const char* c : {"status", "exit_code", "duration", "stop_reason", "steps", "sim_time"})
        header.emplace_back(c);
    for (const std::string& f : finals) {
        // A final value named like another column gets a prefix.
        const bool clash = std::find(header.begin(), header.end(), f) != header.end();
        header.push_back(clash ? "final." + f : f);
    }
    std::string out;
    for (size_t k = 0; k < header.size(); ++k)
        out += (k ? "\t" : "") + header[k];
    out += '\n';
    for (const Job& job : plan.jobs) {
        const JobResult& r = job.result;
        std::vector<std::string> row{std::to_string(job.line), cell(job.name)};
        if (reps)
            row.push_back(std::to_string(job.rep));
        for (const std::string& p : params) {
            const auto it = job.params.find(p);
            row.push_back(it == job.params.end() ? "nan" : numberCell(it->second));
        }
        row.push_back(cell(r.status));
        row.push_back(r.exitCode >= 0 ? std::to_string(r.exitCode) : "nan");
        row.push_back(numberCell(r.duration));
        row.push_back(cell(r.stopReason));
        row.push_back(numberCell(r.steps));
        row.push_back(numberCell(r.simTime));
        for (const std::string& f : finals)
            row.push_back(r.final.contains(f) ? numberCell(toNumber(r.final[f])) : "nan");
        for (size_t k = 0; k < row.size(); ++k)
            out += (k ? "\t" : "") + row[k];
        out += '\n';
    }
    return out;
}

bool writeBatchFiles(const BatchPlan& plan, const BatchInfo& info, std::string& error) {
    std::error_code ec;
    fs::create_directories(plan.dir, ec);
    return writeTextAtomically((fs::path(plan.dir) / "batch.json").string(),
                               batchJson(plan, info).dump(2) + "\n", Durability::Synced, error) &&
           writeTextAtomically((fs::path(plan.dir) / "batch.tsv").string(), batchTsv(plan),
                               Durability::Renamed, error); // --collect can rebuild it
}

namespace {
bool batchFromJson(const nlohmann::json& j, const std::string& dir, BatchPlan& plan,
                   BatchInfo& info);
} // namespace

std::vector<Job> otherRecordedJobs(const BatchPlan& plan) {
    BatchPlan old;
    BatchInfo info;
    std::string error;
    std::vector<Job> others;
    if (!readBatchJson(plan.dir, old, info, error))
        return others;
    for (Job& job : old.jobs) {
        const bool replaced = std::any_of(plan.jobs.begin(), plan.jobs.end(), [&](const Job& j) {
            return j.line == job.line || j.name == job.name;
        });
        std::error_code ec;
        if (!replaced && fs::is_directory(job.dir, ec))
            others.push_back(std::move(job));
    }
    return others;
}

BatchPlan withOtherJobs(const BatchPlan& plan, const std::vector<Job>& others) {
    BatchPlan all = plan;
    all.jobs.insert(all.jobs.end(), others.begin(), others.end());
    std::stable_sort(all.jobs.begin(), all.jobs.end(), [](const Job& a, const Job& b) {
        return std::pair(a.line, a.rep) < std::pair(b.line, b.rep);
    });
    return all;
}

bool readBatchJson(const std::string& dir, BatchPlan& plan, BatchInfo& info, std::string& error) {
    const fs::path path = fs::path(dir) / "batch.json";
    std::string text;
    if (const FileRead r = readWholeFile(path.string(), text); !r) {
        // A batch.json that is there but cannot be read says why, not that it is missing.
        std::error_code ec;
        if (!fs::is_directory(dir, ec))
            error = fmt::format("'{}' is not a batch directory: no such directory", dir);
        else if (!r.opened && r.error == ENOENT)
            error = fmt::format("'{}' is not a batch directory: it has no batch.json", dir);
        else
            error = r.message(path.string());
        return false;
    }
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("jobs") || !j["jobs"].is_array()) {
        error = fmt::format("'{}' is not a valid batch.json", path.string());
        return false;
    }
    try {
        return batchFromJson(j, dir, plan, info);
    } catch (const nlohmann::json::exception& e) {
        error = fmt::format("'{}' is not a valid batch.json: {}", path.string(), e.what());
        return false;
    }
}

namespace {

bool batchFromJson(const nlohmann::json& j, const std::string& dir, BatchPlan& plan,
                   BatchInfo& info) {
    plan = BatchPlan{};
    plan.table = jsonText(j, "table");
    plan.deck = jsonText(j, "deck");
    // The directory as given now wins over the one recorded: the batch may have moved.
    plan.dir = dir;
    if (j.contains("param_columns") && j["param_columns"].is_array())
        for (const auto& c : j["param_columns"])
            if (c.is_string())
                plan.paramColumns.push_back(c.get<std::string>());
    info.status = jsonText(j, "status");
    info.started = jsonText(j, "started");
    info.finished = jsonText(j, "finished");
    info.coreBudget = j.value("core_budget", 0);
    info.program = jsonText(j, "program");
    info.emitted = jsonText(j, "emitted");
    for (const auto& jj : j["jobs"]) {
        if (!jj.is_object())
            continue;
        Job job;
        job.line = jj.value("line", 0);
        job.name = jsonText(jj, "name");
        job.deck = jsonText(jj, "deck");
        job.deckSha256 = jsonText(jj, "deck_sha256");
        job.threads = jj.value("threads", 1);
        job.rep = jj.value("rep", 1);
        job.count = jj.value("count", 1);
        if (jj.contains("set") && jj["set"].is_object())
            job.tableValues = jj["set"].get<std::map<std::string, std::string>>();
        if (jj.contains("overrides") && jj["overrides"].is_array())
            for (const auto& o : jj["overrides"])
                if (o.is_array() && o.size() == 2 && o[0].is_string() && o[1].is_string())
                    job.overrides.emplace_back(o[0].get<std::string>(), o[1].get<std::string>());
        if (jj.contains("env") && jj["env"].is_object())
            job.env = jj["env"].get<std::map<std::string, std::string>>();
        if (jj.contains("params") && jj["params"].is_object())
            for (const auto& [k, v] : jj["params"].items())
                job.params[k] = toNumber(v);
        job.plannedSteps = jj.contains("planned_steps") ? toNumber(jj["planned_steps"]) : 0;
        // Job directories are below the batch directory; follow the batch if it moved.
        const std::string recorded = jsonText(jj, "dir");
        job.dir =
            (fs::path(dir) / (recorded.empty() ? job.name : fs::path(recorded).filename().string()))
                .string();
        JobResult& r = job.result;
        r.status = jsonText(jj, "status");
        if (r.status.empty())
            r.status = "queued";
        r.exitCode = jj.contains("exit_code") && jj["exit_code"].is_number_integer()
                         ? jj["exit_code"].get<int>()
                         : -1;
        r.signal =
            jj.contains("signal") && jj["signal"].is_number_integer() ? jj["signal"].get<int>() : 0;
        r.duration = jj.contains("duration") ? toNumber(jj["duration"]) : NAN;
        r.started = jsonText(jj, "started");
        r.finished = jsonText(jj, "finished");
        r.stopReason = jsonText(jj, "stop_reason");
        r.error = jsonText(jj, "error");
        r.stateDigest = jsonText(jj, "state_digest");
        r.steps = jj.contains("steps") ? toNumber(jj["steps"]) : NAN;
        r.simTime = jj.contains("sim_time") ? toNumber(jj["sim_time"]) : NAN;
        if (jj.contains("final") && jj["final"].is_object())
            r.final = jj["final"];
        r.skipped = jj.value("skipped", false);
        plan.jobs.push_back(std::move(job));
    }
    return true;
}

} // namespace

std::string mergedPlotFileName(const std::string& column, const std::string& x) {
    const auto safe = [](const std::string& s) {
        std::string name;
        for (char c : s)
            name += std::isalnum((unsigned char)c) || c == '.' || c == '-' || c == '_' ? c : '_';
        return name;
    };
    return "merged-" + safe(column) + (x == "time" ? "" : "-vs-" + safe(x)) + ".gp";
}

bool planBatchMergedPlot(const std::string& batchDir, const std::string& column,
                         const std::string& x, MergedPlot& plot, std::string& error) {
    BatchPlan plan;
    BatchInfo info;
    if (!readBatchJson(batchDir, plan, info, error))
        return false;
    plot = MergedPlot{(fs::path(batchDir) / mergedPlotFileName(column, x)).string(), {}};
    std::set<std::string> available;
    for (const Job& job : plan.jobs) {
        const fs::path history = fs::path(job.dir) / "history.tsv";
        const std::vector<std::string> cols = historyColumns(history);
        available.insert(cols.begin(), cols.end());
        if (std::find(cols.begin(), cols.end(), column) == cols.end() ||
            std::find(cols.begin(), cols.end(), x) == cols.end())
            continue;
        std::string title = job.name;
        if (job.result.status != "completed")
            title += " (" + job.result.status + ")";
        // Under the batch directory, where the script is: the script names it relative to its own
        // directory, so that the batch directory can move.
        const fs::path file = fs::path(job.dir).filename() / "history.tsv";
        plot.runs.emplace_back(title, (fs::path(batchDir) / file).string());
    }
    if (plot.runs.empty()) {
        std::vector<std::string> names(available.begin(), available.end());
        error = available.empty()
                    ? fmt::format("no job of batch '{}' has a history.tsv yet", batchDir)
                    : fmt::format("no job of batch '{}' has the history columns '{}' and '{}' "
                                  "(history columns: {})",
                                  batchDir, x, column, fmt::join(names, ", "));
        return false;
    }
    return true;
}

bool writeBatchMergedPlot(const std::string& batchDir, const std::string& column,
                          const std::string& x, std::string& scriptPath, std::string& error) {
    MergedPlot plot;
    if (!planBatchMergedPlot(batchDir, column, x, plot, error) ||
        !writeMergedScript(plot.script, plot.runs, x, column, error))
        return false;
    scriptPath = plot.script;
    return true;
}

} // namespace dem
