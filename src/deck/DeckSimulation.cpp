// [simulation]: time step, neighbour search, energy tracking and domain; and the choice of the
// time step once the spheres exist.
#include "deck/DeckBuild.hpp"

#include "core/TimeStep.hpp"

#include <fmt/format.h>

namespace dem {

namespace {

void readDomain(TableReader& d, DeckBuild& b) {
    const auto lo = d.vec3("min");
    const auto hi = d.vec3("max");
    const auto mode = d.string("out_of_domain");
    if (!lo || !hi)
        return;
    if (!(lo->array() < hi->array()).all()) {
        d.error("max", "domain: max must exceed min in every component");
        return;
    }
    b.sim.hasDomain = true;
    b.sim.domainMin = *lo;
    b.sim.domainMax = *hi;
    b.sim.outOfDomain = mode && *mode == "remove" ? OutOfDomain::Remove : OutOfDomain::Error;
}

// The largest stable step of the contact laws in use (criticalTimeStep, core/TimeStep.hpp).
std::optional<double> stabilityEstimate(const Simulation& sim, std::string& basis) {
    if (sim.particles.size() == 0)
        return std::nullopt;
    basis = "critical step of the contact law: sqrt(2 m/K_N) linear (over sqrt(3.5 K_T/K_N) "
            "above K_T/K_N = 2/7), Rayleigh time Hertz-Mindlin, 2 t_c/sqrt(pi^2 + ln^2 e_n) "
            "viscoelastic";
    if (resistsRollingInSomeStage(sim))
        basis += fmt::format(", divided by {} for rolling resistance", rollingStepDivisor);
    return criticalTimeStep(sim);
}

} // namespace

void readSimulation(TableReader& root, DeckBuild& b) {
    const auto read = [&](TableReader& s) {
        b.dt = s.number("dt");
        if (!s.has("dt"))
            b.dtFactor = s.number("dt_factor").value_or(defaultTimeStepFactor);
        b.sim.neighbours.skin = s.number("skin").value_or(0.0);
        b.sim.trackEnergy = s.boolean("track_energy").value_or(true);
        s.table("domain", [&](TableReader& d) { readDomain(d, b); });
    };
    if (root.table("simulation", read))
        return;
    if (root.has("simulation"))
        return; // present but not a table: reported
    // Absent: read an empty table all the same, so that resolved.toml lists the defaults.
    const toml::table empty;
    root.put("simulation", toml::table{});
    TableReader s(root.context(), empty, *root.output()["simulation"].as_table(),
                  *deckSpec().find("simulation")->table, &root);
    read(s);
}

void chooseTimeStep(TableReader& root, DeckBuild& b) {
    toml::table* out = root.output()["simulation"].as_table();
    std::string basis;
    const std::optional<double> estimate = stabilityEstimate(b.sim, basis);
    if (estimate && !(std::isfinite(*estimate) && *estimate > 0)) {
        root.context().diag.error(root.where("simulation"),
                                  fmt::format("the stability estimate of the time step is {} "
                                              "({}): check densities and moduli",
                                              *estimate, basis));
        return;
    }
    if (b.dt) {
        if (estimate && *b.dt > *estimate) {
            const toml::node* simulation = root.node("simulation");
            const toml::node* dt = simulation ? simulation->as_table()->get("dt") : nullptr;
            root.context().diag.error(
                dt ? dt->source() : root.where(),
                fmt::format("dt = {} exceeds the stability estimate {:.6g} ({})", *b.dt, *estimate,
                            basis));
        }
        b.sim.dt = *b.dt;
    } else if (estimate) {
        b.sim.dt = b.dtFactor * *estimate;
    } else {
        root.context().diag.error(root.where("simulation"),
                                  "cannot choose a time step: the deck has no spheres; give dt "
                                  "in [simulation]");
        return;
    }
    // resolved.toml records the step actually used, so that it reproduces the run exactly.
    if (out) {
        out->erase("dt_factor");
        out->insert_or_assign("dt", b.sim.dt);
    }
}

// The cell advances by h(t + dt) = (I + L dt) h(t) (physics.md §11.2), a first-order step that
// needs |L dt| << 1: at |L dt| >= 1 it can turn the cell inside out or blow it up in a few steps
// (found with L = -1e6 /s). A tenth is far beyond any quasi-static or flow strain rate.
void checkCellStrainPerStep(TableReader& root, DeckBuild& b) {
    constexpr double largest = 0.1;
    const toml::node* stages = root.node("stage");
    for (size_t k = 0; k < b.sim.stages.size(); ++k) {
        std::optional<Mat3> L = b.sim.stages[k].velocityGradient;
        // A stress control may stretch its axes at up to max_strain_rate.
        const std::optional<StressControl>& control = b.sim.stages[k].stressControl;
        if (control) {
            L = L.value_or(Mat3::Zero());
            for (int a = 0; a < 3; ++a)
                if (control->axes & (1u << a))
                    (*L)(a, a) = control->maxRate;
        }
        if (!L)
            continue;
        const double strain = (*L * b.sim.dt).norm(); // Frobenius: at least the largest stretch
        if (strain < largest)
            continue;
        const char* name = control ? "stress_control" : "velocity_gradient";
        const toml::node* stage =
            stages && stages->is_array() ? stages->as_array()->get(k) : nullptr;
        const toml::node* key = stage && stage->is_table() ? stage->as_table()->get(name) : nullptr;
        root.context().diag.error(
            key ? key->source() : root.where(),
            fmt::format("{} x dt has norm {:.3g} (dt = {:.3g} s): the periodic cell would deform "
                        "by more than a tenth in one step; lower the {} or the time step (dt or "
                        "dt_factor in [simulation])",
                        control ? "the velocity gradient at max_strain_rate" : "velocity_gradient",
                        strain, b.sim.dt, control ? "max_strain_rate" : "gradient"));
    }
}

} // namespace dem
