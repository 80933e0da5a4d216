#pragma once
// Scratch memory of the step loop. Not part of the simulation state: it is rebuilt from it, and
// keeping it outside lets Simulation stay a plain value that can be saved and compared.
#include "core/CellGrid.hpp"
#include "core/ContactGeometry.hpp"
#include "core/Simulation.hpp"
#include "core/SphereLoad.hpp"
#include "core/SweepRoom.hpp"
#include "core/SweepSplit.hpp"

#include <atomic>
#include <string>
#include <utility>
#include <vector>

namespace dem {

struct FacetCandidate {
    uint32_t entry; // index into ObstacleContacts
    FacetGeom geom;
    bool keep;
};

// A facet the rebuild tests against every sphere near it rather than binning it into cells, with
// its bounding box grown by the binning reach (and a margin for rounding).
struct UnbinnedFacet {
    uint32_t facet;
    Vec3 lo, hi;
    bool boxHolds(const Vec3& x) const {
        return (x.array() >= lo.array()).all() && (x.array() <= hi.array()).all();
    }
};

// Wall time spent in each phase of the step loop, summed over steps (tools/bench reads it from
// summary.json). Reading the clock a few times per step costs nothing next to the step itself.
struct PhaseTimes {
    double neighbours = 0;  // neighbour-list rebuilds
    double contacts = 0;    // sphere-sphere contact forces
    double integration = 0; // per sphere: gather, obstacle contacts, leapfrog
    double other = 0; // imposed motions, obstacle reactions and motion, energy sums, rebuild check
};

// A sphere whose gather waits for an earlier thread's pairs (Step.cpp, sweepSpheres), with the
// load of its own pairs.
struct DeferredSphere {
    uint32_t sphere;
    SphereLoad own;
};

// A pair of the pair loop's touching list: the pair and its first sphere.
struct TouchingPair {
    uint32_t pair, first;
};

// The records a thread has claimed for contacts that form (Step.cpp, takeRecord): [next, end).
// One cache line each: every thread bumps its own. Claimed this many at a time: the shared counter
// is touched once per that many contacts that form, and a thread leaves fewer unused.
constexpr size_t pairRecordBlock = 32;
struct alignas(64) RecordBlock {
    size_t next = 0, end = 0;
};

// The touching pairs through a rebuild, CSR by the first sphere in the order before the rebuild:
// for each, side by side in `pairs`, the second sphere's index in that order and the pair's record
// (which keeps its tangential history until carryPairRecords moves it); `start` counts both. Only
// a rebuild reads them, and they live in the memory of the pair list's transpose: `pairs` in
// jPairs, `start` in jStart (holding the grid's scratch before them), which the rebuild lays out
// afresh after them (Neighbours.cpp, lendTransposeToCarried). Vectors of their own would stay
// resident between rebuilds.
struct CarriedHistory {
    std::vector<uint32_t> start, pairs;
};

// An obstacle contact candidate through a rebuild, with its sphere's index in the order before it.
struct CarriedObstacleContact {
    uint32_t sphere, target;
    Vec3 shear;
    uint8_t touching;
};

// How a rigid object moves over one step: every point x goes to center + turn (x - center) + shift
// (Step.cpp, moveObstacles).
struct ObjectStep {
    Quat turn;
    Vec3 shift;
};

struct Workspace {
    CellGrid grid;
    // Facets binned into the cells near them, kept until the facets, the cell size or the reach
    // change (walls of a box are binned once, not at every rebuild).
    std::vector<std::pair<uint64_t, uint32_t>> facetCells; // (cell key, facet), sorted
    std::vector<UnbinnedFacet> unbinnedFacets;             // tested against every sphere
    HashIndex facetCellIndex;                              // cell key -> its first facetCells entry
    std::vector<uint8_t> nearFacets; // per sphere: facets may be near its cell (rebuild scratch)
    std::vector<Facet> binnedFacets;
    double binnedCellSize = 0, binnedReach = 0;
    std::vector<double> dampingLoss, contactLoss;          // per sphere, this step
    std::vector<std::vector<FacetCandidate>> facetScratch; // one per thread
    std::vector<std::vector<DeferredSphere>> deferred;     // per thread: spheres finished last
    TimedSplit sweepSplit; // the threads' sweep ranges; seconds: each one's time up to the barrier
    // Per thread: a block's touching pairs, and before them each pair's first sphere's mark
    // (blockPairForces, Step.cpp).
    std::vector<std::vector<TouchingPair>> touchingScratch;
    // The room reserveSweepScratch (Step.cpp) gives facetScratch, deferred and touchingScratch.
    SweepRoom sweepRoom;
    // New pair records: each thread takes them from its block and claims the next block from
    // nextRecord. Blocks outlast the step; laying the records out again (rebuild, compaction)
    // empties them. touchingPairs: the touching pairs after the last step (unknown: SIZE_MAX).
    std::vector<RecordBlock> recordBlocks;
    std::atomic<size_t> nextRecord{0};
    size_t touchingPairs = SIZE_MAX;
    std::vector<std::vector<uint32_t>> pairScratch; // per thread: the rebuild's listings
    // The reordering's scratch when the memory lent to it is too small (the first rebuild, small
    // scenes): Particles::permute.
    PermuteScratch permuteScratch;
    // The threads' ranges of spheres in the pair listing, which follow their times as the sweep's
    // do: the two cores of the development VM often run at different speeds for minutes.
    TimedSplit listingSplit;
    // What a rebuild carries over: the touching sphere pairs (the only pairs with a tangential
    // history) with their records, and the obstacle contact candidates with theirs, both under the
    // spheres' old order, grid.order mapping new to old. The obstacle list is kept here so that
    // rebuilds reuse its memory; the pairs borrow theirs (CarriedHistory).
    CarriedHistory carried;
    std::vector<CarriedObstacleContact> carriedObstacles;
    // With rolling resistance: the candidates' moment histories (parallel to carriedObstacles),
    // and the pair moment histories that move against the layout's sweep (carryPairRecords).
    std::vector<std::pair<Vec3, double>> carriedObstacleMoments;
    std::vector<PairRolling> carriedRollingSide;
    std::vector<ObjectStep> objectSteps; // the motion of each object over a step
    std::string error;                   // why the last step failed
    PhaseTimes times;
};

// Rebuilds the Verlet list and obstacle candidates, carrying contact history over. Handles spheres
// outside the domain (error or removal). Returns false with ws.error set on failure.
bool rebuildNeighbours(Simulation& sim, Workspace& ws);

// Advances the simulation by one time step. Returns false with ws.error set when the state became
// non-finite or a sphere left the domain; the simulation is then not usable.
bool advance(Simulation& sim, Workspace& ws);

// Applies a stage's engines (gravity, damping, motions, forces, friction) at its start.
void beginStage(Simulation& sim);

} // namespace dem
