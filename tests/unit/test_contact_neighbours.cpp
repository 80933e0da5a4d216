// The Verlet lists against brute force: every overlapping sphere pair and every sphere touching a
// wall must be a touching contact of the step, and nothing else (Neighbours.cpp, Step.cpp). A
// rebuild puts the spheres in cell order, so spheres are matched by id across it.
#include "DeterminismScene.hpp"

#include "core/ContactGeometry.hpp"
#include "core/Parallel.hpp"
#include "core/SphereLoad.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

using namespace dem;
using namespace dem::test;

namespace {

// 400 polydisperse spheres (R = 2-6 mm) at random non-overlapping places in a 0.1 m box of six
// walls, random velocities up to 3 m/s, no gravity, Hertz-Mindlin e = 1 with friction. A small
// skin (0.2 mm, 10 steps of the fastest sphere) forces frequent rebuilds, and the top wall moves
// down at 0.5 m/s so the obstacle-travel trigger is exercised too.
Simulation movingCloud() {
    SceneBuilder b;
    const int m = b.material(hertz(2500, 1e8, 0.25, 1.0, std::atan(0.3)));
    const double L = 0.1;
    b.closedBox(Vec3::Zero(), Vec3::Constant(L), m);
    const int top = 5; // closedBox adds lo/hi walls per axis: the z hi wall is the sixth
    REQUIRE(b.sim.obstacles.walls[size_t(top)].normal.z() == -1);
    Motion piston;
    piston.kind = Motion::Kind::Translation;
    piston.object = int(b.sim.obstacles.walls[size_t(top)].object);
    piston.velocity = Vec3(0, 0, -0.5);
    b.motion(piston);
    Random rnd(4242);
    std::vector<std::pair<Vec3, double>> placed;
    while (placed.size() < 400) {
        const double r = rnd(0.002, 0.006);
        const Vec3 x(rnd(r, L - r), rnd(r, L - r), rnd(r, 0.6 * L - r));
        bool free = true;
        for (const auto& [y, s] : placed)
            free = free && (x - y).norm() > r + s;
        if (!free)
            continue;
        placed.emplace_back(x, r);
        b.sphere(x, r, m, Vec3(rnd(-3, 3), rnd(-3, 3), rnd(-3, 3)) / std::sqrt(3.0));
    }
    b.skin(2e-4);
    return b.build(0.2 * 0.002 * std::sqrt(2500 / 1e8)); // 2e-6 s
}

struct Mismatch {
    size_t missedPairs = 0, extraPairs = 0, missedWalls = 0, extraWalls = 0, duplicates = 0;
    size_t overlaps = 0, wallOverlaps = 0; // brute-force counts, summed over the steps
};

// Compares the contacts of the step just taken with the overlaps at the positions it started from.
void compare(const Simulation& sim, const std::vector<Vec3>& x, const std::vector<Wall>& walls,
             Mismatch& out) {
    const Particles& P = sim.particles;
    const SpherePairs& S = sim.pairs;
    std::set<std::pair<uint32_t, uint32_t>> listed;
    S.forEachPair([&](size_t k, uint32_t i, uint32_t j) {
        if (!listed.insert({i, j}).second || i >= j)
            ++out.duplicates;
        const bool overlaps = (x[j] - x[i]).norm() < P.radius[i] + P.radius[j];
        if (S.touching(k) && !overlaps)
            ++out.extraPairs;
    });
    for (size_t i = 0; i < x.size(); ++i)
        for (size_t j = i + 1; j < x.size(); ++j) {
            if ((x[j] - x[i]).norm() >= P.radius[i] + P.radius[j])
                continue;
            ++out.overlaps;
            bool found = false; // pairs of sphere i are [start[i], start[i+1]), sorted by j
            for (uint32_t k = S.start[i]; k < S.start[i + 1]; ++k)
                found = found || (S.j[k] == j && S.touching(k));
            out.missedPairs += !found;
        }
    const ObstacleContacts& O = sim.obstacleContacts;
    const uint32_t mask = (1u << ObstacleContacts::kindShift) - 1;
    for (size_t p = 0; p < x.size(); ++p)
        for (size_t w = 0; w < walls.size(); ++w) {
            const bool overlaps = (x[p] - walls[w].point).dot(walls[w].normal) < P.radius[p];
            out.wallOverlaps += overlaps;
            int touching = 0;
            for (uint32_t e = O.start[p]; e < O.start[p + 1]; ++e)
                if (ObstacleKind(O.target[e] >> ObstacleContacts::kindShift) ==
                        ObstacleKind::Wall &&
                    (O.target[e] & mask) == w)
                    touching += O.touching[e];
            out.missedWalls += overlaps && touching != 1;
            out.extraWalls += !overlaps && touching != 0;
        }
}

} // namespace

TEST_CASE("Verlet lists miss no contact in a moving cloud", "[contact][neighbours]") {
    // 3000 steps (400 spheres: below parallelThreshold, so serial; the parallel build is checked
    // by the next test). Tolerance: none; a single missed or extra contact fails.
    ScopedThreads single(1);
    Simulation sim = movingCloud();
    Workspace ws;
    Mismatch mm;
    for (int k = 0; k < 3000; ++k) {
        std::vector<Vec3> byId(sim.particles.size()), x(sim.particles.size());
        for (size_t p = 0; p < x.size(); ++p)
            byId[sim.particles.id[p]] = sim.particles.pos[p];
        const std::vector<Wall> walls = sim.obstacles.walls;
        REQUIRE(advance(sim, ws));
        for (size_t p = 0; p < x.size(); ++p) // the start positions under the step's order
            x[p] = byId[sim.particles.id[p]];
        compare(sim, x, walls, mm);
    }
    INFO("rebuilds " << sim.neighbours.rebuilds << ", sphere overlaps " << mm.overlaps
                     << ", wall overlaps " << mm.wallOverlaps);
    CHECK(sim.neighbours.rebuilds > 50); // the lists were rebuilt many times along the way
    CHECK(mm.overlaps > 1000);           // and there were contacts to find
    CHECK(mm.wallOverlaps > 100);
    CHECK(mm.duplicates == 0);
    CHECK(mm.missedPairs == 0);
    CHECK(mm.extraPairs == 0);
    CHECK(mm.missedWalls == 0);
    CHECK(mm.extraWalls == 0);
}

TEST_CASE("Parallel Verlet build equals brute force", "[contact][neighbours]") {
    // 3000 spheres (more than parallelThreshold, so the build runs on all threads) of R = 2-5 mm
    // scattered in a 0.2 m box (overlaps allowed), with six walls and a tilted 8 x 8 facet mesh
    // through the cloud. After rebuildNeighbours the pair list must be exactly the pairs with
    // |x_j - x_i| < r_i + r_j + skin, sorted by (i, j), and each sphere's obstacle candidates
    // exactly the walls and facets within R + skin, for 1, 2 and 3 threads. The rebuild puts the
    // spheres in cell order: the pairs are compared by sphere id, and the order of the spheres
    // must be the same for every thread count.
    SceneBuilder b;
    const int m = b.material(hertz(2500, 1e8, 0.25));
    const double L = 0.2;
    b.closedBox(Vec3::Zero(), Vec3::Constant(L), m);
    MeshSpec mesh = flatGrid(8, 8, L / 8);
    for (Vec3& v : mesh.vertices) // tilt about x and lift: z = 0.3 L + 0.4 y
        v.z() = 0.3 * L + 0.4 * v.y();
    b.mesh(mesh, m);
    Random rnd(99);
    for (int k = 0; k < 3000; ++k)
        b.sphere(Vec3(rnd(0, L), rnd(0, L), rnd(0, L)), rnd(0.002, 0.005), m);
    b.skin(1e-3);
    const Simulation base = b.build(1e-6);
    REQUIRE(base.particles.size() > parallelThreshold);
    const Particles& P = base.particles;
    const double skin = 1e-3;

    std::set<std::pair<uint32_t, uint32_t>> expected; // by id, lower id first
    for (uint32_t i = 0; i < P.size(); ++i)
        for (uint32_t j = i + 1; j < P.size(); ++j) {
            const double cut = P.radius[i] + P.radius[j] + skin;
            if ((P.pos[j] - P.pos[i]).squaredNorm() < cut * cut)
                expected.emplace(std::min(P.id[i], P.id[j]), std::max(P.id[i], P.id[j]));
        }
    std::vector<std::vector<uint32_t>> expectedObstacles(P.size()); // by id
    const Obstacles& B = base.obstacles;
    for (size_t p = 0; p < P.size(); ++p) {
        const double reach = P.radius[p] + skin;
        for (size_t w = 0; w < B.walls.size(); ++w)
            if ((P.pos[p] - B.walls[w].point).dot(B.walls[w].normal) < reach)
                expectedObstacles[P.id[p]].push_back(uint32_t(w)); // kind Wall = 0
        for (size_t f = 0; f < B.facets.size(); ++f)
            if (pointTriangleDistance(B.facets[f], P.pos[p]) < reach)
                expectedObstacles[P.id[p]].push_back(
                    (uint32_t(ObstacleKind::Facet) << ObstacleContacts::kindShift) | uint32_t(f));
    }
    size_t facetCandidates = 0;
    for (const auto& e : expectedObstacles)
        facetCandidates += size_t(std::count_if(e.begin(), e.end(), [](uint32_t t) {
            return (t >> ObstacleContacts::kindShift) == uint32_t(ObstacleKind::Facet);
        }));
    REQUIRE(expected.size() > 1000);
    REQUIRE(facetCandidates > 100);

    std::vector<uint32_t> firstOrder;
    for (const int threads : {1, 2, 3}) {
        ScopedThreads t(threads);
        INFO(threads << " threads");
        Simulation sim = base;
        Workspace ws;
        auto checkLists = [&] {
            // The directly indexed grid, where only the spheres marked near binned facets look up
            // their cell's facets: the expected candidates below check that none is missed.
            CHECK(ws.grid.dense);
            CHECK(std::count(ws.nearFacets.begin(), ws.nearFacets.end(), 1) > 0);
            CHECK(std::count(ws.nearFacets.begin(), ws.nearFacets.end(), 0) > 0);
            const SpherePairs& S = sim.pairs;
            const std::vector<uint32_t>& id = sim.particles.id;
            std::set<std::pair<uint32_t, uint32_t>> listed;
            bool sorted = true;
            uint32_t lastI = 0, lastJ = 0;
            S.forEachPair([&](size_t k, uint32_t i, uint32_t j) {
                listed.emplace(std::min(id[i], id[j]), std::max(id[i], id[j]));
                sorted = sorted && i < j && (k == 0 || lastI < i || (lastI == i && lastJ < j));
                lastI = i, lastJ = j;
            });
            CHECK(S.size() == expected.size()); // no pair twice
            CHECK(listed == expected);
            CHECK(sorted); // in (i, j) order
            if (firstOrder.empty())
                firstOrder = id;
            CHECK(id == firstOrder);
            size_t wrong = 0;
            for (size_t p = 0; p < P.size(); ++p) {
                std::vector<uint32_t> got(
                    sim.obstacleContacts.target.begin() + sim.obstacleContacts.start[p],
                    sim.obstacleContacts.target.begin() + sim.obstacleContacts.start[p + 1]);
                wrong += got != expectedObstacles[id[p]];
            }
            CHECK(wrong == 0);
        };
        REQUIRE(rebuildNeighbours(sim, ws));
        checkLists();
        // Again with the listing's ranges moved by skewed times (as on cores of unequal speed:
        // the later threads took longer), which must not change any list.
        for (size_t t = 0; t < ws.listingSplit.seconds.size(); ++t)
            ws.listingSplit.seconds[t] = double(1 + 4 * t);
        const std::vector<size_t> before = ws.listingSplit.bounds;
        sim.neighbours.needRebuild = true;
        REQUIRE(rebuildNeighbours(sim, ws));
        if (threads > 1)
            CHECK(ws.listingSplit.bounds != before);
        checkLists();
    }
}

TEST_CASE("Verlet build through the hashed grid equals brute force", "[contact][neighbours]") {
    // Two clusters of 200 spheres (R = 2-4 mm, overlaps allowed) in 5 cm cubes 10 m apart: their
    // bounding box holds far more than 8 cells per sphere, so the grid finds occupied cells
    // through its hash table (CellGrid.hpp) rather than indexing them. The pair list must be
    // exactly the pairs with |x_j - x_i| < r_i + r_j + skin, compared by sphere id.
    ScopedThreads single(1);
    SceneBuilder b;
    const int m = b.material(hertz(2500, 1e8, 0.25));
    Random rnd(7);
    for (int cluster = 0; cluster < 2; ++cluster)
        for (int k = 0; k < 200; ++k)
            b.sphere(Vec3(10.0 * cluster + rnd(0, 0.05), rnd(0, 0.05), rnd(0, 0.05)),
                     rnd(0.002, 0.004), m);
    b.skin(1e-3);
    Simulation sim = b.build(1e-6);
    const double skin = 1e-3;
    std::set<std::pair<uint32_t, uint32_t>> expected; // by id, lower id first
    {
        const Particles& P = sim.particles;
        for (uint32_t i = 0; i < P.size(); ++i)
            for (uint32_t j = i + 1; j < P.size(); ++j) {
                const double cut = P.radius[i] + P.radius[j] + skin;
                if ((P.pos[j] - P.pos[i]).squaredNorm() < cut * cut)
                    expected.emplace(std::min(P.id[i], P.id[j]), std::max(P.id[i], P.id[j]));
            }
    }
    REQUIRE(expected.size() > 400);
    Workspace ws;
    REQUIRE(rebuildNeighbours(sim, ws));
    CHECK_FALSE(ws.grid.dense);
    const std::vector<uint32_t>& id = sim.particles.id;
    std::set<std::pair<uint32_t, uint32_t>> listed;
    sim.pairs.forEachPair([&](size_t, uint32_t i, uint32_t j) {
        listed.emplace(std::min(id[i], id[j]), std::max(id[i], id[j]));
    });
    CHECK(listed.size() == sim.pairs.size()); // no pair twice
    CHECK(listed == expected);
}

TEST_CASE("A cell key unpacks to the coordinates it was packed from", "[contact][neighbours]") {
    const int64_t edge = CellGrid::bias - 3;
    for (const int64_t x : {-edge, int64_t(-7), int64_t(0), int64_t(5), edge})
        for (const int64_t y : {-edge, int64_t(-1), int64_t(0), int64_t(12), edge})
            for (const int64_t z : {-edge, int64_t(-2), int64_t(0), int64_t(1), edge}) {
                int64_t c[3];
                CellGrid::unpack(CellGrid::pack(x, y, z), c);
                CHECK((c[0] == x && c[1] == y && c[2] == z));
            }
}

// The rebuild's quick range test (CellGrid::safeReach) may send a point it cannot vouch for to
// the exact test, but must never pass one the grid cannot index.
TEST_CASE("Every point below the grid's safe reach is in its range", "[contact][neighbours]") {
    for (const double size : {1e-12, 3e-7, 1.0 / 3, 0.1, 2.5e-3, 7.0, 1e9}) {
        const double reach = CellGrid::safeReach(size);
        const double below = std::nextafter(reach, 0.0);
        for (const double x : {below, -below, 0.0, 0.5 * below})
            for (int a = 0; a < 3; ++a) {
                Vec3 p = Vec3::Constant(0.25 * below);
                p[a] = x;
                CHECK(CellGrid::inRange(p, size));
            }
        // Well beyond: neither test passes it.
        CHECK_FALSE(CellGrid::inRange(Vec3(2 * reach, 0, 0), size));
        CHECK_FALSE(CellGrid::inRange(Vec3(0, 0, -2 * reach), size));
    }
}

// A periodic cell's grid orders its columns in tiles (CellGrid.hpp). Whatever the order, every
// cell must hold exactly the points whose coordinates are its own, and the columns must be a
// permutation; here with a partial last tile (ny = 21 is not a multiple of the tile height).
TEST_CASE("A periodic grid's tiled cells hold exactly their own points", "[contact][neighbours]") {
    const int64_t extent[3] = {13, 21, 7};
    Random rnd(11);
    std::vector<Vec3> points(3000);
    for (Vec3& x : points)
        x = Vec3(rnd(0, 13), rnd(0, 21), rnd(0, 7));
    CellGrid g;
    g.layOutPeriodic(extent);
    std::vector<uint32_t> cellOf(points.size()), countScratch;
    for (size_t p = 0; p < points.size(); ++p) {
        int64_t c[3];
        g.coords(points[p], c); // cell size 1 (the periodic grid's)
        cellOf[p] = uint32_t(g.find(c[0], c[1], c[2]));
    }
    g.sortPoints(cellOf, countScratch);
    REQUIRE(g.dense);
    CHECK(g.tileRows < g.ny);
    std::set<int64_t> columns;
    for (int64_t x = 0; x < g.nx; ++x)
        for (int64_t y = 0; y < g.ny; ++y)
            columns.insert(g.column(x, y));
    CHECK(columns.size() == size_t(13 * 21));
    CHECK(*columns.begin() == 0);
    CHECK(*columns.rbegin() == 13 * 21 - 1);
    size_t seen = 0;
    for (int64_t x = 0; x < 13; ++x)
        for (int64_t y = 0; y < 21; ++y)
            for (int64_t z = 0; z < 7; ++z) {
                const int64_t c = g.find(x, y, z);
                REQUIRE(c >= 0);
                for (uint32_t e = g.cellStart[size_t(c)]; e < g.cellStart[size_t(c) + 1]; ++e) {
                    int64_t q[3];
                    g.coords(points[g.order[e]], q);
                    CHECK((q[0] == x && q[1] == y && q[2] == z));
                    ++seen;
                }
            }
    CHECK(seen == points.size());
}

TEST_CASE("The trajectory does not depend on the Verlet skin", "[contact][neighbours]") {
    // The skin only decides how often the lists are rebuilt. Each rebuild reorders the spheres,
    // which changes the order in which forces are summed, so runs with different skins differ by
    // round-off only, as long as every rebuild carries the tangential history over: one lost
    // history would change the tangential forces by their full size. A frictional, damped,
    // initially overlapping packing with walls (R = 5 mm); 1000 steps of 4.9 us. Tolerance:
    // 1e-12 m on positions, far above the round-off (1e-15 m seen) and far below what one lost
    // history does (a force error of 1e-3 of the weight alone moves a sphere by 1e-7 m).
    const Simulation base = densePacking(10, 5, 10);
    std::vector<std::vector<Vec3>> positions;
    std::vector<uint64_t> rebuilds;
    for (const double skin : {2.5e-3, 2e-4, 3e-5}) {
        ScopedThreads single(1);
        Simulation sim = base;
        sim.neighbours.skin = skin;
        Workspace ws;
        REQUIRE(run(sim, ws, 1000));
        std::vector<Vec3> byId(sim.particles.size());
        for (size_t p = 0; p < byId.size(); ++p)
            byId[sim.particles.id[p]] = sim.particles.pos[p];
        positions.push_back(byId);
        rebuilds.push_back(sim.neighbours.rebuilds);
    }
    INFO("rebuilds " << rebuilds[0] << ", " << rebuilds[1] << ", " << rebuilds[2]);
    CHECK(rebuilds[2] > 10 * rebuilds[0]);
    for (size_t run = 1; run < positions.size(); ++run) {
        double worst = 0;
        for (size_t p = 0; p < positions[0].size(); ++p)
            worst = std::max(worst, (positions[run][p] - positions[0][p]).norm());
        INFO("skin " << run << ": largest difference " << worst << " m");
        CHECK(worst < 1e-12);
    }
}

TEST_CASE("A moving facet mesh is found again after every rebuild", "[contact][neighbours]") {
    // A rebuild bins a mesh's facets into cells only when the facets have changed (Neighbours.cpp,
    // binFacets). A flat 8 x 8 mesh (128 facets) rises at 2 m/s through 64 resting spheres
    // (R = 2 mm, no gravity) and a small skin (0.1 mm) makes the lists be rebuilt every few
    // steps as the mesh travels. At every step each sphere that overlaps a facet at the start of
    // the step must have a touching facet contact, and no other sphere may have one. Tolerance:
    // none.
    ScopedThreads single(1);
    SceneBuilder b;
    const int m = b.material(hertz(2500, 1e8, 0.25, 0.5, std::atan(0.3)));
    const double L = 0.04, R = 0.002;
    const int plate = b.mesh(flatGrid(8, 8, L / 8), m);
    Motion lift;
    lift.kind = Motion::Kind::Translation;
    lift.object = plate;
    lift.velocity = Vec3(0, 0, 2.0);
    b.motion(lift);
    Random rnd(5);
    for (int k = 0; k < 64; ++k)
        b.sphere(Vec3(rnd(R, L - R), rnd(R, L - R), rnd(2 * R, 0.01)), R, m);
    b.skin(1e-4);
    Simulation sim = b.build(2e-6);
    Workspace ws;
    size_t overlaps = 0, missed = 0, extra = 0;
    for (int step = 0; step < 2500; ++step) {
        std::vector<Vec3> byId(sim.particles.size());
        for (size_t p = 0; p < byId.size(); ++p)
            byId[sim.particles.id[p]] = sim.particles.pos[p];
        const std::vector<Facet> facets = sim.obstacles.facets;
        REQUIRE(advance(sim, ws));
        const ObstacleContacts& O = sim.obstacleContacts;
        for (size_t p = 0; p < byId.size(); ++p) {
            const Vec3& x = byId[sim.particles.id[p]];
            bool overlapping = false;
            for (const Facet& f : facets)
                overlapping = overlapping || pointTriangleDistance(f, x) < R;
            int touching = 0;
            for (uint32_t e = O.start[p]; e < O.start[p + 1]; ++e)
                touching += O.touching[e];
            overlaps += overlapping;
            missed += overlapping && touching == 0;
            extra += !overlapping && touching != 0;
        }
    }
    INFO("rebuilds " << sim.neighbours.rebuilds << ", sphere-facet overlaps " << overlaps);
    CHECK(sim.neighbours.rebuilds > 100);
    CHECK(overlaps > 1000);
    CHECK(missed == 0);
    CHECK(extra == 0);
}

TEST_CASE("Common motion does not use up the skin between spheres", "[contact][neighbours]") {
    // Rebuild rule (Step.cpp, rebuildDue): two spheres have closed by at most the smaller of the
    // norm of the displacements' ranges since the rebuild and the sum of the two largest |d|; a
    // sphere and an obstacle by |d| plus the obstacle's travel. 100 spheres far apart (no
    // contacts, no forces), skin s = 1 mm, 1000 steps of 1e-5 s at 1 m/s: 10 skins of travel.
    // Moving together, only the |d| bound counts: the initial build and one per skin of travel
    // after it, 10 in all (the rule 2 max |d| >= s would give 20). Two halves moving apart: both
    // pair bounds grow by 2 v dt per step, a build per half skin, 20. Six spheres moving along
    // +-x, +-y, +-z while the rest stay: the ranges' norm grows by 2 sqrt(3) v dt per step (35
    // builds), the two largest |d| by 2 v dt, 20 builds. The bounds allow two more for rounding
    // at the step boundaries.
    enum Pattern { together, apart, scattering };
    for (const Pattern motion : {together, apart, scattering}) {
        ScopedThreads single(1);
        SceneBuilder b;
        const int m = b.material(hertz(2500, 1e8, 0.25));
        for (int k = 0; k < 100; ++k) {
            const Vec3 x(0.02 * (k % 10), 0.02 * (k / 10), 0);
            Vec3 v(1, 0, 0);
            if (motion == apart && k % 10 >= 5)
                v = Vec3(-1, 0, 0);
            if (motion == scattering)
                v = k < 6 ? Vec3(Vec3::Unit(k / 2) * (k % 2 ? -1.0 : 1.0)) : Vec3(Vec3::Zero());
            b.sphere(x, 0.001, m, v);
        }
        b.skin(1e-3);
        Simulation sim = b.build(1e-5);
        Workspace ws;
        REQUIRE(run(sim, ws, 1000));
        INFO("motion " << int(motion) << ": " << sim.neighbours.rebuilds << " rebuilds");
        if (motion == together)
            CHECK((sim.neighbours.rebuilds >= 10 && sim.neighbours.rebuilds <= 12));
        else
            CHECK((sim.neighbours.rebuilds >= 20 && sim.neighbours.rebuilds <= 22));
    }
}

TEST_CASE("Removing a sphere that left the domain keeps the other contacts' history",
          "[contact][neighbours]") {
    // A sphere flies up out of the domain above a frictional packing and is removed at a rebuild,
    // which renumbers the others and rebuilds the pair list from the compacted one. The packing
    // must then move as if the sphere had never been there: up to round-off (the extra sphere
    // triggers other rebuilds, which reorder the sums), far below what one lost tangential
    // history does (see the skin test above for both figures).
    const int nx = 10, ny = 5, nz = 10;
    const double s = 9.9e-3; // densePacking's lattice spacing
    Simulation base = densePacking(nx, ny, nz);
    base.neighbours.skin = 2e-4; // fixed: the default follows the smallest radius
    base.hasDomain = true;
    base.outOfDomain = OutOfDomain::Remove;
    base.domainMin = Vec3::Constant(-0.01);
    base.domainMax = Vec3(nx * s + 0.01, ny * s + 0.01, (nz + 1) * s);
    Simulation withExtra = base;
    const uint32_t extraId = uint32_t(base.particles.size());
    withExtra.particles.add(extraId, Vec3(0.5 * nx * s, 0.5 * ny * s, (nz + 0.6) * s), 2e-3, 2500,
                            0, 0);
    withExtra.particles.vel.back() = Vec3(0, 0, 2);

    std::vector<std::vector<Vec3>> positions;
    for (Simulation* sim : {&base, &withExtra}) {
        ScopedThreads single(1);
        Workspace ws;
        REQUIRE(run(*sim, ws, 1000));
        REQUIRE(sim->particles.size() == size_t(extraId)); // the extra sphere is gone
        std::vector<Vec3> byId(sim->particles.size());
        for (size_t p = 0; p < byId.size(); ++p)
            byId[sim->particles.id[p]] = sim->particles.pos[p];
        positions.push_back(byId);
    }
    const size_t touching = withExtra.pairs.touchingCount();
    CHECK(touching > 100); // the packing is in contact throughout
    double worst = 0;
    for (size_t p = 0; p < positions[0].size(); ++p)
        worst = std::max(worst, (positions[1][p] - positions[0][p]).norm());
    INFO("largest difference " << worst << " m");
    CHECK(worst < 1e-12);
}

TEST_CASE("A sphere outside the domain from the start is removed at the first rebuild",
          "[contact][neighbours]") {
    // Before the first rebuild there are no pair or obstacle lists to compact (the removal read
    // the offsets of lists not yet built: a crash). The sphere never takes part, so the packing
    // moves exactly as without it.
    Simulation base = densePacking(4, 4, 4);
    base.hasDomain = true;
    base.outOfDomain = OutOfDomain::Remove;
    base.domainMin = Vec3::Constant(-0.01);
    base.domainMax = Vec3(0.05, 0.05, 0.07);
    base.neighbours.skin = 2e-4; // fixed: the default follows the smallest radius
    Simulation withExtra = base;
    const uint32_t extraId = uint32_t(base.particles.size());
    withExtra.particles.add(extraId, Vec3(0.5, 0, 0), 5e-3, 2500, 0, 0);
    for (Simulation* sim : {&base, &withExtra}) {
        ScopedThreads single(1);
        Workspace ws;
        REQUIRE(run(*sim, ws, 100));
        CHECK(sim->particles.size() == size_t(extraId));
    }
    CHECK(withExtra.pairs.touchingCount() > 0);
    CHECK(withExtra.particles.pos == base.particles.pos);
}

TEST_CASE("A sphere beyond the neighbour grid's reach fails the run with its reason",
          "[contact][neighbours]") {
    // Without a domain the grid's 2^20 cells along each axis are the limit; the message must not
    // speak of a domain the deck does not have.
    Simulation sim = densePacking(2, 2, 2);
    sim.particles.pos[0] = Vec3(1e9, 0, 0);
    Workspace ws;
    CHECK_FALSE(run(sim, ws, 1));
    INFO(ws.error);
    CHECK(ws.error.find("too far from the origin") != std::string::npos);
    CHECK(ws.error.find("domain") == std::string::npos);
}

// The pair loop first keeps the pairs with |d|^2 < (r_i + r_j)^2, then takes the square root for
// the overlap. Both sides of that test are rounded: a pair can pass it while sqrt(|d|^2) rounds up
// to the reach, an overlap of 0. Such a pair does not touch (no contact, no force, no history).
TEST_CASE("A pair whose distance rounds up to the reach does not touch", "[contact][neighbours]") {
    // Spheres of radius R/2 at 0 and at d = (x, y, 0): |d|^2 = fl(fl(x x) + fl(y y)) and
    // reach^2 = fl(R R). Along one axis sqrt(fl(x x)) is always x; with two components the sum
    // can land on the double below fl(R R), whose square root rounds to R for some R: search.
    double R = 0, x = 0, y = 0;
    for (int k = 0; k < 100000 && R == 0; ++k) {
        const double r = 1e-3 * (1 + 1e-6 * k), r2 = r * r;
        if (!(std::sqrt(std::nextafter(r2, 0.0)) >= r))
            continue;
        for (int t = 1; t < 50 && R == 0; ++t) {
            const double a = r * 0.02 * t;
            double c = std::sqrt(r2 - a * a);
            for (int u = 0; u < 4 && R == 0; ++u, c = std::nextafter(c, 0.0)) {
                const double d2 = a * a + c * c;
                if (d2 < r2 && std::sqrt(d2) >= r)
                    R = r, x = a, y = c;
            }
        }
    }
    REQUIRE(R > 0);
    ScopedThreads single(1);
    SceneBuilder b;
    const int m = b.material(hertz(2500, 1e8, 0.25, 0.5, std::atan(0.5)));
    b.sphere(Vec3::Zero(), R / 2, m);
    b.sphere(Vec3(x, y, 0), R / 2, m, Vec3(0, 0, 0.1));
    Simulation sim = b.build(1e-7);
    Workspace ws;
    REQUIRE(run(sim, ws, 1));
    REQUIRE(sim.pairs.size() == 1);
    CHECK_FALSE(sim.pairs.touching(0));
    for (size_t p = 0; p < 2; ++p) {
        CHECK(sphereLoad(sim, p).force == Vec3::Zero());
        CHECK(sphereLoad(sim, p).torque == Vec3::Zero());
    }
}

TEST_CASE("Facet candidates of a rebuild equal brute force", "[contact][neighbours][facet]") {
    // A scene of a few facets tests the spheres in their bounding boxes (found by rows of grid
    // cells); one of more bins the facets into the grid's cells near them and tests only those
    // of a sphere's cell. A row or cell dropped that could hold a sphere within reach of a facet
    // would lose a candidate. Spheres scattered in and around a closed box of 12 facets and a
    // tilted triangle across it (13 facets, not binned), or two copies of the box (25, binned);
    // every sphere's candidates must be exactly the facets within r + skin of its centre
    // (pointTriangleDistance, the rebuild's own test), in facet order.
    for (int boxes : {1, 2}) {
        DYNAMIC_SECTION(boxes << " box(es)") {
            ScopedThreads single(1);
            SceneBuilder b;
            const int m = b.material(hertz(2500, 1e8, 0.25));
            MeshSpec box;
            for (int k = 0; k < 8; ++k)
                box.vertices.emplace_back(k & 1 ? 0.1 : 0.0, k & 2 ? 0.1 : 0.0, k & 4 ? 0.1 : 0.0);
            box.triangles = {{0, 2, 1}, {1, 2, 3}, {4, 5, 6}, {5, 7, 6}, {0, 1, 4}, {1, 5, 4},
                             {2, 6, 3}, {3, 6, 7}, {0, 4, 2}, {2, 4, 6}, {1, 3, 5}, {3, 7, 5}};
            for (int k = 0; k < boxes; ++k)
                b.mesh(box, m);
            b.mesh({{Vec3(-0.01, 0.02, 0.03), Vec3(0.11, 0.05, 0.08), Vec3(0.04, 0.09, 0.0)},
                    {{0, 1, 2}}},
                   m);
            Random rnd(77);
            for (int s = 0; s < 3000; ++s) {
                const double r = rnd(0.001, 0.003);
                b.sphere(Vec3(rnd(-0.004, 0.104), rnd(-0.004, 0.104), rnd(-0.004, 0.104)), r, m);
            }
            b.skin(5e-4);
            Simulation sim = b.build(1e-6);
            Workspace ws;
            REQUIRE(rebuildNeighbours(sim, ws));
            REQUIRE(sim.obstacles.facets.size() == size_t(12 * boxes + 1));
            CHECK(ws.facetCells.empty() == (boxes == 1)); // binned or not
            CHECK(!ws.nearFacets.empty());                // the spheres near facets were marked
            const Particles& P = sim.particles;
            const ObstacleContacts& O = sim.obstacleContacts;
            const auto& F = sim.obstacles.facets;
            const uint32_t mask = (1u << ObstacleContacts::kindShift) - 1;
            size_t candidates = 0, wrong = 0;
            for (size_t p = 0; p < P.size(); ++p) {
                std::vector<uint32_t> expected, listed;
                for (size_t f = 0; f < F.size(); ++f)
                    if (pointTriangleDistance(F[f], P.pos[p]) < P.radius[p] + sim.neighbours.skin)
                        expected.push_back(uint32_t(f));
                for (uint32_t e = O.start[p]; e < O.start[p + 1]; ++e)
                    if (ObstacleKind(O.target[e] >> ObstacleContacts::kindShift) ==
                        ObstacleKind::Facet)
                        listed.push_back(O.target[e] & mask);
                candidates += expected.size();
                wrong += listed != expected;
            }
            CHECK(candidates > 500 * size_t(boxes)); // about a quarter of the spheres: near a facet
            CHECK(wrong == 0);
        }
    }
}
