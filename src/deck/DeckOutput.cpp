// [output]: the history table, VTK series, gnuplot figures and the progress period.
#include "core/Measures.hpp"
#include "deck/DeckBuild.hpp"
#include "io/VtkWriter.hpp"

#include <algorithm>
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
            // A column listed twice would be two columns of one name in history.tsv.
            const bool twice = std::any_of(history.columns.begin(), history.columns.end(),
                                           [&](const MeasureRef& c) { return c.name == ref.name; });
            if (!twice) {
                history.columns.push_back(ref);
                continue;
            }
            why = fmt::format("column '{}' is listed twice", name);
        } else {
            why = "bad measure in columns: " + why;
        }
        if (nodes && k < nodes->size())
            h.errorAt(*nodes->get(k), why);
        else
            h.error("columns", why);
    }
}

void readVtk(TableReader& v, DeckBuild& b) {
    VtkSpec& vtk = b.output.vtk;
    vtk.every = uint64_t(v.integer("every").value_or(1000));
    vtk.kinds =
        v.strings("kinds").value_or(std::vector<std::string>{"spheres", "contacts", "obstacles"});
    vtk.fields = v.strings("fields").value_or(std::vector<std::string>{"all"});
    std::string why;
    VtkKinds kinds;
    if (!parseVtkKinds(vtk.kinds, kinds, why))
        v.error("kinds", why);
    VtkFieldSelection fields;
    if (!parseVtkFields(vtk.fields, fields, why))
        v.error("fields", why);
}

void readCheckpoint(TableReader& c, DeckBuild& b) {
    CheckpointSpec& spec = b.output.checkpoint;
    spec.every = uint64_t(c.integer("every").value_or(0));
    spec.everyTime = c.number("every_time").value_or(0);
    spec.everyWallMinutes = c.number("every_wall_minutes").value_or(30);
    spec.atStageEnd = c.boolean("at_stage_end").value_or(false);
    spec.atEnd = c.boolean("at_end").value_or(true);
    spec.keep = uint64_t(c.integer("keep").value_or(3));
    spec.keepStageEnds = c.boolean("keep_stage_ends").value_or(true);
    spec.compression = c.string("compression").value_or("gzip");
    spec.level = int(c.integer("level").value_or(1));
}

// Plot columns must be history columns, so the figure can always be drawn.
void readPlot(TableReader& p, DeckBuild& b) {
    PlotSpecDeck plot;
    plot.name = p.string("name").value_or("");
    plot.title = p.string("title").value_or("");
    plot.x = p.string("x").value_or("time");
    plot.y = p.strings("y").value_or(std::vector<std::string>{});
    plot.y2 = p.strings("y2").value_or(std::vector<std::string>{});
    plot.logX = p.boolean("log_x").value_or(false);
    plot.logY = p.boolean("log_y").value_or(false);
    plot.logY2 = p.boolean("log_y2").value_or(false);
    const auto recorded = [&](const std::string& column) {
        for (const MeasureRef& m : b.output.history.columns)
            if (m.name == column)
                return true;
        return false;
    };
    std::string names;
    for (const MeasureRef& m : b.output.history.columns)
        names += (names.empty() ? "" : ", ") + m.name;
    const auto check = [&](const char* key, const std::vector<std::string>& columns) {
        for (const std::string& c : columns)
            if (!recorded(c))
                p.error(key, fmt::format("plot column '{}' is not recorded in the history "
                                         "(columns: {})",
                                         c, names));
    };
    check("x", {plot.x});
    check("y", plot.y);
    check("y2", plot.y2);
    if (!plot.name.empty() && plot.name.find_first_of("/\\") != std::string::npos)
        p.error("name", fmt::format("plot name '{}' must be a file name, without '/'", plot.name));
    // Two figures of one name would write one file, the later over the earlier.
    for (size_t k = 0; k < b.output.plots.size(); ++k)
        if (!plot.name.empty() && b.output.plots[k].name == plot.name)
            p.error("name", fmt::format("duplicate plot name '{}' (plot {} has it already): each "
                                        "figure is written to plots/<name>.gp",
                                        plot.name, k + 1));
    b.output.plots.push_back(plot);
}

} // namespace

void readOutput(TableReader& root, DeckBuild& b) {
    b.output.history.columns = {globalMeasure("step", MeasureRef::Quantity::Step),
                                globalMeasure("time", MeasureRef::Quantity::Time)};
    b.output.history.every = 0;
    root.table("output", [&](TableReader& o) {
        o.table("history", [&](TableReader& h) { readHistory(h, b); });
        o.table("vtk", [&](TableReader& v) { readVtk(v, b); });
        o.table("checkpoint", [&](TableReader& c) { readCheckpoint(c, b); });
        o.tables("plot", [&](TableReader& p, size_t) { readPlot(p, b); });
        b.output.progressEverySteps = uint64_t(o.integer("progress_every").value_or(0));
    });
}

OptionalState optionalStateRead(const OutputSpec& output, const Simulation& sim) {
    OptionalState read;
    VtkKinds kinds;
    VtkFieldSelection fields;
    std::string why;
    if (output.vtk.every > 0 && parseVtkKinds(output.vtk.kinds, kinds, why) && kinds.spheres &&
        parseVtkFields(output.vtk.fields, fields, why)) {
        read.orientation = fields.orientation;
        read.start = fields.displacement;
    }
    for (const MeasureRef& m : output.history.columns)
        read.start = read.start || readsSphereStart(m);
    for (const Stage& stage : sim.stages)
        for (const StopCriterion& c : stage.stop)
            read.start = read.start ||
                         (c.kind == StopCriterion::Kind::Measure && readsSphereStart(c.measure));
    return read;
}

} // namespace dem
