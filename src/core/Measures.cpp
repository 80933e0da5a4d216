#include "core/Measures.hpp"
#include "core/SphereLoad.hpp"

#include <cmath>
#include <fmt/format.h>
#include <map>
#include <numbers>

namespace dem {

namespace {

const std::map<std::string, MeasureRef::Quantity>& globalNames() {
    using Q = MeasureRef::Quantity;
    static const std::map<std::string, Q> names = {
        {"step", Q::Step},
        {"time", Q::Time},
        {"dt", Q::Dt},
        {"kinetic_energy", Q::KineticEnergy},
        {"kinetic_energy_translational", Q::KineticTranslational},
        {"kinetic_energy_rotational", Q::KineticRotational},
        {"elastic_energy", Q::ElasticEnergy},
        {"potential_energy", Q::PotentialEnergy},
        {"total_energy", Q::TotalEnergy},
        {"dissipated_damping", Q::DissipatedDamping},
        {"dissipated_contacts", Q::DissipatedContacts},
        {"unbalanced_force", Q::UnbalancedForce},
        {"coordination_number", Q::CoordinationNumber},
        {"contacts", Q::Contacts},
        {"particles", Q::Particles}};
    return names;
}

const std::map<std::string, MeasureRef::Quantity>& vectorNames() {
    using Q = MeasureRef::Quantity;
    static const std::map<std::string, Q> names = {
        {"position", Q::Position}, {"displacement", Q::Displacement},
        {"velocity", Q::Velocity}, {"angular_velocity", Q::AngularVelocity},
        {"force", Q::Force},       {"torque", Q::Torque}};
    return names;
}

double component(const Vec3& v, int c) {
    return c < 0 ? v.norm() : v[c];
}

// Deterministic sum over spheres: fixed order, independent of threads.
template <class F> double sumSpheres(const Simulation& sim, F f) {
    double s = 0;
    for (size_t p = 0; p < sim.particles.size(); ++p)
        s += f(p);
    return s;
}

Vec3 groupVector(const Simulation& sim, int group, MeasureRef::Quantity q) {
    const Particles& P = sim.particles;
    const uint32_t bit = 1u << group;
    Vec3 sum = Vec3::Zero();
    double mass = 0;
    for (size_t p = 0; p < P.size(); ++p) {
        if (!(P.groups(p) & bit))
            continue;
        const double m = P.mass(p);
        switch (q) {
        case MeasureRef::Quantity::Position:
            sum += m * P.pos[p];
            break;
        case MeasureRef::Quantity::Displacement:
            sum += m * (P.pos[p] - P.pos0[p]);
            break;
        case MeasureRef::Quantity::Velocity:
            sum += m * P.vel[p];
            break;
        case MeasureRef::Quantity::AngularVelocity:
            sum += m * P.angVel[p];
            break;
        case MeasureRef::Quantity::Force:
            sum += sphereLoad(sim, p).force;
            break;
        case MeasureRef::Quantity::Torque:
            sum += sphereLoad(sim, p).torque;
            break;
        default:
            break;
        }
        mass += m;
    }
    if (q == MeasureRef::Quantity::Force || q == MeasureRef::Quantity::Torque)
        return sum;
    return mass > 0 ? Vec3(sum / mass) : Vec3::Constant(std::nan(""));
}

} // namespace

bool parseMeasure(const std::string& name, const Simulation& sim, MeasureRef& out,
                  std::string& error) {
    out = MeasureRef{};
    out.name = name;
    if (auto it = globalNames().find(name); it != globalNames().end()) {
        using Q = MeasureRef::Quantity;
        const Q q = it->second;
        // The contact loop keeps the energy of each contact only when asked to (Contacts.hpp).
        if (!sim.trackEnergy && (q == Q::ElasticEnergy || q == Q::TotalEnergy ||
                                 q == Q::DissipatedDamping || q == Q::DissipatedContacts)) {
            error = fmt::format("measure '{}' needs track_energy = true in [simulation]", name);
            return false;
        }
        out.quantity = q;
        return true;
    }
    // stress_RC, pressure, cell_RC, cell_volume, porosity: of the periodic cell.
    const auto indexed = [&](std::string_view prefix) {
        const size_t n = prefix.size();
        return name.size() == n + 2 && name.starts_with(prefix) && name[n] >= 'x' &&
               name[n] <= 'z' && name[n + 1] >= 'x' && name[n + 1] <= 'z';
    };
    const bool stress = indexed("stress_"), edge = indexed("cell_");
    if (stress || edge || name == "pressure" || name == "cell_volume" || name == "porosity" ||
        name == "kinetic_energy_fluctuation") {
        if (!sim.cell.enabled) {
            error = fmt::format("measure '{}' needs a periodic cell ([periodic]): it is a "
                                "quantity of the cell or averaged over its volume",
                                name);
            return false;
        }
        using Q = MeasureRef::Quantity;
        out.quantity = stress                  ? Q::Stress
                       : edge                  ? Q::CellEdge
                       : name == "pressure"    ? Q::Pressure
                       : name == "cell_volume" ? Q::CellVolume
                       : name == "porosity"    ? Q::Porosity
                                               : Q::KineticFluctuation;
        const size_t n = name.size();
        out.component = stress || edge ? 3 * (name[n - 2] - 'x') + (name[n - 1] - 'x') : -1;
        return true;
    }
    const size_t colon = name.find(':');
    if (colon == std::string::npos) {
        error = fmt::format(
            "unknown measure '{}': expected a global quantity (time, kinetic_energy, "
            "unbalanced_force, stress_xy, ...) or object:NAME.QUANTITY, body:ID.QUANTITY, "
            "group:NAME.QUANTITY",
            name);
        return false;
    }
    const std::string scope = name.substr(0, colon);
    std::string rest = name.substr(colon + 1);
    const size_t dot = rest.find('.');
    if (dot == std::string::npos) {
        error = fmt::format("measure '{}' has no quantity: expected {}:NAME.QUANTITY[.x|.y|.z]",
                            name, scope);
        return false;
    }
    const std::string target = rest.substr(0, dot);
    std::string quantity = rest.substr(dot + 1);
    if (quantity.size() > 2 && quantity[quantity.size() - 2] == '.') {
        const char c = quantity.back();
        if (c < 'x' || c > 'z') {
            error = fmt::format("measure '{}': component must be x, y or z", name);
            return false;
        }
        out.component = c - 'x';
        quantity.resize(quantity.size() - 2);
    }
    auto q = vectorNames().find(quantity);
    if (q == vectorNames().end()) {
        error = fmt::format(
            "measure '{}': unknown quantity '{}' (expected position, displacement, velocity, "
            "angular_velocity, force or torque)",
            name, quantity);
        return false;
    }
    out.quantity = q->second;
    if (scope == "object") {
        out.scope = MeasureRef::Scope::Object;
        out.target = sim.obstacles.findObject(target);
        if (out.target < 0) {
            std::string known;
            for (const RigidObject& o : sim.obstacles.objects)
                known += (known.empty() ? "" : ", ") + o.name;
            error = fmt::format("measure '{}': no object named '{}' (defined: {})", name, target,
                                known.empty() ? "none" : known);
            return false;
        }
        if (out.quantity == MeasureRef::Quantity::AngularVelocity) {
            error = fmt::format("measure '{}': objects have no angular_velocity measure", name);
            return false;
        }
    } else if (scope == "body") {
        out.scope = MeasureRef::Scope::Body;
        char* end = nullptr;
        const long id = std::strtol(target.c_str(), &end, 10);
        if (target.empty() || *end != '\0' || id < 0 || size_t(id) >= sim.particles.size()) {
            error = fmt::format("measure '{}': body id '{}' must be an integer in [0, {})", name,
                                target, sim.particles.size());
            return false;
        }
        out.target = int(id);
    } else if (scope == "group") {
        out.scope = MeasureRef::Scope::Group;
        out.target = sim.groupIndex(target);
        if (out.target < 0) {
            error = fmt::format("measure '{}': no group named '{}'", name, target);
            return false;
        }
    } else {
        error = fmt::format("measure '{}': unknown scope '{}' (expected object, body or group)",
                            name, scope);
        return false;
    }
    return true;
}

double kineticEnergyTranslational(const Simulation& sim) {
    const Particles& P = sim.particles;
    return sumSpheres(sim, [&](size_t p) {
        return (P.blocked(p) & BlockTranslation) == BlockTranslation
                   ? 0.0
                   : 0.5 * P.mass(p) * P.vel[p].squaredNorm();
    });
}

// The kinetic energy of the spheres' motion relative to the cell's mean flow L (x - origin) (the
// granular temperature's, in a sheared cell), translational only.
double kineticEnergyFluctuation(const Simulation& sim) {
    const Particles& P = sim.particles;
    const PeriodicCell& c = sim.cell;
    return sumSpheres(sim, [&](size_t p) {
        return (P.blocked(p) & BlockTranslation) == BlockTranslation
                   ? 0.0
                   : 0.5 * P.mass(p) * (P.vel[p] - c.velGrad * (P.pos[p] - c.origin)).squaredNorm();
    });
}

double kineticEnergyRotational(const Simulation& sim) {
    const Particles& P = sim.particles;
    return sumSpheres(sim, [&](size_t p) {
        return (P.blocked(p) & BlockRotation) == BlockRotation
                   ? 0.0
                   : 0.5 * P.inertia(p) * P.angVel[p].squaredNorm();
    });
}

double elasticEnergy(const Simulation& sim) {
    double e = 0;
    if (sim.pairs.hasEnergy()) // without track_energy: not kept
        for (size_t k = 0; k < sim.pairs.size(); ++k)
            e += sim.pairs.touching(k) ? sim.pairs.energy(k).elastic : 0.0;
    for (size_t k = 0; k < sim.obstacleContacts.size(); ++k)
        e += sim.obstacleContacts.touching[k] ? sim.obstacleContacts.elastic[k] : 0.0;
    return e;
}

double potentialEnergy(const Simulation& sim) {
    const Particles& P = sim.particles;
    return sumSpheres(sim, [&](size_t p) {
        return (P.blocked(p) & BlockTranslation) == BlockTranslation
                   ? 0.0
                   : -P.mass(p) * sim.gravity.dot(P.pos[p]);
    });
}

size_t contactCount(const Simulation& sim) {
    size_t c = sim.pairs.touchingCount();
    for (uint8_t t : sim.obstacleContacts.touching)
        c += t;
    return c;
}

double unbalancedForce(const Simulation& sim) {
    // Mean resultant force on free spheres over mean contact force (physics.md §12.1).
    const Particles& P = sim.particles;
    double body = 0, contact = 0;
    size_t nb = 0, nc = 0;
    for (size_t p = 0; p < P.size(); ++p) {
        if ((P.blocked(p) & BlockTranslation) == BlockTranslation)
            continue;
        body += (sphereLoad(sim, p).force + P.mass(p) * sim.gravity).norm();
        ++nb;
    }
    for (size_t k = 0; k < sim.pairs.size(); ++k)
        if (sim.pairs.touching(k)) {
            contact += sim.pairs.record(k).force.norm();
            ++nc;
        }
    for (size_t k = 0; k < sim.obstacleContacts.size(); ++k)
        if (sim.obstacleContacts.touching[k]) {
            contact += sim.obstacleContacts.force[k].norm();
            ++nc;
        }
    if (nb == 0 || nc == 0 || contact == 0)
        return std::nan("");
    return (body / double(nb)) / (contact / double(nc));
}

// The spheres' own volume, sum of 4/3 pi r^3 (overlaps counted twice).
double solidVolume(const Particles& P) {
    double sum = 0;
    for (size_t p = 0; p < P.size(); ++p)
        sum += P.radius[p] * P.radius[p] * P.radius[p];
    return 4.0 / 3.0 * std::numbers::pi * sum;
}

Mat3 cellStress(const Simulation& sim) {
    const SpherePairs& S = sim.pairs;
    const Particles& P = sim.particles;
    if (!sim.cell.enabled || S.image.size() != S.size())
        return Mat3::Constant(std::nan(""));
    const CellImages images(sim.cell);
    Mat3 sum = Mat3::Zero();
    S.forEachPair([&](size_t k, uint32_t i, uint32_t j) {
        if (!S.touching(k))
            return;
        const Vec3 d = P.pos[j] - P.pos[i] - images.shift[S.image[k]];
        sum -= S.record(k).force * d.transpose();
    });
    return sum / sim.cell.h.determinant();
}

bool readsSphereStart(const MeasureRef& m) {
    return m.quantity == MeasureRef::Quantity::Displacement && m.scope != MeasureRef::Scope::Object;
}

double evaluate(const Simulation& sim, const MeasureRef& m) {
    using Q = MeasureRef::Quantity;
    if (readsSphereStart(m) && !sim.particles.keepsStart)
        return std::nan("");
    switch (m.scope) {
    case MeasureRef::Scope::Global:
        switch (m.quantity) {
        case Q::Step:
            return double(sim.step);
        case Q::Time:
            return sim.time;
        case Q::Dt:
            return sim.dt;
        case Q::KineticEnergy:
            return kineticEnergyTranslational(sim) + kineticEnergyRotational(sim);
        case Q::KineticTranslational:
            return kineticEnergyTranslational(sim);
        case Q::KineticRotational:
            return kineticEnergyRotational(sim);
        case Q::ElasticEnergy:
            return elasticEnergy(sim);
        case Q::PotentialEnergy:
            return potentialEnergy(sim);
        case Q::TotalEnergy:
            return kineticEnergyTranslational(sim) + kineticEnergyRotational(sim) +
                   elasticEnergy(sim) + potentialEnergy(sim);
        case Q::DissipatedDamping:
            return sim.energy.dampingDissipated;
        case Q::DissipatedContacts:
            return sim.energy.contactDissipated;
        case Q::UnbalancedForce:
            return unbalancedForce(sim);
        case Q::CoordinationNumber: {
            const size_t c = sim.pairs.touchingCount();
            return sim.particles.size() ? 2.0 * double(c) / double(sim.particles.size()) : 0.0;
        }
        case Q::Contacts:
            return double(contactCount(sim));
        case Q::Particles:
            return double(sim.particles.size());
        case Q::Stress:
            return cellStress(sim)(m.component / 3, m.component % 3);
        case Q::Pressure:
            return 0.0 - cellStress(sim).trace() / 3; // +0 without contacts, not -0
        case Q::CellEdge:
            return sim.cell.h(m.component / 3, m.component % 3);
        case Q::CellVolume:
            return sim.cell.h.determinant();
        case Q::Porosity:
            return 1 - solidVolume(sim.particles) / sim.cell.h.determinant();
        case Q::KineticFluctuation:
            return kineticEnergyFluctuation(sim);
        default:
            return std::nan("");
        }
    case MeasureRef::Scope::Object: {
        const RigidObject& o = sim.obstacles.objects[m.target];
        switch (m.quantity) {
        case Q::Position:
            return component(o.center, m.component);
        case Q::Displacement:
            return component(o.center - o.center0, m.component);
        case Q::Velocity:
            return component(o.vel, m.component);
        case Q::Force:
            return component(o.force, m.component);
        case Q::Torque:
            return component(o.torque, m.component);
        default:
            return std::nan("");
        }
    }
    case MeasureRef::Scope::Body: {
        const Particles& P = sim.particles;
        // Body ids are stable; spheres removed from the domain make the lookup a search.
        size_t p = size_t(m.target);
        if (p >= P.size() || P.id[p] != uint32_t(m.target)) {
            p = P.size();
            for (size_t k = 0; k < P.size(); ++k)
                if (P.id[k] == uint32_t(m.target)) {
                    p = k;
                    break;
                }
            if (p == P.size())
                return std::nan("");
        }
        switch (m.quantity) {
        case Q::Position:
            return component(P.pos[p], m.component);
        case Q::Displacement:
            return component(P.pos[p] - P.pos0[p], m.component);
        case Q::Velocity:
            return component(P.vel[p], m.component);
        case Q::AngularVelocity:
            return component(P.angVel[p], m.component);
        case Q::Force:
            return component(sphereLoad(sim, p).force, m.component);
        case Q::Torque:
            return component(sphereLoad(sim, p).torque, m.component);
        default:
            return std::nan("");
        }
    }
    case MeasureRef::Scope::Group:
        return component(groupVector(sim, m.target, m.quantity), m.component);
    }
    return std::nan("");
}

} // namespace dem
