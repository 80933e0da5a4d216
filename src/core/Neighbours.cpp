// Neighbour search: Verlet list of sphere pairs and per-sphere obstacle candidates, rebuilt when
// the spheres' displacements could have used up the skin (Step.cpp, rebuildDue). Each rebuild
// puts the spheres in cell order first. Every list comes out in a fixed, sorted order, so the
// result does not depend on the number of threads.
#include "core/Parallel.hpp"
#include "core/Scratch.hpp"
#include "core/SweepSplit.hpp"
#include "core/Workspace.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>
#include <memory>
#include <omp.h>
#include <span>
#include <tuple>

namespace dem {

namespace {

double maxRadius(const Particles& p) {
    double r = 0;
    for (double x : p.radius)
        r = std::max(r, x);
    return r;
}

// The step's own check (advance) reports the same message and step number.
std::string nonFiniteError(const Simulation& sim, size_t p) {
    const Vec3& x = sim.particles.pos[p];
    return fmt::format("non-finite state at step {}: sphere {} (position {} {} {})", sim.step + 1,
                       sim.particles.id[p], x.x(), x.y(), x.z());
}

// The pairs of the spheres kept (indices into the old order, ascending), renumbered; the pair
// offsets, which the next sortSpheres reads, stay whole. The caller transposes them.
void dropPairsOf(SpherePairs& S, const std::vector<uint32_t>& keep, size_t sphereCount) {
    std::vector<int64_t> newIndex(sphereCount, -1);
    for (size_t k = 0; k < keep.size(); ++k)
        newIndex[keep[k]] = int64_t(k);
    std::vector<uint32_t> pairStart(keep.size() + 1, 0);
    size_t w = 0;
    S.forEachPair([&](size_t k, uint32_t i, uint32_t j) {
        const int64_t a = newIndex[i], b = newIndex[j];
        if (a < 0 || b < 0)
            return;
        S.j[w] = uint32_t(b);
        S.contact[w] = S.contact[k];
        ++pairStart[size_t(a) + 1];
        ++w;
    });
    S.j.resize(w);
    S.contact.resize(w);
    for (size_t p = 0; p < keep.size(); ++p)
        pairStart[p + 1] += pairStart[p];
    S.start = std::move(pairStart);
}

// The obstacle contacts of the spheres kept, in the same order.
void dropObstacleContactsOf(ObstacleContacts& O, const std::vector<uint32_t>& keep) {
    std::vector<uint32_t> start{0};
    size_t o = 0;
    for (uint32_t q : keep) {
        for (uint32_t e = O.start[q]; e < O.start[q + 1]; ++e, ++o) {
            O.target[o] = O.target[e];
            O.shear[o] = O.shear[e];
            O.touching[o] = O.touching[e];
            if (O.hasRolling()) {
                O.roll[o] = O.roll[e];
                O.twist[o] = O.twist[e];
            }
        }
        start.push_back(uint32_t(o));
    }
    O.resize(o, O.hasRolling());
    O.start = std::move(start);
}

// Spheres outside the domain box (or beyond what the grid can index) are removed or reported.
bool enforceDomain(Simulation& sim, Workspace& ws, double cellSize) {
    Particles& P = sim.particles;
    auto inDomain = [&](const Vec3& x) {
        return !sim.hasDomain || ((x.array() >= sim.domainMin.array()).all() &&
                                  (x.array() <= sim.domainMax.array()).all());
    };
    auto inside = [&](const Vec3& x) { return CellGrid::inRange(x, cellSize) && inDomain(x); };
    // Nearly always every sphere is inside: find that out in parallel, without allocating or
    // dividing. A sphere not surely inside (or not finite: NaN fails every comparison) is looked
    // at again below with the exact test.
    const double reach = CellGrid::safeReach(cellSize);
    auto surelyInside = [&](const Vec3& x) {
        return (x.array().abs() < reach).all() && inDomain(x);
    };
    const int64_t n = int64_t(P.size());
    const bool parallel = P.size() > parallelThreshold;
    int64_t firstOut = n;
#pragma omp parallel for schedule(static) reduction(min : firstOut) if (parallel)
    for (int64_t p = 0; p < n; ++p)
        if (!surelyInside(P.pos[p]))
            firstOut = std::min(firstOut, p);
    if (firstOut == n)
        return true;
    std::vector<uint32_t> keep;
    keep.reserve(P.size());
    for (size_t p = 0; p < P.size(); ++p) {
        const Vec3& x = P.pos[p];
        // A non-finite position is a failed state, not a sphere to remove or to report as having
        // left the domain; same message and step number as the check in advance().
        if (!isFinite(x)) {
            ws.error = nonFiniteError(sim, p);
            return false;
        }
        if (inside(x)) {
            keep.push_back(uint32_t(p));
        } else if (!inDomain(x)) {
            if (sim.outOfDomain == OutOfDomain::Error) {
                ws.error = fmt::format(
                    "sphere {} left the domain at step {} (position {:.6g} {:.6g} {:.6g})", P.id[p],
                    sim.step, x.x(), x.y(), x.z());
                return false;
            }
        } else {
            // Inside the domain or without one, but farther from the origin than the grid's
            // 2^20 cells reach: a sphere flung away or a blown-up run.
            ws.error = fmt::format(
                "sphere {} is too far from the origin at step {} (position {:.6g} {:.6g} {:.6g}; "
                "the neighbour grid reaches {:.3g} m along each axis, 2^20 cells of {:.3g} m)",
                P.id[p], sim.step, x.x(), x.y(), x.z(), CellGrid::safeReach(cellSize), cellSize);
            return false;
        }
    }
    if (keep.size() == P.size())
        return true;
    // Remove: compact spheres, drop their pairs (and the pairs' records) and renumber the others
    // (order is preserved). Before the first rebuild there are no lists to compact.
    const bool listed = sim.pairs.start.size() == P.size() + 1;
    if (listed)
        dropPairsOf(sim.pairs, keep, P.size());
    if (sim.obstacleContacts.start.size() == P.size() + 1)
        dropObstacleContactsOf(sim.obstacleContacts, keep);
    P.keep(keep);
    if (listed)
        transposePairs(sim.pairs, keep.size());
    sim.neighbours.refPos.clear();
    return true;
}

// The grid of a periodic cell: n[a] cells along axis a of the cell in reduced coordinates
// s = h^-1 (x - origin), each at least the grid's cell size thick (so that spheres within reach
// are in neighbouring cells) and at least three (so that the 27 neighbours of a cell, wrapped
// around, are distinct).
struct PeriodicGrid {
    Mat3 hInv;
    Vec3 origin;
    int64_t n[3];
    // Cell coordinates of x, clamped into the cell: a sphere just outside it after wrapping (by
    // round-off) counts as on its face.
    void coords(const Vec3& x, int64_t c[3]) const {
        const Vec3 s = hInv * (x - origin);
        for (int a = 0; a < 3; ++a) {
            const double q = s[a] * double(n[a]);
            const int64_t t = int64_t(q);
            c[a] = std::clamp<int64_t>(t - int64_t(q < double(t)), 0, n[a] - 1);
        }
    }
};

bool periodicGrid(const Simulation& sim, double cellSize, PeriodicGrid& g, std::string& error) {
    const Mat3& h = sim.cell.h;
    const Vec3 height = cellHeights(h), across = gridCellsAcross(h, cellSize);
    double cells = 1;
    for (int a = 0; a < 3; ++a) {
        const double fit = across[a];
        if (!(fit >= minGridCellsAcross)) {
            error = fmt::format(
                "the periodic cell is too thin along its axis {} at step {}: {:.6g} m across, "
                "less than 3 x (2 x largest radius + skin) = {:.6g} m (a sheared cell is not "
                "flipped: shear it less or use a larger cell)",
                "xyz"[a], sim.step, height[a], minGridCellsAcross * cellSize);
            return false;
        }
        g.n[a] = int64_t(std::min(fit, 1e6));
        cells *= double(g.n[a]);
    }
    // A dilute cell would have more cells than spheres: coarser cells are as correct.
    const double most = 8 * double(sim.particles.size()) + 64;
    if (cells > most) {
        const double f = std::cbrt(cells / most);
        for (int a = 0; a < 3; ++a)
            g.n[a] = std::max<int64_t>(3, int64_t(double(g.n[a]) / f));
    }
    // The grid numbers its cells and columns in 32 bits (cellOf, columnRank).
    if (double(g.n[0]) * double(g.n[1]) * double(g.n[2]) >= double(UINT32_MAX)) {
        error = fmt::format("the periodic cell's grid would have {} x {} x {} cells at step {}, "
                            "more than 2^32 - 1 can number",
                            g.n[0], g.n[1], g.n[2], sim.step);
        return false;
    }
    g.hInv = h.inverse();
    g.origin = sim.cell.origin;
    return true;
}

// Moves every sphere into the cell, x -= h k with k = floor(s): its velocity becomes that of the
// image it moves to under the mean flow (v -= L h k) and its initial position moves with it, so
// that displacements stay continuous.
bool wrapIntoCell(Simulation& sim, Workspace& ws) {
    Particles& P = sim.particles;
    const PeriodicCell& C = sim.cell;
    const Mat3 hInv = C.h.inverse(), lh = C.velGrad * C.h;
    const int64_t n = int64_t(P.size());
    int64_t firstBad = n;
#pragma omp parallel for schedule(static) reduction(min                                            \
                                                    : firstBad) if (P.size() > parallelThreshold)
    for (int64_t p = 0; p < n; ++p) {
        if (!isFinite(P.pos[p]) || !isFinite(P.vel[p])) {
            firstBad = std::min(firstBad, p);
            continue;
        }
        const Vec3 s = hInv * (P.pos[p] - C.origin);
        const Vec3 k(std::floor(s.x()), std::floor(s.y()), std::floor(s.z()));
        if (k.isZero())
            continue;
        P.pos[p] -= C.h * k;
        if (P.keepsStart)
            P.pos0[p] -= C.h * k;
        P.vel[p] -= lh * k;
    }
    if (firstBad < n) {
        ws.error = nonFiniteError(sim, size_t(firstBad));
        return false;
    }
    return true;
}

// The ranges of spheres of listPerSphere: range t lists [first[t], end[t]) and has got as far as
// next[t]. `count`: the first region's team.
struct ListingRanges {
    PerThread<size_t> first, next, end;
    size_t count = 0;
    explicit ListingRanges(size_t threads) : first(threads, 0), next(threads, 0), end(threads, 0) {}
    bool stopped(size_t t) const { return next[t] < end[t]; }
};

// Room in a listing buffer for the rest of its range, which stopped for want of it
// (listPerSphere): its items per sphere so far over the spheres left, and an eighth more; twice
// its room when it stopped at its first sphere (nothing to go by); and at least an eighth more
// than it had, as the sphere it stopped at may need more than the estimate.
template <class T> void growForRest(std::vector<T>& buffer, size_t listed, size_t left) {
    const size_t have = buffer.size(), room = buffer.capacity();
    const size_t guess = listed ? have + have * left / listed : 2 * room;
    buffer.reserve(std::max(guess + guess / 8, room + room / 8 + 64));
}

// Grows the buffers of the ranges that stopped, then lists them on from where they stopped in
// another region, until none stops. Each round grows a stopped buffer, so each ends.
template <class T, class ListRange>
void resumeStopped(ListingRanges& R, std::vector<std::vector<T>>& buffers, size_t threads,
                   ListRange&& listRange) {
    for (;;) {
        bool stopped = false;
        for (size_t t = 0; t < R.count; ++t)
            if (R.stopped(t)) {
                stopped = true;
                growForRest(buffers[t], R.next[t] - R.first[t], R.end[t] - R.next[t]);
            }
        if (!stopped)
            return;
#pragma omp parallel num_threads(int(threads))
        forEachRangeOfThisThread(R.count, [&](size_t t) {
            if (R.stopped(t))
                listRange(t);
        });
    }
}

// Lists items per sphere in parallel: the spheres are split into contiguous ranges, one per
// thread, each range's items are appended to its own buffer, and `start` becomes the CSR offsets.
// The buffers laid end to end (concatenate) are then the list in sphere order, for any thread
// count, also when the runtime gives the region fewer threads than asked for (the ranges follow
// the team; the buffers of threads it lacks stay empty). `expected`: about how many items there
// will be, which the buffers are given room for. `split`, when given, sets the ranges from the
// threads' times at its last use (splitSweep) and keeps this use's; otherwise they are equal.
// Each range makes its own emitter (makeEmit()), which appends sphere p's items by emit(p,
// buffer) for its spheres in increasing order and may keep what successive spheres share.
//
// No memory is asked for inside a region, where running out of it ends the process
// (app/OutOfMemory.cpp): emit(p, buffer) returns false, with the buffer as before, when the
// buffer lacks the room for p's items, and only then; that range stops at p, and resumeStopped
// grows its buffer and lists it on in further regions.
template <class T, class MakeEmit>
void listPerSphere(size_t n, size_t expected, std::vector<std::vector<T>>& buffers,
                   std::vector<uint32_t>& start, TimedSplit* split, MakeEmit&& makeEmit) {
    const size_t threads = n > parallelThreshold ? size_t(omp_get_max_threads()) : 1;
    const std::vector<size_t> none; // no bounds: equal ranges (splitRange)
    if (split) {
        splitSweep(split->bounds, split->seconds, n, threads);
        split->seconds.assign(threads, 0);
    }
    const std::vector<size_t>& bounds = split ? split->bounds : none;
    buffers.resize(std::max(buffers.size(), threads));
    for (size_t t = 0; t < buffers.size(); ++t) {
        size_t share = 0;
        if (t < threads) {
            const auto [a, b] = splitRange(bounds, n, t, threads);
            share = b - a;
        }
        clearWithRoom(buffers[t], n ? expected * share / n + 64 : 64);
    }
    start.assign(n + 1, 0);
    ListingRanges R(threads);
    // The ranges are the split's when the first team is whole, whichever thread lists them.
    bool timed = false;
    auto listRange = [&](size_t t) {
        // A vector of this thread's own while it appends: the threads' vectors side by side in
        // `buffers` share a cache line, which every append writes (the size), and passing it
        // back and forth between the cores made the listing as slow on two threads as on one.
        const double began = omp_get_wtime();
        std::vector<T> buf = std::move(buffers[t]);
        auto emit = makeEmit();
        size_t p = R.next[t];
        for (const size_t last = R.end[t]; p < last; ++p) {
            const size_t before = buf.size();
            if (!emit(p, buf))
                break;
            start[p + 1] = uint32_t(buf.size() - before);
        }
        R.next[t] = p;
        buffers[t] = std::move(buf);
        if (split && timed)
            split->seconds[t] += omp_get_wtime() - began;
    };
#pragma omp parallel num_threads(int(threads))
    {
        const size_t t = size_t(omp_get_thread_num()), team = size_t(omp_get_num_threads());
#pragma omp single
        {
            R.count = team;
            timed = team == threads;
        }
        std::tie(R.first[t], R.end[t]) = splitRange(bounds, n, t, team);
        R.next[t] = R.first[t];
        listRange(t);
    }
    resumeStopped(R, buffers, threads, listRange);
    for (size_t p = 0; p < n; ++p)
        start[p + 1] += start[p];
}

// Lays buffers[first..] end to end into `out` from out[offset] on.
template <class T>
void concatenate(const std::vector<std::vector<T>>& buffers, std::vector<T>& out, size_t first = 0,
                 size_t offset = 0) {
    auto at = out.begin() + ptrdiff_t(offset);
    for (size_t b = first; b < buffers.size(); ++b)
        at = std::copy(buffers[b].begin(), buffers[b].end(), at);
}

// listPerSphere into `out`, whose contents are not kept: the first thread appends straight into
// its memory, where its items stay, and the other threads' buffers are laid after them. One copy
// of the list fewer in memory than listing into buffers alone (all of it on one thread). The
// second thread appends into the memory of `lent`, whose contents are not kept either (its own
// buffer held 8 B per sphere at the peak on two threads, 105k falling ball). The threads' own
// buffers are set aside meanwhile.
template <class T, class MakeEmit>
void listPerSphereInto(size_t n, size_t expected, std::vector<std::vector<T>>& buffers,
                       std::vector<uint32_t>& start, std::vector<T>& out, std::vector<T>& lent,
                       TimedSplit* split, MakeEmit&& makeEmit) {
    const size_t borrowed = std::min<size_t>(2, size_t(omp_get_max_threads()));
    buffers.resize(std::max(buffers.size(), borrowed));
    std::vector<T> setAside[2];
    for (size_t b = 0; b < borrowed; ++b)
        setAside[b] = std::move(buffers[b]);
    buffers[0] = std::move(out);
    if (borrowed > 1)
        buffers[1] = std::move(lent);
    listPerSphere(n, expected, buffers, start, split, makeEmit);
    out = std::move(buffers[0]);
    const size_t head = out.size();
    if (out.capacity() < start[n])
        out.reserve(start[n] + start[n] / 8);
    out.resize(start[n]);
    concatenate(buffers, out, 1, head);
    if (borrowed > 1)
        lent = std::move(buffers[1]);
    for (size_t b = 0; b < borrowed; ++b)
        buffers[b] = std::move(setAside[b]);
}

// The transposed pair list is not read from here until buildSpherePairs lays it out again: its
// memory holds the carried pairs meanwhile (CarriedHistory), and before sortSpheres writes them,
// their offsets hold each sphere's grid cell and the pairs the grid's counting-sort scratch
// (vectors of their own stayed resident between rebuilds: 8 B per sphere for the cells at the
// peak, 11 for the pairs, 4 for the offsets, 4 for the scratch on two threads). buildSpherePairs
// hands both back.
void lendTransposeToCarried(SpherePairs& S, CarriedHistory& C) {
    C.start = std::move(S.jStart);
    C.pairs = std::move(S.jPairs);
    freeMemory(S.jStart);
    freeMemory(S.jPairs);
}

// Puts the spheres in cell order (the grid's `order`), so that neighbours are near each other in
// memory and the spheres of a row of cells form one index range. The touching pairs (the only
// pairs with a tangential history, Contacts.hpp) and their records are listed in ws.carried first,
// CSR by the pair's first sphere in the order before (buildSpherePairs finds each pair there),
// in the transposed list's memory (lendTransposeToCarried). Each thread takes a range of spheres,
// counts the touching pairs among theirs, then writes them after the earlier threads'; both
// passes run straight through the pairs, not sphere by sphere (whose few pairs each, a varying
// number, cost a mispredicted loop exit per sphere). The list's contact array, which
// buildSpherePairs overwrites, holds where each pair's carried entry goes meanwhile.
void sortSpheres(Simulation& sim, Workspace& ws) {
    Particles& P = sim.particles;
    const size_t n = P.size();
    SpherePairs& S = sim.pairs;
    CarriedHistory& C = ws.carried;
    if (S.size() > 0 && S.start.size() == n + 1) {
        resizeForOverwrite(C.start, n + 1);
        const uint32_t *start = S.start.data(), *second = S.j.data();
        uint32_t* contact = S.contact.data();
        C.start[n] = uint32_t(listByRanges(
            n,
            [&](size_t a, size_t b) {
                size_t count = 0;
                for (uint32_t k = start[a]; k < start[b]; ++k)
                    count += contact[k] != 0;
                return 2 * count;
            },
            [&](size_t total) { resizeForOverwrite(C.pairs, total); },
            [&](size_t a, size_t b, size_t begin, size_t end) {
                // Written unconditionally, kept conditionally (no branch to mispredict); a pair
                // not kept after the thread's last kept one would write on the next thread's
                // first entry, so past its own entries it writes to `spill`. contact[k] becomes
                // where pair k's entry goes, read back below at each sphere's first pair for its
                // offset.
                uint32_t* carried = C.pairs.data();
                uint32_t spill[2];
                const uint32_t k1 = start[b];
                uint32_t w = uint32_t(begin);
                for (uint32_t k = start[a]; k < k1; ++k) {
                    const uint32_t r = contact[k];
                    uint32_t* to = w < end ? carried + w : spill;
                    to[0] = second[k];
                    to[1] = r;
                    contact[k] = w;
                    w += r != 0 ? 2 : 0;
                }
                for (size_t q = a; q < b; ++q)
                    C.start[q] = start[q] < k1 ? contact[start[q]] : w;
            }));
    } else {
        C.start.assign(n + 1, 0);
        C.pairs.clear();
    }
    // The positions at the last rebuild are not read again before rebuildNeighbours sets them
    // afresh: their memory (12 B per sphere) holds the reordering's scratch.
    P.permute(ws.grid.order, ws.permuteScratch,
              std::as_writable_bytes(std::span(sim.neighbours.refPos.packed)));
}

// Marks each listed pair that was touching with its record (recordFlipped set when the old order
// of its spheres is the reverse of the new), 0 for the others. A touching pair is carried under its
// lower sphere in the old order (C, CSR) and is found in the new list under its lower sphere in the
// new order: the work follows the touching pairs, not the listed ones, which outnumber them (five
// to one on the 105k falling ball). The new index of each old one goes in `lent` (unused memory)
// when it holds them, else in scratch of its own. Threads by `bounds`, the listing's ranges: each
// pair is marked once, by the thread of its old lower sphere's new index.
void markCarriedPairs(SpherePairs& S, const CarriedHistory& C,
                      const std::vector<uint32_t>& newToOld, const std::vector<size_t>& bounds,
                      std::span<std::byte> lent) {
    const size_t n = newToOld.size();
    std::vector<std::byte> own;
    uint32_t* oldToNew = reinterpret_cast<uint32_t*>(lentOrOwn(lent, n * sizeof(uint32_t), own));
    const uint32_t *start = S.start.data(), *second = S.j.data();
    uint32_t* contact = S.contact.data();
    const size_t pairs = S.size();
#pragma omp parallel if (n > parallelThreshold)
    {
        const size_t t = size_t(omp_get_thread_num()), T = size_t(omp_get_num_threads());
#pragma omp for schedule(static) nowait
        for (size_t k = 0; k < pairs; ++k)
            contact[k] = 0;
#pragma omp for schedule(static)
        for (size_t i = 0; i < n; ++i) // created in the lent memory, as Particles::permute does
            std::construct_at(oldToNew + newToOld[i], uint32_t(i));
        const auto [first, last] = splitRange(bounds, n, t, T);
        for (size_t i = first; i < last; ++i) {
            const uint32_t a = newToOld[i];
            for (uint32_t o = C.start[a]; o < C.start[a + 1]; o += 2) {
                const uint32_t j = oldToNew[C.pairs[o]];
                const uint32_t lo = std::min(uint32_t(i), j), hi = std::max(uint32_t(i), j);
                uint32_t k = start[lo];
                while (k < start[lo + 1] && second[k] < hi)
                    ++k;
                if (k < start[lo + 1] && second[k] == hi)
                    contact[k] = C.pairs[o + 1] | (i > j ? recordFlipped : 0);
            }
        }
    }
}

// The Verlet list, sorted by (i, j). With the spheres in cell order, the cells after sphere i's
// own (in the order x, y, z, z fastest) among its 27 neighbours are five rows of up to three cells,
// each an index range: the rest of its own cell and the next along z; the row at y + 1; the three
// rows at x + 1. Scanning them in that order visits j > i in increasing order: no sort, no test of
// the pairs already seen from the other side. The spheres of one cell (about two in a dense
// packing) have the same rows: each thread finds them once per cell (a fifth of the listing's time
// when found for every sphere, 105k falling ball).
void buildSpherePairs(Simulation& sim, Workspace& ws, double skin, const PeriodicGrid* periodic) {
    const Particles& P = sim.particles;
    const size_t n = P.size();
    const CellGrid& G = ws.grid;
    const CarriedHistory& old = ws.carried;

    auto makeCollect = [&] {
        return [&, cellEnd = size_t(0), begin = std::array<uint32_t, 5>{},
                end = std::array<uint32_t, 5>{}](size_t i, std::vector<uint32_t>& out) mutable {
            const Vec3 x = P.pos[i];
            const double reach = P.radius[i] + skin;
            if (i >= cellEnd) { // the first of its cell's spheres this thread lists
                int64_t c[3];
                G.coords(x, c);
                uint32_t ownBegin, ownEnd;
                G.row(c[0], c[1], c[2], c[2], ownBegin, ownEnd);
                cellEnd = ownEnd;
                G.row(c[0], c[1], c[2], c[2] + 1, begin[0], end[0]);
                G.row(c[0], c[1] + 1, c[2] - 1, c[2] + 1, begin[1], end[1]);
                for (int dy = -1; dy <= 1; ++dy)
                    G.row(c[0] + 1, c[1] + dy, c[2] - 1, c[2] + 1, begin[3 + dy], end[3 + dy]);
            }
            begin[0] = uint32_t(i + 1);
            size_t candidates = 0;
            for (int r = 0; r < 5; ++r)
                candidates += end[r] > begin[r] ? end[r] - begin[r] : 0;
            // Written unconditionally, kept conditionally: no branch to mispredict per candidate.
            // The bounds and arrays are read into locals first: a store through `o` might otherwise
            // change them, as far as the compiler knows, and it reloaded them for every candidate.
            size_t w = out.size();
            if (out.capacity() < w + candidates)
                return false;
            out.resize(w + candidates);
            uint32_t* o = out.data();
            const Vec3* pos = P.pos.data();
            const double* radius = P.radius.data();
            for (int r = 0; r < 5; ++r) {
                const uint32_t first = begin[r], last = end[r];
                for (uint32_t j = first; j < last; ++j) {
                    const double cut = reach + radius[j];
                    o[w] = j;
                    w += (pos[j] - x).squaredNorm() < cut * cut;
                }
            }
            out.resize(w);
            return true;
        };
    };

    // In a periodic cell: the 27 cells around sphere i's, wrapped around (distinct, as the grid
    // has at least three cells per axis), each pair at its nearest image; the cells no longer
    // come in index order, so each sphere's list is sorted.
    const CellImages images(sim.cell);
    auto collectPeriodic = [&](size_t i, std::vector<uint32_t>& out) {
        const Vec3 x = P.pos[i];
        const double reach = P.radius[i] + skin;
        int64_t c[3];
        periodic->coords(x, c);
        const size_t first = out.size();
        auto wrap = [](int64_t v, int64_t m) { return v < 0 ? v + m : v >= m ? v - m : v; };
        for (int dx = -1; dx <= 1; ++dx)
            for (int dy = -1; dy <= 1; ++dy)
                for (int dz = -1; dz <= 1; ++dz) {
                    const int64_t g =
                        G.find(wrap(c[0] + dx, G.nx), wrap(c[1] + dy, G.ny), wrap(c[2] + dz, G.nz));
                    if (out.capacity() - out.size() < G.cellStart[g + 1] - G.cellStart[g]) {
                        out.resize(first);
                        return false;
                    }
                    for (uint32_t j = G.cellStart[g]; j < G.cellStart[g + 1]; ++j) {
                        if (j <= i)
                            continue;
                        const Vec3 d = P.pos[j] - x;
                        const Vec3 e = d - images.shift[imageCode(nearestImage(images, d))];
                        const double cut = reach + P.radius[j];
                        if (e.squaredNorm() < cut * cut)
                            out.push_back(j);
                    }
                }
        std::sort(out.begin() + first, out.end());
        return true;
    };

    // The old list is no longer read (sortSpheres carried what it needed): the new one is written
    // over it, and the second thread lists into the memory of its contacts.
    SpherePairs& S = sim.pairs;
    std::vector<uint32_t>& start = S.start;
    const size_t expected = S.size(); // the list changes little between rebuilds
    if (periodic)
        listPerSphereInto(n, expected, ws.pairScratch, start, S.j, S.contact, &ws.listingSplit,
                          [&] { return collectPeriodic; });
    else
        listPerSphereInto(n, expected, ws.pairScratch, start, S.j, S.contact, &ws.listingSplit,
                          makeCollect);
    // contact is rewritten below: when the list outgrows its memory, it is freed first rather than
    // copied, so that the peak memory does not briefly hold both, with room to grow.
    if (S.contact.capacity() < start[n]) {
        freeMemory(S.contact);
        S.contact.reserve(start[n] + start[n] / 8);
    }
    S.contact.resize(start[n]);
    markCarriedPairs(S, old, ws.grid.order, ws.listingSplit.bounds,
                     std::as_writable_bytes(std::span(sim.neighbours.refPos.packed)));
    // The marked pairs take records in pair order. Scratch: the carried pairs, read by now, and
    // the memory of the positions at the last rebuild, which rebuildNeighbours sets afresh at its
    // end (it holds half as many Vec3 as there are spheres, and grows when more histories move
    // against the layout's sweep). The carried pairs' memory then goes back to the transpose
    // (lendTransposeToCarried), which rebuildNeighbours lays out last.
    const size_t threads = n > parallelThreshold ? size_t(omp_get_max_threads()) : 1;
    carryPairRecords(S, sim.trackEnergy, recordRoom(S, threads, pairRecordBlock), ws.carried.pairs,
                     sim.neighbours.refPos.packed, ws.carriedRollingSide);
    S.jPairs = std::move(ws.carried.pairs);
    freeMemory(ws.carried.pairs);
    S.jStart = std::move(ws.carried.start);
    freeMemory(ws.carried.start);
    S.image.clear();
    if (periodic) {
        S.image.resize(S.size());
#pragma omp parallel for schedule(static) if (n > parallelThreshold)
        for (size_t i = 0; i < n; ++i)
            for (uint32_t k = S.start[i]; k < S.start[i + 1]; ++k)
                S.image[k] = imageCode(nearestImage(images, P.pos[S.j[k]] - P.pos[i]));
    }
}

// Scenes with at most this many facets test each sphere against all of them (binFacets).
constexpr size_t maxUnbinnedFacets = 16;

bool sameFacets(const std::vector<Facet>& a, const std::vector<Facet>& b) {
    if (a.size() != b.size())
        return false;
    for (size_t f = 0; f < a.size(); ++f)
        if (a[f].v[0] != b[f].v[0] || a[f].v[1] != b[f].v[1] || a[f].v[2] != b[f].v[2])
            return false;
    return true;
}

// Whether facetCells entry e is the first of its cell (the entries are sorted by cell key).
bool firstOfCell(const Workspace& ws, size_t e) {
    return e == 0 || ws.facetCells[e].first != ws.facetCells[e - 1].first;
}

void binFacets(const Simulation& sim, Workspace& ws, double reach) {
    const double cs = ws.grid.cellSize;
    if (cs == ws.binnedCellSize && reach == ws.binnedReach &&
        sameFacets(sim.obstacles.facets, ws.binnedFacets))
        return;
    ws.binnedCellSize = cs;
    ws.binnedReach = reach;
    ws.binnedFacets = sim.obstacles.facets;
    ws.facetCells.clear();
    ws.unbinnedFacets.clear();
    // A sphere centre within `reach` of a facet lies in a cell whose centre is within
    // halfDiag + reach of it (the distance to a set changes no faster than the point moves); the
    // margin covers rounding.
    const double halfDiag = 0.5 * std::sqrt(3.0) * cs;
    const double near = halfDiag + reach + 1e-9 * cs;
    const auto& facets = sim.obstacles.facets;
    // A few facets (a box of 12) are not binned: a box's faces reach about three layers of cells
    // each (0.4 entries per sphere and 9 B per sphere with their index, 105k falling ball), while
    // the spheres near a few facets are found by rows of cells (markNearFacets).
    const bool few = facets.size() <= maxUnbinnedFacets;
    // The unbinned facets' boxes get the same margin for rounding as the cells.
    auto unbinned = [&](size_t f, const Vec3& lo, const Vec3& hi) {
        ws.unbinnedFacets.push_back({uint32_t(f), lo.array() - 1e-9 * cs, hi.array() + 1e-9 * cs});
    };
    for (size_t f = 0; f < facets.size(); ++f) {
        const Facet& F = facets[f];
        Vec3 lo = F.v[0].cwiseMin(F.v[1]).cwiseMin(F.v[2]).array() - reach;
        Vec3 hi = F.v[0].cwiseMax(F.v[1]).cwiseMax(F.v[2]).array() + reach;
        if (few || !CellGrid::inRange(lo, cs) || !CellGrid::inRange(hi, cs)) {
            unbinned(f, lo, hi);
            continue;
        }
        int64_t c0[3], c1[3];
        double cells = 1;
        for (int a = 0; a < 3; ++a) {
            c0[a] = int64_t(std::floor(lo[a] / cs));
            c1[a] = int64_t(std::floor(hi[a] / cs));
            cells *= double(c1[a] - c0[a] + 1);
        }
        if (cells > 4e6) { // a facet much larger than the spheres: test it against every sphere
            unbinned(f, lo, hi);
            continue;
        }
        for (int64_t x = c0[0]; x <= c1[0]; ++x)
            for (int64_t y = c0[1]; y <= c1[1]; ++y)
                for (int64_t z = c0[2]; z <= c1[2]; ++z) {
                    const Vec3 centre((x + 0.5) * cs, (y + 0.5) * cs, (z + 0.5) * cs);
                    // The plane first (cheap), then the triangle: a triangle's bounding box
                    // also covers cells far from it, such as the other half of a box's face.
                    if (std::abs((centre - F.v[0]).dot(F.normal)) > near ||
                        pointTriangleDistance(F, centre) > near)
                        continue;
                    ws.facetCells.emplace_back(CellGrid::pack(x, y, z), uint32_t(f));
                }
    }
    std::sort(ws.facetCells.begin(), ws.facetCells.end());
    // Index of the first entry of each cell key, sized for the distinct keys (a cell near an
    // edge holds several facets).
    size_t keys = 0;
    for (size_t e = 0; e < ws.facetCells.size(); ++e)
        keys += firstOfCell(ws, e);
    ws.facetCellIndex.reset(keys);
    for (size_t e = 0; e < ws.facetCells.size(); ++e)
        if (firstOfCell(ws, e))
            ws.facetCellIndex.insert(ws.facetCells[e].first, uint32_t(e));
}

// First facetCells entry of a cell key, or facetCells.size() when the cell has none.
size_t firstFacetEntry(const Workspace& ws, uint64_t key) {
    const int64_t e =
        ws.facetCellIndex.find(key, [&ws](uint32_t entry) { return ws.facetCells[entry].first; });
    return e < 0 ? ws.facetCells.size() : size_t(e);
}

// Marks the spheres that facets may be near (ws.nearFacets), so that the others skip the facet
// tests: in a box of facets most spheres are far from every wall. A sphere is marked when its cell
// holds binned facets, or lies in the bounding box of an unbinned one (the cells of a column in
// that box are a row of spheres). Needs the spheres in the grid's cell order and the facets
// binned with the grid's cell size. Left empty (every sphere tests the facets) when the grid is
// hashed or an unbinned facet reaches beyond the grid's coordinates.
void markNearFacets(Workspace& ws, size_t n) {
    const CellGrid& G = ws.grid;
    bool rows = G.dense;
    for (const UnbinnedFacet& u : ws.unbinnedFacets)
        rows = rows && CellGrid::inRange(u.lo, G.cellSize) && CellGrid::inRange(u.hi, G.cellSize);
    if (!rows || (ws.facetCells.empty() && ws.unbinnedFacets.empty())) {
        freeMemory(ws.nearFacets);
        return;
    }
    ws.nearFacets.assign(n, 0);
    auto mark = [&ws](uint32_t begin, uint32_t end) {
        std::fill(ws.nearFacets.begin() + begin, ws.nearFacets.begin() + end, uint8_t(1));
    };
    for (size_t e = 0; e < ws.facetCells.size(); ++e) {
        if (!firstOfCell(ws, e))
            continue;
        int64_t xyz[3];
        CellGrid::unpack(ws.facetCells[e].first, xyz);
        const int64_t c = G.find(xyz[0], xyz[1], xyz[2]);
        if (c >= 0)
            mark(G.cellStart[size_t(c)], G.cellStart[size_t(c) + 1]);
    }
    for (const UnbinnedFacet& u : ws.unbinnedFacets) {
        int64_t c0[3], c1[3];
        G.coords(u.lo, c0);
        G.coords(u.hi, c1);
        // Only the grid's columns: a facet may extend far beyond the spheres.
        const int64_t x0 = std::max(c0[0], G.lo[0]), x1 = std::min(c1[0], G.lo[0] + G.nx - 1);
        const int64_t y0 = std::max(c0[1], G.lo[1]), y1 = std::min(c1[1], G.lo[1] + G.ny - 1);
        for (int64_t x = x0; x <= x1; ++x)
            for (int64_t y = y0; y <= y1; ++y) {
                uint32_t begin, end;
                G.row(x, y, c0[2], c1[2], begin, end);
                mark(begin, end);
            }
    }
}

uint32_t encode(ObstacleKind k, size_t index) {
    return (uint32_t(k) << ObstacleContacts::kindShift) | uint32_t(index);
}

void buildObstacleCandidates(Simulation& sim, Workspace& ws, double skin) {
    const Particles& P = sim.particles;
    const Obstacles& B = sim.obstacles;
    const size_t n = P.size();
    ObstacleContacts& O = sim.obstacleContacts;
    // The candidates' histories, by sphere, so that the lists can be rebuilt in place (a second
    // set of lists would hold 4 B per sphere in its offsets alone).
    std::vector<CarriedObstacleContact>& old = ws.carriedObstacles;
    std::vector<std::pair<Vec3, double>>& oldMoments = ws.carriedObstacleMoments;
    old.clear();
    oldMoments.clear();
    if (O.start.size() == n + 1)
        for (size_t q = 0; q < n; ++q)
            for (uint32_t e = O.start[q]; e < O.start[q + 1]; ++e) {
                old.push_back({uint32_t(q), O.target[e], O.shear[e], O.touching[e]});
                if (O.hasRolling())
                    oldMoments.emplace_back(O.roll[e], O.twist[e]);
            }
    const bool rolling = sim.pairTable.resistsRolling();
    if (!rolling)
        freeMemory(oldMoments);
    const std::vector<uint32_t>& newToOld = ws.grid.order;

    auto forCandidates = [&](size_t p, auto&& visit) {
        const Vec3& x = P.pos[p];
        const double reach = P.radius[p] + skin;
        for (size_t w = 0; w < B.walls.size(); ++w)
            if ((x - B.walls[w].point).dot(B.walls[w].normal) < reach)
                visit(encode(ObstacleKind::Wall, w));
        if (!B.facets.empty()) {
            // Facets of this sphere's cell, then the unbinned ones; sorted by facet index.
            if (ws.nearFacets.empty() || ws.nearFacets[p]) {
                if (!ws.facetCells.empty()) {
                    const uint64_t key = ws.grid.keyOf(x);
                    for (size_t e = firstFacetEntry(ws, key);
                         e < ws.facetCells.size() && ws.facetCells[e].first == key; ++e)
                        if (pointTriangleDistance(B.facets[ws.facetCells[e].second], x) < reach)
                            visit(encode(ObstacleKind::Facet, ws.facetCells[e].second));
                }
                for (const UnbinnedFacet& u : ws.unbinnedFacets)
                    if (u.boxHolds(x) && pointTriangleDistance(B.facets[u.facet], x) < reach)
                        visit(encode(ObstacleKind::Facet, u.facet));
            }
        }
        for (size_t b = 0; b < B.boxes.size(); ++b)
            if (sphereBox(B.boxes[b], x, P.radius[p]).overlap > -skin)
                visit(encode(ObstacleKind::Box, b));
    };

    // One pass, as for the sphere pairs, then each sphere's candidates are sorted and take over
    // the history of the same obstacle in the old list.
    auto emit = [&](size_t p, std::vector<uint32_t>& out) {
        const size_t first = out.size();
        bool room = true;
        forCandidates(p, [&](uint32_t target) { // visits them all, listed or not
            room = room && out.size() < out.capacity();
            if (room)
                out.push_back(target);
        });
        if (!room)
            out.resize(first);
        return room;
    };
    listPerSphere(n, old.size(), ws.pairScratch, O.start, nullptr, [&] { return emit; });
    O.resize(O.start[n], rolling);
    concatenate(ws.pairScratch, O.target);
#pragma omp parallel for schedule(dynamic, 256) if (n > parallelThreshold)
    for (size_t p = 0; p < n; ++p) {
        if (O.start[p] == O.start[p + 1])
            continue;
        std::sort(O.target.begin() + O.start[p], O.target.begin() + O.start[p + 1]);
        const uint32_t q = newToOld[p]; // the old lists are by the order before sorting
        const auto first = std::lower_bound(
            old.begin(), old.end(), q,
            [](const CarriedObstacleContact& c, uint32_t s) { return c.sphere < s; });
        for (uint32_t e = O.start[p]; e < O.start[p + 1]; ++e) {
            O.shear[e] = O.force[e] = O.torque[e] = O.point[e] = Vec3::Zero();
            O.touching[e] = 0;
            O.dissipated[e] = O.elastic[e] = 0;
            if (rolling) {
                O.roll[e] = O.couple[e] = Vec3::Zero();
                O.twist[e] = 0;
            }
            for (auto c = first; c != old.end() && c->sphere == q; ++c) {
                if (c->target == O.target[e]) {
                    O.shear[e] = c->shear;
                    O.touching[e] = c->touching;
                    if (rolling && !oldMoments.empty()) {
                        O.roll[e] = oldMoments[size_t(c - old.begin())].first;
                        O.twist[e] = oldMoments[size_t(c - old.begin())].second;
                    }
                    break;
                }
            }
        }
    }
}

} // namespace

bool rebuildNeighbours(Simulation& sim, Workspace& ws) {
    Particles& P = sim.particles;
    const double rmax = maxRadius(P);
    double skin = sim.neighbours.skin;
    if (skin <= 0) {
        double rmin = rmax;
        for (double r : P.radius)
            rmin = std::min(rmin, r);
        skin = sim.neighbours.skin = rmin > 0 ? 0.5 * rmin : 1e-3;
    }
    const double cellSize = std::max(2 * rmax + skin, 1e-12);
    PeriodicGrid cell;
    if (sim.cell.enabled) {
        if (!wrapIntoCell(sim, ws) || !periodicGrid(sim, cellSize, cell, ws.error))
            return false;
    } else if (!enforceDomain(sim, ws, cellSize)) {
        return false;
    }
    lendTransposeToCarried(sim.pairs, ws.carried);
    std::vector<uint32_t>& cellOf = ws.carried.start;
    std::vector<uint32_t>& countScratch = ws.carried.pairs;
    if (sim.cell.enabled) {
        // The grid indexes cells of the periodic cell, over all of it so that its rows wrap
        // around.
        ws.grid.layOutPeriodic(cell.n);
        resizeForOverwrite(cellOf, P.size());
#pragma omp parallel for schedule(static) if (P.size() > parallelThreshold)
        for (size_t p = 0; p < P.size(); ++p) {
            int64_t c[3];
            cell.coords(P.pos[p], c);
            cellOf[p] = uint32_t(ws.grid.find(c[0], c[1], c[2]));
        }
        ws.grid.sortPoints(cellOf, countScratch);
    } else {
        ws.grid.build(P.pos, cellSize, cellOf, countScratch);
    }
    sortSpheres(sim, ws);
    buildSpherePairs(sim, ws, skin, sim.cell.enabled ? &cell : nullptr);
    // The records were laid out afresh: the threads' blocks of them are gone.
    ws.recordBlocks.assign(ws.recordBlocks.size(), RecordBlock{});
    ws.touchingPairs = sim.pairs.records.size() - 1;
    binFacets(sim, ws, rmax + skin);
    markNearFacets(ws, P.size());
    buildObstacleCandidates(sim, ws, skin);
    // The pairs by second sphere, last: the grid is no longer read, and its order (the memory
    // of one index per sphere, and an eighth more: Scratch.hpp) serves as the counting sort's
    // scratch on two threads.
    transposePairs(sim.pairs, P.size(), ws.grid.order);
    sim.neighbours.refPos.assign(P.pos);
    sim.neighbours.cellSize = cellSize;
    sim.cell.hAtRebuild = sim.cell.h;
    sim.neighbours.needRebuild = false;
    ++sim.neighbours.rebuilds;
    for (RigidObject& o : sim.obstacles.objects)
        o.travel = 0;
    return true;
}

} // namespace dem
