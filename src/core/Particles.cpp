#include "core/Particles.hpp"

#include <cmath>
#include <cstdint>
#include <fmt/format.h>
#include <limits>
#include <numbers>
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

void Particles::permute(const std::vector<uint32_t>& order) {
    // The cycles of the permutation, each by its first index (fixed points left out): every
    // array then moves its elements along each cycle with one temporary, so no copy of an array
    // is needed. Cycles are disjoint, so threads can take different ones. Between neighbour
    // rebuilds spheres move less than a grid cell: most cycles are short, and local in memory.
    const size_t n = order.size();
    std::vector<uint64_t> seen((n + 63) / 64, 0);
    std::vector<uint32_t> cycles;
    for (size_t e = 0; e < n; ++e) {
        if (seen[e / 64] >> (e % 64) & 1 || order[e] == e)
            continue;
        cycles.push_back(uint32_t(e));
        for (size_t c = e; !(seen[c / 64] >> (c % 64) & 1); c = order[c])
            seen[c / 64] |= uint64_t(1) << (c % 64);
    }
    const int64_t count = int64_t(cycles.size());
#pragma omp parallel if (n > 16384)
    {
        // A cycle's indices are listed once, then each array follows the list: independent loads
        // rather than a chain through `order` per array.
        std::vector<uint32_t> path;
#pragma omp for schedule(static)
        for (int64_t g = 0; g < count; ++g) {
            path.clear();
            const uint32_t e = cycles[size_t(g)];
            uint32_t at = e;
            do {
                path.push_back(at);
                at = order[at];
            } while (at != e);
            forEachArray([&](auto& v) {
                const auto first = v[path[0]];
                for (size_t s = 0; s + 1 < path.size(); ++s)
                    v[path[s]] = v[path[s + 1]];
                v[path.back()] = first;
            });
        }
    }
}

} // namespace dem
