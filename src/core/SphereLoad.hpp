#pragma once
// The load on a sphere: the force and torque of its contacts and of the stage's constant forces
// (gravity and damping aside: the integration adds those). The step sums each sphere's load while
// it computes the contacts (Step.cpp) and does not keep it: sphereLoad() sums the stored results
// of the last step again, in the step's order and so to the same bits, for outputs and measures.
// The order: the sphere's own pairs (it is i) in pair order, starting from zero; the pairs in
// which it is j, in pair order; its obstacle contacts, walls and boxes before facets (the step
// finishes facet contacts last, after choosing among them); the constant forces.
#include "core/Simulation.hpp"

#include <vector>

namespace dem {

struct SphereLoad {
    Vec3 force = Vec3::Zero(), torque = Vec3::Zero();
    double loss = 0; // energy dissipated in the sphere's obstacle contacts this step (step only)
};

// `own` plus the results of the pairs in which sphere p (radius r) is the second sphere, in pair
// order. A pair apart reads record 0 (PairContact::none), which adds -0.0 and leaves any sum
// unchanged: no branch, which would be mispredicted as often as touching and apart pairs
// alternate. The components live in scalars: a load summed through memory in pieces stalls store
// forwarding. Always inlined: GCC would otherwise make it a call that returns the load through
// memory (10% of the step's integration phase on the falling ball).
[[gnu::always_inline]] inline SphereLoad addPairsAsSecond(const SpherePairs& S, size_t p, double r,
                                                          const SphereLoad& own) {
    double f[3] = {own.force.x(), own.force.y(), own.force.z()};
    double t[3] = {own.torque.x(), own.torque.y(), own.torque.z()};
    const PairContact* records = S.records.data();
    for (uint32_t e = S.jStart[p]; e < S.jStart[p + 1]; ++e) {
        const PairContact& res = records[S.contact[S.jPairs[e]]];
        const double arm = r - res.halfOverlap;
        for (int c = 0; c < 3; ++c) {
            f[c] += res.force[c];
            t[c] -= arm * res.nxf[c];
        }
    }
    SphereLoad load;
    load.force = Vec3(f[0], f[1], f[2]);
    load.torque = Vec3(t[0], t[1], t[2]);
    load.loss = own.loss;
    return load;
}

// `torque` plus the couples of the pairs in which sphere p is the second sphere, in pair order:
// what addPairsAsSecond's torque gains when the pairs keep moment histories (a pair apart reads
// record 0's zero couple). By value, as addPairsAsSecond: a load whose address is taken would stay
// in memory.
[[gnu::always_inline]] inline Vec3 addCouplesAsSecond(const SpherePairs& S, size_t p, Vec3 torque) {
    const PairRolling* rolling = S.rolling.data();
    for (uint32_t e = S.jStart[p]; e < S.jStart[p + 1]; ++e)
        torque += rolling[S.contact[S.jPairs[e]]].couple;
    return torque;
}

// The load on sphere p in the last step, from the stored contact results (zero before the first
// step, but for constant forces).
SphereLoad sphereLoad(const Simulation& sim, size_t p);

// The loads of every sphere, as arrays (VTK output).
void sphereLoads(const Simulation& sim, std::vector<Vec3>& force, std::vector<Vec3>& torque);

} // namespace dem
