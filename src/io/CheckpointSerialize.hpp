#pragma once
// Serialisation of a Simulation and the checkpoint metadata: ONE field list per struct, a
// `fields(ar, ...)` call inside `io(Archive&, T&)`, used by three archives:
//   Counter  adds up the byte size (section lengths are written before the sections),
//   Writer   appends the bytes to a buffer that is handed to a sink in large blocks,
//   Reader   reads them back from memory, with bounds checks on every length.
// Encoding: scalars as their native bytes (fixed widths; bool as one byte 0/1; enums as their
// underlying type), Vec3 as 3 doubles, Quat as 4 doubles (x, y, z, w), strings and vectors as a
// u64 count followed by the elements (raw bytes for vectors of scalars, Vec3 and Quat), optional as
// a u8 flag followed by the value, maps as a count followed by key/value pairs. Top-level groups
// of fields are framed as sections: a 4-character tag and a u64 byte length.
//
// All overloads live in this namespace, as do the archives, so argument-dependent lookup finds
// every overload at instantiation whatever the declaration order.
#include "core/Scratch.hpp"
#include "core/Simulation.hpp"
#include "io/Checkpoint.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace dem::ckpt {

static_assert(sizeof(double) == 8 && sizeof(size_t) == 8, "checkpoints assume an LP64 platform");
static_assert(sizeof(Vec3) == 3 * sizeof(double), "Vec3 must be three packed doubles");
static_assert(sizeof(Quat) == 4 * sizeof(double), "Quat must be four packed doubles");

// Malformed serialised data (caught by the checkpoint functions, never escapes them).
struct FormatError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

constexpr uint32_t tag(const char (&t)[5]) {
    return uint32_t(uint8_t(t[0])) | uint32_t(uint8_t(t[1])) << 8 | uint32_t(uint8_t(t[2])) << 16 |
           uint32_t(uint8_t(t[3])) << 24;
}
std::string tagName(uint32_t t);

// Types stored as raw bytes in bulk inside vectors.
template <class T>
inline constexpr bool isBulk = (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) ||
                               std::is_same_v<T, Vec3> || std::is_same_v<T, Quat>;

// Every archive carries the format version of the bytes it counts, writes or reads; `io` overloads
// whose layout changed between versions branch on it.
class Counter {
public:
    static constexpr bool loading = false;
    uint32_t version = checkpointFormatVersion;
    uint64_t size = 0;
    void bytes(const void*, size_t n) { size += n; }
    void count(uint64_t&, size_t) { size += sizeof(uint64_t); }
    template <class F> void section(uint32_t, F&& f) {
        size += sizeof(uint32_t) + sizeof(uint64_t);
        f(*this);
    }
};

class Writer {
public:
    static constexpr bool loading = false;
    uint32_t version = checkpointFormatVersion;
    // `sink` receives the bytes in order, in blocks of up to `block` bytes (or one large vector).
    explicit Writer(std::function<void(const char*, size_t)> sink, size_t block = size_t(1) << 16)
        : sink_(std::move(sink)), block_(block) {
        buffer_.reserve(block_);
    }
    void bytes(const void* p, size_t n) {
        if (buffer_.size() + n > block_) {
            flush();
            if (n >= block_) {
                sink_(static_cast<const char*>(p), n);
                return;
            }
        }
        buffer_.append(static_cast<const char*>(p), n);
    }
    void count(uint64_t& n, size_t) { bytes(&n, sizeof n); }
    template <class F> void section(uint32_t t, F&& f) {
        Counter c;
        c.version = version;
        f(c);
        uint64_t length = c.size;
        bytes(&t, sizeof t);
        bytes(&length, sizeof length);
        f(*this);
    }
    void flush() {
        if (!buffer_.empty())
            sink_(buffer_.data(), buffer_.size());
        buffer_.clear();
    }

private:
    std::function<void(const char*, size_t)> sink_;
    size_t block_;
    std::string buffer_;
};

class Reader {
public:
    static constexpr bool loading = true;
    uint32_t version;
    Reader(const char* begin, size_t n, uint32_t formatVersion = checkpointFormatVersion)
        : version(formatVersion), p_(begin), end_(begin + n) {}
    size_t remaining() const { return size_t(end_ - p_); }
    void bytes(void* dst, size_t n) {
        if (remaining() < n)
            throw FormatError(where() + "data ends early");
        if (n)
            std::memcpy(dst, p_, n);
        p_ += n;
    }
    // Reads an element count and checks that `n` elements of at least `minBytes` each fit.
    void count(uint64_t& n, size_t minBytes) {
        bytes(&n, sizeof n);
        if (minBytes && n > remaining() / minBytes)
            throw FormatError(where() + "element count " + std::to_string(n) + " exceeds the data");
    }
    template <class F> void section(uint32_t t, F&& f) {
        uint32_t found = 0;
        uint64_t length = 0;
        bytes(&found, sizeof found);
        if (found != t)
            throw FormatError("expected section " + tagName(t) + ", found " + tagName(found));
        bytes(&length, sizeof length);
        if (length > remaining())
            throw FormatError("section " + tagName(t) + " is longer than the data");
        const char* outerEnd = end_;
        const uint32_t outerSection = section_;
        end_ = p_ + length;
        section_ = t;
        f(*this);
        if (p_ != end_)
            throw FormatError("section " + tagName(t) + ": " + std::to_string(end_ - p_) +
                              " bytes left unread");
        end_ = outerEnd;
        section_ = outerSection;
    }

private:
    const char* p_;
    const char* end_;
    uint32_t section_ = 0;
    std::string where() const { return section_ ? "section " + tagName(section_) + ": " : ""; }
};

// --- scalars, Eigen types, strings -------------------------------------------------------------
template <class Ar, class T>
requires std::is_arithmetic_v<T>
void io(Ar& ar, T& v) {
    if constexpr (std::is_same_v<T, bool>) {
        uint8_t b = v ? 1 : 0;
        ar.bytes(&b, 1);
        if constexpr (Ar::loading) {
            if (b > 1)
                throw FormatError("bad boolean value " + std::to_string(b));
            v = b != 0;
        }
    } else {
        ar.bytes(&v, sizeof v);
    }
}

// Enums: their underlying type. All enums stored here have a fixed underlying type, so every value
// read is a valid value of the type; indices are range-checked by checkSimulationConsistency.
template <class Ar, class E>
requires std::is_enum_v<E>
void io(Ar& ar, E& e) {
    static_assert(sizeof(E) <= 4);
    std::underlying_type_t<E> u = std::underlying_type_t<E>(e);
    ar.bytes(&u, sizeof u);
    if constexpr (Ar::loading)
        e = E(u);
}

template <class Ar> void io(Ar& ar, Vec3& v) {
    ar.bytes(v.data(), sizeof(double) * 3);
}
template <class Ar> void io(Ar& ar, Quat& q) {
    ar.bytes(q.coeffs().data(), sizeof(double) * 4);
}
template <class Ar> void io(Ar& ar, Mat3& m) {
    ar.bytes(m.data(), sizeof(double) * 9); // column by column
}

template <class Ar> void io(Ar& ar, std::string& s) {
    uint64_t n = s.size();
    ar.count(n, 1);
    if constexpr (Ar::loading)
        s.resize(n);
    ar.bytes(s.data(), n);
}

// The smallest encoding of a T in format `version` (that of a default value: empty strings and
// vectors); a struct that grew fields in a later version is smaller in the earlier ones.
template <class T> size_t minimalSize(uint32_t version) {
    Counter c;
    c.version = version;
    T value{};
    io(c, value);
    return size_t(c.size);
}

// --- containers --------------------------------------------------------------------------------
template <class Ar, class T> void io(Ar& ar, std::vector<T>& v) {
    uint64_t n = v.size();
    if constexpr (isBulk<T>) {
        ar.count(n, sizeof(T));
        if constexpr (Ar::loading)
            v.resize(n);
        ar.bytes(static_cast<void*>(v.data()), n * sizeof(T));
    } else {
        // Bounds the allocation by the data that is left.
        ar.count(n, Ar::loading ? minimalSize<T>(ar.version) : 0);
        if constexpr (Ar::loading)
            v.resize(n);
        for (T& x : v)
            io(ar, x);
    }
}

template <class Ar, class T, size_t N> void io(Ar& ar, T (&a)[N]) {
    for (T& x : a)
        io(ar, x);
}

template <class Ar, class T> void io(Ar& ar, std::optional<T>& o) {
    bool has = o.has_value();
    io(ar, has);
    if constexpr (Ar::loading) {
        if (has)
            o.emplace();
        else
            o.reset();
    }
    if (has)
        io(ar, *o);
}

template <class Ar, class A, class B> void io(Ar& ar, std::pair<A, B>& p) {
    io(ar, p.first);
    io(ar, p.second);
}

template <class Ar, class K, class V> void io(Ar& ar, std::map<K, V>& m) {
    uint64_t n = m.size();
    ar.count(n, Ar::loading ? minimalSize<std::pair<K, V>>(ar.version) : 0);
    if constexpr (Ar::loading) {
        m.clear();
        for (uint64_t k = 0; k < n; ++k) {
            std::pair<K, V> kv;
            io(ar, kv);
            if (!m.emplace(std::move(kv)).second)
                throw FormatError("duplicate map key");
        }
    } else {
        for (auto& [key, value] : m) {
            K k = key;
            io(ar, k);
            io(ar, value);
        }
    }
}

template <class Ar, class... T> void fields(Ar& ar, T&... v) {
    (io(ar, v), ...);
}

// --- the simulation: one field list per struct -------------------------------------------------
template <class Ar> void io(Ar& ar, Material& m) {
    fields(ar, m.name, m.law, m.density, m.young, m.poisson, m.frictionAngle, m.restitution,
           m.contactTime, m.restitutionN, m.restitutionT);
    if (ar.version >= 7) // rolling and twisting resistance (none before)
        fields(ar, m.rollingFriction, m.twistingFriction);
}

template <class Ar> void io(Ar& ar, PairOverride& o) {
    fields(ar, o.a, o.b, o.frictionAngle, o.restitution);
    if (ar.version >= 7)
        fields(ar, o.rollingFriction, o.twistingFriction);
}

template <class Ar> void io(Ar& ar, PairParams& p) {
    fields(ar, p.law, p.mu, p.youngA, p.youngB, p.poissonA, p.poissonB, p.eStar, p.gStar, p.beta,
           p.contactTime, p.lnEn, p.lnEt);
    if (ar.version >= 7)
        fields(ar, p.muRoll, p.muTwist);
    if constexpr (Ar::loading)
        derivePairConstants(p);
}

template <class Ar> void io(Ar& ar, PairTable& t) {
    fields(ar, t.count, t.params);
}

// A per-sphere mask that Particles keeps only when some sphere has a bit set (empty: all zero).
// Stored for every sphere whether kept or not (the files do not change with it); the zeros of one
// not kept are written without a vector of them, and one loaded all zero is not kept.
template <class Ar, class T> void sphereMask(Ar& ar, std::vector<T>& v, size_t spheres) {
    if constexpr (Ar::loading) {
        io(ar, v);
        if (v.size() == spheres && std::all_of(v.begin(), v.end(), [](T x) { return x == 0; }))
            freeMemory(v);
    } else if (!v.empty()) {
        io(ar, v);
    } else {
        static constexpr char zeros[4096] = {};
        uint64_t n = spheres;
        ar.count(n, sizeof(T));
        for (size_t left = spheres * sizeof(T); left > 0;) {
            const size_t chunk = std::min(left, sizeof zeros);
            ar.bytes(zeros, chunk);
            left -= chunk;
        }
    }
}

// The blocked masks. Versions 1 to 5 had no heldByMotion bit: they stored a held sphere's mask as
// BlockAll (written so for them), and read back it is the sphere's own blocking.
template <class Ar> void blockedMask(Ar& ar, Particles& p) {
    if constexpr (!Ar::loading) {
        if (ar.version < 6) {
            std::vector<uint8_t> old(p.blockedBits.size());
            for (size_t k = 0; k < old.size(); ++k)
                old[k] = p.blocked(k);
            sphereMask(ar, old, p.pos.size());
            return;
        }
    }
    sphereMask(ar, p.blockedBits, p.pos.size());
}

template <class Ar> void io(Ar& ar, Particles& p) {
    fields(ar, p.id, p.pos, p.vel, p.angVel, p.ori, p.pos0, p.radius, p.material);
    blockedMask(ar, p);
    sphereMask(ar, p.groupBits, p.pos.size());
    fields(ar, p.massFactor);
    // The optional state is kept when stored (checked against the sphere count on load).
    if constexpr (Ar::loading) {
        p.keepsOrientation = !p.ori.empty() || p.pos.empty();
        p.keepsStart = !p.pos0.empty() || p.pos.empty();
    }
}

// Sets the spheres' mass factors of a loaded version 1-3 simulation from its materials' densities;
// FormatError when the masses and moments of inertia it stored do not follow from them.
void deriveMassFactors(Simulation& s, const std::vector<double>& mass,
                       const std::vector<double>& inertia);

// The spheres as versions 1-3 stored them: also each sphere's force and torque of the last step,
// now summed from the contacts when asked for (SphereLoad.hpp; read and dropped, written as zeros),
// and its mass and moment of inertia, which follow from its radius and material.
template <class Ar> void legacyParticles(Ar& ar, Simulation& s) {
    Particles& p = s.particles;
    std::vector<Vec3> force(p.size(), Vec3::Zero()), torque(p.size(), Vec3::Zero());
    std::vector<double> mass(p.size()), inertia(p.size());
    for (size_t k = 0; k < p.size(); ++k)
        mass[k] = p.mass(k), inertia[k] = p.inertia(k);
    fields(ar, p.id, p.pos, p.vel, p.angVel, p.ori, force, torque, p.pos0, p.radius, mass, inertia,
           p.material);
    blockedMask(ar, p);
    sphereMask(ar, p.groupBits, p.pos.size());
    if constexpr (Ar::loading) {
        p.keepsOrientation = p.keepsStart = true; // stored for every sphere then
        deriveMassFactors(s, mass, inertia);
    }
}

template <class Ar> void io(Ar& ar, Wall& w) {
    fields(ar, w.point, w.normal, w.object);
}
template <class Ar> void io(Ar& ar, Facet& f) {
    fields(ar, f.v, f.normal, f.vid, f.object);
}
template <class Ar> void io(Ar& ar, Box& b) {
    fields(ar, b.center, b.half, b.ori, b.object);
}

template <class Ar> void io(Ar& ar, RigidObject& o) {
    fields(ar, o.name, o.kind, o.material, o.groups, o.center, o.center0, o.vel, o.angVel, o.force,
           o.torque, o.extent, o.travel);
}

template <class Ar> void io(Ar& ar, Obstacles& o) {
    fields(ar, o.objects, o.walls, o.facets, o.boxes, o.nextVertexId);
}

// The touching flag of every pair: what versions 2 and later store of a pair besides j.
std::vector<uint8_t> touchingFlags(const SpherePairs& s);

// Checks a loaded version-2 pair list (offsets, j, touching flags), gives every touching pair a
// record (with energies) and derives the transposed adjacency; FormatError when it is malformed.
void expandLoadedPairs(SpherePairs& s, const std::vector<uint8_t>& touching);

// Version 1 stored these arrays for every listed pair (zero history and results for a pair apart,
// energies empty when the simulation keeps none), besides j and the offsets.
struct PairArraysV1 {
    std::vector<uint32_t> i, jStart, jPairs;
    std::vector<Vec3> shear;
    std::vector<uint8_t> touching;
    std::vector<Vec3> force, nxf;
    std::vector<double> halfOverlap, dissipated, elastic;
};
PairArraysV1 expandPairArrays(const SpherePairs& s);
// Gives the touching pairs of a loaded version-1 list their records; FormatError when the arrays
// disagree.
void loadPairArrays(SpherePairs& s, const PairArraysV1& a);

// Calls io on field(k) for every touching pair k; field returns a reference (a loaded list has
// a record for each, expandLoadedPairs).
template <class Ar, class F> void touchingRecords(Ar& ar, const SpherePairs& s, F field) {
    for (size_t k = 0; k < s.size(); ++k)
        if (s.touching(k))
            io(ar, field(k));
}

// Version 1 stored every array of every listed pair. Version 2 stores the list (offsets, j,
// touching flags) and the history and results of touching pairs only: a pair apart has neither
// (Contacts.hpp), and i, jStart, jPairs follow from the offsets. Most listed pairs are apart (the
// Verlet skin), so this stores far fewer bytes. Energies are written as zeros when the simulation
// keeps none; a loaded list always keeps them.
template <class Ar> void io(Ar& ar, SpherePairs& s) {
    if (ar.version < 2) {
        PairArraysV1 a;
        if constexpr (!Ar::loading)
            a = expandPairArrays(s);
        fields(ar, a.i, s.j, s.start, a.jStart, a.jPairs, a.shear, a.touching, a.force, a.nxf,
               a.halfOverlap, a.dissipated, a.elastic);
        if constexpr (Ar::loading)
            loadPairArrays(s, a);
        return;
    }
    std::vector<uint8_t> touching;
    if constexpr (!Ar::loading)
        touching = touchingFlags(s);
    fields(ar, s.start, s.j, touching);
    if constexpr (Ar::loading)
        expandLoadedPairs(s, touching);
    touchingRecords(ar, s, [&](size_t k) -> Vec3& { return s.record(k).shear; });
    touchingRecords(ar, s, [&](size_t k) -> Vec3& { return s.record(k).force; });
    touchingRecords(ar, s, [&](size_t k) -> Vec3& { return s.record(k).nxf; });
    touchingRecords(ar, s, [&](size_t k) -> double& { return s.record(k).halfOverlap; });
    const bool energy = s.hasEnergy();
    double zero = 0; // what is written for a simulation that keeps no energies
    touchingRecords(
        ar, s, [&](size_t k) -> double& { return energy ? s.energy(k).dissipated : (zero = 0); });
    touchingRecords(ar, s,
                    [&](size_t k) -> double& { return energy ? s.energy(k).elastic : (zero = 0); });
    if (ar.version >= 3) // the images of a periodic cell's pairs (empty without a cell)
        fields(ar, s.image);
    if (ar.version >= 7) { // the moment histories and couples, when kept
        bool rolling = s.hasRolling();
        io(ar, rolling);
        if constexpr (Ar::loading)
            s.rolling.assign(rolling ? s.records.size() : 0, PairRolling::none());
        if (rolling) {
            touchingRecords(ar, s, [&](size_t k) -> Vec3& { return s.rollingOf(k).roll; });
            touchingRecords(ar, s, [&](size_t k) -> double& { return s.rollingOf(k).twist; });
            touchingRecords(ar, s, [&](size_t k) -> Vec3& { return s.rollingOf(k).couple; });
        }
    }
}

template <class Ar> void io(Ar& ar, ObstacleContacts& o) {
    fields(ar, o.start, o.target, o.shear, o.touching, o.force);
    if (ar.version >= 4) // before: derived on loading (deriveObstacleTorques)
        fields(ar, o.torque);
    fields(ar, o.point, o.dissipated, o.elastic);
    if (ar.version >= 7) // empty without rolling resistance
        fields(ar, o.roll, o.twist, o.couple);
}

// The torque on the sphere of each touching obstacle contact of a loaded version 1-3 simulation,
// which did not store it: (point - centre) x force, with the sphere's centre after the step rather
// than before it (the sphere's load as outputs report it, until the next step recomputes it).
void deriveObstacleTorques(Simulation& s);

// Version 5 stores the reference positions as they are kept: the origin, the count and three floats
// per sphere; before, as doubles, which a load rounds as a rebuild would. The rounding error is not
// stored: it follows from the floats.
template <class Ar> void io(Ar& ar, ReferencePositions& r) {
    if (ar.version < 5) {
        std::vector<Vec3> pos;
        if constexpr (!Ar::loading)
            for (size_t p = 0; p < r.size(); ++p)
                pos.push_back(r[p]);
        io(ar, pos);
        if constexpr (Ar::loading)
            r.assign(pos);
        return;
    }
    io(ar, r.origin);
    uint64_t n = r.size();
    ar.count(n, 3 * sizeof(float));
    if constexpr (Ar::loading)
        r.resize(size_t(n));
    ar.bytes(static_cast<void*>(r.packed.data()), n * 3 * sizeof(float));
    if constexpr (Ar::loading)
        r.boundError();
}

template <class Ar> void io(Ar& ar, NeighbourSettings& n) {
    fields(ar, n.skin, n.refPos, n.cellSize, n.rebuilds, n.needRebuild);
}

template <class Ar> void io(Ar& ar, Energies& e) {
    fields(ar, e.dampingDissipated, e.contactDissipated, e.gravityWork);
}

template <class Ar> void io(Ar& ar, Motion& m) {
    fields(ar, m.kind, m.object, m.group, m.velocity, m.axis, m.center, m.angularVelocity,
           m.amplitude, m.frequency, m.phase);
    if (ar.version >= 8) // servo-controlled objects (none before)
        fields(ar, m.direction, m.servoForce, m.maxSpeed, m.gain);
    if (ar.version >= 9) // the servo's integral term
        fields(ar, m.integralTime, m.integral);
    if (ar.version >= 10) // a rotation about the object's centre at its stage's start
        fields(ar, m.centerAtObject);
}

template <class Ar> void io(Ar& ar, ConstantForce& f) {
    fields(ar, f.group, f.force);
}

template <class Ar> void io(Ar& ar, MeasureRef& m) {
    fields(ar, m.name, m.scope, m.quantity, m.target, m.component);
}

template <class Ar> void io(Ar& ar, StopCriterion& c) {
    fields(ar, c.kind, c.value, c.above, c.measure, c.checkEvery, c.minSteps, c.label);
    if (ar.version >= 8)
        fields(ar, c.servoTolerance);
}

template <class Ar> void io(Ar& ar, RollingChange& c) {
    fields(ar, c.material, c.rolling, c.twisting);
}

template <class Ar> void io(Ar& ar, StressControl& c) {
    fields(ar, c.axes, c.target, c.maxRate, c.gain);
    if (ar.version >= 9) // the servo's integral term
        fields(ar, c.integralTime, c.integral);
}

template <class Ar> void io(Ar& ar, Stage& s) {
    fields(ar, s.name, s.gravity, s.damping, s.motions, s.clearMotions, s.forces, s.frictionAngles,
           s.stop);
    if (ar.version >= 3)
        fields(ar, s.velocityGradient);
    if (ar.version >= 8) // stress-controlled periodic cells, rolling friction changes
        fields(ar, s.stressControl, s.rollingChanges);
}

template <class Ar> void io(Ar& ar, PeriodicCell& c) {
    fields(ar, c.enabled, c.origin, c.h, c.velGrad, c.hAtRebuild);
}

// The simulation, in sections (man/dem-checkpoint.5 lists them).
template <class Ar> void io(Ar& ar, Simulation& s) {
    ar.section(tag("MODL"), [&](auto& a) {
        fields(a, s.materials, s.overrides, s.pairTable, s.groupNames, s.hasDomain, s.domainMin,
               s.domainMax, s.outOfDomain, s.trackEnergy);
    });
    ar.section(tag("PART"), [&](auto& a) {
        if (a.version >= 4)
            fields(a, s.particles);
        else
            legacyParticles(a, s);
    });
    ar.section(tag("OBST"), [&](auto& a) { fields(a, s.obstacles); });
    ar.section(tag("CONT"), [&](auto& a) { fields(a, s.pairs, s.obstacleContacts); });
    ar.section(tag("NBRS"), [&](auto& a) { fields(a, s.neighbours); });
    ar.section(tag("TIME"), [&](auto& a) { fields(a, s.dt, s.time, s.step); });
    ar.section(tag("ENGN"), [&](auto& a) { fields(a, s.gravity, s.damping, s.motions, s.forces); });
    ar.section(tag("STGS"), [&](auto& a) {
        fields(a, s.stages, s.stage, s.stageStartStep, s.stageStartTime, s.stageStarted);
    });
    ar.section(tag("ENRG"), [&](auto& a) { fields(a, s.energy); });
    if (ar.version >= 3) // versions 1 and 2: no periodic cell
        ar.section(tag("CELL"), [&](auto& a) {
            fields(a, s.cell);
            if (a.version >= 8)
                fields(a, s.stressControl);
        });
    if constexpr (Ar::loading)
        if (ar.version < 4)
            deriveObstacleTorques(s);
}

template <class Ar> void io(Ar& ar, CheckpointMeta& m) {
    ar.section(tag("META"), [&](auto& a) {
        fields(a, m.programVersion, m.deckName, m.deckPath, m.deckText, m.resolvedToml, m.params,
               m.runState);
    });
}

} // namespace dem::ckpt
