#include "core/Contacts.hpp"
#include "core/CountingSort.hpp"
#include "core/GatherInPlace.hpp"
#include "core/Parallel.hpp"
#include "core/Scratch.hpp"

#include <algorithm>

namespace dem {

PairContact PairContact::none() {
    PairContact r;
    r.force = Vec3::Constant(-0.0);
    r.nxf = Vec3::Zero();
    r.halfOverlap = 0;
    r.shear = Vec3::Zero();
    return r;
}

PairRolling PairRolling::none() {
    PairRolling r;
    r.roll = r.couple = Vec3::Zero();
    r.twist = 0;
    return r;
}

size_t SpherePairs::touchingCount() const {
    size_t c = 0;
    for (uint32_t r : contact)
        c += r != 0;
    return c;
}

std::vector<uint32_t> pairOwners(const SpherePairs& S) {
    std::vector<uint32_t> owner(S.size());
    S.forEachPair([&](size_t k, uint32_t i, uint32_t) { owner[k] = i; });
    return owner;
}

void transposePairs(SpherePairs& S, size_t sphereCount, std::vector<uint32_t>& scratch) {
    countingSort(
        S.size(), sphereCount, [&](size_t k) { return S.j[k]; }, S.jStart, S.jPairs, scratch);
}

void transposePairs(SpherePairs& S, size_t sphereCount) {
    std::vector<uint32_t> scratch;
    transposePairs(S, sphereCount, scratch);
}

size_t numberTouchingPairs(SpherePairs& S, std::vector<uint32_t>& source) {
    uint32_t* contact = S.contact.data();
    return listByRanges(
        S.size(),
        [&](size_t a, size_t b) {
            size_t count = 0;
            for (size_t k = a; k < b; ++k)
                count += contact[k] != 0;
            return count;
        },
        [&](size_t total) {
            resizeForOverwrite(source, 1 + total);
            source[0] = 0;
        },
        [&](size_t a, size_t b, size_t begin, size_t end) {
            // Written unconditionally, kept conditionally (whether a listed pair touches follows no
            // pattern: a branch on it is often mispredicted); past its own entries a range writes
            // to `spill`.
            uint32_t spill;
            uint32_t* to = source.data();
            uint32_t r = uint32_t(1 + begin);
            for (size_t k = a; k < b; ++k) {
                const uint32_t c = contact[k];
                *(r <= end ? to + r : &spill) = c;
                contact[k] = c != 0 ? r : 0;
                r += c != 0;
            }
        });
}

size_t recordRoom(const SpherePairs& S, size_t threads, size_t block) {
    return S.size() + S.size() / 4 + threads * block;
}

namespace {

// Keeps `items` [0, count] with the capacity of the records, item 0 being `zero`.
template <class T> void keepParallel(std::vector<T>& items, const SpherePairs& S, const T& zero) {
    const size_t count = S.records.size() - 1;
    items.resize(std::min(items.size(), 1 + count));
    if (items.capacity() < S.records.capacity()) {
        if (items.empty()) // nothing to copy: the old memory goes before the new comes
            freeMemory(items);
        items.reserve(S.records.capacity());
    }
    items.resize(1 + count);
    items[0] = zero;
}

// Keeps records [0, count] (and as many energies when `energy`, else none; as many moment
// histories when it had them), record 0 being PairContact::none(), with memory reserved for `room`
// more. An eighth more than needed, as the list grows a little at most rebuilds: new memory for
// the records at each of them would be written (made resident) afresh every time.
void keepRecords(SpherePairs& S, size_t count, bool energy, size_t room) {
    const size_t need = 1 + count + room;
    S.records.resize(std::min(S.records.size(), 1 + count)); // growing copies only these
    if (S.records.capacity() < need)
        S.records.reserve(need + need / 8);
    S.records.resize(1 + count);
    S.records[0] = PairContact::none();
    if (!S.rolling.empty())
        keepParallel(S.rolling, S, PairRolling::none());
    if (!energy) {
        freeMemory(S.energies);
        return;
    }
    keepParallel(S.energies, S, PairEnergy(0, 0));
}

} // namespace

void compactPairRecords(SpherePairs& S, size_t room, std::vector<uint32_t>& renumber) {
    const bool energy = S.hasEnergy(), rolling = S.hasRolling();
    const size_t m = S.size(), records = S.records.size();
    const bool parallel = m > parallelThreshold;
    // renumber[r]: 1 while record r is a touching pair's, then its place once the others are
    // dropped. The records keep their order, so each moves down or stays: one upward pass moves
    // them in place, reading each before anything overwrites it, with no other scratch. (Numbering
    // them in pair order instead made some move up, past the ones that formed after them, and kept
    // those aside: that copy, in fresh memory at every compaction, was most of its time.)
    renumber.assign(records, 0);
#pragma omp parallel for schedule(static) if (parallel)
    for (size_t k = 0; k < m; ++k)
        if (S.contact[k] != 0)
            renumber[S.contact[k]] = 1; // each touching pair has a record of its own
    uint32_t count = 0;
    for (size_t r = 1; r < records; ++r) {
        if (!renumber[r])
            continue;
        renumber[r] = ++count;
        if (count == r)
            continue;
        S.records[count] = S.records[r];
        if (energy)
            S.energies[count] = S.energies[r];
        if (rolling)
            S.rolling[count] = S.rolling[r];
    }
#pragma omp parallel for schedule(static) if (parallel)
    for (size_t k = 0; k < m; ++k)
        S.contact[k] = renumber[S.contact[k]];
    keepRecords(S, count, energy, room);
}

namespace {

// The moment histories of the carried pairs (carryPairRecords), `from` and `flipped` as there.
template <class From, class Flipped>
void carryRollingRecords(SpherePairs& S, size_t count, From&& from, Flipped&& flipped,
                         std::vector<PairRolling>& side) {
    auto carried = [&](size_t r, const PairRolling& old) {
        PairRolling c = PairRolling::none();
        c.roll = flipped(r) ? Vec3(-old.roll) : old.roll;
        c.twist = old.twist;
        return c;
    };
    // Parallel to the records, which outnumber the carried pairs (each had one).
    gatherInPlace(
        S.rolling, count, from, [](const PairRolling& c) { return c; }, side, carried);
}

} // namespace

void carryPairRecords(SpherePairs& S, bool energy, size_t room, std::vector<uint32_t>& source,
                      std::vector<Vec3>& side, std::vector<PairRolling>& rollingSide) {
    const bool rolling = S.hasRolling();
    const size_t count = numberTouchingPairs(S, source);
    auto from = [&](size_t r) { return size_t(source[r] & ~recordFlipped); };
    auto history = [](const PairContact& c) { return c.shear; };
    auto carried = [&](size_t r, const Vec3& shear) {
        PairContact c = PairContact::none();
        c.shear = source[r] & recordFlipped ? Vec3(-shear) : shear;
        return c;
    };
    S.energies.clear(); // all zero after: nothing to keep
    if (rolling)
        carryRollingRecords(
            S, count, from, [&](size_t r) { return (source[r] & recordFlipped) != 0; },
            rollingSide);
    const size_t need = 1 + count + room;
    if (S.records.capacity() < need) {
        // Growing would copy the records into new memory, both resident for a moment: only the
        // histories are kept through it.
        std::vector<Vec3> shear(1 + count);
        for (size_t r = 1; r <= count; ++r)
            shear[r] = history(S.records[from(r)]);
        freeMemory(S.records);
        S.records.reserve(need + need / 8);
        S.records.resize(1 + count);
        for (size_t r = 1; r <= count; ++r)
            S.records[r] = carried(r, shear[r]);
    } else {
        gatherInPlace(S.records, count, from, history, side, carried);
    }
    keepRecords(S, count, energy, room);
    std::fill(S.energies.begin(), S.energies.end(), PairEnergy(0, 0));
}

void allotRecords(SpherePairs& S, const std::vector<uint8_t>& touching, bool energy, bool rolling) {
    S.contact.assign(S.size(), 0);
    for (size_t k = 0; k < S.size() && k < touching.size(); ++k)
        S.contact[k] = touching[k] ? 1 : 0;
    std::vector<uint32_t> source;
    const size_t count = numberTouchingPairs(S, source);
    S.records.assign(1 + count, PairContact::none());
    S.energies.clear();
    if (energy)
        S.energies.assign(1 + count, PairEnergy(0, 0));
    S.rolling.clear();
    if (rolling)
        S.rolling.assign(1 + count, PairRolling::none());
}

void ObstacleContacts::resize(size_t n, bool rolling) {
    target.resize(n);
    shear.resize(n);
    touching.resize(n);
    force.resize(n);
    torque.resize(n);
    point.resize(n);
    dissipated.resize(n);
    elastic.resize(n);
    roll.resize(rolling ? n : 0);
    twist.resize(rolling ? n : 0);
    couple.resize(rolling ? n : 0);
}

} // namespace dem
