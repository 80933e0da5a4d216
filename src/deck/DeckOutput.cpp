// [output]: the history table's columns and period, and the progress period.
#include "core/Measures.hpp"
#include "deck/DeckBuild.hpp"

#include <fmt/format.h>

namespace dem {

namespace {

MeasureRef globalMeasure(std::string name, MeasureRef::Quantity q) {
    MeasureRef m;
    m.name = std::move(name);
    m.scope = MeasureRef::Scope::Global;
    m.quantity = q;
    return m;
}

void readHistory(TableReader& h, DeckBuild& b) {
    HistorySpec& history = b.output.history;
    history.every = uint64_t(h.integer("every").value_or(100));
    const auto columns = h.strings("columns");
    if (!columns)
        return;
    const toml::array* nodes = h.node("columns") ? h.node("columns")->as_array() : nullptr;
    for (size_t k = 0; k < columns->size(); ++k) {
        const std::string& name = (*columns)[k];
        if (name == "step" || name == "time")
            continue; // always the first two columns
        MeasureRef ref;
        std::string why;
        if (parseMeasure(name, b.sim, ref, why)) {
            history.columns.push_back(ref);
        } else if (nodes && k < nodes->size()) {
            h.errorAt(*nodes->get(k), "bad measure in columns: " + why);
        } else {
            h.error("columns", "bad measure in columns: " + why);
        }
    }
}

} // namespace

void readOutput(TableReader& root, DeckBuild& b) {
    b.output.history.columns = {globalMeasure("step", MeasureRef::Quantity::Step),
                                globalMeasure("time", MeasureRef::Quantity::Time)};
    b.output.history.every = 0;
    root.table("output", [&](TableReader& o) {
        o.table("history", [&](TableReader& h) { readHistory(h, b); });
        b.output.progressEverySteps = uint64_t(o.integer("progress_every").value_or(0));
    });
}

} // namespace dem
