#pragma once
// history.tsv: one header line of column names, then one tab-separated row per record, full double
// precision, "nan" where a value is undefined. Ready for gnuplot, awk and pandas.
#include "core/Simulation.hpp"

#include <fstream>
#include <string>
#include <vector>

namespace dem {

class HistoryWriter {
public:
    bool open(const std::string& path, const std::vector<MeasureRef>& columns);
    void record(const Simulation& sim);
    bool good() const { return bool(file_); }

private:
    std::ofstream file_;
    std::vector<MeasureRef> columns_;
    uint64_t lastStep_ = UINT64_MAX;
};

std::string formatNumber(double v); // shortest round-trip form, "nan"/"inf"/"-inf"

} // namespace dem
