#include "core/Particles.hpp"

#include <cstring>
#include <numbers>
#include <type_traits>

namespace dem {

void Particles::add(uint32_t bodyId, const Vec3& x, double r, double density, int mat,
                    uint32_t groupMask) {
    const double m = density * 4.0 / 3.0 * std::numbers::pi * r * r * r;
    id.push_back(bodyId);
    pos.push_back(x);
    vel.push_back(Vec3::Zero());
    angVel.push_back(Vec3::Zero());
    ori.push_back(Quat::Identity());
    force.push_back(Vec3::Zero());
    torque.push_back(Vec3::Zero());
    pos0.push_back(x);
    radius.push_back(r);
    mass.push_back(m);
    inertia.push_back(0.4 * m * r * r);
    material.push_back(uint16_t(mat));
    blocked.push_back(0);
    groups.push_back(groupMask);
}

void Particles::resize(size_t n) {
    id.resize(n);
    pos.resize(n);
    vel.resize(n);
    angVel.resize(n);
    ori.resize(n);
    force.resize(n);
    torque.resize(n);
    pos0.resize(n);
    radius.resize(n);
    mass.resize(n);
    inertia.resize(n);
    material.resize(n);
    blocked.resize(n);
    groups.resize(n);
}

template <class T> static void compact(std::vector<T>& v, const std::vector<uint32_t>& keep) {
    for (size_t k = 0; k < keep.size(); ++k)
        v[k] = v[keep[k]];
    v.resize(keep.size());
}

void Particles::keep(const std::vector<uint32_t>& k) {
    compact(id, k);
    compact(pos, k);
    compact(vel, k);
    compact(angVel, k);
    compact(ori, k);
    compact(force, k);
    compact(torque, k);
    compact(pos0, k);
    compact(radius, k);
    compact(mass, k);
    compact(inertia, k);
    compact(material, k);
    compact(blocked, k);
    compact(groups, k);
}

template <class T>
static void permuteArray(std::vector<T>& v, const std::vector<uint32_t>& order,
                         std::vector<std::byte>& scratch) {
    // Plain values (Eigen's fixed-size vectors are arrays of doubles): byte copies are exact.
    static_assert(std::is_trivially_destructible_v<T> && alignof(T) <= 16);
    const size_t n = v.size();
    scratch.resize(n * sizeof(T)); // operator new memory: 16-byte aligned
    T* tmp = reinterpret_cast<T*>(scratch.data());
#pragma omp parallel for schedule(static) if (n > 16384)
    for (size_t e = 0; e < n; ++e)
        std::memcpy(static_cast<void*>(tmp + e), &v[order[e]], sizeof(T));
    std::memcpy(static_cast<void*>(v.data()), tmp, n * sizeof(T));
}

void Particles::permute(const std::vector<uint32_t>& order, std::vector<std::byte>& scratch) {
    permuteArray(id, order, scratch);
    permuteArray(pos, order, scratch);
    permuteArray(vel, order, scratch);
    permuteArray(angVel, order, scratch);
    permuteArray(ori, order, scratch);
    permuteArray(force, order, scratch);
    permuteArray(torque, order, scratch);
    permuteArray(pos0, order, scratch);
    permuteArray(radius, order, scratch);
    permuteArray(mass, order, scratch);
    permuteArray(inertia, order, scratch);
    permuteArray(material, order, scratch);
    permuteArray(blocked, order, scratch);
    permuteArray(groups, order, scratch);
}

} // namespace dem
