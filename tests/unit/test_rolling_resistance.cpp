// Rolling and twisting resistance (ContactLaws.hpp, rollingResistance; physics.md §6.1) against
// rigid-body results. Once a moment spring has reached its limit mu R* F_n, the moment is constant
// and the motion is uniformly decelerated:
// - a sphere rolling on a flat: m v' = F_t, I w' = -F_t a - M, v = a w (a = R - u/2 its lever
//   arm), so v' = -(M / a) / (m + I / a^2) = -(5/7) mu_r g (R / a) / (1 + (2/5)(R^2/a^2 - 1))
//   for M = mu_r R m g: (5/7) mu_r g within the relative overlap u/R ~ 1e-3;
// - on a slope, (5/7) g (sin - mu_r cos) when it rolls, and at rest for tan <= mu_r;
// - a sphere spinning about the normal on a flat: w' = -mu_t R m g / I = -(5/2) mu_t g / R;
// - two equal spheres (R* = R/2) pressed together by F: their relative spin decays at
//   2 mu R* F / I and both end at half the initial spin (angular momentum is conserved).
// Tolerances: 1% on the decelerations (the lever arm and the spring's start-up shift them by
// less than 0.2%); the other bounds are stated where they are checked.
#include "SceneBuilder.hpp"

#include "core/Measures.hpp"
#include "core/TimeStep.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

using namespace dem;
using namespace dem::test;

namespace {

constexpr double pi = std::numbers::pi;
constexpr double R = 0.01, rho = 2500, E = 1e8, nu = 0.25, g = 9.81;

// The slope of the least-squares line through (t, y).
double slope(const std::vector<double>& t, const std::vector<double>& y) {
    double mt = 0, my = 0;
    for (size_t k = 0; k < t.size(); ++k)
        mt += t[k], my += y[k];
    mt /= double(t.size()), my /= double(t.size());
    double num = 0, den = 0;
    for (size_t k = 0; k < t.size(); ++k) {
        num += (t[k] - mt) * (y[k] - my);
        den += (t[k] - mt) * (t[k] - mt);
    }
    return num / den;
}

Material material(LawKind law, double mu, double muRoll, double muTwist) {
    Material m = law == LawKind::Linear         ? linear(rho, E, nu, 0.5, std::atan(mu))
                 : law == LawKind::HertzMindlin ? hertz(rho, E, nu, 0.5, std::atan(mu))
                                                : viscoElastic(rho, 2e-4, 0.5, 0.5, std::atan(mu));
    m.rollingFriction = muRoll;
    m.twistingFriction = muTwist;
    return m;
}

// Static overlap of a sphere pressed on a wall of its own material by N.
double wallOverlap(LawKind law, double N) {
    const double m = sphereMass(rho, R);
    switch (law) {
    case LawKind::Linear:
        return N / (E * R); // K_N = E R
    case LawKind::HertzMindlin:
        return std::pow(N / (4.0 / 3.0 * E / (2 * (1 - nu * nu)) * std::sqrt(R)), 2.0 / 3.0);
    case LawKind::ViscoElastic:
        break;
    }
    const double kn = m * (pi * pi + std::log(0.5) * std::log(0.5)) / (2e-4 * 2e-4);
    return N / kn;
}

// A sphere on a wall tilted by theta about y (normal (-sin, 0, cos)), gravity -g z, starting at
// rest at its static overlap or with velocity v0 down the slope and spin w (lab frame).
struct OnWall {
    Simulation sim;
    Vec3 n, down;
};

OnWall sphereOnWall(LawKind law, double theta, double mu, double muRoll, double muTwist, double v0,
                    const Vec3& w, double dt) {
    SceneBuilder b;
    const int m = b.material(material(law, mu, muRoll, muTwist));
    OnWall s;
    s.n = Vec3(-std::sin(theta), 0, std::cos(theta));
    s.down = Vec3(-std::cos(theta), 0, -std::sin(theta));
    b.wall(Vec3::Zero(), s.n, m);
    const double u = wallOverlap(law, sphereMass(rho, R) * g * std::cos(theta));
    b.sphere((R - u) * s.n, R, m, v0 * s.down, w);
    b.gravity(Vec3(0, 0, -g));
    s.sim = b.build(dt);
    return s;
}

// Rolling without slip down the slope at v: w = n x v / a.
Vec3 rollingSpin(const Vec3& n, const Vec3& v, double a) {
    return n.cross(v) / a;
}

} // namespace

TEST_CASE("A sphere rolling on a flat decelerates at (5/7) mu_r g and then rests",
          "[physics][rolling]") {
    ScopedThreads single(1);
    const double muRoll = 0.05, v0 = 0.3, dt = 1e-5;
    const double expected = 5.0 / 7.0 * muRoll * g; // 0.350 m/s^2: at rest after 0.86 s
    for (const LawKind law : {LawKind::HertzMindlin, LawKind::Linear, LawKind::ViscoElastic}) {
        INFO(lawName(law));
        const Vec3 down(-1, 0, 0), n(0, 0, 1);
        OnWall s = sphereOnWall(law, 0, 0.5, muRoll, 0, v0, rollingSpin(n, v0 * down, R), dt);
        Workspace ws;
        std::vector<double> t, v;
        const Particles& P = s.sim.particles;
        for (int k = 1; k <= 60000; ++k) {
            REQUIRE(advance(s.sim, ws));
            if (k >= 5000 && k % 100 == 0)
                t.push_back(k * dt), v.push_back(P.vel[0].dot(down));
        }
        CHECK(-slope(t, v) == Approx(expected).epsilon(0.01));
        // Rolling, not sliding: the contact point moves with the tangential spring only.
        const Vec3 contact = P.vel[0] + P.angVel[0].cross(-R * n);
        CHECK(contact.norm() < 1e-3 * v0);
        // At rest after v0 / expected = 0.86 s, and it stays: by 1.5 s the rolling spring's
        // oscillation about its resting deflection (damped by the normal dashpot's share) has
        // died out.
        REQUIRE(run(s.sim, ws, 90000));
        CHECK(P.vel[0].norm() < 1e-4);
        CHECK(P.angVel[0].norm() * R < 1e-4);
        CHECK(P.pos[0].x() ==
              Approx(-v0 * v0 / (2 * expected)).epsilon(0.01)); // rolled v0^2 / (2 a) = 0.129 m
    }
}

TEST_CASE("A stage that turns rolling friction on decelerates a rolling sphere at (5/7) mu_r g",
          "[physics][rolling]") {
    // Without rolling friction the sphere rolls on at v0 (no moment histories are kept); a stage
    // giving its material mu_r = 0.05 ([[stage]] friction) starts the moment springs from none,
    // and the sphere slows as in the test above. The deck's step would be divided from the start
    // (criticalTimeStep sees the later stage).
    ScopedThreads single(1);
    const double muRoll = 0.05, v0 = 0.3, dt = 1e-5;
    const Vec3 down(-1, 0, 0), n(0, 0, 1);
    OnWall s =
        sphereOnWall(LawKind::HertzMindlin, 0, 0.5, 0, 0, v0, rollingSpin(n, v0 * down, R), dt);
    const double undivided = criticalTimeStep(s.sim);
    Workspace ws;
    REQUIRE(run(s.sim, ws, 2000));
    const Particles& P = s.sim.particles;
    CHECK(P.vel[0].dot(down) == Approx(v0).epsilon(1e-3));
    CHECK(!s.sim.pairs.hasRolling());
    CHECK(!s.sim.obstacleContacts.hasRolling());
    Stage next;
    next.name = "rough";
    next.rollingChanges = {RollingChange{0, muRoll, std::nullopt}};
    StopCriterion c;
    c.kind = StopCriterion::Kind::Steps;
    c.value = 1e9;
    next.stop = {c};
    s.sim.stages.push_back(next);
    CHECK(criticalTimeStep(s.sim) == Approx(undivided / rollingStepDivisor).epsilon(1e-15));
    s.sim.stage = 1;
    beginStage(s.sim);
    CHECK(s.sim.materials[0].rollingFriction == muRoll);
    CHECK(s.sim.materials[0].twistingFriction == 0);
    std::vector<double> t, v;
    for (int k = 1; k <= 40000; ++k) {
        REQUIRE(advance(s.sim, ws));
        if (k >= 5000 && k % 100 == 0)
            t.push_back(k * dt), v.push_back(P.vel[0].dot(down));
    }
    CHECK(s.sim.obstacleContacts.hasRolling());
    CHECK(-slope(t, v) == Approx(5.0 / 7.0 * muRoll * g).epsilon(0.01));
}

TEST_CASE("A sphere rests on a slope up to tan(angle) = mu_r and rolls above it",
          "[physics][rolling]") {
    ScopedThreads single(1);
    const double muRoll = 0.2, dt = 1e-5;
    for (const LawKind law : {LawKind::HertzMindlin, LawKind::Linear}) {
        INFO(lawName(law));
        SECTION(std::string("tan = 0.8 mu_r: at rest, ") + lawName(law)) {
            OnWall s =
                sphereOnWall(law, std::atan(0.8 * muRoll), 0.5, muRoll, 0, 0, Vec3::Zero(), dt);
            Workspace ws;
            const Vec3 start = s.sim.particles.pos[0];
            REQUIRE(run(s.sim, ws, 50000));
            // It turns until the rolling spring holds the gravity moment m g sin R: by at most
            // twice that moment over k_r = k_n R a, a few micrometres at the centre.
            const double travel = (s.sim.particles.pos[0] - start).dot(s.down);
            CHECK(std::abs(travel) < 1e-5);
            CHECK(s.sim.particles.vel[0].norm() < 1e-5);
        }
        SECTION(std::string("tan = 1.25 mu_r: rolls, ") + lawName(law)) {
            const double theta = std::atan(1.25 * muRoll);
            OnWall s = sphereOnWall(law, theta, 0.5, muRoll, 0, 0, Vec3::Zero(), dt);
            Workspace ws;
            std::vector<double> t, v;
            for (int k = 1; k <= 50000; ++k) {
                REQUIRE(advance(s.sim, ws));
                if (k >= 5000 && k % 100 == 0)
                    t.push_back(k * dt), v.push_back(s.sim.particles.vel[0].dot(s.down));
            }
            const double expected =
                5.0 / 7.0 * g * (std::sin(theta) - muRoll * std::cos(theta)); // 0.340 m/s^2
            CHECK(slope(t, v) == Approx(expected).epsilon(0.01));
        }
    }
}

TEST_CASE("A sphere spinning about the normal of a flat stops at (5/2) mu_t g / R",
          "[physics][rolling]") {
    ScopedThreads single(1);
    const double muTwist = 0.1, w0 = 20, dt = 1e-5;
    const double expected = 2.5 * muTwist * g / R; // 245 rad/s^2: at rest after 0.082 s
    for (const LawKind law : {LawKind::HertzMindlin, LawKind::Linear, LawKind::ViscoElastic}) {
        INFO(lawName(law));
        OnWall s = sphereOnWall(law, 0, 0.5, 0, muTwist, 0, Vec3(0, 0, w0), dt);
        Workspace ws;
        std::vector<double> t, w;
        for (int k = 1; k <= 6000; ++k) {
            REQUIRE(advance(s.sim, ws));
            if (k >= 500 && k % 20 == 0)
                t.push_back(k * dt), w.push_back(s.sim.particles.angVel[0].z());
        }
        CHECK(-slope(t, w) == Approx(expected).epsilon(0.01));
        REQUIRE(run(s.sim, ws, 30000));
        // The linear law has no tangential dashpot: the twisting spring, locked at up to the limit
        // M, swings on undamped with angular velocity amplitude M / sqrt(k_t R^2 I) = 0.03 rad/s.
        const double atRest = law == LawKind::Linear ? 1e-2 : 1e-3;
        CHECK(std::abs(s.sim.particles.angVel[0].z()) < atRest * w0);
        // Spinning about the normal moves the contact point not at all: no sliding, no drift.
        CHECK(s.sim.particles.vel[0].norm() < 1e-6);
    }
}

namespace {

// Two equal free spheres touching along z, pressed together by opposite constant forces F (no
// gravity), the upper one spinning at w0 about `axis` (through its centre), no sliding friction.
struct PressedPair {
    Simulation sim;
    double F;
};

PressedPair pressedPair(LawKind law, double muRoll, double muTwist, const Vec3& axis, double w0) {
    SceneBuilder b;
    const int m = b.material(material(law, 0, muRoll, muTwist));
    const int lower = b.group("lower"), upper = b.group("upper");
    PressedPair p;
    p.F = sphereMass(rho, R) * g;
    // Start at the static overlap of F: a wall's of the same material for the linear law (K_N =
    // E R both), 2^(1/3) times it for Hertz (R* = R/2, the same E*).
    const double u = wallOverlap(law, p.F) * (law == LawKind::Linear ? 1 : std::cbrt(2.0));
    b.sphere(Vec3(0, 0, -(R - u / 2)), R, m, Vec3::Zero(), Vec3::Zero(), -1, 1u << lower);
    b.sphere(Vec3(0, 0, R - u / 2), R, m, Vec3::Zero(), w0 * axis, -1, 1u << upper);
    b.force(lower, Vec3(0, 0, p.F)).force(upper, Vec3(0, 0, -p.F));
    p.sim = b.build(1e-5);
    return p;
}

} // namespace

TEST_CASE("Two pressed spheres: rolling and twisting friction share the spin at 2 mu R* F / I",
          "[physics][rolling]") {
    ScopedThreads single(1);
    const double mu = 0.1, w0 = 5;
    const double I = 0.4 * sphereMass(rho, R) * R * R;
    for (const bool twisting : {false, true}) {
        const Vec3 axis = twisting ? Vec3(0, 0, 1) : Vec3(0, 1, 0);
        INFO((twisting ? "twisting" : "rolling"));
        for (const LawKind law : {LawKind::HertzMindlin, LawKind::Linear}) {
            INFO(lawName(law));
            PressedPair p = pressedPair(law, twisting ? 0 : mu, twisting ? mu : 0, axis, w0);
            const double expected = 2 * mu * (R / 2) * p.F / I; // 245 rad/s^2: locked at 0.02 s
            Workspace ws;
            std::vector<double> t, w;
            const Particles& P = p.sim.particles;
            for (int k = 1; k <= 1800; ++k) {
                REQUIRE(advance(p.sim, ws));
                if (k >= 200 && k % 20 == 0)
                    t.push_back(k * 1e-5), w.push_back((P.angVel[1] - P.angVel[0]).dot(axis));
            }
            CHECK(-slope(t, w) == Approx(expected).epsilon(0.01));
            REQUIRE(run(p.sim, ws, 18000));
            // The couple acts on both, opposite: the total spin is kept, shared equally. The linear
            // law's twisting spring swings on undamped (no tangential dashpot), by
            // M / sqrt(k_t R*^2 I / 2) = 0.045 rad/s in the relative spin.
            const double shared = law == LawKind::Linear && twisting ? 2e-2 : 1e-3;
            CHECK((P.angVel[0] + P.angVel[1]).dot(axis) == Approx(w0).epsilon(1e-9));
            CHECK(P.angVel[0].dot(axis) == Approx(w0 / 2).epsilon(shared));
            CHECK(P.angVel[1].dot(axis) == Approx(w0 / 2).epsilon(shared));
        }
    }
}

TEST_CASE("Rolling friction's losses close the energy balance", "[physics][rolling][energy]") {
    ScopedThreads single(1);
    const double v0 = 0.3;
    const Vec3 down(-1, 0, 0), n(0, 0, 1);
    OnWall s = sphereOnWall(LawKind::HertzMindlin, 0, 0.5, 0.05, 0.05, v0,
                            rollingSpin(n, v0 * down, R) + Vec3(0, 0, 10), 1e-5); // rolls and spins
    REQUIRE(s.sim.trackEnergy);
    auto mechanical = [](const Simulation& sim) {
        return kineticEnergyTranslational(sim) + kineticEnergyRotational(sim) + elasticEnergy(sim) +
               potentialEnergy(sim);
    };
    const double before = mechanical(s.sim); // the static overlap's elastic energy not counted:
                                             // 4e-7 J against 7e-4 J of motion
    const double kinetic = kineticEnergyTranslational(s.sim) + kineticEnergyRotational(s.sim);
    Workspace ws;
    REQUIRE(run(s.sim, ws, 40000));
    const double lost = s.sim.energy.contactDissipated;
    // Half of the motion's energy has gone into the moment limits' slip by 0.4 s; the balance
    // misses only the first-order error of the dashpots' share (dem-deck(5)): 0.5% of the loss.
    CHECK(lost > 0.4 * kinetic);
    CHECK(mechanical(s.sim) + lost == Approx(before).margin(0.005 * lost));
}

// The rolling spring against a wall turns the sphere about 1.8 times faster than the normal spring
// moves it (TimeStep.hpp, rollingStepDivisor): a linear-law sphere held on a slope by rolling
// friction (no damping at all) swings up at 0.9 of the undivided critical step and stays at rest
// at the whole of the divided one.
TEST_CASE("Rolling resistance divides the critical step, and the divided step is stable",
          "[physics][rolling]") {
    ScopedThreads single(1);
    auto onSlope = [](double muRoll, double dt) {
        SceneBuilder b;
        Material m = linear(rho, E, nu, 1, std::atan(0.5));
        m.rollingFriction = muRoll;
        const int mat = b.material(m);
        const double theta = 8 * std::numbers::pi / 180;
        const Vec3 n(-std::sin(theta), 0, std::cos(theta));
        b.wall(Vec3::Zero(), n, mat);
        b.sphere(R * n, R, mat); // touching, unloaded: it settles onto the slope
        b.gravity(Vec3(0, 0, -g));
        return b.build(dt);
    };
    const double plain = criticalTimeStep(onSlope(0, 1));
    const double divided = criticalTimeStep(onSlope(10, 1));
    CHECK(divided == Approx(plain / rollingStepDivisor).epsilon(1e-12));
    auto largestSpin = [&](double dt) {
        Simulation sim = onSlope(10, dt);
        Workspace ws;
        double most = 0;
        for (double t = 0; t < 0.05; t += dt) {
            REQUIRE(advance(sim, ws));
            most = std::max(most, sim.particles.angVel[0].norm());
        }
        return most;
    };
    // At rest, the sphere only rocks on its springs as it settles: 0.08 rad/s at 0.6 of the
    // undivided step; 1.7 rad/s and growing at 0.8.
    CHECK(largestSpin(divided) < 0.2);
    CHECK(largestSpin(0.9 * plain) > 1);
}
