// Global measures (core/Measures) on small scenes with known values (physics.md §12).
#include "SceneBuilder.hpp"

#include "core/Measures.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>

using namespace dem;
using namespace dem::test;

namespace {
double measure(const Simulation& sim, const std::string& name) {
    MeasureRef ref;
    std::string error;
    REQUIRE(parseMeasure(name, sim, ref, error));
    return evaluate(sim, ref);
}
} // namespace

TEST_CASE("Energies, unbalanced force and coordination of a small settled pile",
          "[physics][measures]") {
    // Two spheres stacked on a floor wall, Hertz e = 0.3 plus Cundall damping 0.4: after 0.2 s
    // they are at rest (velocities ~0), so the unbalanced force |F + m g| / |F_contact| -> 0
    // (1e-6); one sphere pair in contact for two spheres: Z = 2 C / N = 1. The upper sphere
    // spins about the vertical, which no contact resists (no twisting resistance) and Cundall
    // damping does not touch (it scales torques, and there is none).
    ScopedThreads single(1);
    SceneBuilder b;
    const double R = 0.01, rho = 2500, g = 9.81;
    const int m = b.material(hertz(rho, 1e8, 0.25, 0.3, std::atan(0.5)));
    b.wall(Vec3::Zero(), Vec3::UnitZ(), m, "floor");
    b.sphere(Vec3(0, 0, R), R, m);
    b.sphere(Vec3(0, 0, 3 * R), R, m, Vec3::Zero(), Vec3(0, 0, 20)); // spins about the vertical
    b.gravity(Vec3(0, 0, -g)).damping(0.4);
    Simulation sim = b.build(1e-5);
    Workspace ws;
    REQUIRE(run(sim, ws, 20000));
    const double mass = sphereMass(rho, R);
    CHECK(measure(sim, "contacts") == 2);
    CHECK(measure(sim, "coordination_number") == 1);
    CHECK(measure(sim, "unbalanced_force") < 1e-6);
    CHECK(measure(sim, "kinetic_energy_translational") < 1e-15);
    const double spin = 0.5 * 0.4 * mass * R * R * 20 * 20; // 1/2 I w^2
    CHECK(measure(sim, "kinetic_energy_rotational") == Approx(spin).epsilon(1e-9));
    CHECK(measure(sim, "body:1.angular_velocity.z") == Approx(20).epsilon(1e-9));
    // Potential energy -m g . x of the two centres, just below R and 3R (overlaps ~1e-5 m).
    const double zs = sim.particles.pos[0].z() + sim.particles.pos[1].z();
    CHECK(measure(sim, "potential_energy") == Approx(mass * g * zs).epsilon(1e-12));
    CHECK(zs == Approx(4 * R).epsilon(1e-2));
    // Elastic energy 2/5 F u per Hertz contact: floor carries 2 m g, the pair m g.
    const double eStar = 1e8 / (2 * (1 - 0.25 * 0.25));
    auto hertzEnergy = [&](double f, double rStar) {
        const double u = std::pow(f / (4.0 / 3.0 * eStar * std::sqrt(rStar)), 2.0 / 3.0);
        return 0.4 * f * u;
    };
    CHECK(measure(sim, "elastic_energy") ==
          Approx(hertzEnergy(2 * mass * g, R) + hertzEnergy(mass * g, R / 2)).epsilon(1e-6));
    CHECK(measure(sim, "object:floor.force.z") == Approx(-2 * mass * g).epsilon(1e-6));
    CHECK(measure(sim, "total_energy") ==
          Approx(measure(sim, "kinetic_energy") + measure(sim, "potential_energy") +
                 measure(sim, "elastic_energy"))
              .epsilon(1e-12));
}

TEST_CASE("A sphere's displacement is measured while its start position is kept",
          "[physics][measures]") {
    // Free fall from rest for t: the displacement is -g t^2 / 2 (leapfrog: exact up to dt g t / 2).
    SceneBuilder b;
    const int m = b.material(hertz(2500, 1e8, 0.25, 0.3, 0.5));
    b.sphere(Vec3(0, 0, 1), 0.01, m);
    b.gravity(Vec3(0, 0, -9.81));
    Simulation sim = b.build(1e-4);
    Workspace ws;
    REQUIRE(run(sim, ws, 1000));
    const double t = sim.time;
    CHECK(measure(sim, "body:0.displacement.z") ==
          Approx(-0.5 * 9.81 * t * t).margin(1e-4 * 9.81 * t));
    sim.particles.keepOptional(true, false);
    CHECK(std::isnan(measure(sim, "body:0.displacement.z")));
    CHECK(measure(sim, "body:0.position.z") == Approx(1 - 0.5 * 9.81 * t * t).margin(1e-3));
}
