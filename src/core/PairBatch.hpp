#pragma once
// Sphere–sphere contacts computed several at a time. The pair loop (Step.cpp) copies the state of
// up to `width` touching pairs into lanes (one array per quantity), runs the contact geometry and
// the law on them several lanes per SIMD instruction (Lanes.hpp), and copies the results back in
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
    static constexpr int width = 16; // a multiple of every lane width
    int lanes = 2;                   // lanes computed at once: pairLaneWidth()
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
    // In and out: the tangential history, and with rolling resistance the moment histories.
    alignas(64) double shear[3][width];
    alignas(64) double roll[3][width];
    alignas(64) double twist[width];
    // Out: force on j, n x force, the overlap (not positive when the square root rounded up to the
    // reach: then the pair does not touch), the lever arm on i, energies of the step.
    alignas(64) double force[3][width];
    alignas(64) double nxf[3][width];
    alignas(64) double overlap[width];
    alignas(64) double armI[width];
    alignas(64) double dissipated[width];
    alignas(64) double elastic[width];
    alignas(64) double couple[3][width]; // with rolling resistance: the moment on j
};

// The pair parameters of W pairs, lane by lane (a table of several materials).
template <int W> struct PairParamLanes {
    Lanes<W> mu, youngA, youngB, poissonA, poissonB, eStar, gStar, beta, contactTime, lnEn, lnEt,
        hertzDampN, hertzDampT, muRoll, muTwist;
};

template <int W, bool Rolling>
[[gnu::always_inline]] inline PairParamLanes<W> gatherParams(const PairParams* table,
                                                             const uint32_t* index) {
    PairParamLanes<W> g;
    for (int e = 0; e < W; ++e) {
        const PairParams& p = table[index[e]];
        g.mu[e] = p.mu, g.youngA[e] = p.youngA, g.youngB[e] = p.youngB;
        g.poissonA[e] = p.poissonA, g.poissonB[e] = p.poissonB, g.eStar[e] = p.eStar;
        g.gStar[e] = p.gStar, g.beta[e] = p.beta, g.contactTime[e] = p.contactTime;
        g.lnEn[e] = p.lnEn, g.lnEt[e] = p.lnEt, g.hertzDampN[e] = p.hertzDampN;
        g.hertzDampT[e] = p.hertzDampT;
        if constexpr (Rolling)
            g.muRoll[e] = p.muRoll, g.muTwist[e] = p.muTwist;
    }
    return g;
}

// Geometry and law on W lanes from lane l on; the parameters are `params`' (one PairParams for
// every lane, or PairParamLanes); with `Rolling`, rolling and twisting resistance too.
template <LawKind Law, bool Periodic, bool Rolling, int W, class P>
[[gnu::always_inline]] inline void computePairLanes(PairBatch& b, int l, const P& params,
                                                    double dt) {
    using R = Lanes<W>;
    constexpr double inf = std::numeric_limits<double>::infinity();
    auto load3 = [&](double(*a)[PairBatch::width]) {
        return Vec3Of<R>{loadLanes<R>(a[0] + l), loadLanes<R>(a[1] + l), loadLanes<R>(a[2] + l)};
    };
    auto store3 = [&](double(*a)[PairBatch::width], const Vec3Of<R>& v) {
        storeLanes(a[0] + l, v.x), storeLanes(a[1] + l, v.y), storeLanes(a[2] + l, v.z);
    };
    const R zero = splat<R>(0), one = splat<R>(1);
    const Vec3Of<R> d = load3(b.d);
    const R ri = loadLanes<R>(b.ri + l), rj = loadLanes<R>(b.rj + l), reach = ri + rj;
    const R len = root(d.squaredNorm());
    const R overlap = reach - len;
    const Vec3Of<R> n = select(len > 0.0, d * (1 / len), Vec3Of<R>{zero, zero, one});
    const R ai = ri - 0.5 * overlap, aj = rj - 0.5 * overlap;
    const Vec3Of<R> wi = load3(b.wi), wj = load3(b.wj);
    ContactInputOf<R> in;
    in.n = n;
    in.overlap = overlap;
    // (v_j - w_j x a_j n) - (v_i + w_i x a_i n), with one cross product:
    // w_j x a_j n + w_i x a_i n = (a_j w_j + a_i w_i) x n.
    in.vRel = load3(b.dv) - (aj * wj + ai * wi).cross(n);
    if constexpr (Periodic) // j's image moves with the cell
        in.vRel -= load3(b.shiftVel);
    in.spin = n.dot(wi + wj);
    // 1/m_eff = 1/m_i + 1/m_j; a blocked sphere (infinite mass) leaves the other's.
    const R mi = loadLanes<R>(b.mi + l), mj = loadLanes<R>(b.mj + l);
    in.mEff = select(mi == inf, mj, select(mj == inf, mi, mi * mj / (mi + mj)));
    in.refR1 = ri;
    in.refR2 = rj;
    in.rStar = ri * rj / reach;
    Vec3Of<R> shear = load3(b.shear);
    ContactResultOf<R> r = lawForce<Law>(params, in, shear, dt);
    store3(b.shear, shear);
    if constexpr (Rolling) {
        in.wRel = wj - wi;
        in.rRoll = ai * aj / (ai + aj);
        Vec3Of<R> roll = load3(b.roll);
        R twist = loadLanes<R>(b.twist + l);
        store3(b.couple, rollingResistance(params, in, roll, twist, dt, r));
        store3(b.roll, roll);
        storeLanes(b.twist + l, twist);
    }
    store3(b.force, r.force);
    store3(b.nxf, n.cross(r.force));
    storeLanes(b.overlap + l, overlap);
    storeLanes(b.armI + l, ai);
    storeLanes(b.dissipated + l, r.dissipated);
    storeLanes(b.elastic + l, r.elastic);
}

// Geometry and law on every lane, W at a time (lanes past the pairs of the batch hold an earlier
// batch's or zero values; their results are not read). `table` is the pair table of `materials`
// materials.
template <LawKind Law, bool Periodic, bool Rolling, int W>
[[gnu::always_inline]] inline void computePairBatchOf(PairBatch& b, const PairParams* table,
                                                      int materials, double dt) {
    for (int l = 0; l < PairBatch::width; l += W) {
        if (materials == 1)
            computePairLanes<Law, Periodic, Rolling, W>(b, l, table[0], dt);
        else
            computePairLanes<Law, Periodic, Rolling, W>(
                b, l, gatherParams<W, Rolling>(table, b.params + l), dt);
    }
}

// The same, compiled for SSE2 (2 lanes, every x86-64 and the generic case elsewhere) and, on
// x86-64, for AVX2 (4) and AVX-512 (8); pairLaneWidth() says which this processor runs.
template <LawKind Law, bool Periodic, bool Rolling>
[[gnu::noinline]] void computePairBatch2(PairBatch& b, const PairParams* t, int m, double dt) {
    computePairBatchOf<Law, Periodic, Rolling, 2>(b, t, m, dt);
}
#if defined(__x86_64__)
template <LawKind Law, bool Periodic, bool Rolling>
[[gnu::noinline, gnu::target("avx2")]] void computePairBatch4(PairBatch& b, const PairParams* t,
                                                              int m, double dt) {
    computePairBatchOf<Law, Periodic, Rolling, 4>(b, t, m, dt);
}
template <LawKind Law, bool Periodic, bool Rolling>
[[gnu::noinline, gnu::target("avx512f")]] void computePairBatch8(PairBatch& b, const PairParams* t,
                                                                 int m, double dt) {
    computePairBatchOf<Law, Periodic, Rolling, 8>(b, t, m, dt);
}
#endif

// Geometry and law on every lane of `b`, b.lanes at a time.
template <LawKind Law, bool Periodic, bool Rolling>
inline void computePairBatch(PairBatch& b, const PairParams* table, int materials, double dt) {
#if defined(__x86_64__)
    if (b.lanes == 8)
        return computePairBatch8<Law, Periodic, Rolling>(b, table, materials, dt);
    if (b.lanes == 4)
        return computePairBatch4<Law, Periodic, Rolling>(b, table, materials, dt);
#endif
    computePairBatch2<Law, Periodic, Rolling>(b, table, materials, dt);
}

} // namespace dem
