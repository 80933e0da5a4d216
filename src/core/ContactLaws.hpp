#pragma once
// The three contact laws (a closed set, chosen by a template argument or a switch; no virtual
// calls). Conventions (physics.md §0.3): n points from body 1 to body 2, overlap u > 0 in contact,
// forces are those on body 2, vRel is the velocity of body 2 relative to body 1 at the contact
// point.
#include "core/Lanes.hpp"
#include "core/Material.hpp"
#include "core/Types.hpp"

#include <cmath>
#include <numbers>

namespace dem {

template <class R> struct ContactInputOf {
    Vec3Of<R> n;
    R overlap;
    Vec3Of<R> vRel;
    R spin;         // n . (omega1 + omega2): rotation of the contact plane about the normal
    R mEff;         // effective mass [kg]
    R refR1, refR2; // reference radii for the linear stiffness (physics.md §2.6)
    R rStar;        // effective radius for Hertz (R1 R2 / (R1 + R2), R for a flat obstacle)
    // Read by rollingResistance only: omega2 - omega1, and the rolling radius (1/a1 + 1/a2)^-1
    // of the centre-to-contact distances (a1 for a flat obstacle).
    Vec3Of<R> wRel;
    R rRoll;
};

template <class R> struct ContactResultOf {
    Vec3Of<R> force; // on body 2
    R dissipated;    // energy lost in this step (viscous + friction) [J]
    R elastic;       // energy stored in the springs [J]
    // The law's stiffnesses and dashpots (normal, tangential) and its normal force (not negative),
    // which rolling and twisting resistance take over; unused otherwise (the compiler drops them).
    R kn, cn, kt, ct, fn;
};

using ContactInput = ContactInputOf<double>;
using ContactResult = ContactResultOf<double>;

inline Vec3Of<double> lawVec(const Vec3& v) {
    return {v.x(), v.y(), v.z()};
}
inline Vec3 eigenVec(const Vec3Of<double>& v) {
    return {v.x, v.y, v.z};
}

// The laws take no branch on a contact's state (select computes both sides; a side not taken may
// hold inf or NaN, which is discarded): the pair loop runs them on several contacts at once in
// SIMD lanes (PairBatch.hpp), where a branch cannot go two ways.

// Keeps the stored tangential force in the tangent plane as the contact rotates: project it onto
// the new plane keeping its length (TinyDEM §5), then turn it with the common spin about n
// (physics.md §3.2, first order). A zero force stays as it is.
template <class R>
[[gnu::always_inline]] inline void rotateShear(Vec3Of<R>& shear, const Vec3Of<R>& n, R spin,
                                               double dt) {
    const R len2 = shear.squaredNorm();
    Vec3Of<R> s = shear - shear.dot(n) * n;
    const R lp2 = s.squaredNorm();
    s = select(lp2 > 0.0, s * root(len2 / lp2), s);
    s -= s.cross(n * (0.5 * dt * spin));
    shear = select(len2 == 0.0, shear, s);
}

// Coulomb limit on the elastic tangential force, given |shear|^2 = s2 (computed by the caller,
// which also needs it); only where `enabled`. Returns the friction dissipation of the slip and sets
// s2 to the squared length that remains.
template <class R, class M>
[[gnu::always_inline]] inline R coulomb(Vec3Of<R>& shear, R& s2, R limit, R kt, M enabled) {
    const auto slides = enabled & none((s2 <= limit * limit) | (s2 == 0.0));
    const R s = root(s2);
    const R loss = (s - limit) / kt * limit;
    shear = select(slides, shear * (limit / s), shear);
    s2 = select(slides, limit * limit, s2);
    return select(slides, loss, splat<R>(0));
}

// One law, chosen at compile time (a simulation has one law: buildPairTable refuses materials of
// different laws), for one contact (R = double, P = PairParams) or for lanes of contacts
// (R = Lanes, P = PairParams or PairParamLanes). Inlined: input and result stay in registers.
template <LawKind Law, class R, class P>
[[gnu::always_inline]] inline ContactResultOf<R> lawForce(const P& p, const ContactInputOf<R>& in,
                                                          Vec3Of<R>& shear, double dt) {
    const R zero = splat<R>(0);
    const R u = in.overlap;
    const R vn = in.vRel.dot(in.n); // > 0 when separating
    const Vec3Of<R> vt = in.vRel - vn * in.n;
    ContactResultOf<R> r{};
    rotateShear(shear, in.n, in.spin, dt);
    if constexpr (Law == LawKind::Linear) {
        // Cundall–Strack with Yade's series stiffnesses; unclamped dashpot so e is exact.
        const R ka = p.youngA * in.refR1, kb = p.youngB * in.refR2;
        const R kn = 2 * ka * kb / (ka + kb);
        const R kta = ka * p.poissonA, ktb = kb * p.poissonB;
        const R kt = select((kta + ktb) > 0.0, 2 * kta * ktb / (kta + ktb), zero);
        const R cn = 2 * p.beta * root(in.mEff * kn);
        const R fn = kn * u - cn * vn;
        shear -= kt * dt * vt;
        R s2 = shear.squaredNorm();
        r.dissipated = cn * vn * vn * dt;
        r.dissipated += coulomb(shear, s2, p.mu * select(fn < 0.0, zero, fn), kt, kt > 0.0);
        r.force = fn * in.n + shear;
        r.elastic = 0.5 * kn * u * u + select(kt > 0.0, 0.5 * s2 / kt, zero);
        r.kn = kn, r.cn = cn, r.kt = kt, r.ct = zero, r.fn = select(fn < 0.0, zero, fn);
    } else if constexpr (Law == LawKind::HertzMindlin) {
        // Hertz normal force, Mindlin tangential stiffness, damping from restitution
        // (physics.md §5); the normal force is never attractive.
        const R a = root(in.rStar * u);
        const R kn = 2 * p.eStar * a; // tangent normal stiffness
        const R ks = 8 * p.gStar * a;
        const R fel = (2.0 / 3.0) * kn * u; // (4/3) E* sqrt(R*) u^(3/2)
        // c_n = 2 beta sqrt(m k_n), c_s = 2 beta sqrt(m k_s): one root of m a for both.
        const R rootMA = root(in.mEff * a);
        const R cn = p.hertzDampN * rootMA, cs = p.hertzDampT * rootMA;
        R fn = fel - cn * vn;
        fn = select(fn < 0.0, zero, fn);
        r.dissipated = (fel - fn) * vn * dt; // work of the normal dashpot
        shear -= ks * dt * vt;
        // Sliding is |F_s,el| > mu F_N, tested before the cut: coulomb() returns a zero loss
        // when the limit is zero (no friction, or no normal force), which is sliding too.
        R s2 = shear.squaredNorm();
        const R limit = p.mu * fn;
        const auto sliding = s2 > limit * limit;
        const R slip = coulomb(shear, s2, limit, ks, ks > 0.0);
        // The tangential dashpot acts while sticking.
        const R cStick = select(sliding, zero, cs);
        const Vec3Of<R> ft = shear - cStick * vt;
        r.dissipated += cStick * vt.squaredNorm() * dt;
        r.dissipated += slip;
        r.force = fn * in.n + ft;
        r.elastic = 0.4 * fel * u + select(ks > 0.0, 0.5 * s2 / ks, zero);
        r.kn = kn, r.cn = cn, r.kt = ks, r.ct = cs, r.fn = fn;
    } else {
        // Spring–dashpot from contact time and restitution (Yade's ViscElMat, physics.md §8).
        const auto tc2 = p.contactTime * p.contactTime;
        const double pi2 = std::numbers::pi * std::numbers::pi;
        const R kn = in.mEff * (pi2 + p.lnEn * p.lnEn) / tc2;
        const R cn = -2 * in.mEff * p.lnEn / p.contactTime;
        const R ks = (2.0 / 7.0) * in.mEff * (pi2 + p.lnEt * p.lnEt) / tc2;
        const R cs = -(4.0 / 7.0) * in.mEff * p.lnEt / p.contactTime;
        R fn = kn * u - cn * vn;
        fn = select(fn < 0.0, zero, fn);
        r.dissipated = (kn * u - fn) * vn * dt;
        shear -= ks * dt * vt;
        R s2 = shear.squaredNorm();
        const R limit = p.mu * fn;
        const auto sliding = s2 > limit * limit; // as for Hertz-Mindlin
        const R slip = coulomb(shear, s2, limit, ks, everyLane<R>());
        const R cStick = select(sliding, zero, cs);
        const Vec3Of<R> ft = shear - cStick * vt;
        r.dissipated += cStick * vt.squaredNorm() * dt;
        r.dissipated += slip;
        r.force = fn * in.n + ft;
        r.elastic = 0.5 * kn * u * u + 0.5 * s2 / ks;
        r.kn = kn, r.cn = cn, r.kt = ks, r.ct = cs, r.fn = fn;
    }
    return r;
}

// Rolling and twisting resistance (TinyDEM eqs. 31-40, physics.md §6.1), as moments on body 2
// (body 1 receives their opposite). TinyDEM's rolling "force" k_n u_r with
// du_r/dt = R_r (w x n), acting with arm R*, is a moment spring of stiffness k_n R* R_r on the
// tangential relative rotation; its twisting one, k_t R*^2 on the rotation about n. Each spring is
// kept as its moment (`roll`, `twist`: the contact's history), turned with the contact like the
// shear, limited to mu R* F_n (the excess is dissipated, as Coulomb sliding), with a dashpot of the
// law's normal (rolling) or tangential (twisting) damping times the same arms while it sticks.
// Adds the springs' energy and the losses to `r`; returns the moment on body 2.
template <class R, class P>
[[gnu::always_inline]] inline Vec3Of<R> rollingResistance(const P& p, const ContactInputOf<R>& in,
                                                          Vec3Of<R>& roll, R& twist, double dt,
                                                          ContactResultOf<R>& r) {
    const R zero = splat<R>(0);
    const R wn = in.wRel.dot(in.n);
    const Vec3Of<R> wt = in.wRel - wn * in.n;
    rotateShear(roll, in.n, in.spin, dt);
    const R armR = in.rStar * in.rRoll, armT = in.rStar * in.rStar;
    const R kr = r.kn * armR, cr = r.cn * armR;
    const R ktw = r.kt * armT, ctw = r.ct * armT;
    roll -= kr * dt * wt;
    R r2 = roll.squaredNorm();
    const R rollLimit = p.muRoll * in.rStar * r.fn;
    const auto rolls = r2 > rollLimit * rollLimit;
    r.dissipated += coulomb(roll, r2, rollLimit, kr, kr > 0.0);
    const R crStick = select(rolls, zero, cr);
    twist -= ktw * dt * wn;
    const R twistLimit = p.muTwist * in.rStar * r.fn;
    const R t = select(twist < 0.0, -twist, twist);
    const auto twists = t > twistLimit;
    r.dissipated += select(twists & (ktw > 0.0), (t - twistLimit) / ktw * twistLimit, zero);
    twist = select(twists, select(twist < 0.0, -twistLimit, twistLimit), twist);
    const R ctStick = select(twists, zero, ctw);
    r.dissipated += (crStick * wt.squaredNorm() + ctStick * wn * wn) * dt;
    r.elastic +=
        select(kr > 0.0, 0.5 * r2 / kr, zero) + select(ktw > 0.0, 0.5 * twist * twist / ktw, zero);
    return roll - crStick * wt + (twist - ctStick * wn) * in.n;
}

// The law of the pair's materials, for code that meets contacts one at a time (obstacles).
[[gnu::always_inline]] inline ContactResult
contactForce(const PairParams& p, const ContactInput& in, Vec3Of<double>& shear, double dt) {
    switch (p.law) {
    case LawKind::Linear:
        return lawForce<LawKind::Linear>(p, in, shear, dt);
    case LawKind::HertzMindlin:
        return lawForce<LawKind::HertzMindlin>(p, in, shear, dt);
    case LawKind::ViscoElastic:
        break;
    }
    return lawForce<LawKind::ViscoElastic>(p, in, shear, dt);
}

} // namespace dem
