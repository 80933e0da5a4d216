#include "core/Material.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace dem {

const char* lawName(LawKind law) {
    switch (law) {
    case LawKind::Linear:
        return "linear";
    case LawKind::HertzMindlin:
        return "hertz_mindlin";
    case LawKind::ViscoElastic:
        return "viscoelastic";
    }
    return "?";
}

namespace {

// Restitution of a Hertzian contact with the dashpot c_n = 2 beta sqrt(m k_n), k_n = 2 E* a, and
// the force clamped at zero (the law of ContactLaws.hpp). Scaled so that the impact speed, the
// mass and the Hertz constant are 1, the overlap obeys
//   x'' = -max(0, x^(3/2) + beta sqrt(6) x^(1/4) x'),   x(0) = 0, x'(0) = 1,
// whatever the speed, the sizes and the moduli; e = -x' where the force returns to zero (after
// that the spheres fly apart at that speed). Classical Runge–Kutta with a fixed step, the end
// interpolated linearly in the force.
double hertzRestitution(double beta) {
    const double c = beta * std::sqrt(6.0);
    const auto accel = [c](double x, double v) {
        const double xp = std::max(x, 0.0);
        return -(xp * std::sqrt(xp) + c * std::sqrt(std::sqrt(xp)) * v);
    };
    // The undamped contact lasts 3.2 in these units; the step changes e by under 1e-5 (against
    // a step five times smaller) for e from 0.001 to 0.99.
    const double h = 1e-3;
    double x = 0, v = 1, force = 0;
    for (int step = 0; step < 100000; ++step) {
        const double k1x = v, k1v = accel(x, v);
        const double k2x = v + 0.5 * h * k1v, k2v = accel(x + 0.5 * h * k1x, k2x);
        const double k3x = v + 0.5 * h * k2v, k3v = accel(x + 0.5 * h * k2x, k3x);
        const double k4x = v + h * k3v, k4v = accel(x + h * k3x, k4x);
        const double xn = x + h / 6 * (k1x + 2 * k2x + 2 * k3x + k4x);
        const double vn = v + h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v);
        const double forceNew = -accel(xn, vn);
        if (vn < 0 && (forceNew <= 0 || xn <= 0)) { // released during the rebound
            const double w = forceNew < force ? force / (force - forceNew) : 1.0;
            return -(v + std::clamp(w, 0.0, 1.0) * (vn - v));
        }
        x = xn, v = vn, force = forceNew;
    }
    return 0; // so damped that it never came back
}

} // namespace

double hertzDampingRatio(double e) {
    // The beta whose restitution is e, by the Illinois variant of regula falsi (e falls as beta
    // grows). It replaces the polynomial fit of Thornton, Cummins & Cleary (2013, eqs. B6-B7),
    // which is off by up to 1.5 % above e = 0.93 and jumps at the usual cut-off e > 0.999.
    if (e >= 1)
        return 0;
    e = std::max(e, 1e-3);
    double lo = 0, hi = 1;
    double fLo = 1 - e, fHi = hertzRestitution(hi) - e;
    while (fHi > 0) {
        lo = hi, fLo = fHi;
        hi *= 2, fHi = hertzRestitution(hi) - e;
    }
    int side = 0; // +1 when lo moved last, -1 when hi did: an end kept twice has its f halved
    for (int k = 0; k < 100 && hi - lo > 1e-10 * hi; ++k) {
        const double mid = (lo * fHi - hi * fLo) / (fHi - fLo);
        const double f = hertzRestitution(mid) - e;
        if (f == 0)
            return mid;
        if (f > 0) {
            lo = mid, fLo = f;
            if (side == +1)
                fHi *= 0.5;
            side = +1;
        } else {
            hi = mid, fHi = f;
            if (side == -1)
                fLo *= 0.5;
            side = -1;
        }
    }
    return 0.5 * (lo + hi);
}

double linearDampingRatio(double e) {
    if (e >= 1)
        return 0;
    const double l = std::log(std::max(e, 1e-12));
    return -l / std::sqrt(std::numbers::pi * std::numbers::pi + l * l);
}

void derivePairConstants(PairParams& p) {
    // c = 2 beta sqrt(m k) with k_n = 2 E* a and k_s = 8 G* a (physics.md section 5).
    p.hertzDampN = 2 * p.beta * std::sqrt(2 * p.eStar);
    p.hertzDampT = 2 * p.beta * std::sqrt(8 * p.gStar);
}

bool PairTable::resistsRolling() const {
    for (const PairParams& p : params)
        if (p.muRoll > 0 || p.muTwist > 0)
            return true;
    return false;
}

bool buildPairTable(const std::vector<Material>& materials,
                    const std::vector<PairOverride>& overrides, PairTable& table,
                    std::string& error) {
    const int n = int(materials.size());
    table.count = n;
    table.params.assign(size_t(n) * n, PairParams{});
    for (int a = 0; a < n; ++a) {
        for (int b = 0; b < n; ++b) {
            const Material& A = materials[a];
            const Material& B = materials[b];
            if (A.law != B.law) {
                error = "materials '" + A.name + "' (" + lawName(A.law) + ") and '" + B.name +
                        "' (" + lawName(B.law) + ") use different contact laws";
                return false;
            }
            PairParams p;
            p.law = A.law;
            double phi = std::min(A.frictionAngle, B.frictionAngle);
            double e = std::min(A.restitution, B.restitution);
            p.muRoll = std::min(A.rollingFriction, B.rollingFriction);
            p.muTwist = std::min(A.twistingFriction, B.twistingFriction);
            for (const PairOverride& o : overrides) {
                if ((o.a == a && o.b == b) || (o.a == b && o.b == a)) {
                    if (o.frictionAngle)
                        phi = *o.frictionAngle;
                    if (o.restitution)
                        e = *o.restitution;
                    p.muRoll = o.rollingFriction.value_or(p.muRoll);
                    p.muTwist = o.twistingFriction.value_or(p.muTwist);
                }
            }
            p.mu = std::tan(phi);
            p.youngA = A.young;
            p.youngB = B.young;
            p.poissonA = A.poisson;
            p.poissonB = B.poisson;
            // Hertz–Mindlin effective moduli (Yade's 2023+ form, physics.md §5.1).
            p.eStar =
                A.young * B.young /
                ((1 - A.poisson * A.poisson) * B.young + (1 - B.poisson * B.poisson) * A.young);
            const double gA = A.young / (2 * (1 + A.poisson));
            const double gB = B.young / (2 * (1 + B.poisson));
            p.gStar = 1.0 / ((2 - A.poisson) / gA + (2 - B.poisson) / gB);
            p.beta = A.law == LawKind::HertzMindlin ? hertzDampingRatio(e) : linearDampingRatio(e);
            // Viscoelastic: pair values are the means of the materials' values (physics.md §8.1).
            p.contactTime = 0.5 * (A.contactTime + B.contactTime);
            double en = 0.5 * (A.restitutionN + B.restitutionN);
            double et = 0.5 * (A.restitutionT + B.restitutionT);
            for (const PairOverride& o : overrides)
                if (((o.a == a && o.b == b) || (o.a == b && o.b == a)) && o.restitution)
                    en = *o.restitution;
            p.lnEn = std::log(std::max(en, 1e-12));
            p.lnEt = std::log(std::max(et, 1e-12));
            derivePairConstants(p);
            table.params[size_t(a) * n + b] = p;
        }
    }
    return true;
}

} // namespace dem
