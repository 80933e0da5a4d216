#pragma once
// The elastic gas of the energy tests, shared by the fast (2,000 steps) and slow (20,000 steps)
// variants.
#include "SceneBuilder.hpp"

#include "core/Measures.hpp"

#include <cmath>

namespace dem::test {

struct EnergyRun {
    double maxDrift = 0;   // max over steps of |E - E0| / E0
    double finalDrift = 0; // (E_end - E0) / E0
    size_t contacts = 0;   // sphere-sphere and sphere-wall contacts summed over the steps
};

// kinetic (translational + rotational) + potential + elastic, all from core/Measures.
inline double totalEnergy(const Simulation& sim) {
    return kineticEnergyTranslational(sim) + kineticEnergyRotational(sim) + potentialEnergy(sim) +
           elasticEnergy(sim);
}

// 1000 spheres (R = 7-10 mm, rho = 2500, E = 1e8, nu = 0.25, e = 1, no friction) on a jittered
// 10 x 10 x 10 lattice (spacing 25 mm) in the closed box [0, 0.25 m]^3 of six walls, random
// velocities of ~2 m/s, gravity -9.81 z, no damping; dt = 0.2 R_min sqrt(rho/E) = 7e-6 s (a
// contact lasts ~80 steps). The floor is at z = 0, so the potential energy m g z is positive;
// E0 ~ 33 J, 60 % of it kinetic.
inline EnergyRun runGas(LawKind law, int steps) {
    SceneBuilder b;
    const Material mat = law == LawKind::Linear ? linear(2500, 1e8, 0.25) : hertz(2500, 1e8, 0.25);
    const int m = b.material(mat);
    const double L = 0.25, spacing = L / 10;
    b.closedBox(Vec3::Zero(), Vec3::Constant(L), m);
    Random rnd(20240601);
    for (int k = 0; k < 10; ++k)
        for (int j = 0; j < 10; ++j)
            for (int i = 0; i < 10; ++i) {
                const Vec3 x = spacing * (Vec3(i, j, k) + Vec3::Constant(0.5)) +
                               Vec3(rnd(-2e-3, 2e-3), rnd(-2e-3, 2e-3), rnd(-2e-3, 2e-3));
                const Vec3 v(rnd(-2, 2), rnd(-2, 2), rnd(-2, 2));
                b.sphere(x, rnd(0.007, 0.010), m, v); // no initial overlap: 25 - 4 mm > 20 mm
            }
    b.gravity(Vec3(0, 0, -9.81));
    Simulation sim = b.build(0.2 * 0.007 * std::sqrt(2500 / 1e8));
    Workspace ws;
    ScopedThreads single(1); // the physics does not depend on threads; see test_determinism.cpp
    const double e0 = totalEnergy(sim);
    EnergyRun r;
    for (int k = 0; k < steps; ++k) {
        if (!advance(sim, ws))
            throw std::runtime_error(ws.error);
        const double drift = (totalEnergy(sim) - e0) / e0;
        r.maxDrift = std::max(r.maxDrift, std::abs(drift));
        r.finalDrift = drift;
        r.contacts += contactCount(sim);
    }
    return r;
}

} // namespace dem::test
