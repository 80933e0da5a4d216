#include "core/Particles.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fmt/format.h>
#include <limits>
#include <numbers>
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
    ori.push_back(Quat::Identity());
    pos0.push_back(x);
    radius.push_back(r);
    material.push_back(uint16_t(mat));
    blocked.push_back(0);
    groups.push_back(groupMask);
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

template <class T>
static void permuteArray(std::vector<T>& v, const std::vector<uint32_t>& order,
                         std::vector<std::byte>& scratch) {
    // Plain values (Eigen's fixed-size vectors are arrays of doubles): byte copies are exact.
    static_assert(std::is_trivially_destructible_v<T>);
    const size_t n = v.size();
    // operator new memory is 16-byte aligned; Eigen's quaternion wants 32 with AVX (DEM_NATIVE).
    scratch.resize(n * sizeof(T) + alignof(T));
    const auto at = reinterpret_cast<std::uintptr_t>(scratch.data());
    T* tmp = reinterpret_cast<T*>((at + alignof(T) - 1) / alignof(T) * alignof(T));
#pragma omp parallel if (n > 16384)
    {
#pragma omp for schedule(static)
        for (size_t e = 0; e < n; ++e)
            std::memcpy(static_cast<void*>(tmp + e), &v[order[e]], sizeof(T));
#pragma omp for schedule(static)
        for (size_t e = 0; e < n; ++e)
            std::memcpy(static_cast<void*>(&v[e]), tmp + e, sizeof(T));
    }
}

void Particles::permute(const std::vector<uint32_t>& order, std::vector<std::byte>& scratch) {
    forEachArray([&](auto& v) { permuteArray(v, order, scratch); });
}

} // namespace dem
