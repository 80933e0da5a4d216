#pragma once
// Spheres, stored as structure-of-arrays: one contiguous array per field.
#include "core/Types.hpp"

#include <cstddef>
#include <span>
#include <vector>

namespace dem {

// Scratch of Particles::permute, kept from one rebuild to the next so that a rebuild need not ask
// for memory: per range of spheres (one per thread), room for the places whose sources it keeps
// aside (its size), and memory for the values kept aside and its ring of old values when the
// memory lent to it is too small (Particles.cpp).
struct PermuteScratch {
    struct Thread {
        std::vector<uint32_t> late;
        std::vector<std::byte> memory;
    };
    std::vector<Thread> threads;
};

// Bit of Particles::blockedBits besides the DofBits: a group motion moves the sphere.
inline constexpr uint8_t heldByMotion = 64;

struct Particles {
    std::vector<uint32_t> id;           // stable body id (survives removal of other spheres)
    std::vector<Vec3> pos, vel, angVel; // vel and angVel live at mid-steps (leapfrog)
    // Optional state, kept only while an output reads it (Particles::keepOptional; a deck keeps
    // what its VTK fields and measures read): no sphere's motion depends on either, and both cost
    // memory and bandwidth every step. Empty vectors when not kept.
    std::vector<Quat> ori;  // orientation (VTK "orientation")
    std::vector<Vec3> pos0; // position when first kept (VTK and measures' "displacement")
    bool keepsOrientation = true, keepsStart = true;
    // (The force and torque of the last step are not kept: SphereLoad.hpp sums them on demand.)
    std::vector<double> radius;
    std::vector<uint16_t> material;
    // Per-sphere masks, kept only once some sphere has a bit set: empty means zero for every
    // sphere, as in most scenes (5 B per sphere, and their reads in every step, saved). Read them
    // through blocked(p) and groups(p), set them through setBlocked and joinGroups.
    // Blocked mask: the DofBits the deck blocks, and heldByMotion while a group motion moves the
    // sphere (all its DOFs are then blocked; releaseHeld frees them). Blocked DOFs keep their
    // velocity.
    std::vector<uint8_t> blockedBits;
    std::vector<uint32_t> groupBits; // bit g set = member of group g
    // Per material, m / r^3 = 4/3 pi density (NaN for a material no sphere was added with): a
    // sphere's mass and moment of inertia follow from its radius rather than being kept, with the
    // same products in the same order as when they were (so to the same bits).
    std::vector<double> massFactor;

    size_t size() const { return pos.size(); }
    // The DOFs blocked now: all of them while held by a motion, else the sphere's own.
    uint8_t blocked(size_t p) const {
        if (blockedBits.empty())
            return 0;
        const uint8_t b = blockedBits[p];
        return (b & heldByMotion) ? uint8_t(BlockAll) : b;
    }
    uint8_t ownBlocked(size_t p) const {
        return blockedBits.empty() ? 0 : uint8_t(blockedBits[p] & BlockAll);
    }
    bool held(size_t p) const { return !blockedBits.empty() && (blockedBits[p] & heldByMotion); }
    uint32_t groups(size_t p) const { return groupBits.empty() ? 0 : groupBits[p]; }
    void setBlocked(size_t p, uint8_t mask); // the sphere's own DofBits (a hold is kept)
    void hold(size_t p);                     // a motion moves sphere p: every DOF blocked
    // Ends every hold: the spheres held get their own blocking back and zero velocities (a
    // stopped motion stops them). Returns how many were held.
    size_t releaseHeld();
    void joinGroups(size_t p, uint32_t mask); // adds sphere p to the groups of `mask`
    double mass(size_t p) const {
        const double r = radius[p];
        return massFactor[material[p]] * r * r * r;
    }
    double inertia(size_t p) const { // solid sphere: 2/5 m r^2
        const double r = radius[p];
        return 0.4 * mass(p) * r * r;
    }
    // Adds a sphere of the given density, which must be that of the spheres of material `mat`
    // added before it (std::invalid_argument otherwise).
    void add(uint32_t bodyId, const Vec3& x, double r, double density, int mat, uint32_t groupMask);
    // Starts keeping (orientation: identity, start: the current position) or drops the optional
    // state.
    void keepOptional(bool orientation, bool start);
    void resize(size_t n);                           // used by removal and by checkpoints
    void keep(const std::vector<uint32_t>& indices); // compacts to the given indices, in order
    // Reorders every array so that new index e holds old index order[e] (a permutation), in place.
    // `lent`: memory idle meanwhile that its scratch may use first (its contents are lost), aligned
    // as operator new aligns.
    void permute(const std::vector<uint32_t>& order, PermuteScratch& scratch,
                 std::span<std::byte> lent = {});
    void permute(const std::vector<uint32_t>& order) {
        PermuteScratch scratch;
        permute(order, scratch);
    }

    // Calls f on every per-sphere array: the one list of fields that resize, keep and permute
    // follow.
    template <class F> void forEachArray(F&& f) { eachArray(*this, f); }
    template <class F> void forEachArray(F&& f) const { eachArray(*this, f); }
    template <class Self, class F> static void eachArray(Self& s, F& f) {
        f(s.id), f(s.pos), f(s.vel), f(s.angVel);
        if (s.keepsOrientation)
            f(s.ori);
        if (s.keepsStart)
            f(s.pos0);
        f(s.radius), f(s.material);
        if (!s.blockedBits.empty())
            f(s.blockedBits);
        if (!s.groupBits.empty())
            f(s.groupBits);
    }
    // The length of the first per-sphere array that is not size() long (the optional state not
    // kept must be empty), or size() when all agree: the check of loaded and written states.
    size_t mismatchedLength() const;
};

} // namespace dem
