#pragma once
// Materials and the per-pair contact parameters derived from them.
#include <optional>
#include <string>
#include <vector>

namespace dem {

// The closed set of contact laws; each pair of materials resolves to one.
enum class LawKind : uint8_t { Linear, HertzMindlin, ViscoElastic };

const char* lawName(LawKind law);

struct Material {
    std::string name;
    LawKind law = LawKind::HertzMindlin;
    double density = 2500;     // kg/m^3
    double young = 1e8;        // Pa
    double poisson = 0.25;     // -; linear law: K_T/K_N (stiffness_ratio, Yade's FrictMat)
    double frictionAngle = 0;  // rad
    double restitution = 1;    // normal restitution (linear, Hertz–Mindlin); 1 = no damping
    double contactTime = 1e-3; // s (viscoelastic)
    double restitutionN = 1;   // - (viscoelastic)
    double restitutionT = 1;   // - (viscoelastic)
    // Rolling and twisting resistance (physics.md §6.1): limits of the moments, as coefficients of
    // R* F_n. Zero: none.
    double rollingFriction = 0;
    double twistingFriction = 0;
};

// Per material-pair override of friction and restitution.
struct PairOverride {
    int a = -1, b = -1;
    std::optional<double> frictionAngle;
    std::optional<double> restitution;
    std::optional<double> rollingFriction, twistingFriction;
};

// Everything a contact law needs that depends on the two materials only.
struct PairParams {
    LawKind law = LawKind::HertzMindlin;
    double mu = 0;                                             // tan(friction angle)
    double youngA = 0, youngB = 0, poissonA = 0, poissonB = 0; // linear: series springs
    double eStar = 0, gStar = 0;                               // Hertz–Mindlin effective moduli
    double beta = 0; // damping ratio from restitution (Hertz: solved numerically; linear: exact)
    double contactTime = 0, lnEn = 0, lnEt = 0; // viscoelastic
    double muRoll = 0, muTwist = 0;             // rolling and twisting friction coefficients
    // Derived from the above (not stored in checkpoints; derivePairConstants() sets them):
    // Hertz-Mindlin dashpots c_n = hertzDampN sqrt(m a), c_s = hertzDampT sqrt(m a), with
    // a = sqrt(R* u) the contact radius.
    double hertzDampN = 0, hertzDampT = 0;
};

// Sets the derived fields of `p` from the others.
void derivePairConstants(PairParams& p);

// Dense nMat x nMat table of pair parameters (symmetric).
struct PairTable {
    int count = 0;
    std::vector<PairParams> params;
    const PairParams& operator()(int a, int b) const { return params[size_t(a) * count + b]; }
    // Whether some pair resists rolling or twisting: contacts then keep moment histories.
    bool resistsRolling() const;
};

// Builds the table; returns false and fills `error` when two materials of different laws meet.
bool buildPairTable(const std::vector<Material>& materials,
                    const std::vector<PairOverride>& overrides, PairTable& table,
                    std::string& error);

// Damping ratio beta of a Hertzian contact without attraction (c_n = 2 beta sqrt(m k_n), the
// force clamped at zero) whose restitution is e, found by integrating the scaled impact.
double hertzDampingRatio(double e);
// Damping ratio of a linear spring–dashpot for restitution e: -ln e / sqrt(pi^2 + ln^2 e).
double linearDampingRatio(double e);

} // namespace dem
