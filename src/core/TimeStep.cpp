#include "core/TimeStep.hpp"

#include <cmath>
#include <limits>
#include <numbers>

namespace dem {

double pWaveTimeStep(const Simulation& sim) {
    double dt = std::numeric_limits<double>::infinity();
    const Particles& P = sim.particles;
    for (size_t p = 0; p < P.size(); ++p) {
        const Material& m = sim.materials[P.material[p]];
        if (m.law == LawKind::ViscoElastic)
            continue; // no Young's modulus: bounded by t_c instead
        dt = std::min(dt, P.radius[p] * std::sqrt(m.density / m.young));
    }
    return dt;
}

bool resistsRollingInSomeStage(const Simulation& sim) {
    if (sim.pairTable.resistsRolling())
        return true;
    for (const Stage& s : sim.stages)
        for (const RollingChange& r : s.rollingChanges)
            if (r.rolling.value_or(0) > 0 || r.twisting.value_or(0) > 0)
                return true;
    return false;
}

double criticalTimeStep(const Simulation& sim) {
    constexpr double pi = std::numbers::pi;
    double dt = std::numeric_limits<double>::infinity();
    const Particles& P = sim.particles;
    for (size_t p = 0; p < P.size(); ++p) {
        const Material& m = sim.materials[P.material[p]];
        const double R = P.radius[p];
        switch (m.law) {
        case LawKind::Linear: {
            // Two equal spheres: k_n = E R on the reduced mass m/2 gives w_n^2 = 2 k_n/m; the
            // tangential spring k_t both slides and turns them (I = 2/5 m R^2), which gives
            // w_t^2 = 7 k_t/m = 3.5 (k_t/k_n) w_n^2. Leapfrog is stable for w dt < 2.
            const double tangentialOverNormal = 3.5 * m.poisson; // (w_t/w_n)^2
            double step = std::sqrt(2.0) * std::sqrt(P.mass(p) / (m.young * R));
            if (tangentialOverNormal > 1)
                step /= std::sqrt(tangentialOverNormal);
            dt = std::min(dt, step);
            break;
        }
        case LawKind::HertzMindlin: {
            const double G = m.young / (2 * (1 + m.poisson));
            dt = std::min(dt, pi * R * std::sqrt(m.density / G) / (0.1631 * m.poisson + 0.8766));
            break;
        }
        case LawKind::ViscoElastic: {
            const double lnE = std::log(std::max(m.restitutionN, 1e-12));
            dt = std::min(dt, 2 * m.contactTime / std::sqrt(pi * pi + lnE * lnE));
            break;
        }
        }
    }
    return resistsRollingInSomeStage(sim) ? dt / rollingStepDivisor : dt;
}

} // namespace dem
