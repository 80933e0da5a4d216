#include "core/Contacts.hpp"

namespace dem {

PairContact PairContact::none() {
    PairContact r;
    r.force = Vec3::Constant(-0.0);
    r.nxf = Vec3::Zero();
    r.halfOverlap = 0;
    r.shear = Vec3::Zero();
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

size_t recordRoom(const SpherePairs& S, size_t threads, size_t block) {
    return S.size() + S.size() / 4 + threads * block;
}

void compactPairRecords(SpherePairs& S, size_t room) {
    const std::vector<PairContact> old = std::move(S.records);
    const std::vector<PairEnergy> oldEnergies = std::move(S.energies);
    const bool energy = !oldEnergies.empty() && oldEnergies.size() == old.size();
    layOutRecords(S, energy, room, [&](PairContact& r, PairEnergy* e, size_t, uint32_t from) {
        r = old[from];
        if (e)
            *e = oldEnergies[from];
    });
}

void allotRecords(SpherePairs& S, const std::vector<uint8_t>& touching, bool energy) {
    S.contact.assign(S.size(), 0);
    for (size_t k = 0; k < S.size() && k < touching.size(); ++k)
        S.contact[k] = touching[k] ? 1 : 0;
    layOutRecords(S, energy, 0, [](PairContact& r, PairEnergy* e, size_t, uint32_t) {
        r = PairContact::none();
        if (e)
            *e = PairEnergy(0, 0);
    });
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
