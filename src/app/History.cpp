#include "app/History.hpp"

#include "core/Measures.hpp"

#include <cmath>
#include <fmt/format.h>

namespace dem {

std::string formatNumber(double v) {
    if (std::isnan(v))
        return "nan";
    if (std::isinf(v))
        return v > 0 ? "inf" : "-inf";
    return fmt::format("{}", v); // fmt prints the shortest representation that reads back exactly
}

void HistoryWriter::put(const std::string& s) {
    text_ += s;
    file_ << s;
    file_.flush();
}

bool HistoryWriter::open(const std::string& path, const std::vector<MeasureRef>& columns) {
    std::string header;
    for (size_t c = 0; c < columns.size(); ++c) {
        if (c)
            header += '\t';
        header += columns[c].name;
    }
    return reopen(path, columns, header + "\n", UINT64_MAX);
}

bool HistoryWriter::reopen(const std::string& path, const std::vector<MeasureRef>& columns,
                           const std::string& text, uint64_t lastStep) {
    columns_ = columns;
    lastStep_ = lastStep;
    text_.clear();
    file_.open(path, std::ios::trunc | std::ios::binary);
    if (!file_)
        return false;
    put(text);
    return bool(file_);
}

void HistoryWriter::record(const Simulation& sim) {
    if (!file_ || sim.step == lastStep_)
        return;
    lastStep_ = sim.step;
    std::string row;
    for (size_t c = 0; c < columns_.size(); ++c) {
        if (c)
            row += '\t';
        row += formatNumber(evaluate(sim, columns_[c]));
    }
    row += '\n';
    put(row);
}

} // namespace dem
