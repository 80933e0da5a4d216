#pragma once
// The dense packings of the determinism tests, shared by the fast and the slow variant and by the
// allocation tests.
#include "SceneBuilder.hpp"

#include "core/Parallel.hpp"
#include "core/StateDigest.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace dem::test {

// nx x ny x nz spheres (R = 5 mm +- 2 %) on a lattice of spacing 9.9 mm jittered by +-0.05 mm,
// so neighbours start overlapping by up to ~0.4 mm, in a box of six walls with a little room at
// the top; Hertz-Mindlin, friction 0.5, e = 0.3, gravity, Cundall damping 0.1 (every force path
// of the step loop is active); dt = 0.2 R_min sqrt(rho/E). With `facetFloor`, a mesh of facets
// (flatGrid, two triangles per sphere) also lies on the bottom wall. With `rolling`, the material
// resists rolling (0.1) and twisting (0.05).
inline Simulation densePacking(int nx, int ny, int nz, bool facetFloor = false,
                               bool rolling = false) {
    SceneBuilder b;
    Material grain = hertz(2500, 1e8, 0.25, 0.3, std::atan(0.5));
    if (rolling)
        grain.rollingFriction = 0.1, grain.twistingFriction = 0.05;
    const int m = b.material(grain);
    const double s = 9.9e-3;
    b.closedBox(Vec3::Zero(), Vec3(nx * s, ny * s, (nz + 2) * s), m);
    if (facetFloor)
        b.mesh(flatGrid(nx, ny, s), m);
    Random rnd(77);
    cubicLattice(nx, ny, nz, s, [&](int, int, int, const Vec3& centre) {
        const Vec3 x = centre + Vec3(rnd(-5e-5, 5e-5), rnd(-5e-5, 5e-5), rnd(-5e-5, 5e-5));
        b.sphere(x, rnd(4.9e-3, 5.1e-3), m, Vec3(rnd(-0.1, 0.1), rnd(-0.1, 0.1), 0));
    });
    b.gravity(Vec3(0, 0, -9.81)).damping(0.1);
    return b.build(0.2 * 4.9e-3 * std::sqrt(2500 / 1e8));
}

// A dense periodic packing of 10 x 10 x layers spheres, sheared in the x-z plane: pairs across
// every face, rebuilds that wrap spheres. `rate`: the shear rate [1/s]; `speed`: the largest
// initial velocity component beside the flow [m/s].
inline Simulation shearedPacking(int layers, double rate, double speed) {
    SceneBuilder b;
    const int m = b.material(hertz(2500, 1e8, 0.25, 0.3, std::atan(0.5)));
    const double s = 9.9e-3;
    Random rnd(5);
    for (int k = 0; k < layers; ++k)
        for (int j = 0; j < 10; ++j)
            for (int i = 0; i < 10; ++i) {
                const Vec3 x = s * (Vec3(i, j, k) + Vec3::Constant(0.5)) +
                               Vec3(rnd(-5e-5, 5e-5), rnd(-5e-5, 5e-5), rnd(-5e-5, 5e-5));
                b.sphere(x, rnd(4.9e-3, 5.1e-3), m,
                         Vec3(rnd(-speed, speed), rnd(-speed, speed), rnd(-speed, speed)));
            }
    Mat3 L = Mat3::Zero();
    L(0, 2) = rate;
    b.periodic(Vec3(10 * s, 10 * s, layers * s)).velocityGradient(L).damping(0.1);
    return b.build(0.2 * 4.9e-3 * std::sqrt(2500 / 1e8));
}

// Layers of 10 x 10 spheres needed for more than parallelThreshold spheres: below it the step
// loop runs serially whatever the thread count, and a determinism test would prove nothing.
inline int layersAboveThreshold() {
    return int(parallelThreshold / 100) + 2;
}

// Runs `steps` steps with `threads` OpenMP threads; the digest after every `every` steps. With
// `rebuildEvery` > 0, the lists are also rebuilt before every such step, touching pairs carrying
// their histories through it (a dense packing at rest rebuilds only at its first step).
inline std::vector<std::string> digests(Simulation sim, int threads, int steps, int every,
                                        int rebuildEvery = 0) {
    ScopedThreads t(threads);
    if (omp_get_max_threads() != threads)
        throw std::runtime_error("could not set the thread count");
    Workspace ws;
    std::vector<std::string> out;
    for (int k = 1; k <= steps; ++k) {
        if (rebuildEvery > 0 && k % rebuildEvery == 0)
            sim.neighbours.needRebuild = true;
        if (!advance(sim, ws))
            throw std::runtime_error(ws.error);
        if (k % every == 0)
            out.push_back(stateDigest(sim));
    }
    return out;
}

} // namespace dem::test
