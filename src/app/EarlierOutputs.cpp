#include "app/EarlierOutputs.hpp"

#include "io/AtomicFile.hpp"
#include "io/DirectoryNames.hpp"
#include "io/VtkWriter.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace dem {

namespace {

// The images `dem run` and `dem plot` draw from a script, beside it.
constexpr const char* plotFormats[] = {".png", ".svg", ".pdf"};

std::vector<std::string> namesIn(const fs::path& dir) {
    std::vector<std::string> names;
    std::error_code ec;
    directoryNames(dir.string(), names, ec); // none when it cannot be read: nothing to remove
    return names;
}

void removeIfEmpty(const fs::path& dir) {
    std::error_code ec;
    if (fs::is_directory(dir, ec) && namesIn(dir).empty())
        fs::remove(dir, ec);
}

void removePlots(const fs::path& plots) {
    std::error_code ec;
    for (const std::string& name : namesIn(plots)) {
        const fs::path script = plots / name;
        if (script.extension() != ".gp" || !fs::is_regular_file(script, ec))
            continue;
        for (const char* ext : plotFormats)
            fs::remove(fs::path(script).replace_extension(ext), ec);
        fs::remove(script, ec);
    }
    removeIfEmpty(plots);
}

void removeVtkSeries(const fs::path& vtk) {
    removeAtomicWriteTemporaries(vtk.string()); // of frames a killed run was writing
    std::error_code ec;
    for (const std::string& name : namesIn(vtk))
        if (isVtkSeriesFileName(name))
            fs::remove(vtk / name, ec);
    removeIfEmpty(vtk);
}

// "snapshot-<step>.png", the name `dem snapshot` gives a picture in the run directory.
bool isSnapshotName(const std::string& name) {
    const std::string prefix = "snapshot-", suffix = ".png";
    if (name.size() <= prefix.size() + suffix.size() || !name.starts_with(prefix) ||
        !name.ends_with(suffix))
        return false;
    const auto first = name.begin() + long(prefix.size()), last = name.end() - long(suffix.size());
    return std::all_of(first, last, [](char c) { return c >= '0' && c <= '9'; });
}

} // namespace

void removeEarlierOutputs(const fs::path& dir) {
    std::error_code ec;
    fs::remove(dir / "history.tsv", ec);
    removePlots(dir / "plots");
    removeVtkSeries(dir / "vtk");
    for (const std::string& name : namesIn(dir))
        if (isSnapshotName(name))
            fs::remove(dir / name, ec);
}

} // namespace dem
