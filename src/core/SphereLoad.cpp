#include "core/SphereLoad.hpp"
#include "core/Parallel.hpp"

namespace dem {

SphereLoad sphereLoad(const Simulation& sim, size_t p) {
    const Particles& P = sim.particles;
    const SpherePairs& S = sim.pairs;
    const size_t n = P.size();
    const double r = P.radius[p];
    // Its own pairs, as the pair loop sums them: the touching ones, from zero.
    SphereLoad load;
    if (S.start.size() == n + 1)
        for (uint32_t k = S.start[p]; k < S.start[p + 1]; ++k) {
            if (!S.touching(k))
                continue;
            const PairContact& res = S.record(k);
            load.force -= res.force;
            load.torque -= (r - res.halfOverlap) * res.nxf;
            if (S.hasRolling())
                load.torque -= S.rollingOf(k).couple;
        }
    if (S.jStart.size() == n + 1) {
        load = addPairsAsSecond(S, p, r, load);
        if (S.hasRolling())
            load.torque = addCouplesAsSecond(S, p, load.torque);
    }
    const ObstacleContacts& O = sim.obstacleContacts;
    if (O.start.size() == n + 1)
        for (const bool facets : {false, true})
            for (uint32_t e = O.start[p]; e < O.start[p + 1]; ++e) {
                const auto kind = ObstacleKind(O.target[e] >> ObstacleContacts::kindShift);
                if (!O.touching[e] || (kind == ObstacleKind::Facet) != facets)
                    continue;
                load.force += O.force[e];
                load.torque += O.torque[e];
            }
    for (const ConstantForce& f : sim.forces)
        if (P.groups(p) & (1u << f.group))
            load.force += f.force;
    return load;
}

void sphereLoads(const Simulation& sim, std::vector<Vec3>& force, std::vector<Vec3>& torque) {
    const size_t n = sim.particles.size();
    force.resize(n);
    torque.resize(n);
#pragma omp parallel for schedule(static) if (n > parallelThreshold)
    for (size_t p = 0; p < n; ++p) {
        const SphereLoad load = sphereLoad(sim, p);
        force[p] = load.force;
        torque[p] = load.torque;
    }
}

} // namespace dem
