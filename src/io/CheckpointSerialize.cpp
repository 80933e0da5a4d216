// In-memory serialisation of a Simulation and its structural consistency check.
#include "io/CheckpointSerialize.hpp"

#include <cmath>
#include <fmt/format.h>
#include <numbers>

namespace dem {

namespace {

// Checks CSR offsets: n + 1 entries, starting at 0, non-decreasing, ending at `total`.
bool validOffsets(const std::vector<uint32_t>& start, size_t n, size_t total) {
    if (start.size() != n + 1 || start.front() != 0 || start.back() != total)
        return false;
    for (size_t k = 0; k < n; ++k)
        if (start[k] > start[k + 1])
            return false;
    return true;
}

template <class E> bool enumBelow(E e, unsigned count) {
    return unsigned(e) < count;
}

} // namespace

namespace ckpt {

std::string tagName(uint32_t t) {
    std::string s = "'";
    for (int k = 0; k < 4; ++k) {
        const char c = char((t >> (8 * k)) & 0xff);
        s += (c >= 0x20 && c < 0x7f) ? c : '?';
    }
    return s + "'";
}

std::vector<uint8_t> touchingFlags(const SpherePairs& s) {
    std::vector<uint8_t> touching(s.size());
    for (size_t k = 0; k < s.size(); ++k)
        touching[k] = s.touching(k) ? 1 : 0;
    return touching;
}

namespace {

// Checks the offsets, second spheres and touching flags of a loaded list.
void checkLoadedList(const SpherePairs& s, const std::vector<uint8_t>& touching) {
    const size_t m = s.j.size();
    if (touching.size() != m)
        throw FormatError(fmt::format("{} touching flags for {} pairs", touching.size(), m));
    for (uint8_t t : touching)
        if (t > 1)
            throw FormatError(fmt::format("touching flag {} (0 or 1 expected)", t));
    if (s.start.empty() && m)
        throw FormatError(fmt::format("{} pairs without offsets", m));
    if (!s.start.empty()) {
        const size_t n = s.start.size() - 1;
        if (!validOffsets(s.start, n, m))
            throw FormatError("bad pair offsets");
        for (uint32_t j : s.j)
            if (j >= n)
                throw FormatError(fmt::format("a pair joins sphere {} of {}", j, n));
    }
}

void transposeLoaded(SpherePairs& s) {
    s.jStart.clear();
    s.jPairs.clear();
    if (!s.start.empty())
        transposePairs(s, s.start.size() - 1);
}

} // namespace

void expandLoadedPairs(SpherePairs& s, const std::vector<uint8_t>& touching) {
    checkLoadedList(s, touching);
    allotRecords(s, touching, true);
    transposeLoaded(s);
}

PairArraysV1 expandPairArrays(const SpherePairs& s) {
    const size_t m = s.size();
    const bool energy = s.hasEnergy();
    PairArraysV1 a;
    a.i = pairOwners(s);
    a.jStart = s.jStart;
    a.jPairs = s.jPairs;
    a.touching = touchingFlags(s);
    a.shear.assign(m, Vec3::Zero());
    a.force.assign(m, Vec3::Zero());
    a.nxf.assign(m, Vec3::Zero());
    a.halfOverlap.assign(m, 0.0);
    a.dissipated.assign(energy ? m : 0, 0.0);
    a.elastic.assign(energy ? m : 0, 0.0);
    for (size_t k = 0; k < m; ++k) {
        if (!s.touching(k))
            continue;
        const PairContact& r = s.record(k);
        a.shear[k] = r.shear;
        a.force[k] = r.force;
        a.nxf[k] = r.nxf;
        a.halfOverlap[k] = r.halfOverlap;
        if (energy) {
            a.dissipated[k] = s.energy(k).dissipated;
            a.elastic[k] = s.energy(k).elastic;
        }
    }
    return a;
}

void loadPairArrays(SpherePairs& s, const PairArraysV1& a) {
    const size_t m = s.j.size();
    for (size_t size : {a.i.size(), a.shear.size(), a.touching.size(), a.force.size(), a.nxf.size(),
                        a.halfOverlap.size()})
        if (size != m)
            throw FormatError(fmt::format("pair arrays of different lengths ({} and {})", m, size));
    const bool energy = a.dissipated.size() == m && a.elastic.size() == m;
    if (!energy && (!a.dissipated.empty() || !a.elastic.empty()))
        throw FormatError(fmt::format("pair energy arrays of {} and {} entries for {} pairs",
                                      a.dissipated.size(), a.elastic.size(), m));
    checkLoadedList(s, a.touching);
    if (pairOwners(s) != a.i)
        throw FormatError("the first spheres of the pairs disagree with the pair offsets");
    allotRecords(s, a.touching, energy);
    for (size_t k = 0; k < m; ++k) {
        if (!s.touching(k))
            continue;
        PairContact& r = s.record(k);
        r.shear = a.shear[k];
        r.force = a.force[k];
        r.nxf = a.nxf[k];
        r.halfOverlap = a.halfOverlap[k];
        if (energy)
            s.energy(k) = PairEnergy(a.dissipated[k], a.elastic[k]);
    }
    transposeLoaded(s);
}

void deriveMassFactors(Simulation& s, const std::vector<double>& mass,
                       const std::vector<double>& inertia) {
    Particles& P = s.particles;
    if (mass.size() != P.size() || inertia.size() != P.size())
        throw FormatError(fmt::format("{} masses and {} moments of inertia for {} spheres",
                                      mass.size(), inertia.size(), P.size()));
    P.massFactor.clear();
    for (const Material& m : s.materials)
        P.massFactor.push_back(m.density * 4.0 / 3.0 * std::numbers::pi);
    for (size_t p = 0; p < P.size(); ++p) {
        if (P.material.size() != P.size() || P.radius.size() != P.size() ||
            P.material[p] >= P.massFactor.size())
            return; // the consistency check reports it
        if (P.mass(p) != mass[p] || P.inertia(p) != inertia[p])
            throw FormatError(fmt::format("sphere {} has mass {} and moment of inertia {}, which "
                                          "do not follow from its radius and material density",
                                          p, mass[p], inertia[p]));
    }
}

void deriveObstacleTorques(Simulation& s) {
    ObstacleContacts& O = s.obstacleContacts;
    const Particles& P = s.particles;
    O.torque.assign(O.target.size(), Vec3::Zero());
    if (O.start.size() != P.size() + 1 || O.start.back() != O.target.size() ||
        O.point.size() != O.target.size() || O.force.size() != O.target.size() ||
        O.touching.size() != O.target.size())
        return; // malformed: the consistency check reports it
    for (size_t p = 0; p < P.size(); ++p)
        for (uint32_t e = O.start[p]; e < O.start[p + 1] && e < O.target.size(); ++e)
            if (O.touching[e])
                O.torque[e] = (O.point[e] - P.pos[p]).cross(O.force[e]);
}

} // namespace ckpt

std::string serializeSimulation(const Simulation& sim) {
    std::string out;
    ckpt::Counter counter;
    ckpt::io(counter, const_cast<Simulation&>(sim)); // the counter and writer only read
    out.reserve(counter.size);
    ckpt::Writer w([&](const char* p, size_t n) { out.append(p, n); });
    ckpt::io(w, const_cast<Simulation&>(sim));
    w.flush();
    return out;
}

bool deserializeSimulation(const std::string& bytes, Simulation& sim, std::string& error) {
    try {
        Simulation loaded;
        ckpt::Reader r(bytes.data(), bytes.size());
        ckpt::io(r, loaded);
        if (r.remaining())
            throw ckpt::FormatError(fmt::format("{} bytes after the last section", r.remaining()));
        std::string why;
        if (!checkSimulationConsistency(loaded, why))
            throw ckpt::FormatError("inconsistent simulation: " + why);
        sim = std::move(loaded);
        return true;
    } catch (const std::exception& e) {
        error = std::string("malformed simulation data: ") + e.what();
        return false;
    }
}

bool checkSimulationConsistency(const Simulation& sim, std::string& why) {
    auto fail = [&](std::string msg) {
        why = std::move(msg);
        return false;
    };
    const size_t nMat = sim.materials.size();
    for (const Material& m : sim.materials)
        if (!enumBelow(m.law, 3))
            return fail("material '" + m.name + "' has an unknown contact law");
    const PairTable& T = sim.pairTable;
    if (T.count < 0 || T.params.size() != size_t(T.count) * size_t(T.count))
        return fail(
            fmt::format("pair table of {} materials holds {} entries", T.count, T.params.size()));
    for (const PairParams& p : T.params)
        if (!enumBelow(p.law, 3))
            return fail("pair table holds an unknown contact law");
    const size_t usableMat = std::min(nMat, size_t(T.count));
    for (const PairOverride& o : sim.overrides)
        if (o.a < -1 || o.b < -1 || o.a >= int(nMat) || o.b >= int(nMat))
            return fail(fmt::format("pair override ({}, {}) names a missing material", o.a, o.b));
    if (sim.groupNames.size() > 32)
        return fail(fmt::format("{} groups (at most 32)", sim.groupNames.size()));
    // A periodic cell must be a cell: finite and of positive volume (the step inverts h).
    const PeriodicCell& C = sim.cell;
    if (C.enabled && !(C.h.allFinite() && C.velGrad.allFinite() && C.hAtRebuild.allFinite() &&
                       isFinite(C.origin) && C.h.determinant() > 0))
        return fail("periodic cell not finite or of zero or negative volume");

    // Spheres.
    const Particles& P = sim.particles;
    const size_t n = P.pos.size();
    if (const size_t s = P.mismatchedLength(); s != n)
        return fail(fmt::format("sphere arrays of different lengths ({} and {})", n, s));
    for (size_t p = 0; p < n; ++p) {
        if (P.material[p] >= usableMat)
            return fail(
                fmt::format("sphere {} has material {} of {}", P.id[p], P.material[p], usableMat));
        // Its mass follows from its material's factor (Particles.hpp): a positive number.
        if (P.material[p] >= P.massFactor.size() || !(P.massFactor[P.material[p]] > 0) ||
            !std::isfinite(P.massFactor[P.material[p]]))
            return fail(fmt::format("sphere {} has no mass (material {})", P.id[p], P.material[p]));
    }

    // Obstacles.
    const Obstacles& B = sim.obstacles;
    const size_t nObj = B.objects.size();
    for (const RigidObject& o : B.objects) {
        if (!enumBelow(o.kind, 3))
            return fail("object '" + o.name + "' has an unknown kind");
        if (o.material < 0 || size_t(o.material) >= usableMat)
            return fail(
                fmt::format("object '{}' has material {} of {}", o.name, o.material, usableMat));
    }
    for (const Wall& w : B.walls)
        if (w.object >= nObj)
            return fail(fmt::format("a wall belongs to object {} of {}", w.object, nObj));
    for (const Facet& f : B.facets)
        if (f.object >= nObj)
            return fail(fmt::format("a facet belongs to object {} of {}", f.object, nObj));
    for (const Box& b : B.boxes)
        if (b.object >= nObj)
            return fail(fmt::format("a box belongs to object {} of {}", b.object, nObj));

    // Sphere pairs.
    const SpherePairs& S = sim.pairs;
    const size_t m = S.j.size();
    if (S.contact.size() != m)
        return fail(
            fmt::format("pair arrays of different lengths ({} and {})", m, S.contact.size()));
    if (S.records.empty() || (!S.energies.empty() && S.energies.size() != S.records.size()))
        return fail("pair records without the empty record or with missing energies");
    if (!S.rolling.empty() && S.rolling.size() != S.records.size())
        return fail("pair records with missing moment histories");
    // Each touching pair has a record of its own (two pairs would overwrite each other's history).
    std::vector<uint8_t> taken(S.records.size(), 0);
    for (uint32_t r : S.contact) {
        if (r >= S.records.size())
            return fail(
                fmt::format("a pair's record ({}) is past the {} records", r, S.records.size()));
        if (r != 0 && taken[r]++)
            return fail(fmt::format("two pairs share record {}", r));
    }
    for (uint32_t j : S.j)
        if (j >= n)
            return fail(fmt::format("a pair joins sphere {} of {}", j, n));
    if ((m > 0 || !S.start.empty()) && !validOffsets(S.start, n, m))
        return fail("bad pair offsets");
    if (!S.jStart.empty() && !validOffsets(S.jStart, n, m))
        return fail("bad transposed pair offsets");
    if (!S.jStart.empty() && S.jPairs.size() != m)
        return fail("transposed pair list of the wrong length");
    for (uint32_t k : S.jPairs)
        if (k >= m)
            return fail("transposed pair list points past the pairs");

    // Obstacle contacts.
    const ObstacleContacts& O = sim.obstacleContacts;
    const size_t e = O.target.size();
    const size_t obstacleSizes[] = {O.shear.size(),  O.touching.size(), O.force.size(),
                                    O.torque.size(), O.point.size(),    O.dissipated.size(),
                                    O.elastic.size()};
    for (size_t s : obstacleSizes)
        if (s != e)
            return fail(
                fmt::format("obstacle contact arrays of different lengths ({} and {})", e, s));
    for (size_t s : {O.roll.size(), O.twist.size(), O.couple.size()})
        if (s != (O.roll.empty() ? 0 : e))
            return fail(
                fmt::format("obstacle contact moment arrays of {} entries for {} contacts", s, e));
    if (!O.start.empty() && !validOffsets(O.start, n, e))
        return fail("bad obstacle contact offsets");
    if (O.start.empty() && e)
        return fail("obstacle contacts without offsets");
    for (uint32_t t : O.target) {
        const uint32_t kind = t >> ObstacleContacts::kindShift;
        const uint32_t index = t & ((1u << ObstacleContacts::kindShift) - 1);
        const size_t count = kind == uint32_t(ObstacleKind::Wall)    ? B.walls.size()
                             : kind == uint32_t(ObstacleKind::Facet) ? B.facets.size()
                             : kind == uint32_t(ObstacleKind::Box)   ? B.boxes.size()
                                                                     : 0;
        if (index >= count)
            return fail("an obstacle contact points to a missing wall, facet or box");
    }

    // A periodic cell's pairs each have an image (SpherePairs::image), other pairs none.
    if (!S.image.empty() && S.image.size() != S.size())
        return fail(fmt::format("{} pair images for {} pairs", S.image.size(), S.size()));
    // Stress control drives a periodic cell's axes 0-2.
    const auto checkControl = [&](const StressControl& c) {
        return c.axes < 8 && (c.axes == 0 || sim.cell.enabled);
    };
    if (!checkControl(sim.stressControl))
        return fail("stress control without a periodic cell, or of an axis beyond z");
    for (const Stage& st : sim.stages)
        if (st.stressControl && !checkControl(*st.stressControl))
            return fail("stage '" + st.name + "': stress control without a periodic cell");
    if (!S.image.empty() && !sim.cell.enabled)
        return fail("pair images without a periodic cell");
    if (sim.cell.enabled && S.image.size() != S.size())
        return fail("the pairs of a periodic cell without their images");
    for (uint8_t c : S.image)
        if (c >= imageCodes)
            return fail(fmt::format("pair image code {} (at most {})", c, imageCodes - 1));

    // The step uses the lists as they are unless a rebuild is pending, and rebuilds when the
    // spheres have moved from their positions at the last one: a position that is not finite
    // would never count as moved (NaN compares false).
    const NeighbourSettings& N = sim.neighbours;
    if (!isFinite(N.refPos.origin) || !std::isfinite(N.refPos.error))
        return fail("positions at the last rebuild not finite");
    for (size_t p = 0; p < N.refPos.size(); ++p)
        if (!isFinite(N.refPos[p]))
            return fail(fmt::format("position at the last rebuild of sphere {} not finite", p));
    if (!N.needRebuild && N.refPos.size() == n &&
        (S.start.size() != n + 1 || S.jStart.size() != n + 1 || O.start.size() != n + 1))
        return fail("neighbour lists missing although no rebuild is pending");

    // Engines and stages.
    auto checkMotion = [&](const Motion& mo) {
        if ((mo.kind == Motion::Kind::Servo || mo.centerAtObject) && mo.object < 0)
            return false;
        return enumBelow(mo.kind, 4) && mo.object >= -1 && mo.object < int(nObj) &&
               mo.group >= -1 && mo.group < 32;
    };
    auto checkForce = [&](const ConstantForce& f) { return f.group >= 0 && f.group < 32; };
    auto checkMeasure = [&](const MeasureRef& r) {
        if (!enumBelow(r.scope, 4) ||
            !enumBelow(r.quantity, unsigned(MeasureRef::Quantity::KineticFluctuation) + 1))
            return false;
        const int components = r.quantity == MeasureRef::Quantity::Stress ||
                                       r.quantity == MeasureRef::Quantity::CellEdge
                                   ? 9
                                   : 3;
        if (r.component < -1 || r.component >= components)
            return false;
        if (r.scope == MeasureRef::Scope::Object)
            return r.target >= 0 && size_t(r.target) < nObj;
        if (r.scope == MeasureRef::Scope::Group)
            return r.target >= 0 && r.target < 32;
        return true;
    };
    for (const Motion& mo : sim.motions)
        if (!checkMotion(mo))
            return fail("an active motion names a missing object or group");
    for (const ConstantForce& f : sim.forces)
        if (!checkForce(f))
            return fail("an active force names a missing group");
    if (sim.stages.empty() ? sim.stage != 0 : sim.stage >= sim.stages.size())
        return fail(fmt::format("current stage {} of {}", sim.stage, sim.stages.size()));
    for (const Stage& st : sim.stages) {
        for (const Motion& mo : st.motions)
            if (!checkMotion(mo))
                return fail("stage '" + st.name + "': a motion names a missing object or group");
        for (const ConstantForce& f : st.forces)
            if (!checkForce(f))
                return fail("stage '" + st.name + "': a force names a missing group");
        for (const auto& [mat, angle] : st.frictionAngles)
            if (mat < 0 || size_t(mat) >= nMat)
                return fail("stage '" + st.name + "': a friction change names a missing material");
        for (const RollingChange& r : st.rollingChanges)
            if (r.material < 0 || size_t(r.material) >= nMat)
                return fail("stage '" + st.name + "': a friction change names a missing material");
        for (const StopCriterion& c : st.stop)
            if (!enumBelow(c.kind, 6) ||
                (c.kind == StopCriterion::Kind::Measure && !checkMeasure(c.measure)))
                return fail("stage '" + st.name + "': bad stop criterion '" + c.label + "'");
    }
    return true;
}

} // namespace dem
