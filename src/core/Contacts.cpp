#include "core/Contacts.hpp"

namespace dem {

void SpherePairs::resize(size_t n, bool energy) {
    forEachArray([&](auto& v, bool isEnergy) { v.resize(isEnergy && !energy ? 0 : n); });
}

void SpherePairs::reserve(size_t n, bool energy) {
    forEachArray([&](auto& v, bool isEnergy) { v.reserve(isEnergy && !energy ? 0 : n); });
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
    point.resize(n);
    dissipated.resize(n);
    elastic.resize(n);
}

} // namespace dem
