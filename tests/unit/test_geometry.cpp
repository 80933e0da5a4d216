// Regions, packings and meshes (src/geometry).
#include "geometry/Mesh.hpp"
#include "geometry/Packing.hpp"
#include "geometry/Region.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <numbers>
#include <sstream>

using namespace dem;
namespace fs = std::filesystem;

namespace {

Region box(const Vec3& min, const Vec3& max) {
    return Region{RegionBox{min, max}};
}
Region ball(const Vec3& c, double r) {
    return Region{RegionSphere{c, r}};
}
Region cylinder(const Vec3& a, const Vec3& b, double r) {
    return Region{RegionCylinder{a, b, r}};
}
Region unitBox() {
    return box(Vec3::Zero(), Vec3::Ones());
}

// A scratch directory under the system temp directory, removed at the end of the test.
struct TempDir {
    fs::path path;
    TempDir() {
        const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
        path = fs::temp_directory_path() / ("dem-test-geometry-" + std::to_string(stamp));
        fs::create_directories(path);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    std::string write(const std::string& name, const std::string& content) const {
        const fs::path file = path / name;
        std::ofstream(file, std::ios::binary) << content;
        return file.string();
    }
};

bool anyOverlap(const std::vector<SphereSpec>& a, const std::vector<SphereSpec>& b, bool same) {
    for (size_t i = 0; i < a.size(); ++i)
        for (size_t j = same ? i + 1 : 0; j < b.size(); ++j)
            if ((a[i].center - b[j].center).norm() < a[i].radius + b[j].radius)
                return true;
    return false;
}

double solidVolume(const std::vector<SphereSpec>& spheres) {
    double v = 0;
    for (const auto& s : spheres)
        v += 4.0 / 3.0 * std::numbers::pi * std::pow(s.radius, 3);
    return v;
}

Vec3 triangleNormal(const TriangleMesh& m, const std::array<uint32_t, 3>& t) {
    const Vec3 &a = m.vertices[t[0]], &b = m.vertices[t[1]], &c = m.vertices[t[2]];
    return (b - a).cross(c - a).normalized();
}

Vec3 triangleCentroid(const TriangleMesh& m, const std::array<uint32_t, 3>& t) {
    return (m.vertices[t[0]] + m.vertices[t[1]] + m.vertices[t[2]]) / 3;
}

// ASCII STL text of a mesh, one facet per triangle, normals from the winding.
std::string asciiStl(const TriangleMesh& m) {
    std::ostringstream out;
    out.precision(17);
    out << "solid test\n";
    for (const auto& t : m.triangles) {
        const Vec3 n = triangleNormal(m, t);
        out << "  facet normal " << n.x() << ' ' << n.y() << ' ' << n.z() << "\n    outer loop\n";
        for (uint32_t v : t)
            out << "      vertex " << m.vertices[v].x() << ' ' << m.vertices[v].y() << ' '
                << m.vertices[v].z() << '\n';
        out << "    endloop\n  endfacet\n";
    }
    out << "endsolid test\n";
    return out.str();
}

void appendU32(std::string& s, uint32_t v) {
    for (int b = 0; b < 4; ++b)
        s.push_back(char((v >> (8 * b)) & 0xff));
}

void appendVec(std::string& s, const Vec3& v) {
    for (int k = 0; k < 3; ++k) {
        const float f = float(v[k]);
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        appendU32(s, bits);
    }
}

// Binary STL of a mesh; the header deliberately starts with "solid" as some exporters do.
std::string binaryStl(const TriangleMesh& m) {
    std::string s = "solid but binary";
    s.resize(80, ' ');
    appendU32(s, uint32_t(m.triangles.size()));
    for (const auto& t : m.triangles) {
        appendVec(s, triangleNormal(m, t));
        for (uint32_t v : t)
            appendVec(s, m.vertices[v]);
        s += std::string(2, '\0');
    }
    return s;
}

// Every triangle with its own three vertices, as STL stores them.
TriangleMesh soup(const TriangleMesh& m) {
    TriangleMesh out;
    for (const auto& t : m.triangles) {
        const auto base = uint32_t(out.vertices.size());
        for (uint32_t v : t)
            out.vertices.push_back(m.vertices[v]);
        out.triangles.push_back({base, base + 1, base + 2});
    }
    return out;
}

} // namespace

// ---------------------------------------------------------------------------------------------
// Regions

TEST_CASE("region membership of points", "[geometry][region]") {
    const Region b = unitBox();
    CHECK(contains(b, Vec3(0.5, 0.5, 0.5)));
    CHECK(contains(b, Vec3(0, 1, 0.5))); // the boundary is inside
    CHECK_FALSE(contains(b, Vec3(1.01, 0.5, 0.5)));

    const Region s = ball(Vec3(1, 1, 1), 2);
    CHECK(contains(s, Vec3(2.9, 1, 1)));
    CHECK_FALSE(contains(s, Vec3(2.5, 2.5, 1)));

    // A cylinder along the diagonal of the xy plane.
    const Region c = cylinder(Vec3::Zero(), Vec3(2, 2, 0), 0.5);
    CHECK(contains(c, Vec3(1, 1, 0.4)));
    CHECK_FALSE(contains(c, Vec3(1, 1, 0.6)));
    CHECK_FALSE(contains(c, Vec3(-0.1, -0.1, 0))); // beyond the cap at a
    CHECK_FALSE(contains(c, Vec3(2.1, 2.1, 0)));   // beyond the cap at b

    const Region u{RegionUnion{{unitBox(), box(Vec3(2, 0, 0), Vec3(3, 1, 1))}}};
    CHECK(contains(u, Vec3(0.5, 0.5, 0.5)));
    CHECK(contains(u, Vec3(2.5, 0.5, 0.5)));
    CHECK_FALSE(contains(u, Vec3(1.5, 0.5, 0.5)));

    const Region i{RegionIntersection{{unitBox(), ball(Vec3::Zero(), 1)}}};
    CHECK(contains(i, Vec3(0.5, 0.5, 0.5)));
    CHECK_FALSE(contains(i, Vec3(0.9, 0.9, 0.9)));
    CHECK_FALSE(contains(i, Vec3(-0.1, 0, 0)));

    const Region d{RegionDifference{{unitBox(), ball(Vec3(0.5, 0.5, 0.5), 0.25)}}};
    CHECK(contains(d, Vec3(0.1, 0.1, 0.1)));
    CHECK_FALSE(contains(d, Vec3(0.5, 0.5, 0.5)));
    CHECK_FALSE(contains(d, Vec3(2, 2, 2)));
}

TEST_CASE("region membership of whole spheres", "[geometry][region]") {
    const Region b = unitBox();
    CHECK(containsSphere(b, Vec3(0.5, 0.5, 0.5), 0.5));
    CHECK_FALSE(containsSphere(b, Vec3(0.5, 0.5, 0.4), 0.5));
    CHECK(containsSphere(b, Vec3(0.1, 0.1, 0.1), 0.1));
    CHECK_FALSE(containsSphere(b, Vec3(0.1, 0.1, 0.1), 0.11));

    const Region s = ball(Vec3::Zero(), 1);
    CHECK(containsSphere(s, Vec3(0.5, 0, 0), 0.5));
    CHECK_FALSE(containsSphere(s, Vec3(0.5, 0, 0), 0.51));
    CHECK_FALSE(containsSphere(s, Vec3::Zero(), 1.5)); // bigger than the region

    const Region c = cylinder(Vec3::Zero(), Vec3(0, 0, 2), 1);
    CHECK(containsSphere(c, Vec3(0, 0, 1), 1));
    CHECK(containsSphere(c, Vec3(0.5, 0, 0.5), 0.5));
    CHECK_FALSE(containsSphere(c, Vec3(0.5, 0, 0.4), 0.5)); // through the bottom cap
    CHECK_FALSE(containsSphere(c, Vec3(0.6, 0, 1), 0.5));   // through the side
    CHECK_FALSE(containsSphere(c, Vec3(0, 0, 1.6), 0.5));   // through the top cap

    // A sphere straddling two touching boxes is inside neither, but inside their union.
    const Region u{RegionUnion{{unitBox(), box(Vec3(1, 0, 0), Vec3(2, 1, 1))}}};
    CHECK(containsSphere(u, Vec3(1, 0.5, 0.5), 0.3));
    CHECK_FALSE(containsSphere(u, Vec3(1, 0.5, 0.5), 0.6));
    const Region gap{RegionUnion{{unitBox(), box(Vec3(1.1, 0, 0), Vec3(2, 1, 1))}}};
    CHECK_FALSE(containsSphere(gap, Vec3(1.05, 0.5, 0.5), 0.3));

    const Region i{RegionIntersection{{unitBox(), ball(Vec3::Zero(), 1)}}};
    CHECK(containsSphere(i, Vec3(0.3, 0.3, 0.3), 0.2));
    CHECK_FALSE(containsSphere(i, Vec3(0.5, 0.5, 0.5), 0.2)); // pokes out of the ball

    // A box with a ball-shaped hole, and a box with a box-shaped notch.
    const Region d{RegionDifference{{unitBox(), ball(Vec3(0.5, 0.5, 0.5), 0.25)}}};
    CHECK(containsSphere(d, Vec3(0.15, 0.15, 0.15), 0.1));
    CHECK_FALSE(containsSphere(d, Vec3(0.5, 0.5, 0.15), 0.15)); // touches the hole
    CHECK(containsSphere(d, Vec3(0.5, 0.5, 0.12), 0.1));
    const Region notch{RegionDifference{{unitBox(), box(Vec3(0.5, 0.5, -1), Vec3(2, 2, 2))}}};
    CHECK(containsSphere(notch, Vec3(0.2, 0.2, 0.5), 0.2));
    CHECK_FALSE(containsSphere(notch, Vec3(0.4, 0.4, 0.5), 0.2));
    CHECK(containsSphere(notch, Vec3(0.29, 0.8, 0.5), 0.2));
    CHECK_FALSE(containsSphere(notch, Vec3(0.3, 0.8, 0.5), 0.2)); // touching counts as overlap
    CHECK_FALSE(containsSphere(notch, Vec3(0.4, 0.8, 0.5), 0.2));
}

TEST_CASE("region bounds", "[geometry][region]") {
    Vec3 lo, hi;
    REQUIRE(bounds(box(Vec3(-1, 0, 1), Vec3(1, 2, 3)), lo, hi));
    CHECK(lo == Vec3(-1, 0, 1));
    CHECK(hi == Vec3(1, 2, 3));

    REQUIRE(bounds(ball(Vec3(1, 2, 3), 0.5), lo, hi));
    CHECK(lo == Vec3(0.5, 1.5, 2.5));
    CHECK(hi == Vec3(1.5, 2.5, 3.5));

    REQUIRE(bounds(cylinder(Vec3(0, 0, 1), Vec3(0, 0, 4), 2), lo, hi));
    CHECK(lo.isApprox(Vec3(-2, -2, 1)));
    CHECK(hi.isApprox(Vec3(2, 2, 4)));

    // Tilted 45 degrees in xz: the caps reach r/sqrt(2) beyond the axis ends along x and z.
    REQUIRE(bounds(cylinder(Vec3::Zero(), Vec3(1, 0, 1), 1), lo, hi));
    const double e = 1 / std::sqrt(2.0);
    CHECK((lo - Vec3(-e, -1, -e)).norm() < 1e-12);
    CHECK((hi - Vec3(1 + e, 1, 1 + e)).norm() < 1e-12);

    const Region u{RegionUnion{{unitBox(), ball(Vec3(3, 0, 0), 1)}}};
    REQUIRE(bounds(u, lo, hi));
    CHECK(lo == Vec3(0, -1, -1));
    CHECK(hi == Vec3(4, 1, 1));

    const Region i{RegionIntersection{{unitBox(), box(Vec3(0.5, -1, 0.25), Vec3(3, 0.5, 3))}}};
    REQUIRE(bounds(i, lo, hi));
    CHECK(lo == Vec3(0.5, 0, 0.25));
    CHECK(hi == Vec3(1, 0.5, 1));

    const Region disjoint{RegionIntersection{{unitBox(), box(Vec3(2, 2, 2), Vec3(3, 3, 3))}}};
    CHECK_FALSE(bounds(disjoint, lo, hi));

    const Region d{RegionDifference{{unitBox(), ball(Vec3::Zero(), 0.5)}}};
    REQUIRE(bounds(d, lo, hi));
    CHECK(lo == Vec3::Zero());
    CHECK(hi == Vec3::Ones());
}

// ---------------------------------------------------------------------------------------------
// Random clouds

TEST_CASE("random cloud: count, no overlaps, inside, reproducible", "[geometry][packing]") {
    RandomCloudSpec spec;
    spec.region = box(Vec3::Zero(), Vec3(0.2, 0.2, 0.2));
    spec.sizes.meanRadius = 0.01;
    spec.sizes.spread = 0.2;
    spec.count = 500;
    spec.seed = 42;

    int64_t shortfall = -1;
    const auto spheres = randomCloud(spec, {}, shortfall);
    CHECK(shortfall == 0);
    REQUIRE(spheres.size() == 500);
    CHECK_FALSE(anyOverlap(spheres, spheres, true));
    for (const auto& s : spheres) {
        CHECK(containsSphere(spec.region, s.center, s.radius));
        CHECK(s.radius >= 0.008);
        CHECK(s.radius <= 0.012);
    }

    int64_t again = -1;
    const auto same = randomCloud(spec, {}, again);
    REQUIRE(same.size() == spheres.size());
    bool identical = true;
    for (size_t k = 0; k < same.size(); ++k)
        identical =
            identical && same[k].center == spheres[k].center && same[k].radius == spheres[k].radius;
    CHECK(identical);

    spec.seed = 43;
    const auto other = randomCloud(spec, {}, again);
    REQUIRE_FALSE(other.empty());
    CHECK(other[0].center != spheres[0].center);
}

TEST_CASE("random cloud avoids existing spheres and fills curved regions", "[geometry][packing]") {
    RandomCloudSpec spec;
    spec.region = cylinder(Vec3::Zero(), Vec3(0, 0, 1), 0.5);
    spec.sizes.meanRadius = 0.04;
    spec.count = 300;
    // Larger and smaller than the new spheres, and one outside the region that reaches in.
    const std::vector<SphereSpec> existing{{Vec3(0, 0, 0.5), 0.3},
                                           {Vec3(0.3, 0, 0.2), 0.05},
                                           {Vec3(-0.3, 0, 0.8), 0.02},
                                           {Vec3(0, 0, -0.05), 0.1}};
    int64_t shortfall = -1;
    const auto spheres = randomCloud(spec, existing, shortfall);
    CHECK(shortfall == 0);
    CHECK(spheres.size() == 300);
    CHECK_FALSE(anyOverlap(spheres, spheres, true));
    CHECK_FALSE(anyOverlap(spheres, existing, false));
    for (const auto& s : spheres)
        CHECK(containsSphere(spec.region, s.center, s.radius));
}

TEST_CASE("a second cloud fills around the first", "[geometry][packing]") {
    RandomCloudSpec spec;
    spec.region = unitBox();
    spec.sizes.meanRadius = 0.05;
    spec.count = 200;
    int64_t shortfall = -1;
    const auto first = randomCloud(spec, {}, shortfall);
    spec.sizes.meanRadius = 0.03;
    spec.count = 300;
    spec.seed = 2;
    const auto second = randomCloud(spec, first, shortfall);
    CHECK(shortfall == 0);
    CHECK_FALSE(anyOverlap(second, first, false));
    CHECK_FALSE(anyOverlap(second, second, true));
}

TEST_CASE("random cloud reports what does not fit", "[geometry][packing]") {
    RandomCloudSpec spec;
    spec.region = unitBox();
    spec.sizes.meanRadius = 0.3; // at most 8 fit in a unit box
    spec.count = 20;
    spec.maxAttempts = 200;
    int64_t shortfall = -1;
    const auto spheres = randomCloud(spec, {}, shortfall);
    CHECK(spheres.size() + size_t(shortfall) == 20);
    CHECK(shortfall >= 12);
    CHECK_FALSE(anyOverlap(spheres, spheres, true));
}

TEST_CASE("random cloud with a size table", "[geometry][packing]") {
    RandomCloudSpec spec;
    spec.region = unitBox();
    spec.sizes.diameters = {0.02, 0.04, 0.06};
    spec.sizes.cumulativeFractions = {0.0, 0.5, 1.0};
    spec.count = 2000;
    int64_t shortfall = -1;
    const auto spheres = randomCloud(spec, {}, shortfall);
    REQUIRE(spheres.size() == 2000);
    int below = 0;
    for (const auto& s : spheres) {
        CHECK(s.radius >= 0.01);
        CHECK(s.radius <= 0.03);
        below += s.radius < 0.02;
    }
    // Half the spheres by number are finer than 0.04 in diameter.
    CHECK(std::abs(below - 1000) < 100);
}

TEST_CASE("random cloud reaches a target porosity", "[geometry][packing]") {
    RandomCloudSpec spec;
    spec.region = box(Vec3::Zero(), Vec3(0.3, 0.3, 0.3));
    spec.sizes.meanRadius = 0.01;
    spec.sizes.spread = 0.3;
    spec.porosity = 0.7;
    int64_t shortfall = -1;
    const auto spheres = randomCloud(spec, {}, shortfall);
    CHECK(shortfall == 0);
    const double porosity = 1 - solidVolume(spheres) / std::pow(0.3, 3);
    CHECK(std::abs(porosity - 0.7) < 0.02);
    CHECK_FALSE(anyOverlap(spheres, spheres, true));

    // The same in a sphere, whose volume is estimated on a grid.
    spec.region = ball(Vec3::Zero(), 0.15);
    const auto inBall = randomCloud(spec, {}, shortfall);
    const double ballVolume = 4.0 / 3.0 * std::numbers::pi * std::pow(0.15, 3);
    CHECK(std::abs(1 - solidVolume(inBall) / ballVolume - 0.7) < 0.02);
}

// A cloud of 100,000 spheres: all placed, none overlapping, checked through cells of the largest
// diameter (each pair compared once, from its lower sphere). How fast it is placed is the
// benchmarks' business, not a test's (a wall-clock bound fails on a slow or busy machine); a
// placement that slowed down by the square of the count would show in this test's time.
TEST_CASE("random cloud of many spheres: all placed, none overlapping", "[geometry][packing]") {
    RandomCloudSpec spec;
    spec.region = unitBox();
    spec.sizes.meanRadius = 0.004;
    spec.sizes.spread = 0.1;
    spec.count = 100000; // solid fraction about 0.027
    int64_t shortfall = -1;
    const auto spheres = randomCloud(spec, {}, shortfall);
    CHECK(shortfall == 0);
    REQUIRE(spheres.size() == 100000);
    double rmax = 0;
    for (const auto& s : spheres)
        rmax = std::max(rmax, s.radius);
    const double cell = 2 * rmax;
    auto key = [](int64_t x, int64_t y, int64_t z) { return (x * 4096 + y) * 4096 + z; };
    std::map<int64_t, std::vector<size_t>> cells;
    std::vector<std::array<int64_t, 3>> at(spheres.size());
    for (size_t k = 0; k < spheres.size(); ++k) {
        for (int a = 0; a < 3; ++a)
            at[k][size_t(a)] = int64_t(std::floor(spheres[k].center[a] / cell)) + 8;
        cells[key(at[k][0], at[k][1], at[k][2])].push_back(k);
    }
    size_t overlaps = 0;
    for (size_t k = 0; k < spheres.size(); ++k)
        for (int dx = -1; dx <= 1; ++dx)
            for (int dy = -1; dy <= 1; ++dy)
                for (int dz = -1; dz <= 1; ++dz) {
                    const auto c = cells.find(key(at[k][0] + dx, at[k][1] + dy, at[k][2] + dz));
                    if (c == cells.end())
                        continue;
                    for (size_t j : c->second)
                        overlaps += j > k && (spheres[j].center - spheres[k].center).norm() <
                                                 spheres[j].radius + spheres[k].radius;
                }
    CHECK(overlaps == 0);
}

// ---------------------------------------------------------------------------------------------
// Lattices

namespace {

// Number of other spheres at distance `spacing` (relative tolerance 1e-12) from sphere k; fails
// the test if any is closer.
int neighboursAt(const std::vector<SphereSpec>& spheres, size_t k, double spacing) {
    int n = 0;
    for (size_t j = 0; j < spheres.size(); ++j) {
        if (j == k)
            continue;
        const double d = (spheres[j].center - spheres[k].center).norm();
        REQUIRE(d >= spacing * (1 - 1e-12));
        n += d <= spacing * (1 + 1e-12);
    }
    return n;
}

} // namespace

TEST_CASE("hexagonal lattice has 12 neighbours at the spacing", "[geometry][packing]") {
    const double r = 0.5, gap = 0.1, s = 2 * r + gap;
    const Region region = box(Vec3::Zero(), Vec3(8, 8, 8));
    const auto spheres = hexagonalLattice(region, r, gap, Vec3(0.7, 0.6, 0.55));
    // FCC has sqrt(2)/s^3 spheres per unit volume; the centres fill a cube of side 8 - 2r.
    const double expected = std::sqrt(2.0) / std::pow(s, 3) * std::pow(8 - 2 * r, 3);
    CHECK(double(spheres.size()) > 0.8 * expected);
    CHECK(double(spheres.size()) < 1.2 * expected);
    int interior = 0;
    for (size_t k = 0; k < spheres.size(); ++k) {
        CHECK(containsSphere(region, spheres[k].center, r));
        const Vec3 p = spheres[k].center;
        if ((p.array() > r + 1.5 * s).all() && (p.array() < 8 - r - 1.5 * s).all()) {
            CHECK(neighboursAt(spheres, k, s) == 12);
            ++interior;
        }
    }
    CHECK(interior > 50);
}

TEST_CASE("cubic lattice fills a box exactly", "[geometry][packing]") {
    // Ten spheres of diameter 1 fit exactly along each side of a 10-unit box.
    const Region region = box(Vec3::Zero(), Vec3(10, 10, 10));
    const auto spheres = cubicLattice(region, 0.5, 0.0, Vec3(0.5, 0.5, 0.5));
    CHECK(spheres.size() == 1000);
    for (size_t k = 0; k < spheres.size(); k += 37) {
        const Vec3 p = spheres[k].center;
        if ((p.array() > 1.2).all() && (p.array() < 8.8).all())
            CHECK(neighboursAt(spheres, k, 1.0) == 6);
    }
    // Loop order: x varies fastest, z slowest.
    CHECK(spheres[1].center.isApprox(Vec3(1.5, 0.5, 0.5)));
    CHECK(spheres.back().center.isApprox(Vec3(9.5, 9.5, 9.5)));

    const auto inBall = cubicLattice(ball(Vec3::Zero(), 3), 0.5, 0.2, Vec3::Zero());
    // Centres 1.2*(i, j, k) within 2.5 of the origin: i^2 + j^2 + k^2 <= 4, 33 of them.
    for (const auto& s : inBall)
        CHECK(s.center.norm() <= 2.5 + 1e-9);
    CHECK(inBall.size() == 33);
}

// ---------------------------------------------------------------------------------------------
// Sphere files

TEST_CASE("sphere files", "[geometry][packing]") {
    TempDir dir;
    std::vector<SphereSpec> spheres;
    std::string error;

    const auto good = dir.write("good.txt", "# x y z r\n"
                                            "0 0 0 0.5\n"
                                            "\n"
                                            "  1 2 3 0.25   # trailing comment\r\n"
                                            "+1e-3 -2.5 4 1e-2\n");
    REQUIRE(readSphereFile(good, spheres, error));
    REQUIRE(spheres.size() == 3);
    CHECK(spheres[1].center == Vec3(1, 2, 3));
    CHECK(spheres[1].radius == 0.25);
    CHECK(spheres[2].center == Vec3(1e-3, -2.5, 4));

    const auto short_ = dir.write("short.txt", "0 0 0 1\n# comment\n1 2 3\n");
    CHECK_FALSE(readSphereFile(short_, spheres, error));
    CHECK(error == "line 3: expected 4 numbers 'x y z r', got 3");
    CHECK(spheres.size() == 3); // untouched on error

    const auto negative = dir.write("negative.txt", "0 0 0 1\n\n\n1 1 1 -0.1\n");
    CHECK_FALSE(readSphereFile(negative, spheres, error));
    CHECK(error == "line 4: radius must be positive, got -0.1");

    const auto word = dir.write("word.txt", "0 0 zero 1\n");
    CHECK_FALSE(readSphereFile(word, spheres, error));
    CHECK(error == "line 1: 'zero' is not a finite number");

    const std::string missing = (dir.path / "missing.txt").string();
    CHECK_FALSE(readSphereFile(missing, spheres, error));
    CHECK(error == "cannot open '" + missing + "': No such file or directory");
}

// ---------------------------------------------------------------------------------------------
// Meshes

TEST_CASE("box mesh", "[geometry][mesh]") {
    const Vec3 lo(-1, 0, 2), hi(3, 1, 4), centre = (lo + hi) / 2;
    const TriangleMesh m = boxMesh(lo, hi, {});
    CHECK(m.vertices.size() == 8);
    REQUIRE(m.triangles.size() == 12);
    for (const auto& t : m.triangles) {
        const Vec3 n = triangleNormal(m, t);
        CHECK(n.dot(centre - triangleCentroid(m, t)) > 0);
        CHECK(n.cwiseAbs().maxCoeff() == Approx(1.0)); // axis-aligned
    }
    // Closed and consistently wound: every directed edge appears once and its reverse once.
    std::map<std::pair<uint32_t, uint32_t>, int> edges;
    for (const auto& t : m.triangles)
        for (int k = 0; k < 3; ++k)
            ++edges[{t[k], t[(k + 1) % 3]}];
    for (const auto& [edge, count] : edges) {
        CHECK(count == 1);
        CHECK(edges.count({edge.second, edge.first}) == 1);
    }

    const TriangleMesh open = boxMesh(lo, hi, {"z+"});
    CHECK(open.triangles.size() == 10);
    for (const auto& t : open.triangles)
        CHECK(triangleCentroid(open, t).z() < hi.z());
    CHECK(boxMesh(lo, hi, {"x-", "y+"}).triangles.size() == 8);
}

TEST_CASE("rectangle mesh", "[geometry][mesh]") {
    const TriangleMesh m = rectangleMesh(Vec3(1, 1, 1), Vec3(2, 0, 0), Vec3(0, 0, 4));
    REQUIRE(m.vertices.size() == 4);
    REQUIRE(m.triangles.size() == 2);
    for (const auto& t : m.triangles)
        CHECK(triangleNormal(m, t).isApprox(Vec3(0, -1, 0)));
    CHECK(m.vertices[0].isApprox(Vec3(0, 1, -1)));
    CHECK(m.vertices[2].isApprox(Vec3(2, 1, 3)));
}

TEST_CASE("STL round trips and welding", "[geometry][mesh]") {
    TempDir dir;
    const TriangleMesh box = boxMesh(Vec3(0, 0, 0), Vec3(1, 2, 3), {});
    std::string error;

    for (const bool binary : {false, true}) {
        INFO((binary ? "binary" : "ASCII"));
        const auto path = dir.write("box.stl", binary ? binaryStl(box) : asciiStl(box));
        TriangleMesh m;
        REQUIRE(loadStl(path, m, error));
        CHECK(m.vertices.size() == 36);
        REQUIRE(m.triangles.size() == 12);
        for (size_t t = 0; t < 12; ++t)
            CHECK(
                triangleNormal(m, m.triangles[t]).isApprox(triangleNormal(box, box.triangles[t])));
        weldVertices(m);
        CHECK(m.vertices.size() == 8);
        CHECK(m.triangles.size() == 12);
        for (const Vec3& v : m.vertices) {
            const bool isCorner = std::any_of(box.vertices.begin(), box.vertices.end(),
                                              [&](const Vec3& c) { return c == v; });
            CHECK(isCorner);
        }
    }
}

TEST_CASE("STL: the file normal decides the winding", "[geometry][mesh]") {
    TempDir dir;
    const auto path = dir.write("flip.stl", "solid t\n"
                                            "facet normal 0 0 -1\n outer loop\n"
                                            "  vertex 0 0 0\n  vertex 1 0 0\n  vertex 0 1 0\n"
                                            " endloop\nendfacet\n"
                                            "facet normal 0 0 0\n outer loop\n"
                                            "  vertex 0 0 0\n  vertex 1 0 0\n  vertex 0 1 0\n"
                                            " endloop\nendfacet\nendsolid t\n");
    TriangleMesh m;
    std::string error;
    REQUIRE(loadStl(path, m, error));
    REQUIRE(m.triangles.size() == 2);
    CHECK(triangleNormal(m, m.triangles[0]).isApprox(Vec3(0, 0, -1)));
    CHECK(triangleNormal(m, m.triangles[1]).isApprox(Vec3(0, 0, 1))); // zero normal: as written
}

TEST_CASE("STL errors", "[geometry][mesh]") {
    TempDir dir;
    TriangleMesh m;
    std::string error;

    const auto missingVertex = dir.write("bad.stl", "solid t\n"
                                                    "facet normal 0 0 1\n"
                                                    "outer loop\n"
                                                    "vertex 0 0 0\n"
                                                    "vertex 1 0 0\n"
                                                    "endloop\n"
                                                    "endfacet\n");
    CHECK_FALSE(loadStl(missingVertex, m, error));
    CHECK(error == "line 6: expected 'vertex x y z'");

    const auto truncated = dir.write("cut.stl", "solid t\nfacet normal 0 0 1\nouter loop\n");
    CHECK_FALSE(loadStl(truncated, m, error));
    CHECK(error == "line 3: expected 'vertex x y z', found the end of the file");

    std::string binary = binaryStl(boxMesh(Vec3::Zero(), Vec3::Ones(), {}));
    binary[0] = 'x'; // no longer "solid", and now one byte short
    binary.pop_back();
    CHECK_FALSE(loadStl(dir.write("short.stl", binary), m, error));
    CHECK(error.find("84 + 50*12 = 684 bytes, but the file has 683") != std::string::npos);

    // A truncated binary file whose header starts with "solid", as many exporters write.
    std::string damaged = binaryStl(boxMesh(Vec3::Zero(), Vec3::Ones(), {}));
    damaged.resize(damaged.size() - 50);
    CHECK_FALSE(loadStl(dir.write("damaged.stl", damaged), m, error));
    CHECK(error.find("damaged binary STL") != std::string::npos);
    CHECK(error.find("but the file has 634") != std::string::npos);

    CHECK_FALSE(loadStl(dir.write("tiny.stl", "abc"), m, error));
    CHECK(error.find("at least 84 bytes") != std::string::npos);

    CHECK_FALSE(loadStl(dir.write("empty.stl", "solid t\nendsolid t\n"), m, error));
    CHECK(error == "the file holds no triangles");
}

TEST_CASE("OFF files", "[geometry][mesh]") {
    TempDir dir;
    TriangleMesh m;
    std::string error;

    const auto quad = dir.write("quad.off", "OFF\n"
                                            "# a unit square and a triangle\n"
                                            "5 2 0\n"
                                            "0 0 0\n1 0 0\n1 1 0\n0 1 0\n"
                                            "0 0 1  # apex\n"
                                            "4 0 1 2 3\n"
                                            "3 0 1 4 255 0 0\n");
    REQUIRE(loadOff(quad, m, error));
    CHECK(m.vertices.size() == 5);
    REQUIRE(m.triangles.size() == 3);
    CHECK(m.triangles[0] == std::array<uint32_t, 3>{0, 1, 2});
    CHECK(m.triangles[1] == std::array<uint32_t, 3>{0, 2, 3});
    CHECK(triangleNormal(m, m.triangles[1]).isApprox(Vec3(0, 0, 1)));

    const auto badIndex = dir.write("bad.off", "OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n\n3 0 1 9\n");
    CHECK_FALSE(loadOff(badIndex, m, error));
    CHECK(error ==
          "line 7: vertex index 9 out of range (the file has 3 vertices, numbered from 0)");

    CHECK_FALSE(loadOff(dir.write("head.off", "PLY\n"), m, error));
    CHECK(error == "line 1: expected the 'OFF' header");

    CHECK_FALSE(loadOff(dir.write("cut.off", "OFF\n3 1 0\n0 0 0\n1 0 0\n"), m, error));
    CHECK(error == "line 4: the file ends after 2 of 3 vertices");

    CHECK_FALSE(
        loadOff(dir.write("vertex.off", "OFF\n3 1 0\n0 0 0\n1 0\n0 1 0\n3 0 1 2\n"), m, error));
    CHECK(error == "line 4: expected a vertex 'x y z'");
}

TEST_CASE("welding a triangle soup shares the vertices", "[geometry][mesh]") {
    const TriangleMesh box = boxMesh(Vec3(-1, -1, -1), Vec3(1, 1, 1), {});
    TriangleMesh m = soup(box);
    REQUIRE(m.vertices.size() == 36);
    // Jitter far below the tolerance must not keep copies apart.
    for (size_t v = 0; v < m.vertices.size(); ++v)
        m.vertices[v].x() += 1e-13 * double(v % 3);
    weldVertices(m);
    CHECK(m.vertices.size() == 8);
    REQUIRE(m.triangles.size() == 12);
    for (size_t t = 0; t < 12; ++t)
        CHECK(triangleNormal(m, m.triangles[t]).isApprox(triangleNormal(box, box.triangles[t])));
}

TEST_CASE("welding drops triangles that collapse", "[geometry][mesh]") {
    TriangleMesh m;
    m.vertices = {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(1e-12, 0, 0),
                  Vec3(1, 1e-12, 0)};
    m.triangles = {{0, 1, 2}, {0, 3, 2}, {1, 4, 2}};
    weldVertices(m, 1e-9);
    CHECK(m.vertices.size() == 3);
    REQUIRE(m.triangles.size() == 1);
    CHECK(m.triangles[0] == std::array<uint32_t, 3>{0, 1, 2});
}

TEST_CASE("transform mesh", "[geometry][mesh]") {
    TriangleMesh m = rectangleMesh(Vec3(1, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0));
    const Mat3 rot = Eigen::AngleAxisd(std::numbers::pi / 2, Vec3::UnitZ()).toRotationMatrix();
    transformMesh(m, 2.0, rot, Vec3(0, 0, 5));
    // Centre (1,0,0) -> scaled (2,0,0) -> rotated (0,2,0) -> translated (0,2,5).
    const Vec3 centre = (m.vertices[0] + m.vertices[2]) / 2;
    CHECK((centre - Vec3(0, 2, 5)).norm() < 1e-12);
    CHECK((m.vertices[1] - m.vertices[0]).norm() == Approx(2.0));
}
