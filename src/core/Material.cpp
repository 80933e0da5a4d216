#include "core/Material.hpp"

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

double hertzDampingRatio(double e) {
    // Thornton, Cummins & Cleary (2013) eqs. (B6)-(B7); clamped as other codes do to avoid 0/0.
    if (e > 0.999)
        return 0;
    e = std::max(e, 1e-3);
    static constexpr double h[10] = {-6.918798, -16.41105, 146.8049,  -796.4559, 2928.711,
                                     -7206.864, 11494.29,  -11342.18, 6276.757,  -1489.915};
    double poly = h[9];
    for (int k = 8; k >= 0; --k)
        poly = h[k] + e * poly;
    const double alpha = e * poly;
    return std::sqrt(1.0 / (1.0 - (1.0 + e) * (1.0 + e) * std::exp(alpha)) - 1.0);
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
            for (const PairOverride& o : overrides) {
                if ((o.a == a && o.b == b) || (o.a == b && o.b == a)) {
                    if (o.frictionAngle)
                        phi = *o.frictionAngle;
                    if (o.restitution)
                        e = *o.restitution;
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
