#pragma once
// Builds Simulation values in code for the physics tests, without a deck: materials, spheres
// (through Particles::add), walls, boxes and facet meshes (each with its RigidObject), one stage
// with a step-count stop criterion, the time step and the pair table.
//
//   dem::test::SceneBuilder b;
//   const int m = b.material(dem::test::hertz(2500, 1e8, 0.25));
//   b.sphere({0, 0, 0.01}, 0.01, m);
//   b.wall({0, 0, 0}, {0, 0, 1}, m);
//   b.gravity({0, 0, -9.81});
//   dem::Simulation sim = b.build(1e-6, 1000);
//   dem::Workspace ws;
//   REQUIRE(dem::test::run(sim, ws, 1000));
#include "core/Simulation.hpp"
#include "core/Workspace.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <omp.h>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace dem::test {

inline Material linear(double density, double young, double ktOverKn, double restitution = 1,
                       double frictionAngle = 0) {
    Material m;
    m.name = "linear";
    m.law = LawKind::Linear;
    m.density = density;
    m.young = young;
    m.poisson = ktOverKn;
    m.restitution = restitution;
    m.frictionAngle = frictionAngle;
    return m;
}

inline Material hertz(double density, double young, double poisson, double restitution = 1,
                      double frictionAngle = 0) {
    Material m = linear(density, young, poisson, restitution, frictionAngle);
    m.name = "hertz";
    m.law = LawKind::HertzMindlin;
    return m;
}

inline Material viscoElastic(double density, double contactTime, double en, double et = 1,
                             double frictionAngle = 0) {
    Material m;
    m.name = "viscoelastic";
    m.law = LawKind::ViscoElastic;
    m.density = density;
    m.contactTime = contactTime;
    m.restitutionN = en;
    m.restitutionT = et;
    m.frictionAngle = frictionAngle;
    return m;
}

// A triangle mesh given by shared vertices; triangle corners index `vertices`.
struct MeshSpec {
    std::vector<Vec3> vertices;
    std::vector<std::array<int, 3>> triangles;
};

// Flat square grid in the plane z = z0, [x0, x0 + nx h] x [y0, y0 + ny h], each square split into
// two triangles along its (i, j)-(i+1, j+1) diagonal, normals +z: 2 nx ny triangles, and every
// interior vertex is shared by 6 of them. Vertex (i, j) has index j (nx + 1) + i.
inline MeshSpec flatGrid(int nx, int ny, double h, double x0 = 0, double y0 = 0, double z0 = 0) {
    MeshSpec m;
    for (int j = 0; j <= ny; ++j)
        for (int i = 0; i <= nx; ++i)
            m.vertices.emplace_back(x0 + i * h, y0 + j * h, z0);
    auto v = [&](int i, int j) { return j * (nx + 1) + i; };
    for (int j = 0; j < ny; ++j)
        for (int i = 0; i < nx; ++i) {
            m.triangles.push_back({v(i, j), v(i + 1, j), v(i + 1, j + 1)});
            m.triangles.push_back({v(i, j), v(i + 1, j + 1), v(i, j + 1)});
        }
    return m;
}

class SceneBuilder {
public:
    Simulation sim;

    int material(const Material& m) {
        sim.materials.push_back(m);
        return int(sim.materials.size()) - 1;
    }

    // Adds a sphere; its body id is `id` if given, else its index. Returns its index.
    size_t sphere(const Vec3& x, double r, int mat, const Vec3& v = Vec3::Zero(),
                  const Vec3& w = Vec3::Zero(), int64_t id = -1, uint32_t groups = 0) {
        Particles& P = sim.particles;
        const size_t index = P.size();
        P.add(uint32_t(id >= 0 ? id : int64_t(index)), x, r, sim.materials.at(mat).density, mat,
              groups);
        P.vel.back() = v;
        P.angVel.back() = w;
        return index;
    }

    // One-sided infinite plane through `point`; spheres on the side `normal` points to are pushed
    // along it. Returns the rigid object index.
    int wall(const Vec3& point, const Vec3& normal, int mat, std::string name = "") {
        const int o =
            object(name.empty() ? "wall" + std::to_string(sim.obstacles.walls.size()) : name,
                   ObstacleKind::Wall, mat, point, 0);
        sim.obstacles.walls.push_back({point, normal.normalized(), uint32_t(o)});
        return o;
    }

    // Six inward-facing walls around [lo, hi]; returns the first object index.
    int closedBox(const Vec3& lo, const Vec3& hi, int mat) {
        const int first = int(sim.obstacles.objects.size());
        for (int a = 0; a < 3; ++a) {
            Vec3 n = Vec3::Zero();
            n[a] = 1;
            wall(lo, n, mat);
            wall(hi, -n, mat);
        }
        return first;
    }

    int box(const Vec3& center, const Vec3& half, int mat, const Quat& ori = Quat::Identity(),
            std::string name = "") {
        const int o =
            object(name.empty() ? "box" + std::to_string(sim.obstacles.boxes.size()) : name,
                   ObstacleKind::Box, mat, center, half.norm());
        sim.obstacles.boxes.push_back({center, half, ori, uint32_t(o)});
        return o;
    }

    // A welded facet mesh: vertex ids are nextVertexId + vertex index, so facets sharing a vertex
    // of `mesh` share its id. Normals follow the corner order (right hand).
    int mesh(const MeshSpec& m, int mat, std::string name = "") {
        Obstacles& B = sim.obstacles;
        Vec3 center = Vec3::Zero();
        for (const Vec3& v : m.vertices)
            center += v;
        center /= double(std::max<size_t>(1, m.vertices.size()));
        double extent = 0;
        for (const Vec3& v : m.vertices)
            extent = std::max(extent, (v - center).norm());
        const int o = object(name.empty() ? "mesh" + std::to_string(B.objects.size()) : name,
                             ObstacleKind::Facet, mat, center, extent);
        const uint32_t base = B.nextVertexId;
        for (const auto& t : m.triangles) {
            Facet f;
            for (int k = 0; k < 3; ++k) {
                f.v[k] = m.vertices.at(size_t(t[k]));
                f.vid[k] = base + uint32_t(t[k]);
            }
            f.normal = (f.v[1] - f.v[0]).cross(f.v[2] - f.v[0]).normalized();
            f.object = uint32_t(o);
            B.facets.push_back(f);
        }
        B.nextVertexId = base + uint32_t(m.vertices.size());
        return o;
    }

    // Declares a sphere group; pass (1u << index) as a sphere's `groups` to make it a member.
    int group(const std::string& name) {
        sim.groupNames.push_back(name);
        return int(sim.groupNames.size()) - 1;
    }
    // Constant force on every sphere of a group, for the whole stage.
    SceneBuilder& force(int group, const Vec3& f) {
        stage.forces.push_back({group, f});
        return *this;
    }
    // Imposed motion (of a rigid object or a sphere group) for the whole stage.
    SceneBuilder& motion(const Motion& m) {
        stage.motions.push_back(m);
        return *this;
    }
    SceneBuilder& gravity(const Vec3& g) {
        stage.gravity = g;
        return *this;
    }
    SceneBuilder& damping(double lambda) {
        stage.damping = lambda;
        return *this;
    }
    // A periodic cell of the given size with its corner at `origin` (PeriodicCell.hpp).
    SceneBuilder& periodic(const Vec3& size, const Vec3& origin = Vec3::Zero()) {
        sim.cell.enabled = true;
        sim.cell.origin = origin;
        sim.cell.h = sim.cell.hAtRebuild = size.asDiagonal();
        return *this;
    }
    // The velocity gradient of the periodic cell from the start (the stage sets it).
    SceneBuilder& velocityGradient(const Mat3& L) {
        stage.velocityGradient = L;
        return *this;
    }
    SceneBuilder& skin(double s) {
        sim.neighbours.skin = s;
        return *this;
    }

    // Finishes the scene: one stage stopping after `steps` steps, time step `dt`, pair table,
    // stage engines applied. Throws if the materials cannot be paired.
    Simulation build(double dt, uint64_t steps = 1) {
        Simulation s = sim;
        Stage st = stage;
        st.name = "test";
        StopCriterion c;
        c.kind = StopCriterion::Kind::Steps;
        c.value = double(steps);
        c.label = "steps";
        st.stop.push_back(c);
        s.stages.push_back(st);
        std::string error;
        if (!buildPairTable(s.materials, s.overrides, s.pairTable, error))
            throw std::runtime_error(error);
        s.dt = dt;
        beginStage(s);
        return s;
    }

private:
    Stage stage;

    int object(const std::string& name, ObstacleKind kind, int mat, const Vec3& center,
               double extent) {
        RigidObject o;
        o.name = name;
        o.kind = kind;
        o.material = mat;
        o.center = o.center0 = center;
        o.extent = extent;
        sim.obstacles.objects.push_back(o);
        return int(sim.obstacles.objects.size()) - 1;
    }
};

// Advances `steps` steps; false (with ws.error set) as soon as one fails.
inline bool run(Simulation& sim, Workspace& ws, uint64_t steps) {
    for (uint64_t k = 0; k < steps; ++k)
        if (!advance(sim, ws))
            return false;
    return true;
}

// Sets the OpenMP thread count for a scope, with dynamic adjustment off so that regions get that
// many whatever OMP_DYNAMIC says. Scenes of a few spheres run single-threaded: their steps are too
// short to amortise a parallel region, and the result does not depend on the thread count
// (test_determinism.cpp checks that bit for bit).
class ScopedThreads {
public:
    explicit ScopedThreads(int n) : previous_(omp_get_max_threads()), dynamic_(omp_get_dynamic()) {
        omp_set_dynamic(0);
        omp_set_num_threads(n);
    }
    ~ScopedThreads() {
        omp_set_num_threads(previous_);
        omp_set_dynamic(dynamic_);
    }
    ScopedThreads(const ScopedThreads&) = delete;
    ScopedThreads& operator=(const ScopedThreads&) = delete;

private:
    int previous_, dynamic_;
};

// Deterministic uniform numbers in [lo, hi): mt19937_64's output sequence is fixed by the
// standard, and the conversion below (unlike std::uniform_real_distribution) is too, so scenes
// are the same on every platform.
class Random {
public:
    explicit Random(uint64_t seed) : engine_(seed) {}
    double operator()(double lo = 0, double hi = 1) {
        return lo + (hi - lo) * double(engine_() >> 11) * 0x1.0p-53;
    }

private:
    std::mt19937_64 engine_;
};

// Calls site(i, j, k, centre) for the nx x ny x nz cells of side s of a cubic lattice from the
// origin, i fastest: the order in which the scenes that use it draw their random numbers.
template <class Site> void cubicLattice(int nx, int ny, int nz, double s, Site&& site) {
    for (int k = 0; k < nz; ++k)
        for (int j = 0; j < ny; ++j)
            for (int i = 0; i < nx; ++i)
                site(i, j, k, Vec3(s * (Vec3(i, j, k) + Vec3::Constant(0.5))));
}

inline constexpr double pi = 3.14159265358979323846;

inline double sphereMass(double density, double r) {
    return density * 4.0 / 3.0 * pi * r * r * r;
}

} // namespace dem::test
