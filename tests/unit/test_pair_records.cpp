// The records of touching sphere pairs (Contacts.hpp): taken by contacts as they form, given up as
// they part, laid out afresh at rebuilds and compactions. Where a record lies must never matter.
#include "DeterminismScene.hpp"

#include "core/StateDigest.hpp"
#include "io/Checkpoint.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>

using namespace dem;
using namespace dem::test;

namespace {

// Spheres flying about in a closed box with some overlapping at the start: contacts form and part
// all the time and the lists are rebuilt often. More spheres than parallelThreshold, so that
// threads split them. With `rolling`, the material resists rolling and twisting: the pairs keep
// moment histories beside their records.
Simulation churningGas(bool rolling = false) {
    SceneBuilder b;
    Material gas = hertz(2500, 1e8, 0.25, 0.8, std::atan(0.3));
    if (rolling)
        gas.rollingFriction = 0.2, gas.twistingFriction = 0.1;
    const int m = b.material(gas);
    const double s = 9e-3;
    const int nx = 14, ny = 14, nz = int(parallelThreshold / 196) + 2;
    b.closedBox(Vec3::Zero(), Vec3(nx * s, ny * s, nz * s), m);
    Random rnd(21);
    cubicLattice(nx, ny, nz, s, [&](int, int, int, const Vec3& centre) {
        b.sphere(centre, rnd(4.3e-3, 4.7e-3), m, Vec3(rnd(-8, 8), rnd(-8, 8), rnd(-8, 8)));
    });
    return b.build(0.2 * 4.3e-3 * std::sqrt(2500 / 1e8));
}

// Pairs share no record and point at none past the records (what a checkpoint check refuses).
void checkRecords(const Simulation& sim, size_t step) {
    std::string why;
    const bool consistent = checkSimulationConsistency(sim, why);
    INFO("step " << step << ": " << why);
    REQUIRE(consistent);
}

} // namespace

TEST_CASE("pair records: consistent after every step through rebuilds, bounded by the contacts",
          "[contact][records]") {
    ScopedThreads t(2);
    Simulation sim = churningGas();
    Workspace ws;
    size_t formed = 0, most = 0;
    for (size_t step = 1; step <= 300; ++step) {
        const std::vector<uint32_t> before = sim.pairs.contact;
        const bool rebuilt = sim.neighbours.needRebuild;
        REQUIRE(advance(sim, ws));
        checkRecords(sim, step);
        const size_t touching = sim.pairs.touchingCount();
        // Records given up are laid out away once they outnumber half the touching pairs (plus a
        // few thousand): the records stay in proportion to the contacts.
        CHECK(sim.pairs.records.size() <= 1 + 2 * touching + 4096 + 2 * pairRecordBlock * 2);
        most = std::max(most, sim.pairs.records.size());
        if (!rebuilt)
            for (size_t k = 0; k < sim.pairs.size(); ++k)
                formed += before[k] == 0 && sim.pairs.touching(k);
    }
    INFO(formed << " contacts formed, " << sim.neighbours.rebuilds << " rebuilds, at most " << most
                << " records");
    CHECK(sim.neighbours.rebuilds >= 8); // 10 (12 with the ranges alone as the rule)
    CHECK(formed > 1000);
}

TEST_CASE("pair records: laying them out afresh changes nothing but where they lie",
          "[contact][records]") {
    ScopedThreads t(2);
    Simulation sim = churningGas();
    Workspace ws;
    REQUIRE(run(sim, ws, 40));
    // Records given up lie among the touching pairs' after 40 steps of forming and parting.
    REQUIRE(sim.pairs.records.size() > 1 + sim.pairs.touchingCount());
    Simulation compacted = sim;
    std::vector<uint32_t> renumber;
    compactPairRecords(compacted.pairs, 0, renumber);
    // Record 0 and then the touching pairs' records, nothing else, in the order they had: each
    // pair keeps the same record, moved down past the ones given up.
    const SpherePairs& S = compacted.pairs;
    CHECK(S.records.size() == 1 + S.touchingCount());
    std::vector<std::pair<uint32_t, uint32_t>> moves; // (record before, after) of touching pairs
    bool same = true;
    for (size_t k = 0; k < S.size(); ++k) {
        if (!S.touching(k))
            continue;
        moves.emplace_back(sim.pairs.contact[k], S.contact[k]);
        const PairContact &a = sim.pairs.record(k), &b = S.record(k);
        same = same && a.force == b.force && a.nxf == b.nxf && a.shear == b.shear &&
               a.halfOverlap == b.halfOverlap;
    }
    CHECK(same);
    std::sort(moves.begin(), moves.end());
    bool ordered = true;
    for (size_t m = 0; m < moves.size(); ++m)
        ordered = ordered && moves[m].second == m + 1;
    CHECK(ordered);
    checkRecords(compacted, 40);
    Workspace other;
    for (size_t step = 41; step <= 100; ++step) {
        REQUIRE(advance(sim, ws));
        REQUIRE(advance(compacted, other));
        checkRecords(compacted, step);
    }
    CHECK(stateDigest(compacted) == stateDigest(sim));
}

namespace {

// Each touching pair's tangential history by its bodies (lower id first), as the force on the
// sphere of the higher id: independent of the pairs' order and of their records.
std::map<std::pair<uint32_t, uint32_t>, Vec3> historiesByBodies(const Simulation& sim) {
    std::map<std::pair<uint32_t, uint32_t>, Vec3> h;
    const Particles& P = sim.particles;
    sim.pairs.forEachPair([&](size_t k, uint32_t i, uint32_t j) {
        if (!sim.pairs.touching(k))
            return;
        const Vec3& shear = sim.pairs.record(k).shear;
        const bool ordered = P.id[i] < P.id[j];
        h[{std::min(P.id[i], P.id[j]), std::max(P.id[i], P.id[j])}] =
            ordered ? shear : Vec3(-shear);
    });
    return h;
}

} // namespace

TEST_CASE("pair records: a rebuild carries every history, whether the records grow or not",
          "[contact][records]") {
    ScopedThreads t(2);
    Simulation sim = churningGas();
    Workspace ws;
    REQUIRE(run(sim, ws, 40));
    // Third: the memory of the positions at the last rebuild, which the rebuild's scratch borrows
    // (markCarriedPairs, Particles::permute), is gone: each takes scratch of its own.
    for (const int round : {0, 1, 2}) {
        const bool grow = round == 1;
        INFO("records grow: " << grow << ", idle memory lent: " << (round != 2));
        const auto before = historiesByBodies(sim);
        REQUIRE(before.size() > 100);
        if (grow)
            sim.pairs.records.shrink_to_fit(); // no room left: the growth path
        if (round == 2)
            sim.neighbours.refPos.packed = {};
        const size_t capacity = sim.pairs.records.capacity();
        REQUIRE(rebuildNeighbours(sim, ws));
        CHECK((sim.pairs.records.capacity() > capacity) == grow);
        CHECK(historiesByBodies(sim) == before);
        CHECK(sim.pairs.records.size() == 1 + before.size());
        checkRecords(sim, 40);
    }
}

// numberTouchingPairs writes every pair's record unconditionally and keeps the touching ones; a
// thread whose range ends with pairs apart writes those past its own numbers, which must not land
// on the next thread's first one. Every pair of the second half is apart, then every pair of the
// last quarter touches, so ranges end both ways on two and three threads.
TEST_CASE("pair records: numbering the touching pairs on one, two and three threads",
          "[contact][records]") {
    const size_t m = 30000;
    SpherePairs original;
    original.j.assign(m, 0);
    original.contact.assign(m, 0);
    for (size_t k = 0; k < m; ++k)
        original.contact[k] = (k < m / 2 && k % 3 != 1) || k >= 3 * m / 4 ? uint32_t(7 + k) : 0;
    std::vector<uint32_t> expectedSource{0}, expectedContact(m, 0);
    for (size_t k = 0; k < m; ++k)
        if (original.contact[k] != 0) {
            expectedContact[k] = uint32_t(expectedSource.size());
            expectedSource.push_back(original.contact[k]);
        }
    for (int threads : {1, 2, 3}) {
        ScopedThreads t(threads);
        INFO(threads << " threads");
        // A write onto another thread's entry shows only when it comes last: repeated.
        size_t wrong = 0;
        for (int attempt = 0; attempt < 20; ++attempt) {
            SpherePairs S = original;
            std::vector<uint32_t> source;
            CHECK(numberTouchingPairs(S, source) == expectedSource.size() - 1);
            wrong += source != expectedSource || S.contact != expectedContact;
        }
        CHECK(wrong == 0);
    }
}

TEST_CASE("pair records: a run that stops tracking energy frees the energies' memory",
          "[contact][records]") {
    // The step that stops tracking with a rebuild (which lays the records out afresh) and without.
    for (bool rebuild : {false, true}) {
        Simulation sim = churningGas();
        sim.trackEnergy = true;
        Workspace ws;
        for (int step = 0; step < 5; ++step)
            REQUIRE(advance(sim, ws));
        REQUIRE(sim.pairs.energies.capacity() > 0);
        sim.trackEnergy = false;
        sim.neighbours.needRebuild = rebuild;
        const uint64_t rebuilds = sim.neighbours.rebuilds;
        REQUIRE(advance(sim, ws));
        INFO((rebuild ? "with" : "without") << " a rebuild");
        REQUIRE(sim.neighbours.rebuilds == rebuilds + (rebuild ? 1 : 0));
        CHECK(sim.pairs.energies.capacity() == 0);
    }
}

namespace {

// Each touching pair's moment histories by its bodies, as historiesByBodies: the rolling moment
// on the sphere of the higher id, and the twisting moment, the same seen from either sphere.
std::map<std::pair<uint32_t, uint32_t>, std::pair<Vec3, double>>
momentsByBodies(const Simulation& sim) {
    std::map<std::pair<uint32_t, uint32_t>, std::pair<Vec3, double>> h;
    const Particles& P = sim.particles;
    sim.pairs.forEachPair([&](size_t k, uint32_t i, uint32_t j) {
        if (!sim.pairs.touching(k))
            return;
        const PairRolling& m = sim.pairs.rollingOf(k);
        const bool ordered = P.id[i] < P.id[j];
        h[{std::min(P.id[i], P.id[j]), std::max(P.id[i], P.id[j])}] = {
            ordered ? m.roll : Vec3(-m.roll), m.twist};
    });
    return h;
}

} // namespace

TEST_CASE("pair records: moment histories move with their pairs through rebuilds and compactions",
          "[contact][records][rolling]") {
    ScopedThreads t(2);
    Simulation sim = churningGas(true);
    Workspace ws;
    for (size_t step = 1; step <= 100; ++step) {
        REQUIRE(advance(sim, ws));
        checkRecords(sim, step);
        REQUIRE(sim.pairs.hasRolling());
    }
    CHECK(sim.neighbours.rebuilds >= 3);
    // Rebuilds: each pair keeps its moments (the rolling one turned round when its spheres swap).
    for (const bool grow : {false, true}) {
        INFO("records grow: " << grow);
        const auto before = momentsByBodies(sim);
        size_t nonzero = 0;
        for (const auto& [bodies, m] : before)
            nonzero += m.first != Vec3::Zero() && m.second != 0;
        CHECK(nonzero > 100);
        if (grow) {
            sim.pairs.records.shrink_to_fit();
            sim.pairs.rolling.shrink_to_fit();
        }
        REQUIRE(rebuildNeighbours(sim, ws));
        CHECK(momentsByBodies(sim) == before);
        checkRecords(sim, 100);
    }
    // Compaction: the same moments where the records went, and the same run after it.
    REQUIRE(run(sim, ws, 20));
    Simulation compacted = sim;
    std::vector<uint32_t> renumber;
    compactPairRecords(compacted.pairs, 0, renumber);
    CHECK(compacted.pairs.records.size() == 1 + compacted.pairs.touchingCount());
    CHECK(momentsByBodies(compacted) == momentsByBodies(sim));
    checkRecords(compacted, 120);
    Workspace other;
    REQUIRE(run(sim, ws, 40));
    REQUIRE(run(compacted, other, 40));
    CHECK(stateDigest(compacted) == stateDigest(sim));
}
