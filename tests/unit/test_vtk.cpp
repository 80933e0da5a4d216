// VTK XML writers, checked against VTK's own reader (tests/tools/read_vtk.py, run with Debian's
// /usr/bin/python3 where python3-vtk9 is importable).
#include "CommandRunner.hpp"
#include "PngSize.hpp"
#include "SceneBuilder.hpp"
#include "ScratchDir.hpp"
#include "core/Measures.hpp"
#include "core/SphereLoad.hpp"
#include "io/AtomicFile.hpp"
#include "io/Gnuplot.hpp"
#include "io/VtkWriter.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using dem::Quat;
using dem::Vec3;
using demtest::scratchDir;

namespace {

const char* kPython = "/usr/bin/python3";

// Whether /usr/bin/python3 can import vtk (checked once).
bool haveVtk() {
    static const int ok = [] {
        if (::access(kPython, X_OK) != 0)
            return 0;
        const std::string cmd = std::string(kPython) + " -c 'import vtk' > /dev/null 2>&1";
        return std::system(cmd.c_str()) == 0 ? 1 : 0;
    }();
    return ok == 1;
}

#define REQUIRE_VTK_OR_SKIP()                                                                      \
    do {                                                                                           \
        if (!haveVtk()) {                                                                          \
            WARN("SKIPPED: /usr/bin/python3 cannot import vtk (install python3-vtk9); VTK files "  \
                 "are not read back");                                                             \
            return;                                                                                \
        }                                                                                          \
    } while (0)

struct ReadResult {
    int status = -1;
    nlohmann::json json;
    std::string raw;
};

// Runs the reader script on `file` and parses its JSON.
ReadResult readVtk(const fs::path& file) {
    const std::string cmd = std::string(kPython) +
                            " '" DEM_SOURCE_DIR "/tests/tools/read_vtk.py' '" + file.string() +
                            "' 2> /dev/null";
    ReadResult r;
    FILE* pipe = ::popen(cmd.c_str(), "r");
    if (!pipe)
        return r;
    char buffer[65536];
    size_t got = 0;
    while ((got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0)
        r.raw.append(buffer, got);
    const int status = ::pclose(pipe);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.json = nlohmann::json::parse(r.raw, nullptr, false);
    return r;
}

// Whether no temporary file of an atomic write (io/AtomicFile.hpp) is left in `dir`.
bool noTemporaryFileIn(const fs::path& dir) {
    for (const auto& e : fs::directory_iterator(dir))
        if (dem::isAtomicWriteTemporary(e.path().filename().string()))
            return false;
    return true;
}

// A scene with every kind of thing the writers draw: 6 x 7 x 8 spheres of two materials with
// distinct velocities, spins, orientations, forces and displacements; a wall, a two-facet mesh
// and a rotated box, each its own rigid object; some touching sphere pairs (one of them sliding)
// and sphere–obstacle contacts.
dem::Simulation makeScene() {
    dem::Simulation sim;
    dem::Material a, b;
    a.name = "glass";
    a.frictionAngle = std::atan(0.5);
    b.name = "steel";
    b.frictionAngle = std::atan(0.5);
    sim.materials = {a, b};
    std::string error;
    REQUIRE(dem::buildPairTable(sim.materials, sim.overrides, sim.pairTable, error));

    dem::Particles& P = sim.particles;
    uint32_t p = 0;
    for (int ix = 0; ix < 6; ++ix)
        for (int iy = 0; iy < 7; ++iy)
            for (int iz = 0; iz < 8; ++iz, ++p) {
                const Vec3 x(0.01 * ix + 1e-7 * p, 0.01 * iy + 0.1, 0.01 * iz + 0.02 + 1.0 / 3.0);
                const double r = 0.004 + 1e-5 * (p % 17) + 1.0 / 7.0 * 1e-4;
                P.add(1000 + 3 * p, x, r, 2500, int(p % 2), 1u << (p % 3));
                P.vel.back() = Vec3(0.1 * std::sin(p), -0.2 / (p + 1), 1e-3 * p);
                P.angVel.back() = Vec3(p, -2.0 * p, 0.5);
                P.ori.back() = Quat(Eigen::AngleAxisd(0.01 * p, Vec3(1, 2, 3).normalized()));
                P.pos.back() += Vec3(1e-4, -2e-4, std::sqrt(2.0) * 1e-5); // displacement
            }

    auto object = [&](const std::string& name, dem::ObstacleKind kind, const Vec3& force) {
        dem::RigidObject o;
        o.name = name;
        o.kind = kind;
        o.force = force;
        o.torque = Vec3(0, 0, 0.25);
        o.vel = Vec3(0, 0, -0.01);
        o.center = o.center0 = Vec3(0, 0, 0.5);
        o.center.z() -= 0.001;
        sim.obstacles.objects.push_back(o);
        return uint32_t(sim.obstacles.objects.size() - 1);
    };
    const uint32_t floor = object("floor", dem::ObstacleKind::Wall, Vec3(0, 0, 12.5));
    sim.obstacles.walls.push_back({Vec3(0, 0, 0.01), Vec3(0, 0, 1), floor});
    const uint32_t ramp = object("ramp & <chute>", dem::ObstacleKind::Facet, Vec3(1, 2, 3));
    const Vec3 c[4] = {{0, 0, 0}, {0.1, 0, 0.05}, {0.1, 0.1, 0.05}, {0, 0.1, 0}};
    const int tri[2][3] = {{0, 1, 2}, {0, 2, 3}};
    for (const auto& t : tri) {
        dem::Facet f;
        for (int k = 0; k < 3; ++k) {
            f.v[k] = c[t[k]];
            f.vid[k] = uint32_t(t[k]);
        }
        f.normal = (f.v[1] - f.v[0]).cross(f.v[2] - f.v[0]).normalized();
        f.object = ramp;
        sim.obstacles.facets.push_back(f);
    }
    sim.obstacles.nextVertexId = 4;
    const uint32_t lid = object("lid", dem::ObstacleKind::Box, Vec3(-4, 0, 0));
    sim.obstacles.boxes.push_back({Vec3(0.03, 0.04, 0.2), Vec3(0.05, 0.04, 0.01),
                                   Quat(Eigen::AngleAxisd(0.3, Vec3::UnitZ())), lid});

    // Pairs along z inside each column: (p, p + 1) for p = 3 k; even ones touch.
    dem::SpherePairs& S = sim.pairs;
    const size_t count = 40;
    S.start.assign(P.size() + 1, 0); // the offsets by first sphere, and the transpose
    std::vector<uint8_t> touching(count);
    for (size_t k = 0; k < count; ++k) {
        S.j.push_back(uint32_t(3 * k + 1));
        ++S.start[3 * k + 1];
        touching[k] = k % 2 == 0;
    }
    for (size_t q = 0; q < P.size(); ++q)
        S.start[q + 1] += S.start[q];
    dem::transposePairs(S, P.size());
    dem::allotRecords(S, touching, true);
    for (size_t k = 0; k < count; k += 2) { // the touching pairs
        const uint32_t i = uint32_t(3 * k), j = i + 1;
        const Vec3 n = (P.pos[j] - P.pos[i]).normalized();
        const double fn = 0.5 + 0.01 * double(k);
        const Vec3 t = n.unitOrthogonal();
        dem::PairContact& r = S.record(k);
        // k % 4 == 0: the spring sits on the Coulomb limit (mu = 0.5); else well inside it.
        r.shear = (k % 4 == 0 ? 0.5 * fn : 0.1 * fn) * t;
        r.force = fn * n + r.shear;
        r.nxf = n.cross(r.force);
        r.halfOverlap = 1e-6 * double(k + 1);
    }
    // Obstacle candidates: sphere 0 has two (one touching), sphere 5 one touching.
    dem::ObstacleContacts& O = sim.obstacleContacts;
    O.start.assign(P.size() + 1, 0);
    for (size_t q = 1; q <= P.size(); ++q)
        O.start[q] = O.start[q - 1] + (q - 1 == 0 ? 2 : q - 1 == 5 ? 1 : 0);
    O.resize(3, false);
    O.touching = {1, 0, 1};
    O.target = {0, 0, 0};
    O.force = {Vec3(0.1, 0.2, 0.3), Vec3::Zero(), Vec3(-0.1, 0, 0.4)};
    O.torque = {Vec3(0, 1e-4, 0), Vec3::Zero(), Vec3(2e-4, 0, 0)};

    sim.time = 0.0123456789;
    sim.step = 4242;
    return sim;
}

std::vector<double> firstComponents(const nlohmann::json& array) {
    std::vector<double> out;
    for (const auto& tuple : array["values"])
        out.push_back(tuple[0].get<double>());
    return out;
}

Vec3 vec3(const nlohmann::json& v) {
    return Vec3(v[0].get<double>(), v[1].get<double>(), v[2].get<double>());
}

} // namespace

TEST_CASE("VTK spheres file reads back exactly with VTK's reader", "[vtk]") {
    REQUIRE_VTK_OR_SKIP();
    dem::Simulation sim = makeScene();
    sim.groupNames = {"top", "bottom"};
    const dem::Particles& P = sim.particles;
    const size_t n = P.size();
    const auto dir = scratchDir("vtk-spheres");
    std::string error;

    for (const auto encoding : {dem::VtkEncoding::Base64Zlib, dem::VtkEncoding::Ascii}) {
        const bool binary = encoding == dem::VtkEncoding::Base64Zlib;
        INFO((binary ? "base64 + zlib" : "ascii"));
        dem::VtkFormat format;
        format.encoding = encoding;
        const fs::path file = dir / (binary ? "spheres.vtu" : "spheres-ascii.vtu");
        REQUIRE(
            dem::writeParticlesVtu(file.string(), sim, dem::VtkFieldSelection{}, error, format));
        CHECK(noTemporaryFileIn(dir));
        const ReadResult r = readVtk(file);
        INFO(r.raw.substr(0, 2000));
        REQUIRE(r.status == 0);
        const auto& j = r.json;
        CHECK(j["messages"] == "");
        CHECK(j["class"] == "vtkUnstructuredGrid");
        REQUIRE(j["number_of_points"] == n);
        REQUIRE(j["cells"] == n);
        const auto& pd = j["point_data"];
        const std::vector<std::pair<std::string, int>> expected{
            {"radius", 1}, {"velocity", 3}, {"angular_velocity", 3}, {"displacement", 3},
            {"force", 3},  {"torque", 3},   {"contacts", 1},         {"material", 1},
            {"groups", 1}, {"id", 1},       {"orientation", 4}};
        CHECK(pd.size() == expected.size());
        for (const auto& [name, comps] : expected) {
            INFO(name);
            REQUIRE(pd.contains(name));
            CHECK(pd[name]["components"] == comps);
            CHECK(pd[name]["tuples"] == n);
        }
        CHECK(j["field_data"]["TimeValue"]["values"][0][0].get<double>() == sim.time);
        CHECK(j["field_data"]["step"]["values"][0][0].get<double>() == double(sim.step));
        // What the material indices and the group bits stand for.
        CHECK(j["field_data"]["material_names"]["values"] ==
              nlohmann::json::array({"glass", "steel"}));
        CHECK(j["field_data"]["group_names"]["values"] == nlohmann::json::array({"top", "bottom"}));

        std::vector<int> contacts(n, 0);
        sim.pairs.forEachPair([&](size_t k, uint32_t a, uint32_t b) {
            if (sim.pairs.touching(k))
                ++contacts[a], ++contacts[b];
        });
        contacts[0] += 1;
        contacts[5] += 1;
        // The loads are summed from the contacts (SphereLoad.hpp): the scene's pairs give some.
        std::vector<Vec3> force, torque;
        sphereLoads(sim, force, torque);
        size_t loaded = 0;
        for (size_t p = 0; p < n; ++p)
            loaded += force[p].norm() > 0 && torque[p].norm() > 0;
        CHECK(loaded > 10);

        bool exact = true;
        for (size_t p = 0; p < n; ++p) {
            CHECK(j["cell_types"][p] == 1);
            exact = exact && vec3(j["points"][p]) == P.pos[p];
            exact = exact && pd["radius"]["values"][p][0].get<double>() == P.radius[p];
            exact = exact && vec3(pd["velocity"]["values"][p]) == P.vel[p];
            exact = exact && vec3(pd["angular_velocity"]["values"][p]) == P.angVel[p];
            exact = exact && vec3(pd["displacement"]["values"][p]) == Vec3(P.pos[p] - P.pos0[p]);
            exact = exact && vec3(pd["force"]["values"][p]) == force[p];
            exact = exact && vec3(pd["torque"]["values"][p]) == torque[p];
            exact = exact && pd["contacts"]["values"][p][0].get<int>() == contacts[p];
            exact = exact && pd["material"]["values"][p][0].get<int>() == P.material[p];
            exact = exact && pd["groups"]["values"][p][0].get<uint32_t>() == P.groups(p);
            exact = exact && pd["id"]["values"][p][0].get<uint32_t>() == P.id[p];
            const auto& q = pd["orientation"]["values"][p];
            exact = exact && q[0].get<double>() == P.ori[p].w() &&
                    q[1].get<double>() == P.ori[p].x() && q[2].get<double>() == P.ori[p].y() &&
                    q[3].get<double>() == P.ori[p].z();
            if (!exact) {
                FAIL_CHECK("sphere " << p << " differs");
                break;
            }
        }
        CHECK(exact);
        CHECK(pd["contacts"]["values"][0][0].get<int>() == 2); // one pair + one obstacle
        CHECK(pd["id"]["values"][n - 1][0].get<uint32_t>() == 1000 + 3 * (n - 1));
    }

    // Spheres in no group keep no group masks (Particles.hpp): the field is all zero.
    dem::Simulation ungrouped = sim;
    ungrouped.particles.groupBits = {};
    const fs::path file = dir / "ungrouped.vtu";
    dem::VtkFieldSelection groupsOnly;
    REQUIRE(dem::parseVtkFields({"groups"}, groupsOnly, error));
    REQUIRE(dem::writeParticlesVtu(file.string(), ungrouped, groupsOnly, error, dem::VtkFormat{}));
    const ReadResult r = readVtk(file);
    REQUIRE(r.status == 0);
    const auto& groups = r.json["point_data"]["groups"]["values"];
    REQUIRE(groups.size() == n);
    size_t nonzero = 0;
    for (size_t p = 0; p < n; ++p)
        nonzero += groups[p][0].get<uint32_t>() != 0;
    CHECK(nonzero == 0);
}

TEST_CASE("VTK field selection", "[vtk]") {
    dem::VtkFieldSelection s;
    std::string error;
    REQUIRE(dem::parseVtkFields({"radius", "linVelVec", "id"}, s, error));
    CHECK(s.radius);
    CHECK(s.velocity);
    CHECK(s.id);
    CHECK_FALSE(s.force);
    CHECK_FALSE(s.orientation);
    CHECK_FALSE(dem::parseVtkFields({"radius", "temperature"}, s, error));
    CHECK(error.find("temperature") != std::string::npos);
    REQUIRE(dem::parseVtkFields({"all"}, s, error));
    CHECK((s.force && s.orientation && s.contacts));
    dem::VtkKinds k;
    REQUIRE(dem::parseVtkKinds({"spheres", "walls"}, k, error));
    CHECK((k.spheres && k.obstacles && !k.contacts));
    CHECK_FALSE(dem::parseVtkKinds({"cracks"}, k, error));

    REQUIRE_VTK_OR_SKIP();
    const dem::Simulation sim = makeScene();
    const auto fileScratch = scratchDir("vtk-fields");
    const fs::path file = fileScratch / "some.vtu";
    REQUIRE(dem::parseVtkFields({"radius", "velocity"}, s, error));
    REQUIRE(dem::writeParticlesVtu(file.string(), sim, s, error));
    const ReadResult r = readVtk(file);
    REQUIRE(r.status == 0);
    CHECK(r.json["point_data"].size() == 2);
    CHECK(r.json["point_data"].contains("radius"));
    CHECK(r.json["point_data"].contains("velocity"));
    CHECK(r.json["number_of_points"] == sim.particles.size());
}

TEST_CASE("VTK contact network", "[vtk]") {
    REQUIRE_VTK_OR_SKIP();
    const dem::Simulation sim = makeScene();
    const dem::Particles& P = sim.particles;
    const dem::SpherePairs& S = sim.pairs;
    const auto fileScratch = scratchDir("vtk-contacts");
    const fs::path file = fileScratch / "contacts.vtp";
    std::string error;
    REQUIRE(dem::writeContactsVtp(file.string(), sim, error));
    const ReadResult r = readVtk(file);
    INFO(r.raw.substr(0, 2000));
    REQUIRE(r.status == 0);
    const auto& j = r.json;
    CHECK(j["messages"] == "");
    CHECK(j["class"] == "vtkPolyData");
    const size_t m = S.size() / 2; // the even pairs touch
    REQUIRE(j["cells"] == m);
    REQUIRE(j["number_of_points"] == 2 * m);
    const auto& cd = j["cell_data"];
    for (const auto& [name, comps] :
         std::vector<std::pair<std::string, int>>{{"normal_force", 1},
                                                  {"normal_force_vector", 3},
                                                  {"shear_force", 3},
                                                  {"overlap", 1},
                                                  {"sliding", 1},
                                                  {"ids", 2}}) {
        INFO(name);
        REQUIRE(cd.contains(name));
        CHECK(cd[name]["components"] == comps);
        CHECK(cd[name]["tuples"] == m);
    }
    size_t c = 0;
    const std::vector<uint32_t> owner = pairOwners(S);
    for (size_t k = 0; k < S.size(); ++k) {
        if (!S.touching(k))
            continue;
        INFO("pair " << k);
        const uint32_t a = owner[k], b = S.j[k];
        CHECK(j["cell_types"][c] == 3); // VTK_LINE
        CHECK(j["cell_points"][c] == nlohmann::json::array({2 * c, 2 * c + 1}));
        CHECK(vec3(j["points"][2 * c]) == P.pos[a]);
        CHECK(vec3(j["points"][2 * c + 1]) == P.pos[b]);
        const Vec3 n = (P.pos[b] - P.pos[a]).normalized();
        const double fn = 0.5 + 0.01 * double(k);
        CHECK(cd["normal_force"]["values"][c][0].get<double>() == Approx(fn).epsilon(1e-12));
        CHECK((vec3(cd["normal_force_vector"]["values"][c]) - fn * n).norm() < 1e-12);
        CHECK((vec3(cd["shear_force"]["values"][c]) - S.record(k).shear).norm() < 1e-12);
        CHECK(cd["overlap"]["values"][c][0].get<double>() == 2 * S.record(k).halfOverlap);
        CHECK(cd["sliding"]["values"][c][0].get<int>() == (k % 4 == 0 ? 1 : 0));
        CHECK(cd["ids"]["values"][c][0].get<uint32_t>() == P.id[a]);
        CHECK(cd["ids"]["values"][c][1].get<uint32_t>() == P.id[b]);
        ++c;
    }
    // The moments of rolling and twisting resistance, only where the pairs keep them.
    CHECK_FALSE(cd.contains("rolling_moment"));
    dem::Simulation rolled = sim;
    dem::SpherePairs& R = rolled.pairs;
    R.rolling.assign(R.records.size(), dem::PairRolling::none());
    for (size_t k = 0; k < R.size(); ++k)
        if (R.touching(k))
            R.rollingOf(k).couple = Vec3(1e-6 * double(k), -2e-6, 3e-6);
    REQUIRE(dem::writeContactsVtp(file.string(), rolled, error));
    const ReadResult withMoments = readVtk(file);
    REQUIRE(withMoments.status == 0);
    const auto& moments = withMoments.json["cell_data"]["rolling_moment"];
    CHECK(moments["components"] == 3);
    c = 0;
    for (size_t k = 0; k < R.size(); ++k)
        if (R.touching(k))
            CHECK(vec3(moments["values"][c++]) == R.rollingOf(k).couple);
}

TEST_CASE("VTK contact network of a periodic cell joins the touching images", "[vtk]") {
    // Two spheres (r = 5 cm) touching across the x face of a 1 m cell: the line goes from the
    // first to the image of the second, 9 cm long, not across the cell.
    REQUIRE_VTK_OR_SKIP();
    dem::test::SceneBuilder b;
    const int mat = b.material(dem::test::hertz(2500, 1e8, 0.25));
    b.sphere(Vec3(0.96, 0.5, 0.5), 0.05, mat);
    b.sphere(Vec3(0.05, 0.5, 0.5), 0.05, mat);
    b.periodic(Vec3(1, 1, 1));
    dem::Simulation sim = b.build(1e-6);
    dem::Workspace ws;
    REQUIRE(dem::advance(sim, ws));
    REQUIRE(dem::contactCount(sim) == 1);
    const auto fileScratch = scratchDir("vtk-periodic-contacts");
    const fs::path file = fileScratch / "contacts.vtp";
    std::string error;
    REQUIRE(dem::writeContactsVtp(file.string(), sim, error));
    const ReadResult r = readVtk(file);
    REQUIRE(r.status == 0);
    REQUIRE(r.json["cells"] == 1);
    const Vec3 a = vec3(r.json["points"][0]), c = vec3(r.json["points"][1]);
    // 9 cm apart at the start; the step of 1 us the file follows moved them by far less than
    // a micrometre.
    CHECK(std::abs((c - a).norm() - 0.09) < 1e-6);
    const double fn = r.json["cell_data"]["normal_force"]["values"][0][0].get<double>();
    CHECK(fn > 0);
}

TEST_CASE("VTK obstacles: wall patch, facets, box hexahedron", "[vtk]") {
    REQUIRE_VTK_OR_SKIP();
    const dem::Simulation sim = makeScene();
    const dem::Obstacles& B = sim.obstacles;
    const auto fileScratch = scratchDir("vtk-obstacles");
    const fs::path file = fileScratch / "obstacles.vtu";
    std::string error;
    REQUIRE(dem::writeObstaclesVtu(file.string(), sim, error));
    const ReadResult r = readVtk(file);
    INFO(r.raw.substr(0, 3000));
    REQUIRE(r.status == 0);
    const auto& j = r.json;
    CHECK(j["messages"] == "");
    REQUIRE(j["cells"] == 4);
    REQUIRE(j["number_of_points"] == 4 + 6 + 8);
    CHECK(j["cell_types"] == nlohmann::json::array({9, 5, 5, 12}));
    const auto& cd = j["cell_data"];
    CHECK(firstComponents(cd["object"]) == std::vector<double>{0, 1, 1, 2});
    CHECK(firstComponents(cd["kind"]) == std::vector<double>{0, 1, 1, 2});
    for (int c = 0; c < 4; ++c) {
        const auto& o = B.objects[size_t(cd["object"]["values"][c][0].get<int>())];
        CHECK(vec3(cd["force"]["values"][c]) == o.force);
        CHECK(vec3(cd["torque"]["values"][c]) == o.torque);
        CHECK(vec3(cd["velocity"]["values"][c]) == o.vel);
        CHECK(vec3(cd["displacement"]["values"][c]) == Vec3(o.center - o.center0));
    }
    CHECK(j["field_data"]["object_names"]["values"] ==
          nlohmann::json::array({"floor", "ramp & <chute>", "lid"}));

    // Wall: a square in its plane z = 0.01 centred on the spheres' centroid, side = the diagonal
    // of their bounding box.
    const dem::Particles& P = sim.particles;
    Vec3 centroid = Vec3::Zero(), lo = P.pos[0], hi = P.pos[0];
    for (const Vec3& x : P.pos) {
        centroid += x;
        lo = lo.cwiseMin(x);
        hi = hi.cwiseMax(x);
    }
    centroid /= double(P.size());
    Vec3 mid = Vec3::Zero();
    for (int k = 0; k < 4; ++k) {
        const Vec3 x = vec3(j["points"][k]);
        CHECK(x.z() == Approx(0.01).margin(1e-15));
        mid += 0.25 * x;
    }
    CHECK((mid.head<2>() - centroid.head<2>()).norm() < 1e-12);
    const double side = (vec3(j["points"][1]) - vec3(j["points"][0])).norm();
    CHECK(side == Approx((hi - lo).norm()).epsilon(1e-12));
    // Facets: their vertices, exactly.
    for (int f = 0; f < 2; ++f)
        for (int k = 0; k < 3; ++k)
            CHECK(vec3(j["points"][4 + 3 * f + k]) == B.facets[size_t(f)].v[k]);
    // Box: corner 0 is (-hx, -hy, -hz) and corner 6 (+hx, +hy, +hz) in the box frame.
    const dem::Box& b = B.boxes[0];
    CHECK((vec3(j["points"][10]) - (b.center + b.ori * Vec3(-b.half))).norm() < 1e-15);
    CHECK((vec3(j["points"][16]) - (b.center + b.ori * b.half)).norm() < 1e-15);
    CHECK(j["cell_points"][3] == nlohmann::json::array({10, 11, 12, 13, 14, 15, 16, 17}));
}

TEST_CASE("VTK files of an empty scene are valid", "[vtk]") {
    REQUIRE_VTK_OR_SKIP();
    dem::Simulation sim;
    const auto dir = scratchDir("vtk-empty");
    std::string error;
    REQUIRE(dem::writeParticlesVtu((dir / "s.vtu").string(), sim, dem::VtkFieldSelection{}, error));
    REQUIRE(dem::writeContactsVtp((dir / "c.vtp").string(), sim, error));
    REQUIRE(dem::writeObstaclesVtu((dir / "o.vtu").string(), sim, error));
    for (const char* f : {"s.vtu", "c.vtp", "o.vtu"}) {
        INFO(f);
        const ReadResult r = readVtk(dir / f);
        INFO(r.raw.substr(0, 2000));
        REQUIRE(r.status == 0);
        CHECK(r.json["number_of_points"] == 0);
        CHECK(r.json["cells"] == 0);
        CHECK(r.json["messages"] == "");
    }
}

TEST_CASE("pvd collection: three time steps, restart truncation", "[vtk]") {
    const auto dir = scratchDir("vtk-pvd");
    const fs::path pvd = dir / "spheres.pvd";
    std::string error;
    dem::PvdCollection c;
    REQUIRE(c.open(pvd.string(), error));
    const double times[3] = {0, 1.25e-3, 0.1 + 0.2};
    for (int k = 0; k < 3; ++k)
        REQUIRE(c.add(times[k], dem::vtkStepFileName("spheres", uint64_t(k) * 500, "vtu"), error));
    CHECK(dem::vtkStepFileName("spheres", 1200, "vtu") == "spheres.00001200.vtu");
    CHECK(noTemporaryFileIn(dir));

    // Python's XML parser sees the three data sets with their exact times.
    if (::access(kPython, X_OK) == 0) {
        const ReadResult r = readVtk(pvd);
        INFO(r.raw);
        REQUIRE(r.status == 0);
        CHECK(r.json["type"] == "Collection");
        REQUIRE(r.json["datasets"].size() == 3);
        for (int k = 0; k < 3; ++k) {
            CHECK(r.json["datasets"][k]["timestep"].get<double>() == times[k]);
            CHECK(r.json["datasets"][k]["file"] ==
                  dem::vtkStepFileName("spheres", uint64_t(k) * 500, "vtu"));
        }
    } else {
        WARN("SKIPPED: no /usr/bin/python3 to parse the .pvd");
    }

    // Restart at the second time: the third entry goes, new ones follow.
    dem::PvdCollection d;
    REQUIRE(d.load(pvd.string(), times[1], error));
    REQUIRE(d.entries().size() == 2);
    CHECK(d.entries()[1].time == times[1]);
    REQUIRE(d.add(0.5, "spheres.x.vtu", error));
    dem::PvdCollection e;
    REQUIRE(e.load(pvd.string(), 1e300, error));
    REQUIRE(e.entries().size() == 3);
    CHECK(e.entries()[2].file == "spheres.x.vtu");

    // Not a collection: an error, not an empty series.
    {
        std::ofstream f(dir / "bad.pvd");
        f << "<VTKFile type=\"UnstructuredGrid\"></VTKFile>\n";
    }
    CHECK_FALSE(e.load((dir / "bad.pvd").string(), 1, error));
    // A missing file starts an empty collection.
    REQUIRE(e.load((dir / "new.pvd").string(), 1, error));
    CHECK(e.entries().empty());
}

TEST_CASE("VTK recorder writes numbered files and collections", "[vtk]") {
    dem::Simulation sim = makeScene();
    const auto dirScratch = scratchDir("vtk-recorder");
    const fs::path dir = dirScratch / "vtk";
    std::string error;
    dem::VtkRecorder rec;
    REQUIRE(rec.open(dir.string(), dem::VtkKinds{}, dem::VtkFieldSelection{}, dem::VtkFormat{},
                     std::nullopt, error));
    for (int k = 0; k < 3; ++k) {
        sim.step = uint64_t(100 * k);
        sim.time = 1e-3 * k;
        REQUIRE(rec.write(sim, error));
        REQUIRE(rec.write(sim, error)); // same step: nothing new
    }
    CHECK(rec.count() == 3);
    for (const char* kind : {"spheres", "contacts", "obstacles"}) {
        INFO(kind);
        dem::PvdCollection c;
        REQUIRE(c.load((dir / (std::string(kind) + ".pvd")).string(), 1e300, error));
        REQUIRE(c.entries().size() == 3);
        for (const auto& entry : c.entries())
            CHECK(fs::exists(dir / entry.file));
    }
    CHECK(fs::exists(dir / "contacts.00000200.vtp"));

    // Restart from t = 1e-3, step 100: the collections keep two entries and go on. A file a
    // killed run was writing is removed; the earlier series stays.
    std::ofstream(dir / "spheres.00000300.vtu.tmp-4242") << "<VTKFile";
    dem::VtkRecorder again;
    REQUIRE(again.open(dir.string(), dem::VtkKinds{true, false, false}, dem::VtkFieldSelection{},
                       dem::VtkFormat{}, dem::VtkContinuation{1e-3, 100}, error));
    sim.step = 100; // the restart step was an output step: written again, not listed twice
    sim.time = 1e-3;
    REQUIRE(again.write(sim, error));
    sim.step = 150;
    sim.time = 1.5e-3;
    REQUIRE(again.write(sim, error));
    CHECK_FALSE(fs::exists(dir / "spheres.00000300.vtu.tmp-4242"));
    CHECK(fs::exists(dir / "spheres.00000000.vtu"));
    // The file beyond the restart step belonged to the future being rewritten; the kinds not
    // written keep theirs, as their collections list them.
    CHECK_FALSE(fs::exists(dir / "spheres.00000200.vtu"));
    CHECK(fs::exists(dir / "contacts.00000200.vtp"));
    dem::PvdCollection c;
    REQUIRE(c.load((dir / "spheres.pvd").string(), 1e300, error));
    REQUIRE(c.entries().size() == 3);
    CHECK(c.entries()[2].file == "spheres.00000150.vtu");

    // No obstacles: no obstacles files and no empty collection.
    dem::Simulation bare = makeScene();
    bare.obstacles = dem::Obstacles{};
    const auto dir2 = scratchDir("vtk-recorder-bare");
    dem::VtkRecorder r2;
    REQUIRE(r2.open(dir2.string(), dem::VtkKinds{}, dem::VtkFieldSelection{}, dem::VtkFormat{},
                    std::nullopt, error));
    REQUIRE(r2.write(bare, error));
    CHECK(fs::exists(dir2 / "spheres.pvd"));
    CHECK_FALSE(fs::exists(dir2 / "obstacles.pvd"));
}

TEST_CASE("the quickstart deck's outputs: VTK series VTK reads, a rendered plot, a snapshot",
          "[vtk][gnuplot]") {
    const auto dir = scratchDir("quickstart-outputs");
    const demtest::CommandResult run =
        demtest::runDem("run '" DEM_SOURCE_DIR "/decks/quickstart.toml' --quiet --out qs", dir);
    REQUIRE(run.code == 0);
    const fs::path qs = dir / "qs";
    const auto summary = nlohmann::json::parse(demtest::slurp(qs / "summary.json"));
    const int particles = summary["particles"];
    CHECK(demtest::countLines(demtest::slurp(qs / "history.tsv")) > 10);
    // One series per kind, the last file of each listed in its collection.
    const std::string last = fmt::format("{:08d}", summary["steps"].get<uint64_t>());
    for (const std::string kind : {"spheres", "contacts", "obstacles"}) {
        INFO(kind);
        const std::string pvd = demtest::slurp(qs / "vtk" / (kind + ".pvd"));
        CHECK(demtest::countLines(pvd) > 5);
        CHECK(pvd.find(kind + "." + last) != std::string::npos);
    }
    if (dem::findGnuplot().empty()) {
        WARN("SKIPPED: gnuplot is not installed (apt-get install gnuplot-nox); no PNG checked");
    } else {
        CHECK(demtest::pngSize(qs / "plots" / "energy.png") == std::pair{1000, 700});
        fs::remove(qs / "plots" / "energy.png");
        const demtest::CommandResult plot = demtest::runDem("plot qs", dir);
        CHECK(plot.code == 0);
        CHECK(demtest::pngSize(qs / "plots" / "energy.png") == std::pair{1000, 700});
        const demtest::CommandResult snap = demtest::runDem("snapshot qs --size 640x480", dir);
        CHECK(snap.code == 0);
        const fs::path png =
            qs / fmt::format("snapshot-{:09d}.png", summary["steps"].get<uint64_t>());
        CHECK(snap.out == png.lexically_relative(dir).string() + "\n");
        CHECK(demtest::pngSize(png) == std::pair{640, 480});
        // A missing step lists the ones there are; a directory without checkpoints says how to
        // get them.
        const demtest::CommandResult noStep = demtest::runDem("snapshot qs --step 1", dir);
        CHECK(noStep.code == 2);
        CHECK(noStep.err.find("no checkpoint at step 1") != std::string::npos);
        fs::create_directories(dir / "empty");
        const demtest::CommandResult none = demtest::runDem("snapshot empty", dir);
        CHECK(none.code == 2);
        CHECK(none.err.find("[output.checkpoint]") != std::string::npos);
    }
    REQUIRE_VTK_OR_SKIP();
    const ReadResult spheres = readVtk(qs / "vtk" / ("spheres." + last + ".vtu"));
    REQUIRE(spheres.status == 0);
    CHECK(spheres.json["points"].size() == size_t(particles));
    const ReadResult contacts = readVtk(qs / "vtk" / ("contacts." + last + ".vtp"));
    REQUIRE(contacts.status == 0);
    // Lines for sphere–sphere contacts; the summary counts sphere–obstacle contacts too.
    CHECK(contacts.json["cells"].get<int>() > particles / 2);
    CHECK(contacts.json["cells"].get<double>() < summary["final"]["contacts"].get<double>());
    const ReadResult obstacles = readVtk(qs / "vtk" / ("obstacles." + last + ".vtu"));
    REQUIRE(obstacles.status == 0);
    CHECK(obstacles.json["cells"].get<int>() >= 10); // the open box: 5 faces of 2 triangles
    const ReadResult pvd = readVtk(qs / "vtk" / "spheres.pvd");
    REQUIRE(pvd.status == 0);
    CHECK(pvd.json["datasets"].size() >= 2);
}
