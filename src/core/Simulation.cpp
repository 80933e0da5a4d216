#include "core/Simulation.hpp"

#include <cmath>
#include <limits>

namespace dem {

int Simulation::groupIndex(const std::string& name) const {
    for (size_t g = 0; g < groupNames.size(); ++g)
        if (groupNames[g] == name)
            return int(g);
    return -1;
}

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

} // namespace dem
