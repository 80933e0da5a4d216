#pragma once
// Contact storage in flat arrays. Sphere–sphere potential contacts come from the Verlet list and
// keep their tangential history in the list; sphere–obstacle candidates are stored per sphere.
#include "core/Types.hpp"

#include <vector>

namespace dem {

// The results of one touching pair in the current step, read by the gather of its second sphere,
// the outputs and the measures. The constructor leaves the fields uninitialised on purpose: result
// buffers grow without writing (and so without making resident) memory they may never use.
struct PairResult {
    Vec3 force; // total contact force on j (i receives -force)
    Vec3 nxf;   // n x force; torque on k is -(r_k - halfOverlap) nxf
    double halfOverlap;
    PairResult() {}
    // What a pair apart reads: adding it leaves every sum unchanged, even -0.0 (force -0.0;
    // -(arm * 0.0) = -0.0 for the torque).
    static PairResult none();
};

struct PairEnergy {
    double dissipated = 0; // energy dissipated this step
    double elastic = 0;    // elastic energy stored
};

// The results of the pairs one thread computed in a step, entry 0 being PairResult::none().
// `energy` is empty or as long as `result` (Simulation::trackEnergy). One cache line each: the
// threads read each other's buffer pointers while they bump their own `used`.
struct alignas(64) PairResultBuffer {
    std::vector<PairResult> result{PairResult::none()};
    std::vector<PairEnergy> energy;
    size_t used = 1; // entries of this step
};

// Half Verlet list of sphere pairs (i < j) within r_i + r_j + skin, sorted by (i, j). Most listed
// pairs are apart (the Verlet skin), so only the history (`shear`) and the touching flag are kept
// per listed pair; a contact starts from zero history when it forms. The results of a step are
// kept for the touching pairs only, in one buffer per thread: `slot` locates pair k's result
// (a pair apart points to an empty entry, which adds nothing). A rebuild carries the history and
// sets every slot to 0: the step that runs it recomputes the results of every touching pair before
// anything reads them.
struct SpherePairs {
    std::vector<uint32_t> i, j;
    std::vector<uint32_t> start;          // CSR by i: pairs of sphere i are [start[i], start[i+1])
    std::vector<uint32_t> jStart, jPairs; // transposed: pairs in which sphere p is j, in pair order
    std::vector<Vec3> shear;              // tangential spring force (on j), the contact history
    std::vector<uint8_t> touching;        // 1 while the spheres overlap
    std::vector<uint32_t> slot;           // (offset << slotBits) | buffer of the pair's result
    // In a periodic cell, the image of j the pair is listed with (imageCode, PeriodicCell.hpp),
    // found by the rebuild; empty without a cell.
    std::vector<uint8_t> image;
    // Results of the current step, gathered per sphere in a fixed order (no atomics); the same
    // values whatever the number of buffers (threads) that hold them.
    std::vector<PairResultBuffer> results = std::vector<PairResultBuffer>(1);
    uint32_t slotBits = 0; // results.size() <= 1 << slotBits

    size_t size() const { return i.size(); }
    // Where slot s points: results[slotBuffer(s)], entry slotOffset(s).
    uint32_t slotBuffer(uint32_t s) const { return s & ((1u << slotBits) - 1); }
    uint32_t slotOffset(uint32_t s) const { return s >> slotBits; }
    const PairResult& result(size_t k) const {
        return results[slotBuffer(slot[k])].result[slotOffset(slot[k])];
    }
    PairResult& result(size_t k) {
        return results[slotBuffer(slot[k])].result[slotOffset(slot[k])];
    }
    // Energies of the step: only when every buffer keeps them (hasEnergy()).
    const PairEnergy& energy(size_t k) const {
        return results[slotBuffer(slot[k])].energy[slotOffset(slot[k])];
    }
    PairEnergy& energy(size_t k) {
        return results[slotBuffer(slot[k])].energy[slotOffset(slot[k])];
    }
    bool hasEnergy() const;
    // Gives every touching pair an entry of one fresh buffer, PairResult::none() with zero
    // energies (kept when `energy`), and every pair apart the empty entry: for loaders and tests,
    // which then fill them through result(k) and energy(k). The step fills the buffers itself.
    void allotResults(bool energy);

    // Sizes every per-pair array; jPairs follows in transposePairs.
    void resize(size_t n);
    void reserve(size_t n);

    // Calls f(array) on every per-pair array: the one list resize and reserve follow.
    template <class F> void forEachArray(F&& f) { f(i), f(j), f(shear), f(touching), f(slot); }
};

// The derived indices of a pair list, from its offsets `start` and `j`: `i` of every pair, and the
// transposed adjacency (jStart, jPairs) filled in pair order, which fixes each sphere's gather
// order. `fill` is scratch space (kept by the caller to avoid allocating in the step loop).
void derivePairOwners(SpherePairs& S);
void transposePairs(SpherePairs& S, size_t sphereCount, std::vector<uint32_t>& fill);

// Per-sphere candidate obstacles, CSR by sphere: entries [start[p], start[p+1]).
struct ObstacleContacts {
    static constexpr uint32_t kindShift = 30;
    std::vector<uint32_t> start;
    std::vector<uint32_t> target; // (ObstacleKind << 30) | index into walls/facets/boxes
    std::vector<Vec3> shear;      // tangential spring force on the sphere (history)
    std::vector<uint8_t> touching;
    std::vector<Vec3> force;  // force on the sphere this step
    std::vector<Vec3> torque; // torque on the sphere this step (about its centre)
    std::vector<Vec3> point;  // contact point this step
    std::vector<double> dissipated, elastic;

    size_t size() const { return target.size(); }
    void resize(size_t n);
};

} // namespace dem
