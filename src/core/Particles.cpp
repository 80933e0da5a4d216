#include "core/Particles.hpp"
#include "core/Parallel.hpp"
#include "core/Scratch.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fmt/format.h>
#include <limits>
#include <memory>
#include <numbers>
#include <omp.h>
#include <span>
#include <stdexcept>
#include <type_traits>

namespace dem {

void Particles::add(uint32_t bodyId, const Vec3& x, double r, double density, int mat,
                    uint32_t groupMask) {
    const double factor = density * 4.0 / 3.0 * std::numbers::pi;
    if (massFactor.size() <= size_t(mat))
        massFactor.resize(size_t(mat) + 1, std::numeric_limits<double>::quiet_NaN());
    if (!std::isnan(massFactor[size_t(mat)]) && massFactor[size_t(mat)] != factor)
        throw std::invalid_argument(fmt::format(
            "a sphere of material {} with density {}: its spheres have another", mat, density));
    massFactor[size_t(mat)] = factor;
    id.push_back(bodyId);
    pos.push_back(x);
    vel.push_back(Vec3::Zero());
    angVel.push_back(Vec3::Zero());
    if (keepsOrientation)
        ori.push_back(Quat::Identity());
    if (keepsStart)
        pos0.push_back(x);
    radius.push_back(r);
    material.push_back(uint16_t(mat));
    if (!blockedBits.empty())
        blockedBits.push_back(0);
    if (groupMask != 0 || !groupBits.empty()) {
        groupBits.resize(size() - 1); // zeros for the spheres before, when not kept until now
        groupBits.push_back(groupMask);
    }
}

void Particles::setBlocked(size_t p, uint8_t mask) {
    mask &= BlockAll;
    if (blockedBits.empty() && mask != 0)
        blockedBits.assign(size(), 0);
    if (!blockedBits.empty())
        blockedBits[p] = uint8_t((blockedBits[p] & heldByMotion) | mask);
}

void Particles::hold(size_t p) {
    if (blockedBits.empty())
        blockedBits.assign(size(), 0);
    blockedBits[p] |= heldByMotion;
}

size_t Particles::releaseHeld() {
    size_t released = 0;
    for (size_t p = 0; p < blockedBits.size(); ++p) {
        if (!(blockedBits[p] & heldByMotion))
            continue;
        blockedBits[p] &= uint8_t(~heldByMotion);
        vel[p] = angVel[p] = Vec3::Zero();
        ++released;
    }
    return released;
}

void Particles::joinGroups(size_t p, uint32_t mask) {
    if (groupBits.empty() && mask != 0)
        groupBits.assign(size(), 0);
    if (!groupBits.empty())
        groupBits[p] |= mask;
}

void Particles::keepOptional(bool orientation, bool start) {
    if (orientation && !keepsOrientation)
        ori.assign(size(), Quat::Identity());
    if (!orientation)
        freeMemory(ori);
    if (start && !keepsStart)
        pos0 = pos;
    if (!start)
        freeMemory(pos0);
    keepsOrientation = orientation, keepsStart = start;
}

size_t Particles::mismatchedLength() const {
    const size_t n = size();
    size_t bad = n;
    forEachArray([&](const auto& v) {
        if (bad == n && v.size() != n)
            bad = v.size();
    });
    if (bad == n && !keepsOrientation && !ori.empty())
        bad = ori.size();
    if (bad == n && !keepsStart && !pos0.empty())
        bad = pos0.size();
    return bad;
}

void Particles::resize(size_t n) {
    forEachArray([n](auto& v) { v.resize(n); });
}

template <class T> static void compact(std::vector<T>& v, const std::vector<uint32_t>& keep) {
    for (size_t k = 0; k < keep.size(); ++k)
        v[k] = v[keep[k]];
    v.resize(keep.size());
}

void Particles::keep(const std::vector<uint32_t>& k) {
    forEachArray([&k](auto& v) { compact(v, k); });
}

namespace {

// One range of a permutation in place: element i of [a, b) becomes old element order[i], the
// ranges together covering the array. Sources in [a, b) are read in one pass up the range,
// which reads and writes memory in order: a source ahead of i is still in place; one behind it
// comes from a ring of the last `window` old values overwritten (a power of two). The others,
// `late` (outside the range, which another range's thread overwrites, or further back than the
// ring reaches: the i with lateSource(i), increasing), are kept before any thread writes.
struct PermuteRange {
    size_t a = 0, b = 0, window = 1;
    size_t lateCount = 0;
    uint32_t* late = nullptr; // lateCount places
    bool listed = false;      // whether `late` holds them

    bool lateSource(size_t i, size_t from) const {
        return from < a || from >= b || (from < i && i - from >= window);
    }
};

// The range [a, b) with its ring's window (up to maxWindow) and its late sources, listed in
// `room` when they fit: then the range's order is read twice, not three times (listLate).
PermuteRange measureRange(const std::vector<uint32_t>& order, size_t a, size_t b, size_t maxWindow,
                          std::vector<uint32_t>& room) {
    PermuteRange r;
    r.a = a;
    r.b = b;
    size_t back = 0; // the furthest an element's source in the range lies behind it
    for (size_t i = a; i < b; ++i)
        if (order[i] >= a && order[i] < i)
            back = std::max<size_t>(back, i - order[i]);
    while (r.window <= std::min(back, maxWindow))
        r.window *= 2;
    uint32_t* late = room.data();
    const size_t fits = room.size();
    for (size_t i = a; i < b; ++i)
        if (r.lateSource(i, order[i])) {
            if (r.lateCount < fits)
                late[r.lateCount] = uint32_t(i);
            ++r.lateCount;
        }
    r.late = late;
    r.listed = r.lateCount <= fits;
    return r;
}

void listLate(const std::vector<uint32_t>& order, const PermuteRange& r) {
    size_t q = 0;
    for (size_t i = r.a; i < r.b; ++i)
        if (r.lateSource(i, order[i]))
            r.late[q++] = uint32_t(i);
}

// Where one range keeps one array's late sources and its ring of old values: the kept values
// first, the ring after them (both created with std::construct_at before they are read).
template <class T> struct PermuteRoom {
    T* kept;
    T* ring;
};

// The bytes of an array's kept values (whole cache lines) and of its ring, for elements of `size`
// bytes.
size_t keptBytes(const PermuteRange& range, size_t size) {
    return (range.lateCount * size + 63) / 64 * 64;
}
size_t roomBytes(const PermuteRange& range, size_t size) {
    return keptBytes(range, size) + range.window * size;
}

// The room for v's kept values and ring in `lent` when both fit, else in the range's own memory,
// which growPermuteScratch has made large enough.
template <class T>
PermuteRoom<T> roomFor(const PermuteRange& range, std::span<std::byte> lent,
                       std::vector<std::byte>& own) {
    static_assert(std::is_trivially_destructible_v<T> &&
                  alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);
    std::byte* at = lent.size() >= roomBytes(range, sizeof(T)) ? lent.data() : own.data();
    return {reinterpret_cast<T*>(at), reinterpret_cast<T*>(at + keptBytes(range, sizeof(T)))};
}

// Reads the range's late sources of v: every thread does so before any writes (a barrier).
template <class T>
void keepLate(const std::vector<T>& v, const std::vector<uint32_t>& order,
              const PermuteRange& range, T* kept) {
    for (size_t q = 0; q < range.lateCount; ++q)
        std::construct_at(kept + q, v[order[range.late[q]]]);
}

// `range` by value: a copy no store to v can change, as far as the compiler knows (a uint8_t array
// may alias anything). Read through a reference into Particles::permute's list of ranges, the
// reordering measured 4% slower (105k falling ball, one thread, sampled).
template <class T>
void permuteRange(std::vector<T>& v, const std::vector<uint32_t>& order, const PermuteRange range,
                  PermuteRoom<T> room) {
    const T* kept = room.kept;
    T* ring = room.ring;
    const size_t mask = range.window - 1;
    size_t q = 0;
    for (size_t i = range.a; i < range.b; ++i) {
        const size_t from = order[i];
        const T old = v[i];
        if (range.lateSource(i, from))
            v[i] = kept[q++];
        else if (from > i)
            v[i] = v[from];
        else if (from < i)
            v[i] = ring[from & mask];
        std::construct_at(ring + (i & mask), old);
    }
}

// Before the permuting region: room for the range's late places when measureRange could not list
// them, and its own memory large enough for any array's room that its `share` of the lent memory
// cannot hold.
void growPermuteScratch(const Particles& P, PermuteRange& range, size_t share,
                        PermuteScratch::Thread& mine) {
    if (!range.listed) {
        resizeForOverwrite(mine.late, range.lateCount);
        range.late = mine.late.data();
    }
    size_t bytes = 0;
    P.forEachArray([&](const auto& v) {
        const size_t b = roomBytes(range, sizeof(v[0]));
        bytes = b > share ? std::max(bytes, b) : bytes;
    });
    if (mine.memory.size() < bytes)
        resizeForOverwrite(mine.memory, bytes);
}

} // namespace

void Particles::permute(const std::vector<uint32_t>& order, PermuteScratch& scratch,
                        std::span<std::byte> lent) {
    // Between neighbour rebuilds the spheres move less than a grid cell, so a sphere moves in the
    // order by about one plane of cells at most (a few thousand places at 100k spheres): the ring
    // of permuteRange holds the old values that far back, up to a sixteenth of the spheres (the
    // first rebuild of an unsorted packing keeps the others aside). Following the permutation's
    // cycles instead needs no scratch, but a falling mass makes most spheres one cycle that jumps
    // about memory: 3% of the falling ball's run time, half again this pass's. Each thread takes
    // a range of every array: taking the arrays in turns left one thread the larger elements
    // (0.37 s against 0.24 s over a 105k falling-ball run on two threads).
    //
    // Two regions: the first measures the ranges, the scratch grows between them (running out of
    // memory inside a region ends the process: app/OutOfMemory.cpp), the second permutes. The
    // ranges are the first region's team's; a smaller second team takes them in turns.
    const size_t n = order.size();
    const size_t maxWindow = std::max<size_t>(4096, n / 16);
    const bool parallel = n > 16384;
    const size_t asked = parallel ? size_t(omp_get_max_threads()) : 1;
    scratch.threads.resize(std::max(scratch.threads.size(), asked));
    PerThread<PermuteRange> ranges(asked);
    size_t count = 1;
#pragma omp parallel if (parallel) num_threads(int(asked))
    {
        const size_t t = size_t(omp_get_thread_num()), T = size_t(omp_get_num_threads());
        if (t == 0)
            count = T;
        ranges[t] =
            measureRange(order, n * t / T, n * (t + 1) / T, maxWindow, scratch.threads[t].late);
    }
    const size_t share = lent.size() / count / 64 * 64; // each range's lent bytes, cache-aligned
    for (size_t t = 0; t < count; ++t)
        growPermuteScratch(*this, ranges[t], share, scratch.threads[t]);
#pragma omp parallel if (parallel) num_threads(int(asked))
    {
        auto lentTo = [&](size_t t) { return lent.subspan(t * share, share); };
        forEachRangeOfThisThread(count, [&](size_t t) {
            if (!ranges[t].listed)
                listLate(order, ranges[t]);
        });
        forEachArray([&](auto& v) {
            using T = std::decay_t<decltype(v[0])>;
            auto room = [&](size_t t) {
                return roomFor<T>(ranges[t], lentTo(t), scratch.threads[t].memory);
            };
            forEachRangeOfThisThread(
                count, [&](size_t t) { keepLate(v, order, ranges[t], room(t).kept); });
#pragma omp barrier
            forEachRangeOfThisThread(count,
                                     [&](size_t t) { permuteRange(v, order, ranges[t], room(t)); });
        });
    }
    // The first rebuild of an unsorted packing keeps most spheres aside: that memory is given
    // back rather than held to the next rebuild, which keeps few (a ring holds up to 2 maxWindow
    // values, and as many kept values leave room for spheres crossing ranges).
    for (size_t t = 0; t < count; ++t) {
        PermuteScratch::Thread& mine = scratch.threads[t];
        if (mine.memory.size() > 4 * maxWindow * sizeof(Quat))
            freeMemory(mine.memory);
        if (mine.late.size() > 2 * maxWindow)
            freeMemory(mine.late);
    }
}

} // namespace dem
