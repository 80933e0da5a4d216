#pragma once
// Contact storage in flat arrays. Sphere–sphere potential contacts come from the Verlet list, and a
// touching pair has a record of its history and results; sphere–obstacle candidates are stored per
// sphere.
#include "core/Types.hpp"

#include <vector>

namespace dem {

// A touching sphere pair: its tangential history and the results of the step that last computed
// it, which the gather of its second sphere, the outputs and the measures read. The constructor
// leaves the fields uninitialised on purpose: the records grow into memory that is not written (and
// so not made resident) until a record is put there.
struct PairContact {
    Vec3 force; // total contact force on j (i receives -force)
    Vec3 nxf;   // n x force; torque on k is -(r_k - halfOverlap) nxf
    double halfOverlap;
    Vec3 shear; // tangential spring force (on j): the contact's history
    PairContact() {}
    // Record 0, which every pair apart points to: adding its results leaves every sum unchanged,
    // even -0.0 (force -0.0; -(arm * 0.0) = -0.0 for the torque).
    static PairContact none();
};

struct PairEnergy {
    double dissipated; // energy dissipated this step
    double elastic;    // elastic energy stored
    PairEnergy() {}    // uninitialised, as PairContact
    PairEnergy(double d, double e) : dissipated(d), elastic(e) {}
};

// The moment histories of a touching pair whose materials resist rolling or twisting
// (rollingResistance, ContactLaws.hpp), and the couple of the step that last computed it (the
// moment on j; i receives its opposite). Uninitialised, as PairContact.
struct PairRolling {
    Vec3 roll;    // rolling moment spring (on j): history
    double twist; // twisting moment spring about n (on j): history
    Vec3 couple;  // result
    PairRolling() {}
    static PairRolling none(); // record 0's: zero
};

// Half Verlet list of sphere pairs (i < j) within r_i + r_j + skin, sorted by (i, j), as offsets by
// i (`start`) and the second sphere of each pair. Most listed pairs are apart (the Verlet skin): a
// pair holds only the index of its record (`contact`), 0 while its spheres are apart. A pair takes
// a record when its spheres start touching and gives it up when they part, so a contact that forms
// again starts without history. Records are laid out in pair order, in place, at every rebuild
// (carryPairRecords), the ones given up are dropped when they pile up (compactPairRecords), and a
// step's new contacts take theirs from blocks the threads claim, so where a record lies says
// nothing about its pair.
// Results are gathered per sphere in a fixed pair order (no atomics): the same values whatever the
// thread count.
struct SpherePairs {
    std::vector<uint32_t> start;          // pairs of sphere i are [start[i], start[i+1])
    std::vector<uint32_t> j;              // the second sphere of each pair
    std::vector<uint32_t> jStart, jPairs; // transposed: pairs in which sphere p is j, in pair order
    std::vector<uint32_t> contact;        // the pair's record, 0 while apart
    // In a periodic cell, the image of j the pair is listed with (imageCode, PeriodicCell.hpp),
    // found by the rebuild; empty without a cell.
    std::vector<uint8_t> image;
    // Record 0 is PairContact::none(); the others belong to a touching pair or were given up since
    // they were last laid out. Between steps the vector holds just those (a step grows it into
    // room for its new contacts). `energies` is empty, or parallel to `records` with energies[0]
    // zero, when the simulation tracks energy.
    std::vector<PairContact> records{PairContact::none()};
    std::vector<PairEnergy> energies;
    // Empty, or parallel to `records` with rolling[0] zero, when some pair resists rolling.
    std::vector<PairRolling> rolling;

    size_t size() const { return j.size(); }
    bool touching(size_t k) const { return contact[k] != 0; }
    const PairContact& record(size_t k) const { return records[contact[k]]; }
    PairContact& record(size_t k) { return records[contact[k]]; }
    // Energies of the step: only when the simulation keeps them (hasEnergy()).
    bool hasEnergy() const { return !energies.empty() && energies.size() == records.size(); }
    const PairEnergy& energy(size_t k) const { return energies[contact[k]]; }
    PairEnergy& energy(size_t k) { return energies[contact[k]]; }
    bool hasRolling() const { return !rolling.empty() && rolling.size() == records.size(); }
    const PairRolling& rollingOf(size_t k) const { return rolling[contact[k]]; }
    PairRolling& rollingOf(size_t k) { return rolling[contact[k]]; }
    size_t touchingCount() const;

    // Calls f(k, i, j) for every pair k = (i, j), in pair order.
    template <class F> void forEachPair(F&& f) const {
        for (size_t i = 0; i + 1 < start.size(); ++i)
            for (uint32_t k = start[i]; k < start[i + 1]; ++k)
                f(size_t(k), uint32_t(i), j[k]);
    }
};

// The first sphere of every pair, in pair order.
std::vector<uint32_t> pairOwners(const SpherePairs& S);

// The transposed adjacency (jStart, jPairs) of a pair list, filled in pair order, which fixes each
// sphere's gather order. `scratch`: memory the rebuilds keep for it (CountingSort.hpp).
void transposePairs(SpherePairs& S, size_t sphereCount, std::vector<uint32_t>& scratch);
void transposePairs(SpherePairs& S, size_t sphereCount);

// Numbers the pairs whose contact[k] is not 0 from 1 in pair order: contact[k] becomes the number
// and source[number] what contact[k] held. Returns how many. Runs in parallel above
// parallelThreshold pairs; the numbering does not depend on the thread count.
size_t numberTouchingPairs(SpherePairs& S, std::vector<uint32_t>& source);

// The memory the records of a list reserve beyond their own for the steps up to the next layout
// (`threads` taking records in blocks of `block`): one new record per pair, and a quarter of the
// pairs for records given up. Reserved memory is not resident until written.
size_t recordRoom(const SpherePairs& S, size_t threads, size_t block);

// Drops the records given up, in place: the touching pairs' records (and their moment histories)
// keep their order and close up from record 1. Reserves memory for `room` more. `renumber`:
// scratch of the caller (one index per record).
void compactPairRecords(SpherePairs& S, size_t room, std::vector<uint32_t>& renumber);

// The rebuild's layout (Neighbours.cpp): each pair marked with contact[k] = its record in the list
// before | recordFlipped (set when the order of its spheres is now the reverse) takes a record in
// pair order, moved there in place. It keeps its tangential history, negated when flipped (the
// history is the force on the second sphere); its results are those of a pair apart until the step
// that follows the rebuild computes them; its energies (kept when `energy`) are zero. Its moment
// histories, when kept, move with it (the rolling one negated when flipped; the twisting one is
// about n, which turns round too). Memory for `room` more is reserved. Scratch kept by the caller:
// `source` (the numbering's, above), `side` and `rollingSide` (the histories moved against the
// sweep, GatherInPlace.hpp).
constexpr uint32_t recordFlipped = 1u << 31; // records stay far below: 2^31 x 80 B > memory
void carryPairRecords(SpherePairs& S, bool energy, size_t room, std::vector<uint32_t>& source,
                      std::vector<Vec3>& side, std::vector<PairRolling>& rollingSide);

// Gives every touching pair a record in pair order, PairContact::none() with zero energies (kept
// when `energy`) and zero moment histories (kept when `rolling`), after which loaders and tests
// fill them through record(k), energy(k) and rollingOf(k).
void allotRecords(SpherePairs& S, const std::vector<uint8_t>& touching, bool energy,
                  bool rolling = false);

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
    // When some pair resists rolling (else empty): the moment histories (on the sphere) and the
    // couple of this step, which `torque` includes.
    std::vector<Vec3> roll;
    std::vector<double> twist;
    std::vector<Vec3> couple;

    size_t size() const { return target.size(); }
    bool hasRolling() const { return !roll.empty(); }
    // Resizes every array; the moment arrays to n when `rolling`, else to none.
    void resize(size_t n, bool rolling);
};

} // namespace dem
