#pragma once
// gnuplot scripts for a run's history.tsv, and rendering them with the gnuplot program.
//
// A script <run>/plots/<name>.gp finds its data and output through gnuplot variables, each with a
// default relative to the script's own location (gnuplot's ARG0), so it works from any directory:
//     gnuplot plots/energy.gp                        -> plots/energy.png
//     gnuplot -e "fmt='svg'" /runs/a/plots/energy.gp -> /runs/a/plots/energy.svg
// Variables: hist (data file, default <script dir>/../history.tsv), fmt (png | svg | pdf),
// out (output file, default <script dir>/<name>.<fmt>), width and height (pixels; PDF pages use
// 1/100 of them in inches). PNG uses the pngcairo terminal when gnuplot has it, else png.
// Columns are addressed by their header names, so adding history columns does not break scripts.
#include <string>
#include <utility>
#include <vector>

namespace dem {

struct PlotSpec {
    std::string name;               // file name stem: plots/<name>.gp and plots/<name>.<fmt>
    std::string title;              // figure title (empty: none)
    std::string x;                  // history column on the x axis
    std::vector<std::string> y, y2; // columns on the left and right y axes
    bool logX = false, logY = false, logY2 = false;
};

struct PlotSize {
    int width = 1000, height = 700; // pixels
};

// Writes <runDir>/plots/<spec.name>.gp (creating plots/). False with `error` set when the spec
// has no name, no x or no y column, or the file cannot be written.
bool writeGnuplotScript(const std::string& runDir, const PlotSpec& spec, std::string& error);

// The scripts <runDir>/plots/*.gp, in name order. False with `error` set when there are none.
bool listPlotScripts(const std::string& runDir, std::vector<std::string>& scripts,
                     std::string& error);

// Runs gnuplot on each script, writing <script stem>.<format> beside it; `written` receives the
// output paths. Errors: format not png/svg/pdf, gnuplot missing ("gnuplot not found: install
// gnuplot-nox"), or a script failing (its stderr is part of the message; the other scripts are
// still rendered).
bool renderPlotScripts(const std::vector<std::string>& scripts, const std::string& format,
                       std::vector<std::string>& written, std::string& error,
                       const PlotSize& size = {});

// listPlotScripts, then renderPlotScripts.
bool renderPlots(const std::string& runDir, const std::string& format,
                 std::vector<std::string>& written, std::string& error, const PlotSize& size = {});

// Renders one script to `outputPath` (empty: the script's default, next to the script).
bool renderScript(const std::string& scriptPath, const std::string& format,
                  const std::string& outputPath, std::string& error, const PlotSize& size = {});

// Merged figure for a batch: `column` against `x` from several runs' history files, one line per
// run titled by its label. Relative history paths are taken relative to the current directory
// now; they, and absolute paths inside the script's directory, are written relative to the
// script's directory, so that a batch directory can move. Other absolute paths stay absolute.
// Default output: the script's path with the extension replaced by .<fmt>.
bool writeMergedScript(const std::string& scriptPath,
                       const std::vector<std::pair<std::string, std::string>>& runs,
                       const std::string& x, const std::string& column, std::string& error);

// Path of the gnuplot executable: $DEM_GNUPLOT when set, else the first on PATH; "" when there
// is none.
std::string findGnuplot();
// The error when findGnuplot finds none: what to install, or that DEM_GNUPLOT names no program.
std::string gnuplotNotFound();

// Runs gnuplot with `args` (no shell involved), stdin from /dev/null, stdout discarded. False
// with `error` set (including gnuplot's stderr) when it cannot start or exits non-zero.
bool runGnuplot(const std::vector<std::string>& args, std::string& error);

// A gnuplot single-quoted string literal for `s` ('' stands for ').
std::string gnuplotQuote(const std::string& s);

} // namespace dem
