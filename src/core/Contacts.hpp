#pragma once
// Contact storage in flat arrays. Sphere–sphere potential contacts come from the Verlet list and
// keep their tangential history in the list; sphere–obstacle candidates are stored per sphere.
#include "core/Types.hpp"

#include <vector>

namespace dem {

// Half Verlet list of sphere pairs (i < j) within r_i + r_j + skin, sorted by (i, j). The fields
// after `touching` hold the pair's contact while it touches; for a pair apart they are left as they
// were and their values never used (clearing them at every rebuild would cost more than the rest
// of it; the gather reads them and adds -0.0 instead, to avoid a branch), and a contact starts
// from zero history when it forms. A rebuild carries only the history (`shear`):
// the step that runs it recomputes the results of every touching pair before anything reads them.
struct SpherePairs {
    std::vector<uint32_t> i, j;
    std::vector<uint32_t> start;          // CSR by i: pairs of sphere i are [start[i], start[i+1])
    std::vector<uint32_t> jStart, jPairs; // transposed: pairs in which sphere p is j, in pair order
    std::vector<Vec3> shear;              // tangential spring force (on j), the contact history
    std::vector<uint8_t> touching;        // 1 while the spheres overlap
    // Results of the current step, gathered per sphere in a fixed order (no atomics).
    std::vector<Vec3> force; // total contact force on j (i receives -force)
    std::vector<Vec3> nxf;   // n x force; torque on k is -(r_k - overlap/2) nxf
    std::vector<double> halfOverlap;
    // Energies of the step; empty unless the simulation tracks energy (they cost memory and time).
    std::vector<double> dissipated; // energy dissipated this step
    std::vector<double> elastic;    // elastic energy stored

    size_t size() const { return i.size(); }
    // Sizes every per-pair array (the energies only when `energy`); jPairs follows in
    // transposePairs.
    void resize(size_t n, bool energy);
    void reserve(size_t n, bool energy);

    // Calls f(array, isEnergy) on every per-pair array: the one list resize and reserve follow.
    template <class F> void forEachArray(F&& f) {
        f(i, false), f(j, false), f(shear, false), f(touching, false), f(force, false);
        f(nxf, false), f(halfOverlap, false), f(dissipated, true), f(elastic, true);
    }
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
    std::vector<Vec3> force; // force on the sphere this step
    std::vector<Vec3> point; // contact point this step
    std::vector<double> dissipated, elastic;

    size_t size() const { return target.size(); }
    void resize(size_t n);
};

} // namespace dem
