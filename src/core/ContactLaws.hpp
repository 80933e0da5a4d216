#pragma once
// The three contact laws, dispatched by a switch on the pair's law (a closed set, no virtual
// calls). Conventions (physics.md §0.3): n points from body 1 to body 2, overlap u > 0 in contact,
// forces are those on body 2, vRel is the velocity of body 2 relative to body 1 at the contact
// point.
#include "core/Material.hpp"
#include "core/Types.hpp"

#include <cmath>
#include <numbers>

namespace dem {

struct ContactInput {
    Vec3 n;
    double overlap;
    Vec3 vRel;
    double spin;         // n . (omega1 + omega2): rotation of the contact plane about the normal
    double mEff;         // effective mass [kg]
    double refR1, refR2; // reference radii for the linear stiffness (physics.md §2.6)
    double rStar;        // effective radius for Hertz (R1 R2 / (R1 + R2), R for a flat obstacle)
};

struct ContactResult {
    Vec3 force;        // on body 2
    double dissipated; // energy lost in this step (viscous + friction) [J]
    double elastic;    // energy stored in the springs [J]
};

// Keeps the stored tangential force in the tangent plane as the contact rotates: project it onto
// the new plane keeping its length (TinyDEM §5), then turn it with the common spin about n
// (physics.md §3.2, first order).
inline void rotateShear(Vec3& shear, const Vec3& n, double spin, double dt) {
    const double len2 = shear.squaredNorm();
    if (len2 == 0)
        return;
    shear -= shear.dot(n) * n;
    const double lp2 = shear.squaredNorm();
    if (lp2 > 0)
        shear *= std::sqrt(len2 / lp2);
    shear -= shear.cross(n * (0.5 * dt * spin));
}

// Coulomb limit on the elastic tangential force, given |shear|^2 = s2 (computed by the caller,
// which also needs it). Returns the friction dissipation of the slip and sets s2 to the squared
// length that remains.
inline double coulomb(Vec3& shear, double& s2, double limit, double kt) {
    if (s2 <= limit * limit || s2 == 0)
        return 0;
    const double s = std::sqrt(s2);
    const double slip = (s - limit) / kt;
    shear *= limit / s;
    s2 = limit * limit;
    return slip * limit;
}

// Inlined into the pair and obstacle loops: the input and result stay in registers.
[[gnu::always_inline]] inline ContactResult
contactForce(const PairParams& p, const ContactInput& in, Vec3& shear, double dt) {
    const double u = in.overlap;
    const double vn = in.vRel.dot(in.n); // > 0 when separating
    const Vec3 vt = in.vRel - vn * in.n;
    ContactResult r{Vec3::Zero(), 0, 0};
    rotateShear(shear, in.n, in.spin, dt);
    switch (p.law) {
    case LawKind::Linear: {
        // Cundall–Strack with Yade's series stiffnesses; unclamped dashpot so e is exact.
        const double ka = p.youngA * in.refR1, kb = p.youngB * in.refR2;
        const double kn = 2 * ka * kb / (ka + kb);
        const double kta = ka * p.poissonA, ktb = kb * p.poissonB;
        const double kt = (kta + ktb) > 0 ? 2 * kta * ktb / (kta + ktb) : 0;
        const double cn = 2 * p.beta * std::sqrt(in.mEff * kn);
        const double fn = kn * u - cn * vn;
        shear -= kt * dt * vt;
        double s2 = shear.squaredNorm();
        r.dissipated = cn * vn * vn * dt;
        r.dissipated += kt > 0 ? coulomb(shear, s2, p.mu * std::max(fn, 0.0), kt) : 0;
        r.force = fn * in.n + shear;
        r.elastic = 0.5 * kn * u * u + (kt > 0 ? 0.5 * s2 / kt : 0);
        break;
    }
    case LawKind::HertzMindlin: {
        // Hertz normal force, Mindlin tangential stiffness, damping from restitution
        // (physics.md §5); the normal force is never attractive.
        const double a = std::sqrt(in.rStar * u);
        const double kn = 2 * p.eStar * a; // tangent normal stiffness
        const double ks = 8 * p.gStar * a;
        const double fel = (2.0 / 3.0) * kn * u; // (4/3) E* sqrt(R*) u^(3/2)
        // c_n = 2 beta sqrt(m k_n), c_s = 2 beta sqrt(m k_s): one root of m a for both.
        const double rootMA = std::sqrt(in.mEff * a);
        const double cn = p.hertzDampN * rootMA, cs = p.hertzDampT * rootMA;
        double fn = fel - cn * vn;
        if (fn < 0)
            fn = 0;
        r.dissipated = (fel - fn) * vn * dt; // work of the normal dashpot
        shear -= ks * dt * vt;
        // Sliding is |F_s,el| > mu F_N, tested before the cut: coulomb() returns a zero loss
        // when the limit is zero (no friction, or no normal force), which is sliding too.
        double s2 = shear.squaredNorm();
        const double limit = p.mu * fn;
        const bool sliding = s2 > limit * limit;
        const double slip = ks > 0 ? coulomb(shear, s2, limit, ks) : 0;
        // The tangential dashpot acts while sticking (a select, not a branch: sticking and
        // sliding alternate unpredictably in a dense packing).
        const double cStick = sliding ? 0.0 : cs;
        const Vec3 ft = shear - cStick * vt;
        r.dissipated += cStick * vt.squaredNorm() * dt;
        r.dissipated += slip;
        r.force = fn * in.n + ft;
        r.elastic = 0.4 * fel * u + (ks > 0 ? 0.5 * s2 / ks : 0);
        break;
    }
    case LawKind::ViscoElastic: {
        // Spring–dashpot from contact time and restitution (Yade's ViscElMat, physics.md §8).
        const double tc2 = p.contactTime * p.contactTime;
        const double pi2 = std::numbers::pi * std::numbers::pi;
        const double kn = in.mEff * (pi2 + p.lnEn * p.lnEn) / tc2;
        const double cn = -2 * in.mEff * p.lnEn / p.contactTime;
        const double ks = (2.0 / 7.0) * in.mEff * (pi2 + p.lnEt * p.lnEt) / tc2;
        const double cs = -(4.0 / 7.0) * in.mEff * p.lnEt / p.contactTime;
        double fn = kn * u - cn * vn;
        if (fn < 0)
            fn = 0;
        r.dissipated = (kn * u - fn) * vn * dt;
        shear -= ks * dt * vt;
        double s2 = shear.squaredNorm();
        const double limit = p.mu * fn;
        const bool sliding = s2 > limit * limit; // as for Hertz-Mindlin
        const double slip = coulomb(shear, s2, limit, ks);
        // The tangential dashpot acts while sticking (a select, not a branch: sticking and
        // sliding alternate unpredictably in a dense packing).
        const double cStick = sliding ? 0.0 : cs;
        const Vec3 ft = shear - cStick * vt;
        r.dissipated += cStick * vt.squaredNorm() * dt;
        r.dissipated += slip;
        r.force = fn * in.n + ft;
        r.elastic = 0.5 * kn * u * u + 0.5 * s2 / ks;
        break;
    }
    }
    return r;
}

} // namespace dem
