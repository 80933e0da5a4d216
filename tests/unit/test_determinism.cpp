// Bit-for-bit reproducibility for any thread count (physics.md §1 "Determinism"): every
// per-sphere sum is gathered in a fixed order, so 1, 2 and 3 threads give the same state digest.
// Note: under a heavily loaded machine each OpenMP barrier can cost a scheduler time slice, so
// multi-threaded steps are kept few here.
// The 5000-step run is in tests/slow/test_determinism_long.cpp.
#include "DeterminismScene.hpp"
#include "core/Measures.hpp"
#include "core/StateDigest.hpp"
#include "io/Checkpoint.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace dem;
using namespace dem::test;

TEST_CASE("Thread count does not change the trajectory", "[determinism]") {
    // More spheres than parallelThreshold (2048), so the pair loop, the per-sphere gather and the
    // Verlet build really run on several threads. All spheres start in contact with their
    // neighbours or the walls; digests are compared every 50 steps so a divergence is located.
    // Any order-dependent floating-point sum would change the last bits within a few steps.
    // Three threads split the spheres unevenly.
    const Simulation sim = densePacking(10, 10, layersAboveThreshold());
    REQUIRE(sim.particles.size() > parallelThreshold);
    const auto one = digests(sim, 1, 200, 50);
    const auto two = digests(sim, 2, 200, 50);
    const auto three = digests(sim, 3, 50, 50); // oversubscribed on 2 cores: kept short
    for (size_t k = 0; k < one.size(); ++k) {
        INFO("after " << (k + 1) * 50 << " steps");
        CHECK(one[k] == two[k]);
        if (k < three.size())
            CHECK(one[k] == three[k]);
    }
    // The run is not trivially static: one more step changes the digest.
    CHECK(digests(sim, 1, 201, 201).back() != one.back());
}

// The moment histories of rolling and twisting resistance, their couples gathered on both spheres
// (the second sphere's in its gather, after its forces), and the obstacle contacts' (walls and a
// facet floor) are summed in the same fixed order, and carried through rebuilds (forced every 10
// steps); a checkpoint keeps them exactly.
TEST_CASE("Rolling and twisting resistance: the same trajectory for any thread count and restart",
          "[determinism][rolling]") {
    const Simulation sim = densePacking(10, 10, layersAboveThreshold(), true, true);
    REQUIRE(sim.particles.size() > parallelThreshold);
    const auto one = digests(sim, 1, 100, 50, 10);
    const auto two = digests(sim, 2, 100, 50, 10);
    const auto three = digests(sim, 3, 50, 50, 10);
    CHECK(one == two);
    CHECK(one.front() == three.front());
    // Without the resistance the run differs: it is in force.
    CHECK(digests(densePacking(10, 10, layersAboveThreshold(), true), 1, 100, 100, 10).back() !=
          one.back());
    // Continued from a snapshot after 50 steps on another thread count.
    Simulation first = sim;
    std::string saved;
    {
        ScopedThreads t(2);
        Workspace ws;
        for (int k = 1; k <= 50; ++k) {
            first.neighbours.needRebuild = first.neighbours.needRebuild || k % 10 == 0;
            REQUIRE(advance(first, ws));
        }
        REQUIRE(first.pairs.hasRolling());
        REQUIRE(first.obstacleContacts.hasRolling());
        saved = serializeSimulation(first);
    }
    Simulation back;
    std::string error;
    REQUIRE(deserializeSimulation(saved, back, error));
    CHECK(stateDigest(back) == one.front());
    ScopedThreads t(1);
    Workspace ws;
    for (int k = 51; k <= 100; ++k) {
        back.neighbours.needRebuild = back.neighbours.needRebuild || k % 10 == 0;
        REQUIRE(advance(back, ws));
    }
    CHECK(stateDigest(back) == one.back());
}

TEST_CASE("Regions given fewer threads than they ask for give the same trajectory",
          "[determinism]") {
    // Inside a parallel region, with one active level allowed, every region of the step gets a
    // team of one while omp_get_max_threads() still says two: the sweep, the listings, the
    // counting sorts and the record numbering must share their work among the team they get
    // (dem's main() rules this out for its own runs; a caller of the library need not). The
    // lists are rebuilt every 15 steps, so that touching pairs carry their records through a
    // rebuild under the smaller team too.
    const Simulation sim = densePacking(10, 10, layersAboveThreshold());
    const auto reference = digests(sim, 1, 60, 20, 15);
    std::vector<std::string> nested;
    std::string error;
    int innerTeam = 0;
    const int levels = omp_get_max_active_levels();
    omp_set_max_active_levels(1);
#pragma omp parallel num_threads(2)
    {
#pragma omp single
        {
#pragma omp parallel num_threads(2)
            innerTeam = omp_get_num_threads();
            try {
                nested = digests(sim, 2, 60, 20, 15);
            } catch (const std::exception& e) {
                error = e.what();
            }
        }
    }
    omp_set_max_active_levels(levels);
    REQUIRE(innerTeam == 1); // what the test is about
    REQUIRE(error.empty());
    CHECK(nested == reference);
}

TEST_CASE("Running twice gives the same digest but a one-ulp change does not", "[determinism]") {
    Simulation sim = densePacking(5, 5, 4);
    const auto a = digests(sim, 1, 300, 300);
    const auto b = digests(sim, 1, 300, 300);
    CHECK(a == b);
    sim.particles.pos[17].x() = std::nextafter(sim.particles.pos[17].x(), 1.0);
    CHECK(digests(sim, 1, 300, 300) != a);
}

// Each thread takes the records of the contacts that form in its range from blocks of its own, so
// where a record lies depends on the thread count; the outputs and measures read them through
// the pairs: every touching pair must read the same history, results and energies whatever the
// number of threads.
TEST_CASE("Pair records read through their pairs are the same for any thread count",
          "[determinism]") {
    const Simulation start = densePacking(10, 10, layersAboveThreshold());
    auto run = [&](int threads) {
        ScopedThreads t(threads);
        REQUIRE(omp_get_max_threads() == threads);
        Simulation sim = start;
        Workspace ws;
        for (int k = 0; k < 20; ++k)
            REQUIRE(advance(sim, ws));
        return sim;
    };
    const Simulation one = run(1);
    REQUIRE(one.pairs.hasEnergy());
    for (int threads : {2, 3}) {
        const Simulation many = run(threads);
        const SpherePairs &S = one.pairs, &T = many.pairs;
        REQUIRE(T.hasEnergy());
        REQUIRE(T.size() == S.size());
        size_t touching = 0, mismatches = 0, moved = 0;
        for (size_t k = 0; k < S.size(); ++k) {
            mismatches += S.touching(k) != T.touching(k);
            if (!S.touching(k) || !T.touching(k))
                continue;
            ++touching;
            moved += S.contact[k] != T.contact[k];
            const PairContact &a = S.record(k), &b = T.record(k);
            mismatches += a.force != b.force || a.nxf != b.nxf || a.halfOverlap != b.halfOverlap ||
                          a.shear != b.shear || S.energy(k).dissipated != T.energy(k).dissipated ||
                          S.energy(k).elastic != T.energy(k).elastic;
        }
        INFO(threads << " threads: " << moved << " of " << touching << " records lie elsewhere");
        CHECK(touching > 1000);
        CHECK(moved > 0); // the records of contacts formed in the 20 steps are not in pair order
        CHECK(mismatches == 0);
        CHECK(unbalancedForce(many) == unbalancedForce(one));
        CHECK(elasticEnergy(many) == elasticEnergy(one));
    }
}

// A checkpoint keeps the pairs' records with energies (ckpt::io). Continued on fewer threads, a run
// that tracks no energy once kept the loaded energies beside records grown without them, and its
// next checkpoint was refused as inconsistent.
TEST_CASE("A run continued from a snapshot with fewer threads stays consistent", "[determinism]") {
    Simulation sim = densePacking(10, 10, layersAboveThreshold());
    sim.trackEnergy = false;
    REQUIRE(sim.particles.size() > parallelThreshold);
    std::string saved;
    {
        ScopedThreads t(2);
        Workspace ws;
        REQUIRE(run(sim, ws, 20));
        saved = serializeSimulation(sim);
        REQUIRE(run(sim, ws, 20));
    }
    Simulation back;
    std::string error;
    REQUIRE(deserializeSimulation(saved, back, error));
    ScopedThreads t(1);
    Workspace ws;
    REQUIRE(run(back, ws, 20));
    CHECK(checkSimulationConsistency(back, error));
    INFO(error);
    CHECK(stateDigest(back) == stateDigest(sim));
}
