// The sphere arrays (core/Particles.hpp): masses from the material's factor, reordering in place.
#include "SceneBuilder.hpp"

#include "core/Particles.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>
#include <random>
#include <span>
#include <stdexcept>

using namespace dem;

TEST_CASE("spheres of one material have one density", "[particles]") {
    Particles P;
    P.add(0, Vec3::Zero(), 0.01, 2500, 1, 0);
    CHECK(P.massFactor.size() == 2);
    CHECK(std::isnan(P.massFactor[0]));
    // The products Particles::add formed before masses were derived, in the same order.
    CHECK(P.mass(0) == 2500 * 4.0 / 3.0 * std::numbers::pi * 0.01 * 0.01 * 0.01);
    CHECK(P.inertia(0) == 0.4 * P.mass(0) * 0.01 * 0.01);
    CHECK_THROWS_AS(P.add(1, Vec3::Ones(), 0.01, 2600, 1, 0), std::invalid_argument);
    CHECK(P.size() == 1);
}

TEST_CASE("reordering spheres in place gives new index e the old sphere order[e]", "[particles]") {
    // More spheres than the permutation's parallel threshold, so that threads take ranges of the
    // arrays (three threads: ranges of unequal length on a two-core machine too).
    const size_t n = 40000;
    Particles base;
    test::Random rnd(3);
    for (size_t p = 0; p < n; ++p) {
        base.add(uint32_t(p), Vec3(rnd(), rnd(), rnd()), rnd(0.001, 0.002), 2500, int(p % 3),
                 uint32_t(p % 7));
        base.vel.back() = Vec3(rnd(), rnd(), rnd());
        base.angVel.back() = Vec3(rnd(), rnd(), rnd());
        base.ori.back() = Quat(rnd(), rnd(), rnd(), rnd()).normalized();
        base.pos0.back() = Vec3(rnd(), rnd(), rnd());
        base.setBlocked(p, uint8_t(p % 64));
    }
    std::vector<uint32_t> identity(n);
    std::iota(identity.begin(), identity.end(), 0u);
    std::vector<uint32_t> local = identity; // neighbours swapped: short cycles, as between rebuilds
    for (size_t p = 0; p + 1 < n; p += 3)
        std::swap(local[p], local[p + 1]);
    // Spheres moved to another place in the order, shifting the ones between by one, as spheres
    // changing cells do: most moves span less than the permutation's window of old values (4096
    // here), a few far more, forwards and backwards (a sphere wrapped around a periodic cell).
    std::vector<uint32_t> shifted = identity;
    auto move = [&](size_t from, size_t to) {
        const uint32_t e = shifted[from];
        shifted.erase(shifted.begin() + std::ptrdiff_t(from));
        shifted.insert(shifted.begin() + std::ptrdiff_t(to), e);
    };
    for (size_t p = 0; p + 3000 < n; p += 997)
        move(p, p + 1 + p % 3000), move(p + 2000, p + 7);
    move(5, n - 1), move(n - 2, 0), move(100, 30000), move(39000, 6000);
    std::vector<uint32_t> shuffled = identity; // as at the first rebuild of an unsorted packing
    std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(9));
    // Its scratch: its own each time; kept from one call to the next; and in lent memory as large
    // as the rebuild lends (12 B per sphere) or too small for it, filled with garbage.
    std::vector<std::byte> lent(12 * n);
    for (const size_t lentBytes : {size_t(0), 12 * n, size_t(1000)}) {
        PermuteScratch kept;
        for (const int threads : {1, 2, 3}) {
            const test::ScopedThreads team(threads);
            for (const auto* order : {&identity, &local, &shifted, &shuffled}) {
                Particles P = base;
                std::fill(lent.begin(), lent.end(), std::byte{0xab});
                if (lentBytes == 0)
                    P.permute(*order);
                else
                    P.permute(*order, kept, std::span(lent).first(lentBytes));
                size_t wrong = 0;
                for (size_t e = 0; e < n; ++e) {
                    const size_t q = (*order)[e];
                    wrong += P.id[e] != base.id[q] || P.pos[e] != base.pos[q] ||
                             P.vel[e] != base.vel[q] || P.angVel[e] != base.angVel[q] ||
                             P.ori[e].coeffs() != base.ori[q].coeffs() ||
                             P.pos0[e] != base.pos0[q] || P.radius[e] != base.radius[q] ||
                             P.material[e] != base.material[q] || P.blocked(e) != base.blocked(q) ||
                             P.groups(e) != base.groups(q) || P.mass(e) != base.mass(q);
                }
                INFO(threads << " threads, " << lentBytes << " bytes lent");
                CHECK(wrong == 0);
            }
        }
    }
}

TEST_CASE("orientation and start position are kept only when asked for", "[particles]") {
    Particles P;
    P.keepOptional(false, false);
    for (uint32_t p = 0; p < 5; ++p)
        P.add(p, Vec3(p, 0, 0), 0.01, 2500, 0, 0);
    CHECK(P.ori.empty());
    CHECK(P.pos0.empty());
    P.permute({4, 3, 2, 1, 0});
    P.keep({0, 2, 4});
    P.resize(4);
    CHECK((P.size() == 4 && P.ori.empty() && P.pos0.empty()));
    CHECK(P.pos[1] == Vec3(2, 0, 0));

    // Kept from now on: orientation from identity, displacement from where the spheres are.
    P.pos[1] = Vec3(7, 0, 0);
    P.keepOptional(true, true);
    REQUIRE(P.ori.size() == 4);
    REQUIRE(P.pos0.size() == 4);
    CHECK(P.ori[3].coeffs() == Quat::Identity().coeffs());
    CHECK(P.pos0[1] == Vec3(7, 0, 0));
    P.add(9, Vec3(1, 2, 3), 0.01, 2500, 0, 0);
    CHECK((P.ori.size() == 5 && P.pos0.back() == Vec3(1, 2, 3)));
    P.keepOptional(false, true);
    CHECK((P.ori.empty() && P.pos0.size() == 5));
}

TEST_CASE("blocked and group masks are kept only once a bit is set", "[particles]") {
    Particles P;
    for (uint32_t p = 0; p < 3; ++p)
        P.add(p, Vec3(p, 0, 0), 0.01, 2500, 0, 0);
    P.setBlocked(1, 0);
    P.joinGroups(2, 0);
    CHECK((P.blockedBits.empty() && P.groupBits.empty())); // zero everywhere: nothing kept
    CHECK((P.blocked(2) == 0 && P.groups(2) == 0u));
    P.add(3, Vec3(3, 0, 0), 0.01, 2500, 0, 4u); // the first sphere in a group
    REQUIRE(P.groupBits.size() == 4);
    CHECK((P.groups(0) == 0u && P.groups(3) == 4u));
    P.setBlocked(1, BlockX);
    REQUIRE(P.blockedBits.size() == 4);
    P.joinGroups(1, 1u);
    P.add(4, Vec3(4, 0, 0), 0.01, 2500, 0, 0); // kept arrays grow with the spheres
    CHECK((P.blockedBits.size() == 5 && P.groupBits.size() == 5));
    CHECK(P.mismatchedLength() == 5);
    // Kept masks follow permutations and removals like every other array.
    P.permute({4, 3, 2, 1, 0});
    CHECK((P.blocked(3) == BlockX && P.groups(3) == 1u && P.groups(1) == 4u));
    P.keep({1, 3});
    CHECK((P.size() == 2 && P.groups(0) == 4u && P.blocked(1) == BlockX && P.groups(1) == 1u));
}

TEST_CASE("sphere arrays: the first length that differs, kept or not", "[particles]") {
    Particles P;
    P.keepOptional(false, true);
    for (uint32_t p = 0; p < 3; ++p)
        P.add(p, Vec3(p, 0, 0), 0.01, 2500, 0, 0);
    CHECK(P.mismatchedLength() == 3);
    P.blockedBits.assign(4, 0); // kept (not empty), too long
    CHECK(P.mismatchedLength() == 4);
    P.blockedBits.clear();
    P.pos0.pop_back(); // kept, too short
    CHECK(P.mismatchedLength() == 2);
    P.pos0.push_back(Vec3::Zero());
    P.ori.assign(1, Quat::Identity()); // not kept, yet not empty
    CHECK(P.mismatchedLength() == 1);
}
