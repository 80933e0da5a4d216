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

bool HistoryWriter::open(const std::string& path, const std::vector<MeasureRef>& columns) {
    columns_ = columns;
    file_.open(path, std::ios::trunc);
    if (!file_)
        return false;
    for (size_t c = 0; c < columns_.size(); ++c)
        file_ << (c ? "\t" : "") << columns_[c].name;
    file_ << '\n';
    return bool(file_);
}

void HistoryWriter::record(const Simulation& sim) {
    if (!file_ || sim.step == lastStep_)
        return;
    lastStep_ = sim.step;
    for (size_t c = 0; c < columns_.size(); ++c)
        file_ << (c ? "\t" : "") << formatNumber(evaluate(sim, columns_[c]));
    file_ << '\n';
    file_.flush();
}

} // namespace dem
