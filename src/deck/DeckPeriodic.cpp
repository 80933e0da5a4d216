// [periodic]: the periodic cell (core/PeriodicCell.hpp), and what a periodic deck may not have.
// The stages' velocity_gradient is read with the stages (DeckStages.cpp).
#include "core/PeriodicCell.hpp"
#include "deck/DeckBuild.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace dem {

namespace {

std::string vec3Text(const Vec3& v) {
    return fmt::format("[{}, {}, {}]", v.x(), v.y(), v.z());
}

void readCell(TableReader& t, DeckBuild& b) {
    b.periodicSizeWhere = t.where("size");
    const auto size = t.vec3("size");
    const auto min = t.vec3("min");
    if (!size || !min)
        return;
    PeriodicCell& cell = b.sim.cell;
    cell.enabled = true;
    cell.origin = *min;
    cell.h = size->asDiagonal();
    cell.hAtRebuild = cell.h;
    cell.velGrad = Mat3::Zero();
}

} // namespace

void readPeriodic(TableReader& root, DeckBuild& b) {
    if (!root.has("periodic"))
        return;
    b.periodic = true;
    b.periodicWhere = root.where("periodic");
    root.table("periodic", [&](TableReader& t) { readCell(t, b); });
}

void checkPeriodic(TableReader& root, DeckBuild& b) {
    if (!b.periodic)
        return;
    Diagnostics& diag = root.context().diag;
    const auto line = b.periodicWhere.begin.line;
    // A periodic cell replaces the domain box.
    if (const toml::node* simulation = root.node("simulation")) {
        const toml::table* s = simulation->as_table();
        if (const toml::node* domain = s ? s->get("domain") : nullptr) {
            diag.error(
                domain->source(),
                fmt::format("[simulation] domain in a periodic deck ([periodic] at line {}): "
                            "a periodic cell replaces the domain box; remove one of the two",
                            line));
        }
    }
    // The contact code has no periodic images of obstacles (not supported yet).
    for (const char* key : {"wall", "box", "facets"}) {
        const toml::node* n = root.node(key);
        const toml::array* a = n ? n->as_array() : nullptr;
        if (!a)
            continue;
        for (const toml::node& e : *a)
            diag.error(e.source(),
                       fmt::format("[[{}]] in a periodic deck ([periodic] at line {}): periodic "
                                   "cells take no walls, facets or boxes (not supported yet)",
                                   key, line));
    }
    // The neighbour search needs three grid cells across the cell along every axis.
    const Particles& p = b.sim.particles;
    if (!b.sim.cell.enabled || p.size() == 0)
        return;
    double rmin = p.radius[0], rmax = p.radius[0];
    for (size_t k = 1; k < p.size(); ++k) {
        rmin = std::min(rmin, p.radius[k]);
        rmax = std::max(rmax, p.radius[k]);
    }
    const bool skinGiven = b.sim.neighbours.skin > 0;
    const double skin = skinGiven ? b.sim.neighbours.skin : 0.5 * rmin;
    // The neighbour search's own test (core/Neighbours.cpp, periodicGrid: grid cells of
    // 2 r_max + skin), so that a deck accepted here does not fail at the first rebuild.
    const double gridCell = std::max(2 * rmax + skin, 1e-12);
    const Vec3 across = gridCellsAcross(b.sim.cell.h, gridCell);
    std::string axes;
    for (int k = 0; k < 3; ++k)
        if (!(across[k] >= minGridCellsAcross))
            axes += (axes.empty() ? "" : ", ") + std::string(1, "xyz"[k]);
    if (axes.empty())
        return;
    diag.error(b.periodicSizeWhere,
               fmt::format("size = {}: the periodic cell is too small for the spheres along {}: "
                           "each side must be at least {} (2 r_max + skin) = {:.6g}, three grid "
                           "cells of the neighbour search, with the largest radius r_max = {} and "
                           "skin = {}{}",
                           vec3Text(b.sim.cell.h.diagonal()), axes, minGridCellsAcross,
                           minGridCellsAcross * gridCell, rmax, skin,
                           skinGiven ? " ([simulation] skin)" : " (half the smallest radius)"));
}

} // namespace dem
