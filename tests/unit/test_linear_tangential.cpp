// The linear law's tangential spring (stiffness_ratio = k_t/k_n): the sliding-and-turning mode of
// a sticking contact, and the critical step that bounds it.
//
// A sphere (mass m, radius R, I = 2/5 m R^2) resting on a wall, sticking contact of slip
// u = x + R w_y: the tangential force k_t u accelerates x by -k_t u/m and R w_y by -(5/2) k_t u/m,
// so u'' = -w_t^2 u with w_t^2 = 3.5 k_t/m, while x - (2/5) R w_y keeps its rate (rolling, neutral
// on a flat). Started at v0 without spin, x' = (5/7) v0 + (2/7) v0 cos(w_t t). Two equal spheres
// have w_t^2 = 7 k_t/m against w_n^2 = 2 k_n/m, the same ratio 3.5 k_t/k_n. Leapfrog turns w into
// w~ with sin(w~ dt/2) = w dt/2 and is unstable for w dt > 2. (Two spheres pressed together by
// forces of fixed direction would not do here: the pair buckles, rolling round each other.)
#include "SceneBuilder.hpp"

#include "core/TimeStep.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

using namespace dem;
using namespace dem::test;

namespace {

constexpr double R = 0.01, rho = 2500, E = 1e8, g = 9.81, v0 = 1e-4;

double mass() {
    return sphereMass(rho, R);
}

// w_t of a sphere on a wall of its own material: k_n = E R (Yade's series springs), k_t = ratio
// k_n.
double wallTangential(double ratio) {
    return std::sqrt(3.5 * ratio * E * R / mass());
}

// A sphere on the wall z = 0 under gravity at its equilibrium overlap m g/k_n, so no normal
// oscillation starts, moving along x at v0; time step dtTimesW / w_t; friction coefficient mu.
Simulation sphereOnWall(double ratio, double dtTimesW, double mu = 0.5) {
    SceneBuilder b;
    const int m = b.material(linear(rho, E, ratio, 1.0, std::atan(mu)));
    b.wall(Vec3::Zero(), Vec3(0, 0, 1), m);
    b.sphere(Vec3(0, 0, R - mass() * g / (E * R)), R, m, Vec3(v0, 0, 0));
    b.gravity(Vec3(0, 0, -g));
    return b.build(dtTimesW / wallTangential(ratio));
}

// Two equal spheres, for the critical step only.
Simulation pair(double ratio) {
    SceneBuilder b;
    const int m = b.material(linear(rho, E, ratio));
    b.sphere(Vec3::Zero(), R, m);
    b.sphere(Vec3(2 * R, 0, 0), R, m);
    return b.build(1e-9);
}

// x' - (5/7) v0 after each of `steps` steps; empty when a step fails.
std::vector<double> oscillation(Simulation& sim, int steps) {
    ScopedThreads single(1);
    Workspace ws;
    std::vector<double> s;
    for (int k = 0; k < steps; ++k) {
        if (!advance(sim, ws))
            return {};
        const Particles& P = sim.particles;
        s.push_back(P.vel[0].x() - 5.0 / 7.0 * v0);
    }
    return s;
}

double largest(const std::vector<double>& s, size_t from, size_t to) {
    double a = 0;
    for (size_t k = from; k < to; ++k)
        a = std::max(a, std::abs(s[k]));
    return a;
}

} // namespace

TEST_CASE("Linear law: the critical step follows the tangential mode above k_t/k_n = 2/7",
          "[contact][linear][timestep]") {
    const double normal = std::sqrt(2 * mass() / (E * R)); // 2/w_n, w_n^2 = 2 k_n/m
    CHECK(criticalTimeStep(pair(0.25)) == Approx(normal).epsilon(1e-14));
    CHECK(criticalTimeStep(pair(2.0 / 7.0)) == Approx(normal).epsilon(1e-14));
    for (const double ratio : {0.5, 1.0, 3.0}) {
        const double tangential = 2 / std::sqrt(7 * ratio * E * R / mass());
        CHECK(criticalTimeStep(pair(ratio)) == Approx(tangential).epsilon(1e-14));
        // A sphere on a wall is bounded too: its tangential mode is sqrt(2) times slower.
        CHECK(criticalTimeStep(sphereOnWall(ratio, 1)) * wallTangential(ratio) < 2);
    }
}

TEST_CASE("Linear law: a sticking contact oscillates at w^2 = 3.5 k_t/m", "[physics][linear]") {
    // k_t = k_n (stiffness_ratio 1) and w dt = 0.5: leapfrog's period is 1.06% shorter than
    // 2 pi/w, which the measured period must match within 0.1%. Upward zero crossings of the
    // oscillation, linearly interpolated, over about 60 periods.
    const double w = wallTangential(1.0);
    Simulation sim = sphereOnWall(1.0, 0.5);
    const std::vector<double> s = oscillation(sim, 800);
    REQUIRE(s.size() == 800);
    std::vector<double> crossings;
    for (size_t k = 1; k < s.size(); ++k)
        if (s[k - 1] < 0 && s[k] >= 0)
            crossings.push_back(double(k - 1) + s[k - 1] / (s[k - 1] - s[k]));
    REQUIRE(crossings.size() >= 60);
    const double period =
        (crossings.back() - crossings.front()) / double(crossings.size() - 1) * sim.dt;
    const double leapfrog = 2 * std::numbers::pi / (2 / sim.dt * std::asin(w * sim.dt / 2));
    CHECK(leapfrog / (2 * std::numbers::pi / w) == Approx(0.98939).epsilon(1e-4));
    CHECK(period == Approx(leapfrog).epsilon(1e-3));
    // The contact stuck throughout: the swing is that of leapfrog started at v_{-1/2} = (2/7) v0,
    // whose velocity amplitude is (2/7) v0/sqrt(1 - (w dt/2)^2), met within 4% by the samples
    // (12.6 per period).
    const double swing = 2.0 / 7.0 * v0 / std::sqrt(1 - std::pow(w * sim.dt / 2, 2));
    CHECK(largest(s, 0, s.size()) <= swing * (1 + 1e-3));
    CHECK(largest(s, 0, s.size()) >= swing * 0.96);
}

TEST_CASE("Linear law: stable just below the tangential limit, unstable just above",
          "[physics][linear][timestep]") {
    // k_t = 2 k_n: the tangential mode is sqrt(7) times faster than the normal one, and a step
    // from the normal mode alone (sqrt(7) times longer) would blow up.
    // Friction 1e4 keeps the contact from sliding, which would cap an unstable oscillation.
    Simulation below = sphereOnWall(2.0, 0.98 * 2, 1e4);
    const std::vector<double> s = oscillation(below, 4000);
    REQUIRE(s.size() == 4000);
    // Close to the limit leapfrog's velocity swing is 1/sqrt(1 - (w dt/2)^2) = 5.0 times the
    // continuous one, and constant: no step-by-step growth.
    const double early = largest(s, 0, 2000), late = largest(s, 2000, 4000);
    CHECK(early <= 2.0 / 7.0 * v0 / std::sqrt(1 - 0.98 * 0.98) * (1 + 1e-3));
    CHECK(late == Approx(early).epsilon(0.02));

    Simulation above = sphereOnWall(2.0, 1.05 * 2, 1e4);
    const std::vector<double> t = oscillation(above, 200);
    // Amplified by 1.88 per step (w dt = 2.1) until the contact slides (or a step fails).
    CHECK((t.empty() || largest(t, 0, t.size()) > 100 * v0));
}
