#include "batch/BatchPlan.hpp"

#include "core/StateDigest.hpp"
#include "deck/Diagnostics.hpp"
#include "io/WholeFile.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <limits>
#include <set>
#include <toml++/toml.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace dem {

namespace {

constexpr const char* commandLine = "dem batch";

bool endsWithToml(const std::string& s) {
    if (s.size() < 5)
        return false;
    std::string ext = s.substr(s.size() - 5);
    for (char& c : ext)
        c = char(std::tolower((unsigned char)c));
    return ext == ".toml";
}

constexpr int maxThreads = 4096; // as a table's !THREADS

enum class DeckArgument { Deck, NotDeck, BadThreads };

// "deck.toml" or "deck.toml/4" -> path and threads (0 when not given). A deck followed by '/'
// and anything but a thread count is BadThreads: a mistyped list of decks, not a table.
DeckArgument parseDeckArgument(const std::string& arg, std::string& path, int& threads) {
    threads = 0;
    path = arg;
    if (endsWithToml(arg))
        return DeckArgument::Deck;
    const size_t slash = arg.rfind('/');
    std::error_code ec;
    if (slash == std::string::npos || !endsWithToml(arg.substr(0, slash)) ||
        fs::is_regular_file(arg, ec)) // a file in a directory whose name ends in .toml
        return DeckArgument::NotDeck;
    path = arg.substr(0, slash);
    const std::string digits = arg.substr(slash + 1);
    const bool number =
        !digits.empty() && digits.size() <= 4 &&
        std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
    threads = number ? std::stoi(digits) : 0;
    return threads >= 1 && threads <= maxThreads ? DeckArgument::Deck : DeckArgument::BadThreads;
}

std::string where(const DeckError& e) {
    if (e.line <= 0)
        return e.file;
    return fmt::format("{}:{}:{}", e.file, e.line, e.column);
}

// A deck read once and shared by the lines that use it.
struct DeckSource {
    bool readable = false;
    std::string text;
    std::vector<std::string> paramNames; // [params] keys, in no particular order
    std::string sha256;
    int baseState = 0; // 0 unknown, 1 valid with the global overrides alone, -1 invalid
    std::vector<DeckError> baseErrors;
    bool baseReported = false;
};

DeckSource readDeckSource(const std::string& path) {
    DeckSource d;
    const FileRead r = readWholeFile(path, d.text);
    if (!r.opened)
        return d;
    d.readable = bool(r);
    d.sha256 = sha256Hex(d.text);
    try {
        const toml::table doc = toml::parse(d.text, std::string_view(path));
        if (const toml::table* params = doc["params"].as_table())
            for (auto&& [key, value] : *params)
                d.paramNames.emplace_back(key.str());
    } catch (const toml::parse_error&) {
        // loadDeck reports the syntax error with its location.
    }
    return d;
}

// Total steps when every stage stops on steps or simulated time (the earliest of them); 0 when a
// stage may only end on a measured condition.
double plannedStepsOf(const Simulation& sim) {
    double total = 0;
    for (const Stage& stage : sim.stages) {
        double best = std::numeric_limits<double>::infinity();
        for (const StopCriterion& c : stage.stop) {
            if (c.kind == StopCriterion::Kind::Steps)
                best = std::min(best, c.value);
            else if (c.kind == StopCriterion::Kind::Time && sim.dt > 0)
                best = std::min(best, std::ceil(c.value / sim.dt));
        }
        if (!std::isfinite(best))
            return 0;
        total += best;
    }
    return total;
}

std::string describeLines(const std::vector<int>& lines) {
    std::string out;
    for (size_t k = 0; k < lines.size();) {
        size_t j = k;
        while (j + 1 < lines.size() && lines[j + 1] == lines[j] + 1)
            ++j;
        out += out.empty() ? "" : ", ";
        out += j == k ? std::to_string(lines[k]) : fmt::format("{}-{}", lines[k], lines[j]);
        k = j + 1;
    }
    return out;
}

// Selects the lines listed by --lines (all without it); errors name lines that hold no job. An
// empty list is an error too: running every job is not what it asks for.
bool selectLines(const std::optional<std::string>& lines, const std::vector<int>& available,
                 const std::string& source, std::vector<int>& selected,
                 std::vector<DeckError>& errors) {
    selected = available;
    if (!lines)
        return true;
    const std::string& spec = *lines;
    std::vector<std::pair<int, int>> ranges;
    std::string why;
    if (!parseLineList(spec, ranges, why)) {
        errors.push_back({commandLine, 0, 0, fmt::format("--lines '{}': {}", spec, why)});
        return false;
    }
    bool ok = true;
    std::set<int> chosen;
    for (const auto& [a, b] : ranges) {
        bool any = false;
        for (int line : available)
            if (line >= a && line <= b) {
                chosen.insert(line);
                any = true;
            }
        if (!any) {
            errors.push_back(
                {commandLine, 0, 0,
                 fmt::format("--lines: {} holds no job of {} (jobs are on lines {})",
                             a == b ? fmt::format("line {}", a) : fmt::format("lines {}-{}", a, b),
                             source, describeLines(available))});
            ok = false;
        }
    }
    selected.assign(chosen.begin(), chosen.end());
    return ok;
}

bool loadQuietly(const std::string& path, const std::string& text, const ParamOverrides& overrides,
                 Deck& deck, std::vector<DeckError>& errors) {
    return loadDeckText(path, text, overrides, deck, errors);
}

} // namespace

std::string selfExecutable() {
    std::error_code ec;
    const fs::path p = fs::read_symlink("/proc/self/exe", ec);
    return ec ? std::string("dem") : p.string();
}

std::string shellQuote(const std::string& s) {
    const bool safe = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
        return std::isalnum((unsigned char)c) ||
               std::string_view("_./=,+:@%-").find(c) != std::string_view::npos;
    });
    if (safe)
        return s;
    std::string out = "'";
    for (char c : s)
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

std::vector<std::string> runArguments(const Job& job) {
    std::vector<std::string> args{"run", job.deck};
    for (const auto& [name, value] : job.overrides) {
        args.emplace_back("--set");
        args.push_back(name + "=" + value);
    }
    args.insert(args.end(), {"--out", job.dir, "--threads", std::to_string(job.threads)});
    return args;
}

std::map<std::string, std::string> jobEnvironment(const BatchPlan& plan, const Job& job) {
    std::map<std::string, std::string> env = job.env;
    env["DEM_BATCH"] = fmt::format("{}:{}", plan.table.empty() ? job.deck : plan.table, job.line);
    env["DEM_BATCH_DIR"] = plan.dir;
    env["DEM_JOB_NAME"] = job.name;
    env["OMP_NUM_THREADS"] = std::to_string(job.threads);
    return env;
}

std::string shellCommand(const BatchPlan&, const Job& job, const std::string& program) {
    std::string out;
    for (const auto& [name, value] : job.env)
        out += name + "=" + shellQuote(value) + " ";
    out += shellQuote(program);
    for (const std::string& a : runArguments(job)) {
        out += ' ';
        out += shellQuote(a);
    }
    return out;
}

bool makePlan(const PlanOptions& o, BatchPlan& plan, std::vector<DeckError>& errors) {
    const size_t before = errors.size();
    plan = BatchPlan{};
    if (o.inputs.empty()) {
        errors.push_back({commandLine, 0, 0,
                          "give a table and a deck (dem batch TABLE DECK), a table with a !DECK "
                          "column, or a list of decks (dem batch a.toml b.toml/2)"});
        return false;
    }
    // Global --set NAME=VALUE.
    ParamOverrides globals;
    for (const std::string& s : o.sets) {
        const size_t eq = s.find('=');
        if (eq == std::string::npos || eq == 0) {
            errors.push_back(
                {commandLine, 0, 0, fmt::format("--set '{}': expected NAME=VALUE", s)});
            continue;
        }
        globals.emplace_back(s.substr(0, eq), s.substr(eq + 1));
    }
    const int defaultThreads = o.threads > 0 ? o.threads : 1;

    // Which form: all decks, or a table (and a deck).
    std::vector<std::pair<std::string, int>> deckArgs;
    bool allDecks = true;
    for (const std::string& in : o.inputs) {
        std::string path;
        int threads = 0;
        const DeckArgument kind = parseDeckArgument(in, path, threads);
        if (kind == DeckArgument::BadThreads)
            errors.push_back({commandLine, 0, 0,
                              fmt::format("'{}': a deck's thread count, after the '/', must be a "
                                          "whole number from 1 to {} (as in {}/4)",
                                          in, maxThreads, path)});
        if (kind == DeckArgument::Deck)
            deckArgs.emplace_back(path, threads);
        else
            allDecks = false;
    }
    if (errors.size() != before)
        return false;

    struct Pending {
        Job job;
        const TableEntry* entry = nullptr; // table form only
    };
    std::vector<Pending> pending;
    BatchTable table;
    if (allDecks) {
        std::map<std::string, int> names;
        for (size_t k = 0; k < deckArgs.size(); ++k) {
            Pending p;
            p.job.line = int(k) + 1;
            p.job.deck = deckArgs[k].first;
            p.job.threads = deckArgs[k].second > 0 ? deckArgs[k].second : defaultThreads;
            p.job.name = sanitizeJobName(fs::path(p.job.deck).stem().string(), p.job.line);
            if (isBatchFileName(p.job.name))
                errors.push_back({commandLine, 0, 0,
                                  fmt::format("deck {} would run in a directory named '{}', a "
                                              "file the batch writes ({}): rename the deck",
                                              p.job.line, p.job.name, batchFileNames)});
            const auto [it, fresh] = names.emplace(p.job.name, p.job.line);
            if (!fresh)
                errors.push_back({commandLine, 0, 0,
                                  fmt::format("decks {} and {} would both run in a directory "
                                              "named '{}': give the decks distinct file names",
                                              it->second, p.job.line, p.job.name)});
            pending.push_back(std::move(p));
        }
        plan.dir = o.out.empty() ? "runs/batch" : o.out;
    } else {
        if (o.inputs.size() > 2) {
            errors.push_back({commandLine, 0, 0,
                              fmt::format("'{}' is not a deck (.toml): give one table and one "
                                          "deck, or only decks",
                                          o.inputs[0])});
            return false;
        }
        plan.table = o.inputs[0];
        if (o.inputs.size() == 2) {
            int threads = 0;
            if (parseDeckArgument(o.inputs[1], plan.deck, threads) == DeckArgument::Deck &&
                threads > 0) {
                errors.push_back({commandLine, 0, 0,
                                  fmt::format("'{}': the /N threads suffix is for lists of decks; "
                                              "use --threads or a !THREADS column with a table",
                                              o.inputs[1])});
                return false;
            }
            plan.deck = o.inputs[1];
        }
        if (!readTableFile(plan.table, table, errors))
            return false;
        if (plan.deck.empty() && !table.hasDeckColumn()) {
            errors.push_back({plan.table, table.headerLine, 1,
                              "no deck: give one after the table (dem batch TABLE DECK) or add a "
                              "!DECK column"});
            return false;
        }
        for (const TableColumn& c : table.columns)
            if (c.kind == ColumnKind::Param)
                plan.paramColumns.push_back(c.name);
        const fs::path tableDir = fs::path(plan.table).parent_path();
        for (const TableEntry& e : table.entries) {
            for (int rep = 1; rep <= e.count; ++rep) {
                Pending p;
                p.entry = &e;
                p.job.line = e.line;
                p.job.rep = rep;
                p.job.count = e.count;
                p.job.name = e.count > 1 ? fmt::format("{}.{}", e.name, rep) : e.name;
                p.job.threads = e.threads > 0 ? e.threads : defaultThreads;
                p.job.env = e.env;
                // !DECK paths are relative to the table's directory, like file paths in a deck.
                p.job.deck = e.deck.empty()                   ? plan.deck
                             : fs::path(e.deck).is_absolute() ? e.deck
                                                              : (tableDir / e.deck).string();
                pending.push_back(std::move(p));
            }
        }
        // Repetitions must not collide with other lines' names.
        std::map<std::string, int> names;
        for (const Pending& p : pending) {
            const auto [it, fresh] = names.emplace(p.job.name, p.job.line);
            if (!fresh && it->second != p.job.line)
                errors.push_back({plan.table, p.job.line, 1,
                                  fmt::format("job name '{}' (a !COUNT repetition) is also the "
                                              "name of line {}",
                                              p.job.name, it->second)});
        }
        plan.dir =
            o.out.empty() ? (fs::path("runs") / fs::path(plan.table).stem()).string() : o.out;
    }
    plan.totalLines = int(allDecks ? deckArgs.size() : table.entries.size());
    plan.someLines = o.lines.has_value();

    // --lines.
    std::vector<int> available, selected;
    for (const Pending& p : pending)
        if (available.empty() || available.back() != p.job.line)
            available.push_back(p.job.line);
    if (!selectLines(o.lines, available, allDecks ? "the deck list" : plan.table, selected, errors))
        return false;

    // Check every selected job against its deck.
    std::map<std::string, DeckSource> decks;
    std::set<std::pair<std::string, std::string>> reportedColumns; // (column, deck)
    std::set<std::string> reportedDecks;
    const std::string source = allDecks ? std::string(commandLine) : plan.table;
    for (Pending& p : pending) {
        if (!std::binary_search(selected.begin(), selected.end(), p.job.line))
            continue;
        Job& job = p.job;
        job.dir = (fs::path(plan.dir) / job.name).string();
        const TableEntry* e = p.entry;
        const int deckColumn = allDecks ? -1 : table.columnIndex(ColumnKind::Deck);
        const int deckCellColumn = e && deckColumn >= 0 && !e->values[deckColumn].isDefault
                                       ? e->values[deckColumn].column
                                       : 1;
        if (job.deck.empty()) {
            errors.push_back({source, job.line, deckCellColumn,
                              "no deck for this line: its !DECK cell is '*' and no deck was "
                              "given after the table"});
            continue;
        }
        auto [it, fresh] = decks.try_emplace(job.deck);
        DeckSource& src = it->second;
        if (fresh)
            src = readDeckSource(job.deck);
        if (!src.readable) {
            if (reportedDecks.insert(job.deck).second)
                errors.push_back(e && deckCellColumn > 1
                                     ? DeckError{source, job.line, deckCellColumn,
                                                 fmt::format("cannot open deck '{}'", job.deck)}
                                     : DeckError{job.deck, 0, 0, "cannot open the deck file"});
            continue;
        }
        job.deckSha256 = src.sha256;
        std::vector<std::string_view> known(src.paramNames.begin(), src.paramNames.end());
        std::sort(known.begin(), known.end());
        // Unknown parameters: the global --set, then the table's columns.
        bool unknown = false;
        for (const auto& [name, value] : globals) {
            if (std::find(known.begin(), known.end(), name) != known.end())
                continue;
            unknown = true;
            if (reportedColumns.insert({"--set " + name, job.deck}).second)
                errors.push_back(
                    {commandLine, 0, 0,
                     fmt::format("--set {}: deck '{}' has no parameter '{}' (it "
                                 "defines: {}){}",
                                 name, job.deck, name, joinNames(known), didYouMean(name, known))});
        }
        ParamOverrides overrides;
        std::vector<int> columns; // table cell column of each override; 0 for --set
        if (e) {
            for (size_t k = 0; k < e->overrides.size(); ++k) {
                const std::string& name = e->overrides[k].first;
                if (std::find(known.begin(), known.end(), name) != known.end()) {
                    job.tableValues[name] = e->overrides[k].second;
                    continue;
                }
                unknown = true;
                if (!reportedColumns.insert({name, job.deck}).second)
                    continue;
                const auto col = std::find_if(
                    table.columns.begin(), table.columns.end(), [&](const TableColumn& c) {
                        return c.kind == ColumnKind::Param && c.name == name;
                    });
                const bool oneDeck = !table.hasDeckColumn();
                errors.push_back(
                    {source, oneDeck ? table.headerLine : job.line,
                     oneDeck ? col->column : e->overrideColumns[k],
                     fmt::format("column '{}' is not a parameter of deck '{}' (it defines: "
                                 "{}){}",
                                 name, job.deck, joinNames(known),
                                 closestName(name, known).empty()
                                     ? std::string("; directive columns start with '!'")
                                     : didYouMean(name, known))});
            }
        }
        // The known values are still checked, so that one run reports every problem.
        ParamOverrides knownGlobals;
        for (const auto& g : globals)
            if (std::find(known.begin(), known.end(), g.first) != known.end())
                knownGlobals.push_back(g);
        for (const auto& g : globals)
            if (!job.tableValues.count(g.first) &&
                std::find(known.begin(), known.end(), g.first) != known.end()) {
                overrides.push_back(g);
                columns.push_back(0);
            }
        if (e)
            for (size_t k = 0; k < e->overrides.size(); ++k) {
                if (!job.tableValues.count(e->overrides[k].first))
                    continue; // unknown column, reported above
                overrides.push_back(e->overrides[k]);
                columns.push_back(e->overrideColumns[k]);
            }
        job.overrides = overrides;
        if (job.rep > 1) { // the first repetition was checked already
            const Job& first = (&p - (job.rep - 1))->job;
            job.params = first.params;
            job.plannedSteps = first.plannedSteps;
            continue;
        }
        Deck deck;
        std::vector<DeckError> deckErrors;
        if (loadQuietly(job.deck, src.text, overrides, deck, deckErrors) && !unknown) {
            job.params = deck.params;
            job.plannedSteps = plannedStepsOf(deck.sim);
            continue;
        }
        // Attribute the deck's errors to the table cells that caused them.
        auto cellError = [&](size_t k, const std::string& message) {
            if (columns[k] > 0)
                errors.push_back(
                    {source, job.line, columns[k],
                     fmt::format("{} = {}: {}", overrides[k].first, overrides[k].second, message)});
            else
                errors.push_back({commandLine, 0, 0,
                                  fmt::format("--set {}={}: {}", overrides[k].first,
                                              overrides[k].second, message)});
        };
        std::vector<DeckError> located;
        bool badExpression = false;
        for (const DeckError& d : deckErrors) {
            bool attributed = false;
            if (d.line <= 0 && d.message.rfind("--set ", 0) == 0) {
                for (size_t k = 0; k < overrides.size() && !attributed; ++k) {
                    const std::string prefix =
                        "--set " + overrides[k].first + "=" + overrides[k].second + ": ";
                    if (d.message.rfind(prefix, 0) == 0) {
                        cellError(k, d.message.substr(prefix.size()));
                        attributed = badExpression = true;
                    }
                }
            }
            if (!attributed)
                located.push_back(d);
        }
        // A value that cannot be evaluated stands as 0 in the deck; what that breaks further down
        // is a consequence, not news.
        if (located.empty() || badExpression)
            continue;
        // The deck with the global --set alone: when that fails, the deck itself is at fault.
        if (src.baseState == 0) {
            Deck base;
            src.baseState =
                loadQuietly(job.deck, src.text, knownGlobals, base, src.baseErrors) ? 1 : -1;
        }
        if (src.baseState < 0) {
            if (!src.baseReported) {
                src.baseReported = true;
                for (const DeckError& d : src.baseErrors)
                    errors.push_back(d);
                errors.push_back({source, job.line, 1,
                                  fmt::format("deck '{}' is invalid even without this table's "
                                              "values (see above)",
                                              job.deck)});
            }
            continue;
        }
        // One value at a time.
        bool any = false;
        for (size_t k = 0; k < overrides.size(); ++k) {
            if (columns[k] == 0)
                continue;
            ParamOverrides one = knownGlobals;
            one.push_back(overrides[k]);
            Deck single;
            std::vector<DeckError> singleErrors;
            if (loadQuietly(job.deck, src.text, one, single, singleErrors))
                continue;
            any = true;
            for (const DeckError& d : singleErrors)
                cellError(k, fmt::format("{}: {}", where(d), d.message));
        }
        if (!any)
            for (const DeckError& d : located)
                errors.push_back(
                    {source, job.line, 1,
                     fmt::format("the values of this line together make the deck invalid: {}: {}",
                                 where(d), d.message)});
    }
    if (errors.size() != before)
        return false;
    for (Pending& p : pending)
        if (std::binary_search(selected.begin(), selected.end(), p.job.line))
            plan.jobs.push_back(std::move(p.job));
    return true;
}

} // namespace dem
