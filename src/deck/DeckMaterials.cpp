// [[material]] and [[pair]]: materials in deck order, per-pair overrides, and the pair table.
#include "deck/DeckBuild.hpp"

#include <fmt/format.h>
#include <numbers>

namespace dem {

namespace {

double radians(double degrees) {
    return degrees * std::numbers::pi / 180.0;
}

LawKind lawFromName(const std::string& name) {
    if (name == "linear")
        return LawKind::Linear;
    if (name == "viscoelastic")
        return LawKind::ViscoElastic;
    return LawKind::HertzMindlin;
}

void readMaterial(TableReader& t, DeckBuild& b) {
    Material m;
    const auto name = t.string("name");
    m.name = name.value_or("");
    m.law = lawFromName(t.variant());
    for (size_t k = 0; name && k < b.sim.materials.size(); ++k) {
        if (b.sim.materials[k].name == *name)
            t.error("name", fmt::format("duplicate material name '{}' (first defined at line {})",
                                        *name, b.materialWhere[k].begin.line));
    }
    m.density = t.number("density").value_or(m.density);
    if (m.law == LawKind::ViscoElastic) {
        m.contactTime = t.number("contact_time").value_or(m.contactTime);
        m.restitutionN = t.number("restitution_normal").value_or(1.0);
        m.restitutionT = t.number("restitution_tangential").value_or(1.0);
    } else {
        m.young = t.number("young").value_or(m.young);
        // Material::poisson holds the linear law's k_t/k_n (as in Yade's FrictMat).
        m.poisson =
            t.number(m.law == LawKind::Linear ? "stiffness_ratio" : "poisson").value_or(m.poisson);
        m.restitution = t.number("restitution").value_or(1.0);
    }
    m.frictionAngle = radians(t.number("friction_angle").value_or(0.0));
    m.rollingFriction = t.number("rolling_friction").value_or(0.0);
    m.twistingFriction = t.number("twisting_friction").value_or(0.0);
    // Kept even when erroneous, so that references to it do not add "undefined" errors.
    b.sim.materials.push_back(m);
    b.materialWhere.push_back(t.where(t.has("law") ? "law" : "name"));
}

void readPair(TableReader& t, DeckBuild& b) {
    PairOverride o;
    const auto names = t.strings("materials");
    if (names && names->size() != 2) {
        t.error("materials",
                fmt::format("materials: expected 2 material names, got {}", names->size()));
        return;
    }
    int index[2] = {-1, -1};
    for (int k = 0; names && k < 2; ++k) {
        for (size_t m = 0; m < b.sim.materials.size(); ++m)
            if (b.sim.materials[m].name == (*names)[k])
                index[k] = int(m);
        if (index[k] < 0) {
            std::vector<std::string_view> defined;
            for (const Material& m : b.sim.materials)
                defined.push_back(m.name);
            t.error("materials", fmt::format("undefined material '{}' (defined: {}){}", (*names)[k],
                                             joinNames(defined), didYouMean((*names)[k], defined)));
        }
    }
    o.a = index[0];
    o.b = index[1];
    if (const auto phi = t.number("friction_angle"))
        o.frictionAngle = radians(*phi);
    o.restitution = t.number("restitution");
    o.rollingFriction = t.number("rolling_friction");
    o.twistingFriction = t.number("twisting_friction");
    if (o.a >= 0 && o.b >= 0)
        b.sim.overrides.push_back(o);
}

} // namespace

void readMaterials(TableReader& root, DeckBuild& b) {
    root.tables("material", [&](TableReader& t, size_t) { readMaterial(t, b); });
    root.tables("pair", [&](TableReader& t, size_t) { readPair(t, b); });
    std::string why;
    if (!buildPairTable(b.sim.materials, b.sim.overrides, b.sim.pairTable, why)) {
        // Report at the first material whose law differs from the first material's.
        size_t at = 0;
        for (size_t k = 1; k < b.sim.materials.size() && at == 0; ++k)
            if (b.sim.materials[k].law != b.sim.materials[0].law)
                at = k;
        b.ctx.diag.error(b.materialWhere.empty() ? root.where() : b.materialWhere[at],
                         why + "; all materials of a deck must use the same law");
    }
}

} // namespace dem
