#pragma once
// Sphere–sphere contacts computed several at a time. The pair loop (Step.cpp) copies the state of
// up to `width` touching pairs into lanes (one array per quantity), runs the contact geometry and
// the law on every lane in one loop that the compiler vectorises, and copies the results back in
// pair order. One contact alone is a chain of dependent square roots and divisions (distance,
// normal, contact radius, dashpots, the shear's projection and Coulomb limit): in lanes the chains
// of several contacts run side by side.
//
// A lane computes exactly what a contact alone would (Lanes.hpp): the same operations in the same
// order, with IEEE division and square root and no contraction into fused multiply-adds
// (-ffp-contract=off), so the results do not depend on how the pairs fall into batches, i.e. on
// the thread count.
#include "core/ContactLaws.hpp"

#include <cstdint>
#include <limits>

namespace dem {

struct PairBatch {
    static constexpr int width = 16; // a multiple of laneCount
    // In: the branch vector from sphere i to sphere j (its listed image), v_j - v_i, the velocity
    // of j's image shift (periodic cells only), the angular velocities, radii, masses for the
    // effective mass (infinite when blocked) and the tangential history (zero for a new contact).
    alignas(64) double d[3][width];
    alignas(64) double dv[3][width];
    alignas(64) double shiftVel[3][width];
    alignas(64) double wi[3][width];
    alignas(64) double wj[3][width];
    alignas(64) double ri[width];
    alignas(64) double rj[width];
    alignas(64) double mi[width];
    alignas(64) double mj[width];
    alignas(64) uint32_t params[width]; // index into the pair table
    // In and out: the tangential history.
    alignas(64) double shear[3][width];
    // Out: force on j, n x force, the overlap (not positive when the square root rounded up to the
    // reach: then the pair does not touch), half of it, the lever arm on i, energies of the step.
    alignas(64) double force[3][width];
    alignas(64) double nxf[3][width];
    alignas(64) double overlap[width];
    alignas(64) double halfOverlap[width];
    alignas(64) double armI[width];
    alignas(64) double dissipated[width];
    alignas(64) double elastic[width];
};

// The pair parameters of laneCount pairs, lane by lane (a table of several materials).
struct PairParamLanes {
    Lanes mu, youngA, youngB, poissonA, poissonB, eStar, gStar, beta, contactTime, lnEn, lnEt,
        hertzDampN, hertzDampT;
};

inline PairParamLanes gatherParams(const PairParams* table, const uint32_t* index) {
    PairParamLanes g;
    for (int e = 0; e < laneCount; ++e) {
        const PairParams& p = table[index[e]];
        g.mu[e] = p.mu, g.youngA[e] = p.youngA, g.youngB[e] = p.youngB;
        g.poissonA[e] = p.poissonA, g.poissonB[e] = p.poissonB, g.eStar[e] = p.eStar;
        g.gStar[e] = p.gStar, g.beta[e] = p.beta, g.contactTime[e] = p.contactTime;
        g.lnEn[e] = p.lnEn, g.lnEt[e] = p.lnEt, g.hertzDampN[e] = p.hertzDampN;
        g.hertzDampT[e] = p.hertzDampT;
    }
    return g;
}

// Geometry and law on laneCount lanes from lane l on; the parameters are `params`' (one
// PairParams for every lane, or PairParamLanes).
template <LawKind Law, bool Periodic, class P>
[[gnu::always_inline]] inline void computePairLanes(PairBatch& b, int l, const P& params,
                                                    double dt) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    auto load3 = [&](double(*a)[PairBatch::width]) {
        return Vec3Of<Lanes>{loadLanes(a[0] + l), loadLanes(a[1] + l), loadLanes(a[2] + l)};
    };
    auto store3 = [&](double(*a)[PairBatch::width], const Vec3Of<Lanes>& v) {
        storeLanes(a[0] + l, v.x), storeLanes(a[1] + l, v.y), storeLanes(a[2] + l, v.z);
    };
    const Lanes zero = splat<Lanes>(0), one = splat<Lanes>(1);
    const Vec3Of<Lanes> d = load3(b.d);
    const Lanes ri = loadLanes(b.ri + l), rj = loadLanes(b.rj + l), reach = ri + rj;
    const Lanes len = root(d.squaredNorm());
    const Lanes overlap = reach - len;
    const Vec3Of<Lanes> n = select(len > 0.0, d * (1 / len), Vec3Of<Lanes>{zero, zero, one});
    const Lanes ai = ri - 0.5 * overlap, aj = rj - 0.5 * overlap;
    const Vec3Of<Lanes> wi = load3(b.wi), wj = load3(b.wj);
    ContactInputOf<Lanes> in;
    in.n = n;
    in.overlap = overlap;
    // (v_j - w_j x a_j n) - (v_i + w_i x a_i n), with one cross product:
    // w_j x a_j n + w_i x a_i n = (a_j w_j + a_i w_i) x n.
    in.vRel = load3(b.dv) - (aj * wj + ai * wi).cross(n);
    if constexpr (Periodic) // j's image moves with the cell
        in.vRel -= load3(b.shiftVel);
    in.spin = n.dot(wi + wj);
    // 1/m_eff = 1/m_i + 1/m_j; a blocked sphere (infinite mass) leaves the other's.
    const Lanes mi = loadLanes(b.mi + l), mj = loadLanes(b.mj + l);
    in.mEff = select(mi == inf, mj, select(mj == inf, mi, mi * mj / (mi + mj)));
    in.refR1 = ri;
    in.refR2 = rj;
    in.rStar = ri * rj / reach;
    Vec3Of<Lanes> shear = load3(b.shear);
    const ContactResultOf<Lanes> r = lawForce<Law>(params, in, shear, dt);
    store3(b.shear, shear);
    store3(b.force, r.force);
    store3(b.nxf, n.cross(r.force));
    storeLanes(b.overlap + l, overlap);
    storeLanes(b.halfOverlap + l, 0.5 * overlap);
    storeLanes(b.armI + l, ai);
    storeLanes(b.dissipated + l, r.dissipated);
    storeLanes(b.elastic + l, r.elastic);
}

// Geometry and law on every lane (lanes past the pairs of the batch hold an earlier batch's or
// zero values; their results are not read). `table` is the pair table of `materials` materials.
template <LawKind Law, bool Periodic>
[[gnu::always_inline]] inline void computePairBatch(PairBatch& b, const PairParams* table,
                                                    int materials, double dt) {
    for (int l = 0; l < PairBatch::width; l += laneCount) {
        if (materials == 1)
            computePairLanes<Law, Periodic>(b, l, table[0], dt);
        else
            computePairLanes<Law, Periodic>(b, l, gatherParams(table, b.params + l), dt);
    }
}

} // namespace dem
