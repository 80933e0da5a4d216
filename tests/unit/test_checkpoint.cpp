// Checkpoint files (src/io/Checkpoint.hpp, man/dem-checkpoint.5): bitwise-exact restart for every
// compression and thread count, every field of the simulation and the run metadata round-tripped,
// damaged files rejected with one-line messages, atomic writes, the checkpoint-directory helpers,
// and a size/speed report for 100,000 spheres.
#include "FileSizeLimit.hpp"
#include "SceneBuilder.hpp"
#include "Version.hpp"
#include "core/Parallel.hpp"
#include "core/StateDigest.hpp"
#include "core/TimeStep.hpp"
#include "io/Checkpoint.hpp"
#include "io/CheckpointSerialize.hpp"

#include <boost/iostreams/copy.hpp>
#include <boost/iostreams/device/array.hpp>
#include <boost/iostreams/device/back_inserter.hpp>
#include <boost/iostreams/filter/gzip.hpp>
#include <boost/iostreams/filtering_stream.hpp>
#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numbers>
#include <random>
#include <sstream>

using namespace dem;
using namespace dem::test;
namespace fs = std::filesystem;

namespace {

const char* const allEndings[] = {".dem", ".dem.gz", ".dem.bz2", ".dem.xz", ".dem.zst"};

// A scratch directory, removed at the end of the test.
struct TempDir {
    fs::path path;
    TempDir() {
        static std::atomic<int> counter{0};
        path = fs::temp_directory_path() /
               ("dem-ckpt-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) +
                "-" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
        fs::create_directories(path);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    std::string operator/(const std::string& name) const { return (path / name).string(); }
    std::vector<std::string> names() const {
        std::vector<std::string> out;
        for (const auto& e : fs::directory_iterator(path))
            out.push_back(e.path().filename().string());
        std::sort(out.begin(), out.end());
        return out;
    }
};

std::string readBytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

void writeBytes(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(bytes.size()));
}

std::string gunzip(const std::string& bytes) {
    namespace bio = boost::iostreams;
    std::string out;
    bio::filtering_istream in;
    in.push(bio::gzip_decompressor());
    in.push(bio::array_source(bytes.data(), bytes.size()));
    bio::copy(in, bio::back_inserter(out));
    return out;
}

std::string gzip(const std::string& bytes) {
    namespace bio = boost::iostreams;
    std::string out;
    {
        bio::filtering_ostream o;
        o.push(bio::gzip_compressor());
        o.push(bio::back_inserter(out));
        o.write(bytes.data(), std::streamsize(bytes.size()));
    }
    return out;
}

// Square tube [0, L]^2 x [0, H] of 8 facets with inward normals; the 8 corners are shared.
MeshSpec facetTube(double L, double H) {
    MeshSpec m;
    const double xy[4][2] = {{0, 0}, {L, 0}, {L, L}, {0, L}};
    for (double z : {0.0, H})
        for (const auto& c : xy)
            m.vertices.emplace_back(c[0], c[1], z);
    const Vec3 centre(L / 2, L / 2, H / 2);
    auto add = [&](int a, int b, int c) {
        const Vec3 n = (m.vertices[b] - m.vertices[a]).cross(m.vertices[c] - m.vertices[a]);
        if (n.dot(centre - m.vertices[a]) < 0)
            std::swap(b, c);
        m.triangles.push_back({a, b, c});
    };
    for (int k = 0; k < 4; ++k) {
        const int a = k, b = (k + 1) % 4;
        add(a, b, b + 4);
        add(a, b + 4, a + 4);
    }
    return m;
}

// Polydisperse spheres with random velocities falling onto a floor wall inside a shaking facet
// tube, Hertz–Mindlin with friction, Cundall damping, a constant force on the top layer.
Simulation dropScene(int nx = 6, int nz = 8, uint64_t seed = 7) {
    SceneBuilder b;
    const int m = b.material(hertz(2500, 1e7, 0.25, 0.5, 0.5));
    const double r = 1e-3, h = 2.4e-3, L = nx * h;
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    uint32_t id = 1000;
    for (int k = 0; k < nz; ++k)
        for (int j = 0; j < nx; ++j)
            for (int i = 0; i < nx; ++i) {
                const Vec3 x((i + 0.5) * h + 0.05 * r * u(rng), (j + 0.5) * h + 0.05 * r * u(rng),
                             (k + 0.5) * h);
                const Vec3 v(0.3 * u(rng), 0.3 * u(rng), -0.5 + 0.3 * u(rng));
                const Vec3 w(50 * u(rng), 50 * u(rng), 50 * u(rng));
                b.sphere(x, r * (1 + 0.08 * u(rng)), m, v, w, id, k == nz - 1 ? 1u : 0u);
                id += 3;
            }
    b.wall(Vec3::Zero(), Vec3::UnitZ(), m, "floor");
    const int tube = b.mesh(facetTube(L, (nz + 2) * h), m, "tube");
    b.gravity(Vec3(0, 0, -9.81)).damping(0.05).skin(0.1 * r);
    Simulation s = b.build(1.0, 1000000);
    s.dt = 0.3 * pWaveTimeStep(s);
    s.groupNames = {"top"};
    Motion shake;
    shake.kind = Motion::Kind::Harmonic;
    shake.object = tube;
    shake.amplitude = Vec3(2e-4, 0, 0);
    shake.frequency = 50;
    s.stages[0].motions.push_back(shake);
    s.stages[0].forces.push_back({0, Vec3(0, 0, -1e-4)});
    beginStage(s);
    return s;
}

size_t touching(const Simulation& s) {
    size_t c = s.pairs.touchingCount();
    for (uint8_t t : s.obstacleContacts.touching)
        c += t;
    return c;
}

// The drop scene with more spheres than parallelThreshold: below it a step runs on one thread
// whatever the thread count, so the smaller scenes test nothing about threads.
constexpr int parallelNx = 14, parallelNz = 11; // 2,156 spheres
static_assert(parallelNx * parallelNx * parallelNz > int(parallelThreshold));

// Runs n steps of the scene from scratch (one neighbour rebuild first).
Simulation stepped(uint64_t n, int nx = 6, int nz = 8, bool trackEnergy = true) {
    Simulation s = dropScene(nx, nz);
    s.trackEnergy = trackEnergy; // off: the pairs keep no energies (Contacts.hpp)
    Workspace ws;
    REQUIRE(rebuildNeighbours(s, ws));
    REQUIRE(run(s, ws, n));
    return s;
}

// The serialised state with the contact points of non-touching obstacle contacts zeroed: the step
// leaves them uninitialised (they are never read), so they differ from run to run.
std::string canonicalBytes(Simulation s) {
    ObstacleContacts& O = s.obstacleContacts;
    for (size_t e = 0; e < O.size(); ++e)
        if (!O.touching[e])
            O.point[e] = O.torque[e] = Vec3::Zero();
    return serializeSimulation(s);
}

bool oneLine(const std::string& s) {
    return s.find('\n') == std::string::npos && !s.empty();
}

} // namespace

// --- 1. exact restart
// -----------------------------------------------------------------------------

TEST_CASE("checkpoint: continuing from a checkpoint is bitwise identical", "[checkpoint]") {
    const uint64_t n = 150;
    for (int threads : {1, 2})
        for (bool energy : {true, false}) {
            ScopedThreads use(threads);
            const int nx = threads == 1 ? 6 : parallelNx, nz = threads == 1 ? 8 : parallelNz;
            for (const char* ending : allEndings) {
                DYNAMIC_SECTION(ending << ", " << threads << " thread(s), energy " << energy) {
                    const Simulation straight = stepped(2 * n, nx, nz, energy);
                    const Simulation first = stepped(n, nx, nz, energy);
                    CHECK(first.pairs.hasEnergy() == energy);
                    REQUIRE(touching(first) > 0); // contact history is part of what is tested
                    TempDir dir;
                    const std::string path = dir / (std::string("restart") + ending);
                    std::string error;
                    REQUIRE(writeCheckpoint(path, first, CheckpointMeta{}, 1, error));
                    Simulation restored;
                    CheckpointMeta meta;
                    REQUIRE(readCheckpoint(path, restored, meta, error));
                    CHECK((serializeSimulation(restored) == serializeSimulation(first)));

                    Workspace ws; // fresh: nothing but the simulation carries over
                    REQUIRE(run(restored, ws, n));
                    CHECK(restored.neighbours.rebuilds > first.neighbours.rebuilds);
                    CHECK(restored.step == straight.step);
                    CHECK(stateDigest(restored) == stateDigest(straight));
                    REQUIRE(restored.particles.size() == straight.particles.size());
                    CHECK(std::memcmp(restored.particles.pos.data(), straight.particles.pos.data(),
                                      sizeof(Vec3) * straight.particles.size()) == 0);
                    CHECK((canonicalBytes(restored) == canonicalBytes(straight)));
                }
            }
        }
}

TEST_CASE("checkpoint: a restart may use another thread count", "[checkpoint]") {
    auto steppedOn = [](int threads, uint64_t steps) {
        ScopedThreads use(threads);
        return stepped(steps, parallelNx, parallelNz);
    };
    const Simulation straight = steppedOn(1, 200);
    const Simulation first = steppedOn(2, 100);
    TempDir dir;
    std::string error;
    REQUIRE(writeCheckpoint(dir / "x.dem", first, {}, -1, error));
    ScopedThreads one(1);
    Simulation restored;
    CheckpointMeta meta;
    REQUIRE(readCheckpoint(dir / "x.dem", restored, meta, error));
    Workspace ws;
    REQUIRE(run(restored, ws, 100));
    CHECK(stateDigest(restored) == stateDigest(straight));
}

// --- 2. metadata and every field
// ------------------------------------------------------------------

TEST_CASE("checkpoint: run metadata round trip", "[checkpoint]") {
    const Simulation sim = stepped(20, 3, 3);
    CheckpointMeta meta;
    meta.programVersion = "not what is stored";
    meta.deckName = "drop";
    meta.deckPath = "decks/drop test.toml";
    meta.deckText = std::string("title = \"dröp\"\n[[stage]]\nsteps = 10\n\0binary\xff", 43);
    meta.resolvedToml = "title = \"drop\"\nseed = 42\n";
    meta.params = {{"young", 1e7}, {"mu", 0.5}, {"n", -3}, {"tiny", 5e-324}, {"", 1e300}};
    meta.runState = R"({"stages":[{"name":"fill","end_step":1200}],"history_rows":57,"vtk":12})";
    TempDir dir;
    for (const char* ending : allEndings) {
        const std::string path = dir / (std::string("meta") + ending);
        std::string error;
        REQUIRE(writeCheckpoint(path, sim, meta, 9, error));
        Simulation s = stepped(1, 2, 2); // previous content is replaced, not merged
        CheckpointMeta m;
        m.params = {{"stale", 1}};
        m.runState = "stale";
        REQUIRE(readCheckpoint(path, s, m, error));
        CHECK(m.programVersion == DEM_VERSION);
        CHECK(m.deckName == meta.deckName);
        CHECK(m.deckPath == meta.deckPath);
        CHECK((m.deckText == meta.deckText));
        CHECK(m.resolvedToml == meta.resolvedToml);
        CHECK(m.params == meta.params);
        CHECK(m.runState == meta.runState);
        CHECK((serializeSimulation(s) == serializeSimulation(sim)));
    }
}

namespace {

// A simulation in which every field of every struct differs from its default. The list here is
// written independently of the serialiser, so a field the serialiser forgets shows up below.
Simulation everyFieldSet() {
    Simulation s;
    Material a;
    a.name = "glass";
    a.law = LawKind::Linear;
    a.density = 2600;
    a.young = 7e10;
    a.poisson = 0.22;
    a.frictionAngle = 0.3;
    a.restitution = 0.9;
    a.contactTime = 2e-4;
    a.restitutionN = 0.8;
    a.restitutionT = 0.7;
    a.rollingFriction = 0.05;
    a.twistingFriction = 0.02;
    Material b = a;
    b.name = "steel";
    b.density = 7800;
    s.materials = {a, b};
    s.overrides = {{0, 1, 0.25, std::nullopt, 0.1, std::nullopt},
                   {1, 1, std::nullopt, 0.5, {}, {}}};
    std::string error;
    REQUIRE(buildPairTable(s.materials, s.overrides, s.pairTable, error));
    s.groupNames = {"left", "right", "lid"};
    Particles& P = s.particles;
    for (int k = 0; k < 3; ++k) {
        P.add(uint32_t(10 + k), Vec3(0.01 * k, 0.02, 0.03), 0.004 + 0.001 * k, 2600, k % 2,
              1u << k);
        P.vel[k] = Vec3(1, 2, 3 + k);
        P.angVel[k] = Vec3(4, 5, 6 + k);
        P.ori[k] = Quat(0.5, 0.5, 0.5, 0.5);
        P.pos0[k] = Vec3(7, 8, 9);
        P.setBlocked(k, BlockX | BlockRZ);
    }
    Obstacles& B = s.obstacles;
    for (int k = 0; k < 3; ++k) {
        RigidObject o;
        o.name = "object" + std::to_string(k);
        o.kind = ObstacleKind(k);
        o.material = 1;
        o.groups = 4;
        o.center = Vec3(1, 1, k);
        o.center0 = Vec3(2, 2, k);
        o.vel = Vec3(0.1, 0, 0);
        o.angVel = Vec3(0, 0.2, 0);
        o.force = Vec3(3, 3, 3);
        o.torque = Vec3(4, 4, 4);
        o.extent = 0.5;
        o.travel = 0.01;
        B.objects.push_back(o);
    }
    B.walls.push_back({Vec3(0, 0, -1), Vec3(0, 0, 1), 0});
    B.facets.push_back(
        {{Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0)}, Vec3(0, 0, 1), {5, 6, 7}, 1});
    B.facets.push_back(
        {{Vec3(1, 0, 0), Vec3(1, 1, 0), Vec3(0, 1, 0)}, Vec3(0, 0, 1), {6, 8, 7}, 1});
    B.boxes.push_back({Vec3(3, 3, 3), Vec3(0.1, 0.2, 0.3), Quat(0, 1, 0, 0), 2});
    B.nextVertexId = 9;
    s.hasDomain = true;
    s.domainMin = Vec3(-1, -2, -3);
    s.domainMax = Vec3(1, 2, 3);
    s.outOfDomain = OutOfDomain::Remove;
    s.trackEnergy = false;

    SpherePairs& S = s.pairs;
    S.j = {1, 2};
    S.start = {0, 1, 2, 2};
    S.jStart = {0, 0, 1, 2};
    S.jPairs = {0, 1};
    allotRecords(S, {1, 0}, true, true); // the second pair is apart: it has no record
    PairContact& r = S.record(0);
    r.shear = Vec3(1e-3, 0, 0);
    r.force = Vec3(1, 0, 0);
    r.nxf = Vec3(0, 0, 1);
    r.halfOverlap = 1e-5;
    S.energy(0) = PairEnergy(1e-9, 3e-9);
    S.rollingOf(0).roll = Vec3(0, 2e-6, 0);
    S.rollingOf(0).twist = -3e-7;
    S.rollingOf(0).couple = Vec3(1e-7, 2e-6, 0);
    ObstacleContacts& O = s.obstacleContacts;
    O.resize(3, true);
    O.start = {0, 1, 2, 3};
    O.target = {uint32_t(ObstacleKind::Wall) << ObstacleContacts::kindShift,
                uint32_t(ObstacleKind::Facet) << ObstacleContacts::kindShift | 1,
                uint32_t(ObstacleKind::Box) << ObstacleContacts::kindShift};
    O.shear = {Vec3(1, 0, 0), Vec3(2, 0, 0), Vec3(3, 0, 0)};
    O.touching = {1, 1, 0};
    O.force = {Vec3(0, 1, 0), Vec3(0, 2, 0), Vec3(0, 3, 0)};
    O.torque = {Vec3(0, 0, 4), Vec3(0, 0, 5), Vec3(0, 0, 6)};
    O.point = {Vec3(0, 0, 1), Vec3(0, 0, 2), Vec3(0, 0, 3)};
    O.dissipated = {1, 2, 3};
    O.elastic = {4, 5, 6};
    O.roll = {Vec3(7, 0, 0), Vec3(8, 0, 0), Vec3::Zero()};
    O.twist = {9, 10, 0};
    O.couple = {Vec3(0, 11, 0), Vec3(0, 12, 0), Vec3::Zero()};
    s.neighbours.skin = 1e-4;
    s.neighbours.refPos.assign(P.pos);
    s.neighbours.cellSize = 0.02;
    s.neighbours.rebuilds = 17;
    s.neighbours.needRebuild = false;

    s.dt = 1e-6;
    s.time = 0.125;
    s.step = 125000;
    s.gravity = Vec3(0, -9.81, 0);
    s.damping = 0.2;
    Motion mo;
    mo.kind = Motion::Kind::Rotation;
    mo.object = 1;
    mo.group = 2;
    mo.velocity = Vec3(1, 2, 3);
    mo.axis = Vec3(1, 0, 0);
    mo.center = Vec3(4, 5, 6);
    mo.angularVelocity = 3.5;
    mo.amplitude = Vec3(7, 8, 9);
    mo.frequency = 10;
    mo.phase = 0.5;
    mo.direction = Vec3(0, 0.6, -0.8);
    mo.servoForce = 12;
    mo.maxSpeed = 0.25;
    mo.gain = 0.02;
    mo.integralTime = 0.3;
    mo.integral = -0.125;
    mo.centerAtObject = true;
    s.motions = {mo};
    s.forces = {{1, Vec3(0, 0, -2)}};

    Stage st;
    st.name = "press";
    st.gravity = Vec3(0, 0, -1);
    st.damping = 0.3;
    st.motions = {mo};
    st.clearMotions = true;
    st.forces = {{2, Vec3(1, 1, 1)}};
    st.frictionAngles = {{1, 0.4}, {0, 0.1}};
    st.velocityGradient = Mat3{{0, 0.1, 0}, {0, 0, 0}, {0, 0, -0.2}};
    st.stressControl = StressControl{5, Vec3(-1e4, 0, -2e4), 0.5, 2e-5, 0.7, Vec3::Zero()};
    st.rollingChanges = {{1, 0.05, std::nullopt}, {0, std::nullopt, 0.02}};
    StopCriterion c;
    c.kind = StopCriterion::Kind::Measure;
    c.value = 0.05;
    c.above = true;
    c.measure.name = "object0.force.z";
    c.measure.scope = MeasureRef::Scope::Object;
    c.measure.quantity = MeasureRef::Quantity::Force;
    c.measure.target = 0;
    c.measure.component = 2;
    c.checkEvery = 10;
    c.minSteps = 100;
    c.servoTolerance = 0.02;
    c.label = "object0.force.z > 0.05";
    st.stop = {c};
    Stage other;
    other.name = "rest";
    s.stages = {other, st};
    s.stage = 1;
    s.stageStartStep = 120000;
    s.stageStartTime = 0.12;
    s.stageStarted = true;
    s.energy = {1.5, 2.5, 3.5};
    s.cell.enabled = true;
    s.cell.origin = Vec3(-1, 0, 2);
    s.cell.h = Mat3{{1, 0.2, 0}, {0, 2, 0}, {0, 0, 3}};
    s.cell.velGrad = Mat3{{0, 0.1, 0}, {0, 0, 0}, {0, 0, 0}};
    s.stressControl = StressControl{3, Vec3(-3e4, -4e4, 0), 2.5, 1e-4, 0.4, Vec3(-0.5, 0.25, 0)};
    s.cell.hAtRebuild = Mat3{{1, 0.1, 0}, {0, 2, 0}, {0, 0, 3}};
    s.pairs.image.resize(s.pairs.size());
    for (size_t k = 0; k < s.pairs.size(); ++k)
        s.pairs.image[k] = uint8_t((5 * k + 1) % imageCodes);
    std::string why;
    REQUIRE(checkSimulationConsistency(s, why));
    return s;
}

bool eq(double a, double b) {
    return std::memcmp(&a, &b, sizeof a) == 0;
}
bool eq(const Vec3& a, const Vec3& b) {
    return std::memcmp(a.data(), b.data(), sizeof a) == 0;
}
bool eq(const Quat& a, const Quat& b) {
    return std::memcmp(a.coeffs().data(), b.coeffs().data(), sizeof(double) * 4) == 0;
}
bool eq(const Mat3& a, const Mat3& b) {
    return std::memcmp(a.data(), b.data(), sizeof(double) * 9) == 0;
}
template <class T>
requires std::is_integral_v<T> || std::is_enum_v<T>
bool eq(T a, T b) {
    return a == b;
}
bool eq(const std::string& a, const std::string& b) {
    return a == b;
}
template <class T> bool eq(const std::optional<T>& a, const std::optional<T>& b);
template <class T> bool eq(const std::vector<T>& a, const std::vector<T>& b);
template <class A, class B> bool eq(const std::pair<A, B>& a, const std::pair<A, B>& b) {
    return eq(a.first, b.first) && eq(a.second, b.second);
}
bool eq(const Material& a, const Material& b) {
    return eq(a.name, b.name) && eq(a.law, b.law) && eq(a.density, b.density) &&
           eq(a.young, b.young) && eq(a.poisson, b.poisson) &&
           eq(a.frictionAngle, b.frictionAngle) && eq(a.restitution, b.restitution) &&
           eq(a.contactTime, b.contactTime) && eq(a.restitutionN, b.restitutionN) &&
           eq(a.restitutionT, b.restitutionT) && eq(a.rollingFriction, b.rollingFriction) &&
           eq(a.twistingFriction, b.twistingFriction);
}
bool eq(const PairOverride& a, const PairOverride& b) {
    return eq(a.a, b.a) && eq(a.b, b.b) && eq(a.frictionAngle, b.frictionAngle) &&
           eq(a.restitution, b.restitution) && eq(a.rollingFriction, b.rollingFriction) &&
           eq(a.twistingFriction, b.twistingFriction);
}
bool eq(const PairParams& a, const PairParams& b) {
    return eq(a.law, b.law) && eq(a.mu, b.mu) && eq(a.youngA, b.youngA) && eq(a.youngB, b.youngB) &&
           eq(a.poissonA, b.poissonA) && eq(a.poissonB, b.poissonB) && eq(a.eStar, b.eStar) &&
           eq(a.gStar, b.gStar) && eq(a.beta, b.beta) && eq(a.contactTime, b.contactTime) &&
           eq(a.lnEn, b.lnEn) && eq(a.lnEt, b.lnEt) && eq(a.muRoll, b.muRoll) &&
           eq(a.muTwist, b.muTwist);
}
bool eq(const Wall& a, const Wall& b) {
    return eq(a.point, b.point) && eq(a.normal, b.normal) && eq(a.object, b.object);
}
bool eq(const Facet& a, const Facet& b) {
    for (int k = 0; k < 3; ++k)
        if (!eq(a.v[k], b.v[k]) || !eq(a.vid[k], b.vid[k]))
            return false;
    return eq(a.normal, b.normal) && eq(a.object, b.object);
}
bool eq(const Box& a, const Box& b) {
    return eq(a.center, b.center) && eq(a.half, b.half) && eq(a.ori, b.ori) &&
           eq(a.object, b.object);
}
bool eq(const RigidObject& a, const RigidObject& b) {
    return eq(a.name, b.name) && eq(a.kind, b.kind) && eq(a.material, b.material) &&
           eq(a.groups, b.groups) && eq(a.center, b.center) && eq(a.center0, b.center0) &&
           eq(a.vel, b.vel) && eq(a.angVel, b.angVel) && eq(a.force, b.force) &&
           eq(a.torque, b.torque) && eq(a.extent, b.extent) && eq(a.travel, b.travel);
}
bool eq(const Motion& a, const Motion& b) {
    return eq(a.kind, b.kind) && eq(a.object, b.object) && eq(a.group, b.group) &&
           eq(a.velocity, b.velocity) && eq(a.axis, b.axis) && eq(a.center, b.center) &&
           eq(a.angularVelocity, b.angularVelocity) && eq(a.amplitude, b.amplitude) &&
           eq(a.frequency, b.frequency) && eq(a.phase, b.phase) && eq(a.direction, b.direction) &&
           eq(a.servoForce, b.servoForce) && eq(a.maxSpeed, b.maxSpeed) && eq(a.gain, b.gain) &&
           eq(a.integralTime, b.integralTime) && eq(a.integral, b.integral) &&
           eq(a.centerAtObject, b.centerAtObject);
}
bool eq(const ConstantForce& a, const ConstantForce& b) {
    return eq(a.group, b.group) && eq(a.force, b.force);
}
bool eq(const MeasureRef& a, const MeasureRef& b) {
    return eq(a.name, b.name) && eq(a.scope, b.scope) && eq(a.quantity, b.quantity) &&
           eq(a.target, b.target) && eq(a.component, b.component);
}
bool eq(const StopCriterion& a, const StopCriterion& b) {
    return eq(a.kind, b.kind) && eq(a.value, b.value) && eq(a.above, b.above) &&
           eq(a.measure, b.measure) && eq(a.checkEvery, b.checkEvery) &&
           eq(a.minSteps, b.minSteps) && eq(a.label, b.label) &&
           eq(a.servoTolerance, b.servoTolerance);
}
bool eq(const StressControl& a, const StressControl& b) {
    return eq(a.axes, b.axes) && eq(a.target, b.target) && eq(a.maxRate, b.maxRate) &&
           eq(a.gain, b.gain) && eq(a.integralTime, b.integralTime) && eq(a.integral, b.integral);
}
template <class T> bool eq(const std::optional<T>& a, const std::optional<T>& b) {
    return a.has_value() == b.has_value() && (!a || eq(*a, *b));
}
bool eq(const RollingChange& a, const RollingChange& b) {
    return eq(a.material, b.material) && eq(a.rolling, b.rolling) && eq(a.twisting, b.twisting);
}
bool eq(const Stage& a, const Stage& b) {
    return eq(a.name, b.name) && eq(a.gravity, b.gravity) && eq(a.damping, b.damping) &&
           eq(a.motions, b.motions) && eq(a.clearMotions, b.clearMotions) &&
           eq(a.forces, b.forces) && eq(a.frictionAngles, b.frictionAngles) && eq(a.stop, b.stop) &&
           eq(a.velocityGradient, b.velocityGradient) && eq(a.stressControl, b.stressControl) &&
           eq(a.rollingChanges, b.rollingChanges);
}
template <class T> bool eq(const std::vector<T>& a, const std::vector<T>& b) {
    if (a.size() != b.size())
        return false;
    for (size_t k = 0; k < a.size(); ++k)
        if (!eq(a[k], b[k]))
            return false;
    return true;
}

void checkEqual(const Simulation& a, const Simulation& b) {
    CHECK(eq(a.materials, b.materials));
    CHECK(eq(a.overrides, b.overrides));
    CHECK(eq(a.pairTable.count, b.pairTable.count));
    CHECK(eq(a.pairTable.params, b.pairTable.params));
    CHECK(eq(a.groupNames, b.groupNames));
    const Particles &P = a.particles, &Q = b.particles;
    CHECK(eq(P.id, Q.id));
    CHECK(eq(P.pos, Q.pos));
    CHECK(eq(P.vel, Q.vel));
    CHECK(eq(P.angVel, Q.angVel));
    CHECK(eq(P.ori, Q.ori));
    CHECK(eq(P.pos0, Q.pos0));
    CHECK(eq(P.radius, Q.radius));
    CHECK(eq(P.massFactor, Q.massFactor));
    CHECK(eq(P.material, Q.material));
    CHECK(eq(P.blockedBits, Q.blockedBits));
    CHECK(eq(P.groupBits, Q.groupBits));
    CHECK(eq(a.obstacles.objects, b.obstacles.objects));
    CHECK(eq(a.obstacles.walls, b.obstacles.walls));
    CHECK(eq(a.obstacles.facets, b.obstacles.facets));
    CHECK(eq(a.obstacles.boxes, b.obstacles.boxes));
    CHECK(eq(a.obstacles.nextVertexId, b.obstacles.nextVertexId));
    CHECK(eq(a.hasDomain, b.hasDomain));
    CHECK(eq(a.domainMin, b.domainMin));
    CHECK(eq(a.domainMax, b.domainMax));
    CHECK(eq(a.outOfDomain, b.outOfDomain));
    CHECK(eq(a.trackEnergy, b.trackEnergy));
    const SpherePairs &S = a.pairs, &T = b.pairs;
    CHECK(eq(S.j, T.j));
    CHECK(eq(S.start, T.start));
    CHECK(eq(S.jStart, T.jStart));
    CHECK(eq(S.jPairs, T.jPairs));
    CHECK(eq(ckpt::touchingFlags(S), ckpt::touchingFlags(T)));
    CHECK(eq(S.image, T.image));
    // Only a touching pair has a record (Contacts.hpp), wherever it lies.
    const auto touchingEq = [&](auto field) {
        if (S.size() != T.size())
            return false;
        for (size_t k = 0; k < S.size(); ++k)
            if (S.touching(k) && !eq(field(S, k), field(T, k)))
                return false;
        return true;
    };
    CHECK(touchingEq([](const SpherePairs& x, size_t k) { return x.record(k).shear; }));
    CHECK(touchingEq([](const SpherePairs& x, size_t k) { return x.record(k).force; }));
    CHECK(touchingEq([](const SpherePairs& x, size_t k) { return x.record(k).nxf; }));
    CHECK(touchingEq([](const SpherePairs& x, size_t k) { return x.record(k).halfOverlap; }));
    CHECK(eq(S.hasEnergy(), T.hasEnergy()));
    if (S.hasEnergy() && T.hasEnergy()) {
        CHECK(touchingEq([](const SpherePairs& x, size_t k) { return x.energy(k).dissipated; }));
        CHECK(touchingEq([](const SpherePairs& x, size_t k) { return x.energy(k).elastic; }));
    }
    CHECK(eq(S.hasRolling(), T.hasRolling()));
    if (S.hasRolling() && T.hasRolling()) {
        CHECK(touchingEq([](const SpherePairs& x, size_t k) { return x.rollingOf(k).roll; }));
        CHECK(touchingEq([](const SpherePairs& x, size_t k) { return x.rollingOf(k).twist; }));
        CHECK(touchingEq([](const SpherePairs& x, size_t k) { return x.rollingOf(k).couple; }));
    }
    const ObstacleContacts &O = a.obstacleContacts, &R = b.obstacleContacts;
    CHECK(eq(O.start, R.start));
    CHECK(eq(O.target, R.target));
    CHECK(eq(O.shear, R.shear));
    CHECK(eq(O.touching, R.touching));
    CHECK(eq(O.force, R.force));
    CHECK(eq(O.torque, R.torque));
    CHECK(eq(O.point, R.point));
    CHECK(eq(O.dissipated, R.dissipated));
    CHECK(eq(O.elastic, R.elastic));
    CHECK(eq(O.roll, R.roll));
    CHECK(eq(O.twist, R.twist));
    CHECK(eq(O.couple, R.couple));
    CHECK(eq(a.neighbours.skin, b.neighbours.skin));
    CHECK(a.neighbours.refPos == b.neighbours.refPos);
    CHECK(eq(a.neighbours.cellSize, b.neighbours.cellSize));
    CHECK(eq(a.neighbours.rebuilds, b.neighbours.rebuilds));
    CHECK(eq(a.neighbours.needRebuild, b.neighbours.needRebuild));
    CHECK(eq(a.dt, b.dt));
    CHECK(eq(a.time, b.time));
    CHECK(eq(a.step, b.step));
    CHECK(eq(a.gravity, b.gravity));
    CHECK(eq(a.damping, b.damping));
    CHECK(eq(a.motions, b.motions));
    CHECK(eq(a.forces, b.forces));
    CHECK(eq(a.stages, b.stages));
    CHECK(eq(a.stage, b.stage));
    CHECK(eq(a.stageStartStep, b.stageStartStep));
    CHECK(eq(a.stageStartTime, b.stageStartTime));
    CHECK(eq(a.stageStarted, b.stageStarted));
    CHECK(eq(a.energy.dampingDissipated, b.energy.dampingDissipated));
    CHECK(eq(a.energy.contactDissipated, b.energy.contactDissipated));
    CHECK(eq(a.energy.gravityWork, b.energy.gravityWork));
    CHECK(eq(a.cell.enabled, b.cell.enabled));
    CHECK(eq(a.cell.origin, b.cell.origin));
    CHECK(eq(a.cell.h, b.cell.h));
    CHECK(eq(a.cell.velGrad, b.cell.velGrad));
    CHECK(eq(a.cell.hAtRebuild, b.cell.hAtRebuild));
    CHECK(eq(a.stressControl, b.stressControl));
}

} // namespace

TEST_CASE("checkpoint: every field of the simulation survives a round trip", "[checkpoint]") {
    const Simulation sim = everyFieldSet();
    // Checks the test itself: every field differs from a default-constructed value.
    const Simulation empty;
    CHECK((serializeSimulation(sim) != serializeSimulation(empty)));
    TempDir dir;
    for (const char* ending : {".dem", ".dem.gz"}) {
        const std::string path = dir / (std::string("fields") + ending);
        std::string error;
        REQUIRE(writeCheckpoint(path, sim, {}, -1, error));
        Simulation back;
        CheckpointMeta meta;
        REQUIRE(readCheckpoint(path, back, meta, error));
        checkEqual(sim, back);
        CHECK((serializeSimulation(back) == serializeSimulation(sim)));
    }
    // In-memory snapshots use the same encoding.
    Simulation snap;
    std::string error;
    REQUIRE(deserializeSimulation(serializeSimulation(sim), snap, error));
    checkEqual(sim, snap);
}

TEST_CASE("checkpoint: orientation and start position are stored only when kept", "[checkpoint]") {
    for (const auto& [orientation, start] :
         {std::pair{false, false}, {true, false}, {false, true}}) {
        DYNAMIC_SECTION("orientation " << orientation << ", start " << start) {
            Simulation sim = stepped(150, 4, 4);
            sim.particles.keepOptional(orientation, start);
            Simulation back;
            std::string error;
            REQUIRE(deserializeSimulation(serializeSimulation(sim), back, error));
            CHECK(back.particles.keepsOrientation == orientation);
            CHECK(back.particles.keepsStart == start);
            checkEqual(sim, back);
            // Both go on identically; neither ever reads the state that is not kept.
            Workspace ws, wsBack;
            REQUIRE(run(sim, ws, 150));
            REQUIRE(run(back, wsBack, 150));
            CHECK(stateDigest(back) == stateDigest(sim));
            CHECK(back.particles.ori.size() == (orientation ? sim.particles.size() : 0));
            CHECK(back.particles.pos0.size() == (start ? sim.particles.size() : 0));
        }
    }
    // A kept array of the wrong length is refused.
    Simulation bad = stepped(10, 4, 4);
    bad.particles.pos0.pop_back();
    Simulation out;
    std::string error;
    CHECK_FALSE(deserializeSimulation(serializeSimulation(bad), out, error));
    CHECK(error.find("sphere arrays of different lengths") != std::string::npos);
}

TEST_CASE("checkpoint: blocked and group masks are stored for every sphere, kept when set",
          "[checkpoint]") {
    Simulation none = stepped(10, 4, 4);
    none.particles.blockedBits = {}; // no sphere blocked or in a group: neither mask kept
    none.particles.groupBits = {};
    // The same spheres with both masks kept, all zero: the same bytes (the file layout does not
    // depend on whether a mask is kept), and loaded they are not kept.
    Simulation zeros = none;
    zeros.particles.blockedBits.assign(zeros.particles.size(), 0);
    zeros.particles.groupBits.assign(zeros.particles.size(), 0);
    const std::string bytes = serializeSimulation(none);
    CHECK(serializeSimulation(zeros) == bytes);
    Simulation back;
    std::string error;
    REQUIRE(deserializeSimulation(bytes, back, error));
    CHECK((back.particles.blockedBits.empty() && back.particles.groupBits.empty()));
    // One bit set in each: both kept, the bits where they were.
    Simulation some = none;
    some.particles.setBlocked(3, BlockZ);
    some.particles.joinGroups(5, 2u);
    REQUIRE(deserializeSimulation(serializeSimulation(some), back, error));
    REQUIRE(back.particles.blockedBits.size() == some.particles.size());
    REQUIRE(back.particles.groupBits.size() == some.particles.size());
    for (size_t p = 0; p < some.particles.size(); ++p) {
        CHECK(back.particles.blocked(p) == (p == 3 ? BlockZ : 0));
        CHECK(back.particles.groups(p) == (p == 5 ? 2u : 0u));
    }
}

TEST_CASE("checkpoint: apart pairs are stored compactly and versions 1 and 2 still read",
          "[checkpoint]") {
    const Simulation sim = stepped(150, 4, 4);
    const SpherePairs& S = sim.pairs;
    const size_t n = sim.particles.size(), m = S.size();
    const size_t touching = S.touchingCount();
    REQUIRE(touching > 0);
    REQUIRE(touching < m);
    REQUIRE(S.jStart.size() == n + 1);

    // Version 2 derives i and the transposed adjacency instead of storing them.
    Simulation back;
    std::string error;
    REQUIRE(deserializeSimulation(serializeSimulation(sim), back, error));
    CHECK(pairOwners(back.pairs) == pairOwners(S));
    CHECK(back.pairs.jStart == S.jStart);
    CHECK(back.pairs.jPairs == S.jPairs);

    // A version-1 payload (every array of every pair) reads back to the same simulation.
    std::string v1;
    ckpt::Writer w([&](const char* p, size_t k) { v1.append(p, k); });
    w.version = 1;
    ckpt::io(w, const_cast<Simulation&>(sim));
    w.flush();
    Simulation old;
    ckpt::Reader r(v1.data(), v1.size(), 1);
    ckpt::io(r, old);
    CHECK(r.remaining() == 0);
    // Versions before 4 did not store the torque of obstacle contacts: it is derived on loading.
    Simulation expected = sim;
    ckpt::deriveObstacleTorques(expected);
    CHECK((serializeSimulation(old) == serializeSimulation(expected)));

    // Bytes saved: per pair 109 in version 1 (i, j, jPairs, shear, touching, force, nxf and three
    // doubles) against 5 (j, touching) plus 96 for a touching pair; jStart and nine vector counts
    // are no longer stored.
    std::string v2;
    ckpt::Writer w2([&](const char* p, size_t k) { v2.append(p, k); });
    w2.version = 2;
    ckpt::io(w2, const_cast<Simulation&>(sim));
    w2.flush();
    Simulation fromV2; // version 2: no periodic cell, no stage velocity gradients
    ckpt::Reader r2(v2.data(), v2.size(), 2);
    ckpt::io(r2, fromV2);
    CHECK(r2.remaining() == 0);
    CHECK((serializeSimulation(fromV2) == serializeSimulation(expected)));
    CHECK(v1.size() - v2.size() == m * (109 - 5) - touching * 96 + (n + 1) * 4 + 9 * 8);
}

TEST_CASE("checkpoint: versions before 4 load masses only where they follow from the materials",
          "[checkpoint]") {
    // Versions 1-3 stored every sphere's mass and moment of inertia; now they follow from the
    // radius and the material's density (Particles::massFactor), which a loaded file must agree
    // with. everyFieldSet() gives its spheres a density of 2600 whatever their material's.
    const auto olderPayload = [](const Simulation& sim, uint32_t version) {
        std::string bytes;
        ckpt::Writer w([&](const char* p, size_t k) { bytes.append(p, k); });
        w.version = version;
        ckpt::io(w, const_cast<Simulation&>(sim));
        w.flush();
        return bytes;
    };
    const auto load = [](const std::string& bytes, uint32_t version, Simulation& out) {
        ckpt::Reader r(bytes.data(), bytes.size(), version);
        ckpt::io(r, out);
    };
    Simulation sim = everyFieldSet();
    Simulation out;
    CHECK_THROWS_WITH(load(olderPayload(sim, 3), 3, out),
                      Catch::Contains("do not follow from its radius and material density"));
    for (Material& m : sim.materials)
        m.density = 2600;
    Simulation back;
    load(olderPayload(sim, 3), 3, back);
    CHECK(back.particles.massFactor == std::vector<double>(2, 2600 * 4.0 / 3.0 * std::numbers::pi));
    for (size_t p = 0; p < sim.particles.size(); ++p)
        CHECK(back.particles.mass(p) == sim.particles.mass(p));
}

TEST_CASE("checkpoint: version 8 and 9 files load without the fields added since",
          "[checkpoint][servo]") {
    // Version 9 added the servos' integral time and integral term (an older file's servos are
    // proportional, with no integral term); version 10 whether a rotation turns about its
    // object's centre at its stage's start (an older file's rotations keep the centre they hold).
    const Simulation sim = everyFieldSet();
    REQUIRE(sim.motions.at(0).integralTime > 0);
    REQUIRE(sim.motions.at(0).centerAtObject);
    REQUIRE(sim.stressControl.integralTime > 0);
    for (const uint32_t version : {8u, 9u}) {
        INFO("version " << version);
        std::string bytes;
        ckpt::Writer w([&](const char* p, size_t k) { bytes.append(p, k); });
        w.version = version;
        ckpt::io(w, const_cast<Simulation&>(sim));
        w.flush();
        Simulation back;
        ckpt::Reader r(bytes.data(), bytes.size(), version);
        ckpt::io(r, back);
        CHECK(r.remaining() == 0);
        Simulation expected = sim;
        const auto older = [&](Motion& m) {
            m.centerAtObject = false;
            if (version < 9)
                m.integralTime = m.integral = 0;
        };
        for (Motion& m : expected.motions)
            older(m);
        for (Stage& st : expected.stages)
            for (Motion& m : st.motions)
                older(m);
        if (version < 9) {
            for (Stage& st : expected.stages)
                if (st.stressControl)
                    st.stressControl->integralTime = 0, st.stressControl->integral = Vec3::Zero();
            expected.stressControl.integralTime = 0;
            expected.stressControl.integral = Vec3::Zero();
        }
        CHECK(back.motions == expected.motions);
        CHECK(back.stressControl == expected.stressControl);
        CHECK(back.stages == expected.stages);
        CHECK(serializeSimulation(back) == serializeSimulation(expected));
    }
}

// A struct that grows a field must also grow its field list in src/io/CheckpointSerialize.hpp
// (and the comparisons above). These sizes are those of x86-64 Linux with GCC/libstdc++.
TEST_CASE("checkpoint: serialised structs have not changed layout", "[checkpoint]") {
#if defined(__x86_64__) && defined(__GLIBCXX__)
    const std::pair<size_t, size_t> sizes[] = {{sizeof(Material), 120},
                                               {sizeof(PairOverride), 72},
                                               {sizeof(PairParams), 128}, // 2 derived
                                               {sizeof(PairTable), 32},
                                               {sizeof(Particles), 272}, // 2 flags derived on load
                                               {sizeof(Wall), 56},
                                               {sizeof(Facet), 112},
                                               {sizeof(Box), 96},
                                               {sizeof(RigidObject), 208},
                                               {sizeof(Obstacles), 104},
                                               {sizeof(SpherePairs), 216},
                                               {sizeof(ObstacleContacts), 288},
                                               {sizeof(NeighbourSettings), 96}, // 1 derived
                                               {sizeof(Energies), 24},
                                               {sizeof(Motion), 208},
                                               {sizeof(StressControl), 80},
                                               {sizeof(ConstantForce), 32},
                                               {sizeof(MeasureRef), 48},
                                               {sizeof(StopCriterion), 128},
                                               {sizeof(Stage), 376},
                                               {sizeof(PeriodicCell), 248},
                                               {sizeof(Simulation), 1664},
                                               {sizeof(CheckpointMeta), 240}};
    for (size_t k = 0; k < std::size(sizes); ++k) {
        INFO("struct #" << k << " in the list changed size: update the checkpoint field lists");
        CHECK(sizes[k].first == sizes[k].second);
    }
#endif
}

TEST_CASE("checkpoint: in-memory snapshots reject malformed data", "[checkpoint]") {
    const Simulation sim = stepped(150, 4, 4);
    REQUIRE(sim.pairs.size() > 0);
    const std::string bytes = serializeSimulation(sim);
    Simulation out = sim;
    std::string error;
    CHECK_FALSE(deserializeSimulation(bytes.substr(0, bytes.size() - 1), out, error));
    CHECK(error.find("malformed") != std::string::npos);
    CHECK_FALSE(deserializeSimulation(bytes + "x", out, error));
    CHECK_FALSE(deserializeSimulation("", out, error));
    std::mt19937_64 rng(3);
    for (int k = 0; k < 200; ++k) {
        std::string b = bytes;
        b[rng() % b.size()] ^= char(1 << (rng() % 8));
        Simulation s;
        if (deserializeSimulation(b, s, error))
            CHECK(checkSimulationConsistency(s, error)); // loads only consistent values
    }
    // An index out of range is caught even if the bytes are well formed.
    Simulation bad = sim;
    bad.pairs.j[0] = uint32_t(bad.particles.size());
    CHECK_FALSE(deserializeSimulation(serializeSimulation(bad), out, error));
    CHECK(error.find("a pair joins sphere " + std::to_string(bad.particles.size())) !=
          std::string::npos);
    // The periodic cell's state: pair images need a cell and a known code; a cell needs a
    // positive volume.
    auto refused = [&](const Simulation& wrong, const std::string& why) {
        std::string e;
        CHECK_FALSE(deserializeSimulation(serializeSimulation(wrong), out, e));
        INFO(e);
        CHECK(e.find(why) != std::string::npos);
    };
    Simulation images = sim;
    images.pairs.image.assign(images.pairs.size(), 13);
    refused(images, "pair images without a periodic cell");
    images.cell.enabled = true;
    images.pairs.image[0] = imageCodes;
    refused(images, "pair image code 27");
    Simulation flat = sim;
    flat.cell.enabled = true;
    flat.pairs.image.assign(flat.pairs.size(), 13);
    flat.cell.h(2, 2) = 0;
    refused(flat, "periodic cell not finite or of zero or negative volume");
    flat.cell.h(2, 2) = 1;
    flat.pairs.image.clear();
    refused(flat, "the pairs of a periodic cell without their images");
    // A position at the last rebuild that is not finite would never count as moved from.
    Simulation stuck = sim;
    const float nan[3] = {0, std::numeric_limits<float>::quiet_NaN(), 0};
    stuck.neighbours.refPos.setFloats(1, nan);
    refused(stuck, "position at the last rebuild of sphere 1 not finite");
    CHECK((serializeSimulation(out) == bytes)); // untouched by the failures
    TempDir dir;
    CHECK_FALSE(writeCheckpoint(dir / "bad.dem", bad, {}, -1, error));
    CHECK(error.find("inconsistent") != std::string::npos);
    CHECK(dir.names().empty());
    // Only touching pairs have records in a checkpoint. Whatever a record given up holds is never
    // read: it changes neither the file nor the steps after it.
    Simulation stale = sim;
    PairContact junk = PairContact::none();
    junk.shear = Vec3(1e-6, 2e-6, 3e-6);
    junk.force = Vec3(1, 2, 3);
    stale.pairs.records.push_back(junk);
    if (stale.pairs.hasEnergy() || !stale.pairs.energies.empty())
        stale.pairs.energies.push_back(PairEnergy(4, 5));
    CHECK((serializeSimulation(stale) == bytes));
    Workspace ws, wsStale;
    Simulation a = sim;
    for (int step = 0; step < 50; ++step) {
        REQUIRE(advance(a, ws));
        REQUIRE(advance(stale, wsStale));
    }
    CHECK(stateDigest(stale) == stateDigest(a));
}

// --- 3. damaged files ----------------------------------------------------------------------------

namespace {

struct Damage {
    TempDir dir;
    Simulation sim = stepped(60, 4, 4);
    CheckpointMeta meta;
    Simulation target;       // what a failed read must leave untouched
    std::string targetBytes; // its serialisation
    Damage() {
        meta.deckName = "damage";
        meta.deckText = "deck";
        target = stepped(1, 2, 2);
        targetBytes = serializeSimulation(target);
    }
    std::string good(const std::string& ending) {
        const std::string path = dir / ("good" + ending);
        std::string error;
        REQUIRE(writeCheckpoint(path, sim, meta, -1, error));
        return readBytes(path);
    }
    // Reads `bytes` stored under a file name with `ending`; returns the error ("" on success).
    std::string read(const std::string& bytes, const std::string& ending,
                     const std::string& name = "bad") {
        const std::string path = dir / (name + ending);
        writeBytes(path, bytes);
        Simulation s = target;
        CheckpointMeta m;
        m.deckName = "unchanged";
        std::string error;
        if (readCheckpoint(path, s, m, error)) {
            // Only a harmless change (e.g. a gzip time stamp) may load, and then loads the truth.
            CHECK((serializeSimulation(s) == serializeSimulation(sim)));
            CHECK((m.deckText == meta.deckText));
            return "";
        }
        CHECK(oneLine(error));
        CHECK(error.rfind("'" + path + "': ", 0) == 0);
        CHECK((serializeSimulation(s) == targetBytes));
        CHECK(m.deckName == "unchanged");
        return error;
    }
};

bool has(const std::string& error, const std::string& part) {
    const bool found = error.find(part) != std::string::npos;
    if (!found)
        UNSCOPED_INFO("error was: " << (error.empty() ? "(none: the file loaded)" : error));
    return found;
}

std::string flip(std::string s, size_t offset, int bit = 0) {
    s.at(offset) = char(s.at(offset) ^ (1 << bit));
    return s;
}

} // namespace

TEST_CASE("checkpoint: damaged uncompressed files are rejected with the right message",
          "[checkpoint]") {
    Damage d;
    const std::string good = d.good(".dem");
    REQUIRE(d.read(good, ".dem").empty());
    const size_t n = good.size(), payload = n - 64 - 24;

    CHECK(has(d.read("", ".dem"), "empty file"));
    CHECK(has(d.read(good.substr(0, 10), ".dem"),
              "truncated (expected a 64-byte header, got 10 bytes)"));
    CHECK(has(d.read(good.substr(0, 64), ".dem"),
              "truncated (expected " + std::to_string(payload) + " payload bytes, got 0)"));
    CHECK(has(d.read(good.substr(0, n / 2), ".dem"),
              "truncated (expected " + std::to_string(payload) + " payload bytes, got " +
                  std::to_string(n / 2 - 64) + ")"));
    CHECK(has(d.read(good.substr(0, n - 1), ".dem"),
              "truncated (expected a 24-byte trailer, got 23 bytes)"));
    CHECK(has(d.read(good + "more", ".dem"), "trailing data"));

    CHECK(has(d.read(flip(good, 0), ".dem"), "not a dem checkpoint (bad magic)"));
    CHECK(has(d.read(flip(good, 5, 3), ".dem"), "not a dem checkpoint (bad magic)"));
    std::string version0 = good;
    version0[8] = 0;
    CHECK(has(d.read(version0, ".dem"), "format version 0"));
    CHECK(has(d.read(flip(good, 13, 2), ".dem"), "byte-order"));
    for (size_t off : {size_t(16), size_t(26), size_t(33), size_t(47), size_t(50), size_t(62)})
        CHECK(has(d.read(flip(good, off, 4), ".dem"), "header checksum mismatch"));
    for (size_t off : {size_t(64), size_t(100), n / 2, n - 25})
        CHECK(has(d.read(flip(good, off, 6), ".dem"), "checksum mismatch (file is corrupted)"));
    CHECK(has(d.read(flip(good, n - 24, 0), ".dem"), "checksum mismatch (file is corrupted)"));
    CHECK(has(d.read(flip(good, n - 14, 0), ".dem"), "trailer and header disagree"));
    CHECK(has(d.read(flip(good, n - 3, 0), ".dem"), "corrupted trailer"));

    // Format version 11: a newer program wrote it.
    static_assert(dem::checkpointFormatVersion < 11);
    std::string v11 = good;
    v11[8] = 11;
    CHECK(has(d.read(v11, ".dem"), "format version 11 is newer than this program supports (" +
                                       std::to_string(dem::checkpointFormatVersion) + ")"));
    // Written with the other byte order.
    std::string swapped = good;
    std::reverse(swapped.begin() + 8, swapped.begin() + 12);
    std::reverse(swapped.begin() + 12, swapped.begin() + 16);
    CHECK(has(d.read(swapped, ".dem"), "other byte order"));

    CHECK(
        has(d.read("title = \"not a checkpoint\"\n", ".dem"), "not a dem checkpoint (bad magic)"));
    CHECK(has(d.read("DEM", ".dem"), "truncated"));
    CHECK(has(d.read(gzip(good), ".dem"), "gzip-compressed, so the name should end in .dem.gz"));
    // A directory is not a checkpoint, and a missing file says so.
    Simulation s;
    CheckpointMeta m;
    std::string error;
    CHECK_FALSE(readCheckpoint(d.dir.path.string(), s, m, error));
    CHECK(has(error, "is a directory"));
    CHECK_FALSE(readCheckpoint(d.dir / "missing.dem", s, m, error));
    CHECK(has(error, "cannot open (No such file or directory)"));
}

TEST_CASE("checkpoint: damaged compressed files are rejected", "[checkpoint]") {
    Damage d;
    const std::string good = d.good(".dem.gz");
    REQUIRE(d.read(good, ".dem.gz").empty());
    const std::string plain = gunzip(good);
    const size_t n = good.size();

    CHECK(has(d.read("", ".dem.gz"), "empty file"));
    CHECK(has(d.read(good.substr(0, 5), ".dem.gz"), "corrupted gzip stream (bad gzip header)"));
    // No byte counts: the decompressor gives nothing of the chunk in which its input ends.
    CHECK(has(d.read(good.substr(0, 10), ".dem.gz"), "truncated (the gzip stream ends early)"));
    CHECK(has(d.read(good.substr(0, n / 2), ".dem.gz"), "truncated (the gzip stream ends early)"));
    CHECK(has(d.read(good.substr(0, n - 1), ".dem.gz"), "truncated"));
    CHECK(has(d.read(good.substr(0, n - 8), ".dem.gz"), "truncated"));
    // A flipped deflate stream may also decode to a stream that ends early: refused as truncated.
    for (size_t off : {size_t(20), n / 3, n / 2, n - 30}) {
        const std::string e = d.read(flip(good, off, 3), ".dem.gz");
        CHECK((has(e, "corrupted gzip stream") || has(e, "file is corrupted") ||
               has(e, "truncated")));
    }
    CHECK(has(d.read(flip(good, n - 6, 1), ".dem.gz"), "corrupted gzip stream (CRC mismatch)"));
    // Boost does not check gzip's length field; the data itself is intact and verified.
    const std::string isize = d.read(flip(good, n - 2, 1), ".dem.gz");
    CHECK((isize.empty() || has(isize, "corrupted gzip stream")));
    CHECK(has(d.read(good + "junk", ".dem.gz"), "corrupted gzip stream"));

    // Not gzip at all, or another compression, under a .gz name.
    CHECK(has(d.read("hello, world\n", ".dem.gz"), "not a gzip file (bad gzip magic)"));
    CHECK(has(d.read(flip(good, 0), ".dem.gz"), "not a gzip file (bad gzip magic)"));
    CHECK(has(d.read(plain, ".dem.gz"), "not a gzip file (it holds an uncompressed checkpoint"));
    CHECK(has(d.read(d.good(".dem.bz2"), ".dem.gz"), "not a gzip file (the content is bzip2"));
    CHECK(has(d.read("hello", ".dem.bz2"), "not a bzip2 file (bad bzip2 magic)"));
    CHECK(has(d.read("hello", ".dem.xz"), "not an xz file (bad xz magic)"));
    CHECK(has(d.read("hello", ".dem.zst"), "not a zstd file (bad zstd magic)"));

    // A newer format inside a valid gzip stream.
    std::string v11 = plain;
    v11[8] = 11;
    CHECK(has(d.read(gzip(v11), ".dem.gz"), "format version 11 is newer than this program"));
    // Text compressed with gzip.
    CHECK(has(d.read(gzip(std::string(200, 'x')), ".dem.gz"), "not a dem checkpoint (bad magic)"));

    for (const auto& [ending, name] : {std::pair<const char*, const char*>{".dem.bz2", "bzip2"},
                                       {".dem.xz", "xz"},
                                       {".dem.zst", "zstd"}}) {
        INFO(ending);
        const std::string g = d.good(ending);
        CHECK(has(d.read(g.substr(0, g.size() / 2), ending), "truncated"));
        const std::string e = d.read(flip(g, g.size() / 2, 2), ending);
        CHECK((has(e, fmt::format("corrupted {} stream", name)) || has(e, "checksum mismatch") ||
               has(e, "truncated")));
    }
}

TEST_CASE("checkpoint: random corruption never crashes and never loads wrong data",
          "[checkpoint]") {
    Damage d;
    std::vector<std::pair<std::string, std::string>> goods;
    for (const char* ending : allEndings)
        goods.emplace_back(ending, d.good(ending));
    std::mt19937_64 rng(20240611);
    size_t rejected = 0, loaded = 0;
    for (int k = 0; k < 300; ++k) {
        const auto& [ending, good] = goods[size_t(k) % goods.size()];
        std::string b = good;
        auto at = [&](size_t n) { return size_t(rng() % n); };
        switch (k / 5 % 6) {
        case 0: // a few bit flips
            for (int f = 0, nf = 1 + int(rng() % 3); f < nf; ++f)
                b[at(b.size())] ^= char(1 << (rng() % 8));
            break;
        case 1: // truncation
            b.resize(at(b.size()));
            break;
        case 2: // a run of random bytes
            for (size_t p = at(b.size()), e = std::min(b.size(), p + 1 + at(32)); p < e; ++p)
                b[p] = char(rng());
            break;
        case 3: // inserted bytes
            b.insert(at(b.size()), std::string(1 + at(8), char(rng())));
            break;
        case 4: // a zeroed block
            for (size_t p = at(b.size()), e = std::min(b.size(), p + 1 + at(512)); p < e; ++p)
                b[p] = 0;
            break;
        default: // appended garbage, or a removed byte
            if (rng() % 2)
                b += std::string(1 + at(16), char(rng()));
            else
                b.erase(at(b.size()), 1);
            break;
        }
        if (d.read(b, ending, "fuzz").empty())
            ++loaded;
        else
            ++rejected;
    }
    INFO("rejected " << rejected << ", loaded unchanged " << loaded);
    CHECK(rejected >= 280);
}

// --- 4. atomic writes ----------------------------------------------------------------------------

TEST_CASE("checkpoint: writes are atomic and leave no temporary file", "[checkpoint]") {
    const Simulation big = stepped(30, 6, 6);
    const Simulation small = stepped(5, 2, 2);
    TempDir dir;
    std::string error;

    SECTION("no leftover temporary file; writing over a checkpoint replaces it") {
        const std::string path = dir / "run.dem.gz";
        REQUIRE(writeCheckpoint(path, big, {}, 6, error));
        CHECK(dir.names() == std::vector<std::string>{"run.dem.gz"});
        REQUIRE(writeCheckpoint(path, small, {}, 6, error));
        CHECK(dir.names() == std::vector<std::string>{"run.dem.gz"});
        const std::string reference = dir / "reference.dem.gz";
        REQUIRE(writeCheckpoint(reference, small, {}, 6, error));
        CHECK((readBytes(path) == readBytes(reference))); // complete replacement, deterministic
        Simulation s;
        CheckpointMeta m;
        REQUIRE(readCheckpoint(path, s, m, error));
        CHECK((serializeSimulation(s) == serializeSimulation(small)));
    }
    SECTION("a missing directory, or a file in place of one, fails and creates nothing") {
        CHECK_FALSE(writeCheckpoint(dir / "missing/run.dem", small, {}, -1, error));
        CHECK(oneLine(error));
        CHECK(has(error, "cannot create the temporary file"));
        CHECK(has(error, "No such file or directory"));
        writeBytes(dir / "file", "x");
        CHECK_FALSE(writeCheckpoint(dir / "file/run.dem", small, {}, -1, error));
        CHECK(has(error, "Not a directory"));
        CHECK(dir.names() == std::vector<std::string>{"file"});
    }
    SECTION("an unwritable directory fails and creates nothing") {
        const std::string locked = dir / "locked";
        fs::create_directory(locked);
        fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
        if (::geteuid() == 0) {
            WARN("running as root: directory permissions are not enforced, skipped");
        } else {
            CHECK_FALSE(writeCheckpoint(locked + "/run.dem", small, {}, -1, error));
            CHECK(has(error, "Permission denied"));
            CHECK(fs::is_empty(locked));
        }
        fs::permissions(locked, fs::perms::owner_all);
    }
    SECTION("a failed rename removes the temporary file") {
        fs::create_directory(dir / "taken.dem"); // a directory where the file should go
        CHECK_FALSE(writeCheckpoint(dir / "taken.dem", small, {}, -1, error));
        CHECK(has(error, "cannot rename"));
        CHECK(dir.names() == std::vector<std::string>{"taken.dem"});
        CHECK(fs::is_directory(dir / "taken.dem"));
    }
    SECTION("a write that fails half way keeps the previous checkpoint") {
        const std::string path = dir / "run.dem.bz2";
        REQUIRE(writeCheckpoint(path, small, {}, -1, error));
        const std::string before = readBytes(path);
        CHECK_FALSE(demtest::withFileSizeLimit(
            4096, [&] { return writeCheckpoint(path, big, {}, -1, error); }));
        CHECK(oneLine(error));
        CHECK(has(error, "write failed (File too large)"));
        CHECK((readBytes(path) == before));
        CHECK(dir.names() == std::vector<std::string>{"run.dem.bz2"});
    }
    SECTION("bad names and levels") {
        CHECK_FALSE(writeCheckpoint(dir / "run.bin", small, {}, -1, error));
        CHECK(has(error, "unknown checkpoint file ending"));
        CHECK_FALSE(writeCheckpoint(dir / "run.dem.gz", small, {}, 12, error));
        CHECK(has(error, "compression level 12 is out of range"));
        CHECK_FALSE(writeCheckpoint(dir / "run.dem.gz", small, {}, 0, error));
        CHECK(dir.names().empty());
    }
}

TEST_CASE("checkpoint: file names select the compression", "[checkpoint]") {
    Compression c;
    std::string error;
    REQUIRE(compressionFromPath("a/b.dem", c, error));
    CHECK(c == Compression::None);
    REQUIRE(compressionFromPath("b.dem.gz", c, error));
    CHECK(c == Compression::Gzip);
    REQUIRE(compressionFromPath("b.00001000.dem.bz2", c, error));
    CHECK(c == Compression::Bzip2);
    REQUIRE(compressionFromPath("b.dem.xz", c, error));
    CHECK(c == Compression::Xz);
    REQUIRE(compressionFromPath("b.dem.zst", c, error));
    CHECK(c == Compression::Zstd);
    for (const char* bad : {"b.gz", "b.dem.gzip", "b.dem.tmp-12", ".dem", "b.DEM", "b.dem.zstd"}) {
        CHECK_FALSE(compressionFromPath(bad, c, error));
        CHECK(has(error, "unknown checkpoint file ending"));
    }
    CHECK(std::string(compressionName(Compression::Zstd)) == "zstd");
}

// --- inspection and checkpoint directories ------------------------------------------------------

TEST_CASE("checkpoint: inspect reports the file's content", "[checkpoint]") {
    const Simulation sim = stepped(80, 4, 4);
    CheckpointMeta meta;
    meta.deckName = "drop";
    TempDir dir;
    std::string error;
    const std::string path = dir / "drop.dem.xz";
    REQUIRE(writeCheckpoint(path, sim, meta, -1, error));
    CheckpointInfo info;
    REQUIRE(inspectCheckpoint(path, info, error));
    CHECK(info.path == path);
    CHECK(info.compression == "xz");
    CHECK(info.programVersion == DEM_VERSION);
    CHECK(info.deckName == "drop");
    CHECK(info.formatVersion == checkpointFormatVersion);
    CHECK(info.step == 80);
    CHECK(info.time == sim.time);
    CHECK(info.stage == 0);
    CHECK(info.stages == 1);
    CHECK(info.particles == sim.particles.size());
    CHECK(info.contacts == touching(sim));
    CHECK(info.contacts > 0);
    CHECK(info.fileBytes == fs::file_size(path));
    CHECK(info.checksumOk);
    CHECK(info.stateDigest == stateDigest(sim));

    // A damaged payload: the header's fields are still reported.
    const std::string plainPath = dir / "drop.dem";
    REQUIRE(writeCheckpoint(plainPath, sim, meta, -1, error));
    writeBytes(plainPath, flip(readBytes(plainPath), 200));
    CHECK_FALSE(inspectCheckpoint(plainPath, info, error));
    CHECK(has(error, "checksum mismatch"));
    CHECK_FALSE(info.checksumOk);
    CHECK(info.compression == "none");
    CHECK(info.step == 80);
    CHECK(info.particles == sim.particles.size());
    CHECK(info.stateDigest.empty());
}

TEST_CASE("checkpoint: listing a directory newest first, and the latest pointer", "[checkpoint]") {
    TempDir dir;
    std::string error;
    Simulation sim = stepped(3, 2, 2);
    for (uint64_t step : {200, 1000, 30}) {
        sim.step = step;
        REQUIRE(writeCheckpoint(dir / fmt::format("run.{:08d}.dem.gz", step), sim, {}, 1, error));
    }
    writeBytes(dir / "broken.dem", "garbage");
    writeBytes(dir / "run.00000010.dem.gz.tmp-99", "partial");
    writeBytes(dir / "notes.txt", "hello");
    std::vector<CheckpointEntry> list;
    REQUIRE(listCheckpoints(dir.path.string(), list, error));
    REQUIRE(list.size() == 4);
    CHECK(list[0].path == dir / "run.00001000.dem.gz");
    CHECK(list[0].step == 1000);
    CHECK(list[0].headerOk);
    CHECK(list[0].fileBytes == fs::file_size(list[0].path));
    CHECK(list[1].step == 200);
    CHECK(list[2].step == 30);
    CHECK(list[2].time == sim.time);
    CHECK(list[3].path == dir / "broken.dem");
    CHECK_FALSE(list[3].headerOk);
    CHECK_FALSE(listCheckpoints(dir / "missing", list, error));
    CHECK(has(error, "cannot list"));

    std::string latest;
    CHECK_FALSE(readLatestPointer(dir.path.string(), latest, error));
    CHECK(has(error, "latest"));
    REQUIRE(writeLatestPointer(dir.path.string(), "run.00000200.dem.gz", error));
    REQUIRE(readLatestPointer(dir.path.string(), latest, error));
    CHECK(latest == dir / "run.00000200.dem.gz");
    REQUIRE(writeLatestPointer(dir.path.string(), "run.00001000.dem.gz", error));
    REQUIRE(readLatestPointer(dir.path.string(), latest, error));
    CHECK(latest == dir / "run.00001000.dem.gz");
    CHECK(readBytes(dir / "latest") == "run.00001000.dem.gz\n");
    CHECK_FALSE(writeLatestPointer(dir.path.string(), "../elsewhere.dem", error));
    CHECK_FALSE(writeLatestPointer(dir.path.string(), "", error));
    writeBytes(dir / "latest", "two\nlines\n");
    CHECK_FALSE(readLatestPointer(dir.path.string(), latest, error));
    CHECK(has(error, "malformed"));
    for (const std::string& name : dir.names())
        CHECK(name.find(".tmp-" + std::to_string(::getpid())) == std::string::npos);
}

// --- 5. size and speed ---------------------------------------------------------------------------

TEST_CASE("checkpoint: size and speed for 100,000 spheres", "[checkpoint]") {
    SceneBuilder b;
    const int m = b.material(hertz(2500, 1e8, 0.25, 0.5, 0.5));
    const double r = 1e-3;
    // A jittered lattice with random velocities: full-entropy doubles, as in a real run.
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> u(-1, 1);
    auto random = [&](double scale) {
        const double x = u(rng), y = u(rng), z = u(rng);
        return Vec3(scale * x, scale * y, scale * z);
    };
    for (int k = 0; b.sim.particles.size() < 100000; ++k)
        b.sphere(Vec3((k % 50) * 2.1 * r, (k / 50 % 50) * 2.1 * r, (k / 2500) * 2.1 * r + r) +
                     random(0.02 * r),
                 r, m, random(0.1), random(10.0));
    b.wall(Vec3::Zero(), Vec3::UnitZ(), m);
    Simulation sim = b.build(1e-6);
    Workspace ws;
    REQUIRE(rebuildNeighbours(sim, ws));
    TempDir dir;
    std::string error;
    using Clock = std::chrono::steady_clock;
    auto seconds = [](Clock::time_point a) {
        return std::chrono::duration<double>(Clock::now() - a).count();
    };
    for (const auto& [ending, level] : {std::pair<const char*, int>{".dem.gz", 1}, {".dem", -1}}) {
        const std::string path = dir / (std::string("big") + ending);
        auto t0 = Clock::now();
        REQUIRE(writeCheckpoint(path, sim, {}, level, error));
        const double write = seconds(t0);
        const double bytes = double(fs::file_size(path));
        Simulation back;
        CheckpointMeta meta;
        t0 = Clock::now();
        REQUIRE(readCheckpoint(path, back, meta, error));
        const double read = seconds(t0);
        CHECK(stateDigest(back) == stateDigest(sim));
        WARN(fmt::format("{} spheres, {} sphere pairs, {}{}: {:.1f} MB, {:.0f} bytes/sphere, "
                         "write {:.2f} s, read {:.2f} s",
                         sim.particles.size(), sim.pairs.size(), ending,
                         level > 0 ? fmt::format(" level {}", level) : std::string(), bytes / 1e6,
                         bytes / double(sim.particles.size()), write, read));
    }
}
