#include "io/Gnuplot.hpp"

#include "io/DirectoryNames.hpp"
#include "io/ScratchFiles.hpp"
#include "io/WholeFile.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace dem {

namespace fs = std::filesystem;

std::string gnuplotQuote(const std::string& s) {
    std::string out = "'";
    for (char c : s) {
        if (c == '\'')
            out += "''";
        else if (c == '\n' || c == '\r')
            out += ' ';
        else
            out += c;
    }
    return out + "'";
}

namespace {

bool validFormat(const std::string& format, std::string& error) {
    if (format == "png" || format == "svg" || format == "pdf")
        return true;
    error = fmt::format("unknown plot format \"{}\" (png, svg or pdf)", format);
    return false;
}

// Sets gp_dir to the directory of the running script (from ARG0) and the terminal variables,
// then selects the terminal and the output; `defaultOut` is a gnuplot expression.
std::string preamble(const std::string& what, const std::string& defaultOut, bool withHist) {
    std::string s;
    s += "# " + what + "\n";
    s += "# Written by dem. Render with: gnuplot [-e \"fmt='svg'; out='file.svg'\"] THIS_FILE\n";
    s += "# Variables: fmt (png | svg | pdf), out, width, height";
    s += withHist ? ", hist (the history.tsv to read)\n" : "\n";
    s += R"(
# Directory of this script, so that its default paths work from any working directory.
gp_self = ""
if (exists("ARG0")) { gp_self = ARG0 }
gp_dir = "."
gp_rest = gp_self
gp_pos = 0
while (strstrt(gp_rest, "/") > 0) {
    gp_k = strstrt(gp_rest, "/")
    gp_pos = gp_pos + gp_k
    gp_rest = gp_rest[gp_k + 1:]
}
if (gp_pos > 1) { gp_dir = gp_self[1:gp_pos - 1] } else { if (gp_pos == 1) { gp_dir = "" } }

if (!exists("fmt")) { fmt = "png" }
if (!exists("width")) { width = 1000 }
if (!exists("height")) { height = 700 }
)";
    if (withHist)
        s += "if (!exists(\"hist\")) { hist = gp_dir.\"/../history.tsv\" }\n";
    s += "if (!exists(\"out\")) { out = " + defaultOut + " }\n";
    s += R"(if (fmt eq "svg") {
    set terminal svg size width, height dynamic noenhanced
} else {
    if (fmt eq "pdf") {
        set terminal pdfcairo size (width / 100.0), (height / 100.0) noenhanced
    } else {
        if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
            set terminal pngcairo size width, height noenhanced
        } else {
            set terminal png size width, height noenhanced
        }
    }
}
set output out

set datafile separator "\t"
set datafile columnheaders
set grid
set key below
)";
    return s;
}

bool writeText(const fs::path& path, const std::string& text, std::string& error) {
    std::error_code ec;
    if (path.has_parent_path())
        fs::create_directories(path.parent_path(), ec);
    if (ec) {
        error = fmt::format("cannot create directory {}: {}", path.parent_path().string(),
                            ec.message());
        return false;
    }
    std::ofstream f(path, std::ios::trunc);
    f << text;
    f.close();
    if (!f) {
        error = fmt::format("cannot write {}", path.string());
        return false;
    }
    return true;
}

std::string usingColumns(const std::string& x, const std::string& y) {
    return "using " + gnuplotQuote(x) + ":" + gnuplotQuote(y);
}

} // namespace

bool writeGnuplotScript(const std::string& runDir, const PlotSpec& spec, std::string& error) {
    if (spec.name.empty() || spec.name.find_first_of("/\n\r") != std::string::npos) {
        error = fmt::format("plot name \"{}\" must be a non-empty file name", spec.name);
        return false;
    }
    if (spec.x.empty() || (spec.y.empty() && spec.y2.empty())) {
        error = fmt::format("plot \"{}\" needs an x column and at least one y column", spec.name);
        return false;
    }
    std::string s = preamble("Plot \"" + spec.name + "\" of the run's history.tsv",
                             "gp_dir." + gnuplotQuote("/" + spec.name + ".") + ".fmt", true);
    if (!spec.title.empty())
        s += "set title " + gnuplotQuote(spec.title) + "\n";
    s += "set xlabel " + gnuplotQuote(spec.x) + "\n";
    if (spec.y.size() == 1)
        s += "set ylabel " + gnuplotQuote(spec.y[0]) + "\n";
    if (spec.logX)
        s += "set logscale x\n";
    if (spec.logY)
        s += "set logscale y\n";
    if (!spec.y2.empty()) {
        s += "set ytics nomirror\nset y2tics\n";
        if (spec.y2.size() == 1)
            s += "set y2label " + gnuplotQuote(spec.y2[0]) + "\n";
        if (spec.logY2)
            s += "set logscale y2\n";
    }
    std::vector<std::string> parts;
    for (const std::string& y : spec.y)
        parts.push_back("hist " + usingColumns(spec.x, y) + " with lines lw 1.5 title " +
                        gnuplotQuote(y));
    for (const std::string& y : spec.y2)
        parts.push_back("hist " + usingColumns(spec.x, y) +
                        " axes x1y2 with lines lw 1.5 dt 2 title " +
                        gnuplotQuote(y + " (right axis)"));
    s += "plot ";
    for (size_t k = 0; k < parts.size(); ++k)
        s += (k ? ", \\\n     " : "") + parts[k];
    s += "\n";
    return writeText(fs::path(runDir) / "plots" / (spec.name + ".gp"), s, error);
}

bool writeMergedScript(const std::string& scriptPath,
                       const std::vector<std::pair<std::string, std::string>>& runs,
                       const std::string& x, const std::string& column, std::string& error) {
    if (runs.empty()) {
        error = "merged plot without runs";
        return false;
    }
    if (x.empty() || column.empty()) {
        error = "merged plot needs an x column and a y column";
        return false;
    }
    const fs::path script(scriptPath);
    std::error_code ec;
    const fs::path scriptDir = fs::absolute(script, ec).lexically_normal().parent_path();
    std::string s = preamble(
        "Merged plot: " + column + " against " + x + " of " + std::to_string(runs.size()) + " runs",
        "gp_dir." + gnuplotQuote("/" + script.stem().string() + ".") + ".fmt", false);
    s += "set title " + gnuplotQuote(column) + "\n";
    s += "set xlabel " + gnuplotQuote(x) + "\nset ylabel " + gnuplotQuote(column) + "\n";
    s += "plot ";
    for (size_t k = 0; k < runs.size(); ++k) {
        const fs::path h(runs[k].second);
        std::string file;
        const fs::path rel = fs::absolute(h, ec).lexically_normal().lexically_relative(scriptDir);
        const bool inside = !rel.empty() && *rel.begin() != "..";
        if (h.is_absolute() && !inside)
            file = gnuplotQuote(h.string());
        else
            file = "gp_dir.\"/\"." + gnuplotQuote(rel.empty() ? h.string() : rel.string());
        s += (k ? ", \\\n     " : "") + file + " " + usingColumns(x, column) +
             " with lines lw 1.5 title " + gnuplotQuote(runs[k].first);
    }
    s += "\n";
    return writeText(script, s, error);
}

std::string findGnuplot() {
    if (const char* forced = std::getenv("DEM_GNUPLOT")) // for tests and unusual installs
        return (*forced && ::access(forced, X_OK) == 0) ? std::string(forced) : std::string();
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
    dirs.exceptions(std::ios::badbit); // a failed allocation is thrown, not taken for the end
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
        const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/gnuplot";
        if (::access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate))
            return candidate;
    }
    return {};
}

std::string gnuplotNotFound() {
    if (const char* forced = std::getenv("DEM_GNUPLOT"))
        return fmt::format("gnuplot not found: DEM_GNUPLOT='{}' is not an executable file", forced);
    return "gnuplot not found: install gnuplot-nox";
}

bool runGnuplot(const std::vector<std::string>& args, std::string& error) {
    const std::string program = findGnuplot();
    if (program.empty()) {
        error = gnuplotNotFound();
        return false;
    }
    std::vector<std::string> argv0{program};
    argv0.insert(argv0.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : argv0)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    ScratchFile messages; // gnuplot's stderr
    if (!messages.make("dem-gnuplot-", error))
        return false;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, messages.fd(), 2);
    posix_spawn_file_actions_addclose(&actions, messages.fd());
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    messages.closeFd();
    int status = 0;
    if (rc == 0)
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    std::string stderrText;
    readWholeFile(messages.path(), stderrText); // gnuplot's messages, if any
    if (rc != 0) {
        error = fmt::format("cannot run {}: {}", program, std::strerror(rc));
        return false;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        while (!stderrText.empty() && std::isspace(static_cast<unsigned char>(stderrText.back())))
            stderrText.pop_back();
        error = fmt::format("gnuplot failed ({}){}{}",
                            WIFEXITED(status) ? fmt::format("exit status {}", WEXITSTATUS(status))
                                              : fmt::format("signal {}", WTERMSIG(status)),
                            stderrText.empty() ? "" : ":\n", stderrText);
        return false;
    }
    return true;
}

bool renderScript(const std::string& scriptPath, const std::string& format,
                  const std::string& outputPath, std::string& error, const PlotSize& size) {
    if (!validFormat(format, error))
        return false;
    if (!fs::is_regular_file(scriptPath)) {
        error = fmt::format("no gnuplot script {}", scriptPath);
        return false;
    }
    std::string vars = fmt::format("fmt={}; width={}; height={}", gnuplotQuote(format),
                                   std::max(16, size.width), std::max(16, size.height));
    std::string out = outputPath;
    if (out.empty())
        out = fs::path(scriptPath).replace_extension(format).string();
    std::error_code ec;
    fs::remove(out, ec); // a stale picture must not pass for a new one
    vars += "; out=" + gnuplotQuote(out);
    if (!runGnuplot({"-e", vars, scriptPath}, error)) {
        fs::remove(out, ec); // gnuplot opens the output before it fails
        error = fmt::format("{}: {}", scriptPath, error);
        return false;
    }
    if (!fs::is_regular_file(out)) {
        error = fmt::format("{}: gnuplot wrote no {}", scriptPath, out);
        return false;
    }
    return true;
}

bool listPlotScripts(const std::string& runDir, std::vector<std::string>& scripts,
                     std::string& error) {
    const fs::path dir = fs::path(runDir) / "plots";
    std::error_code ec;
    std::vector<std::string> names;
    directoryNames(dir.string(), names, ec);
    scripts.clear();
    for (const std::string& name : names)
        if (const fs::path p = dir / name; p.extension() == ".gp" && fs::is_regular_file(p, ec))
            scripts.push_back(p.string());
    if (scripts.empty()) {
        error = fmt::format("no plots/*.gp in {}", runDir);
        return false;
    }
    std::sort(scripts.begin(), scripts.end());
    return true;
}

bool renderPlotScripts(const std::vector<std::string>& scripts, const std::string& format,
                       std::vector<std::string>& written, std::string& error,
                       const PlotSize& size) {
    if (!validFormat(format, error))
        return false;
    if (findGnuplot().empty()) {
        error = gnuplotNotFound();
        return false;
    }
    std::vector<std::string> failures;
    for (const std::string& script : scripts) {
        const std::string out = fs::path(script).replace_extension(format).string();
        std::string e;
        if (renderScript(script, format, out, e, size))
            written.push_back(out);
        else
            failures.push_back(e);
    }
    if (!failures.empty()) {
        error.clear();
        for (const std::string& f : failures)
            error += (error.empty() ? "" : "\n") + f;
        return false;
    }
    return true;
}

bool renderPlots(const std::string& runDir, const std::string& format,
                 std::vector<std::string>& written, std::string& error, const PlotSize& size) {
    std::vector<std::string> scripts;
    return listPlotScripts(runDir, scripts, error) &&
           renderPlotScripts(scripts, format, written, error, size);
}

} // namespace dem
