#include "core/Particles.hpp"

#include <numbers>

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

} // namespace dem
