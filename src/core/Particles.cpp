#include "core/Particles.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fmt/format.h>
#include <limits>
#include <numbers>
#include <omp.h>
#include <stdexcept>

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
    if (blockedBits.empty() && mask != 0)
        blockedBits.assign(size(), 0);
    if (!blockedBits.empty())
        blockedBits[p] = mask;
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
        std::vector<Quat>().swap(ori);
    if (start && !keepsStart)
        pos0 = pos;
    if (!start)
        std::vector<Vec3>().swap(pos0);
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

// v <- v reordered by `order` (new element i is old element order[i]) in one pass up the array,
// which reads and writes memory in order. Element i is overwritten once read, so an old value
// needed after its place was overwritten comes from a ring of the last `window` ones overwritten
// (window a power of two), or, for the sources further back (`late`: the i with i - order[i] >=
// window, increasing), was kept before the pass. A source ahead of i is still in place.
template <class T>
void permuteInOnePass(std::vector<T>& v, const std::vector<uint32_t>& order, size_t window,
                      const std::vector<uint32_t>& late) {
    std::vector<T> kept(late.size()), ring(window);
    for (size_t q = 0; q < late.size(); ++q)
        kept[q] = v[order[late[q]]];
    const size_t mask = window - 1;
    size_t q = 0;
    for (size_t i = 0; i < v.size(); ++i) {
        const size_t from = order[i];
        const T old = v[i];
        if (from > i)
            v[i] = v[from];
        else if (from < i)
            v[i] = i - from <= mask ? ring[from & mask] : kept[q++];
        ring[i & mask] = old;
    }
}

} // namespace

void Particles::permute(const std::vector<uint32_t>& order) {
    // Between neighbour rebuilds the spheres move less than a grid cell, so a sphere moves in the
    // order by about one plane of cells at most (a few thousand places at 100k spheres): the ring
    // of permuteInOnePass holds the old values that far back, up to a sixteenth of the spheres
    // (the first rebuild of an unsorted packing keeps the others aside). Following the
    // permutation's cycles instead needs no scratch, but a falling mass makes most spheres one
    // cycle that jumps about memory: 3% of the falling ball's run time, half again this pass's.
    const size_t n = order.size();
    size_t back = 0; // the furthest an element's source lies behind it
    for (size_t i = 0; i < n; ++i)
        back = std::max(back, i - std::min<size_t>(order[i], i));
    size_t window = 1;
    while (window <= std::min(back, std::max<size_t>(4096, n / 16)))
        window *= 2;
    std::vector<uint32_t> late;
    for (size_t i = 0; i < n; ++i) {
        if (order[i] + window <= i)
            late.push_back(uint32_t(i));
    }
    // The arrays are independent: the threads take turns at them.
#pragma omp parallel if (n > 16384)
    {
        const int t = omp_get_thread_num(), T = omp_get_num_threads();
        int k = 0;
        forEachArray([&](auto& v) {
            if (k++ % T == t)
                permuteInOnePass(v, order, window, late);
        });
    }
}

} // namespace dem
