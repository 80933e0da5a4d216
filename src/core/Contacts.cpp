#include "core/Contacts.hpp"

namespace dem {

PairResult PairResult::none() {
    PairResult r;
    r.force = Vec3::Constant(-0.0);
    r.nxf = Vec3::Zero();
    r.halfOverlap = 0;
    return r;
}

bool SpherePairs::hasEnergy() const {
    for (const PairResultBuffer& b : results)
        if (b.energy.size() != b.result.size())
            return false;
    return true;
}

void SpherePairs::allotResults(bool energy) {
    results.assign(1, PairResultBuffer{});
    slotBits = 0;
    slot.assign(size(), 0);
    PairResultBuffer& b = results[0];
    for (size_t k = 0; k < size(); ++k)
        if (touching[k])
            slot[k] = uint32_t(b.used++);
    b.result.assign(b.used, PairResult::none());
    if (energy)
        b.energy.assign(b.used, PairEnergy{});
}

void SpherePairs::resize(size_t n) {
    forEachArray([&](auto& v) { v.resize(n); });
}

void SpherePairs::reserve(size_t n) {
    forEachArray([&](auto& v) { v.reserve(n); });
    jPairs.reserve(n);
}

void derivePairOwners(SpherePairs& S) {
    S.i.resize(S.j.size());
    for (size_t p = 0; p + 1 < S.start.size(); ++p)
        for (uint32_t k = S.start[p]; k < S.start[p + 1]; ++k)
            S.i[k] = uint32_t(p);
}

void transposePairs(SpherePairs& S, size_t sphereCount, std::vector<uint32_t>& fill) {
    S.jStart.assign(sphereCount + 1, 0);
    for (uint32_t j : S.j)
        ++S.jStart[j + 1];
    for (size_t p = 0; p < sphereCount; ++p)
        S.jStart[p + 1] += S.jStart[p];
    S.jPairs.resize(S.size());
    fill.assign(S.jStart.begin(), S.jStart.end() - 1);
    for (size_t k = 0; k < S.size(); ++k)
        S.jPairs[fill[S.j[k]]++] = uint32_t(k);
}

void ObstacleContacts::resize(size_t n) {
    target.resize(n);
    shear.resize(n);
    touching.resize(n);
    force.resize(n);
    torque.resize(n);
    point.resize(n);
    dissipated.resize(n);
    elastic.resize(n);
}

} // namespace dem
