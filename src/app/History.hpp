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
    // Continues a history after a restart: the file is rewritten with `text` (what had been
    // recorded when the checkpoint was taken), so no row is lost or repeated.
    bool reopen(const std::string& path, const std::vector<MeasureRef>& columns,
                const std::string& text, uint64_t lastStep);
    void record(const Simulation& sim);
    bool good() const { return bool(file_); }
    // Everything written so far (header and rows): stored in checkpoints.
    const std::string& text() const { return text_; }
    uint64_t lastStep() const { return lastStep_; }

private:
    void put(const std::string& s);

    std::ofstream file_;
    std::string text_;
    std::vector<MeasureRef> columns_;
    uint64_t lastStep_ = UINT64_MAX;
};

std::string formatNumber(double v); // shortest round-trip form, "nan"/"inf"/"-inf"

} // namespace dem
