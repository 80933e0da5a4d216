// Motion under gravity: the leapfrog closed form of a free fall, and a sphere rolling or sliding
// down an inclined wall (physics.md §5, §9.1).
#include "SceneBuilder.hpp"

#include <catch2/catch.hpp>

#include <Eigen/Dense>
#include <cmath>

using namespace dem;
using namespace dem::test;

TEST_CASE("Free fall follows the leapfrog closed form", "[physics][integration]") {
    // v_{k+1/2} = v_{k-1/2} + g dt and x_{k+1} = x_k + v_{k+1/2} dt with v_{-1/2} = 0 give
    // v_{n-1/2} = n g dt and x_n = x_0 + g dt^2 n (n + 1) / 2. The only error is round-off:
    // ~n ulps in the summed velocities and positions, n = 1000 -> ~1e-13, tolerance 1e-12.
    ScopedThreads single(1);
    SceneBuilder b;
    const int m = b.material(hertz(2500, 1e8, 0.25));
    const Vec3 x0(0.25, -0.5, 1.0);
    b.sphere(x0, 0.01, m);
    const Vec3 g(0, 0, -9.81);
    b.gravity(g);
    const double dt = 1e-4;
    Simulation sim = b.build(dt);
    Workspace ws;
    const Particles& P = sim.particles;
    for (int n = 1; n <= 1000; ++n) {
        REQUIRE(advance(sim, ws));
        if (n % 100 != 0)
            continue;
        const double drop = g.z() * dt * dt * n * (n + 1) / 2;
        INFO("step " << n);
        CHECK(P.pos[0].x() == x0.x());
        CHECK(P.pos[0].y() == x0.y());
        CHECK(P.pos[0].z() - x0.z() == Approx(drop).epsilon(1e-12));
        CHECK(P.vel[0].z() == Approx(g.z() * dt * n).epsilon(1e-12));
        CHECK(P.vel[0].x() == 0);
        CHECK(P.angVel[0].norm() == 0);
    }
    CHECK(sim.step == 1000);
    CHECK(sim.time == Approx(0.1).epsilon(1e-12));
}

namespace {

// Least-squares fit s(t) = a t^2 / 2 + v t + c; returns a.
double fitAcceleration(const std::vector<double>& t, const std::vector<double>& s) {
    const size_t n = t.size();
    const double tm = 0.5 * (t.front() + t.back()); // centred time keeps the system well posed
    Eigen::MatrixXd A(n, 3);
    Eigen::VectorXd y(n);
    for (size_t k = 0; k < n; ++k) {
        const double u = t[k] - tm;
        A(Eigen::Index(k), 0) = 0.5 * u * u;
        A(Eigen::Index(k), 1) = u;
        A(Eigen::Index(k), 2) = 1;
        y(Eigen::Index(k)) = s[k];
    }
    const Eigen::Vector3d coef = A.colPivHouseholderQr().solve(y);
    return coef(0);
}

struct Incline {
    double acceleration; // fitted along-slope acceleration over [0.2, 0.5] s
    double slip;         // |v - w x (-a n)| at the end [m/s]: contact point velocity
    double speed;        // along-slope speed at the end
};

// A sphere (R = 0.01 m, rho = 2500, E = 1e8, nu = 0.25) on a wall inclined by theta about the y
// axis (normal (-sin, 0, cos), through the origin), gravity -9.81 z. It starts at rest at the
// normal equilibrium overlap, so no normal oscillation is excited.
Incline incline(LawKind law, double mu, double theta) {
    ScopedThreads single(1);
    const double R = 0.01, rho = 2500, E = 1e8, nu = 0.25, g = 9.81;
    SceneBuilder b;
    // Hertz-Mindlin with e = 0.5 damps the tangential start-up transient (its shear dashpot);
    // the linear law has no shear dashpot: its tangential oscillation (amplitude
    // (2/7) m g sin(theta) / K_T ~ 6e-8 m) is negligible against s ~ 0.4 m.
    const Material mat = law == LawKind::Linear ? linear(rho, E, nu, 0.5, std::atan(mu))
                                                : hertz(rho, E, nu, 0.5, std::atan(mu));
    const int m = b.material(mat);
    const Vec3 n(-std::sin(theta), 0, std::cos(theta));
    b.wall(Vec3::Zero(), n, m);
    const double N = sphereMass(rho, R) * g * std::cos(theta);
    double u;
    if (law == LawKind::Linear) {
        u = N / (E * R); // K_N = E R for sphere-wall
    } else {
        const double eStar = E / (2 * (1 - nu * nu)); // wall of the same material
        u = std::pow(N / (4.0 / 3.0 * eStar * std::sqrt(R)), 2.0 / 3.0);
    }
    b.sphere((R - u) * n, R, m);
    b.gravity(Vec3(0, 0, -g));
    const double dt = 1e-5; // critical step of the stiffest (tangential) mode ~7e-4 s
    Simulation sim = b.build(dt);
    Workspace ws;
    const Vec3 down(-std::cos(theta), 0, -std::sin(theta)); // unit, along the slope, downhill
    const Particles& P = sim.particles;
    std::vector<double> ts, ss;
    for (int k = 1; k <= 50000; ++k) {
        if (!advance(sim, ws)) {
            FAIL(ws.error);
        }
        const double t = k * dt;
        if (t >= 0.2 - 1e-12 && k % 10 == 0) {
            ts.push_back(t);
            ss.push_back(P.pos[0].dot(down));
        }
    }
    const double a = R - 0.5 * (R - P.pos[0].dot(n)); // the law's lever arm R - u/2
    const Vec3 contactVel = P.vel[0] + P.angVel[0].cross(-a * n);
    return {fitAcceleration(ts, ss), contactVel.norm(), P.vel[0].dot(down)};
}

} // namespace

TEST_CASE("Sphere on a 30 degree incline rolls or slides as theory says", "[physics][friction]") {
    const double theta = 30 * pi / 180, g = 9.81;
    const double rolling = 5.0 / 7.0 * g * std::sin(theta);
    // Theory for a rolling sphere with the law's lever arm a = R - u/2 instead of R:
    // g sin / (1 + 2/5 R^2/a^2), 1.5e-4 below 5/7 g sin for Hertz (u/R = 5e-4). Tolerance 0.5 %.
    for (const LawKind law : {LawKind::HertzMindlin, LawKind::Linear}) {
        INFO(lawName(law));
        SECTION(std::string("mu = 0.5 rolls without slipping, ") + lawName(law)) {
            // Rolling needs mu >= (2/7) tan(theta) = 0.165.
            const Incline r = incline(law, 0.5, theta);
            CHECK(r.acceleration == Approx(rolling).epsilon(0.005));
            // No slip: the contact point moves only with the tangential spring. Its static
            // load F_t = (2/7) m g sin(theta) started from zero, so it oscillates with amplitude
            // F_t / K_T at w_t = sqrt(3.5 K_T / m) (translation and rotation in series):
            // velocity amplitude F_t sqrt(3.5 / (m K_T)), 5e-4 m/s for the linear law
            // (K_T = nu E R), which has no shear dashpot; Hertz-Mindlin damps it to ~0.
            // Bound: twice that amplitude (vs 0.97 m/s of slip when sliding).
            const double mass = sphereMass(2500, 0.01);
            const double ft = 2.0 / 7.0 * mass * g * std::sin(theta);
            const double kt = 0.25 * 1e8 * 0.01;
            CHECK(r.slip < 2 * ft * std::sqrt(3.5 / (mass * kt)));
        }
        SECTION(std::string("mu = 0.1 slides, ") + lawName(law)) {
            const double mu = 0.1;
            const Incline r = incline(law, mu, theta);
            CHECK(r.acceleration ==
                  Approx(g * (std::sin(theta) - mu * std::cos(theta))).epsilon(0.005));
            // Sliding: the friction torque spins the sphere up at 5 mu g cos / (2 R) while the
            // centre accelerates faster, so the contact point slips at a growing speed
            // (g sin - 3.5 mu g cos) t ~ 0.96 m/s at t = 0.5 s.
            CHECK(r.slip ==
                  Approx((std::sin(theta) - 3.5 * mu * std::cos(theta)) * g * 0.5).epsilon(0.005));
        }
    }
}

TEST_CASE("A sphere turning half a radian per step keeps a unit orientation",
          "[physics][integration]") {
    // |w| dt = 0.5: the half-angle series of the step err by a^6/46080 ~ 3e-7, too much for the
    // one Newton step that renormalises small turns (its error 3 e^2 / 8 ~ 4e-14 per step), so
    // the step must take the exact 1/|q|, which leaves |q| within a few ulps of 1. Tolerance
    // 1e-14 (about 50 ulps) over 1000 steps; the rotation axis stays that of w.
    ScopedThreads single(1);
    SceneBuilder b;
    const int m = b.material(hertz(2500, 1e8, 0.25));
    const Vec3 w(0, 3000, 4000); // |w| = 5000 rad/s
    b.sphere(Vec3::Zero(), 0.01, m, Vec3::Zero(), w);
    Simulation sim = b.build(1e-4);
    Workspace ws;
    REQUIRE(run(sim, ws, 1000));
    const Quat& q = sim.particles.ori[0];
    CHECK(std::abs(q.norm() - 1) < 1e-14);
    CHECK(q.vec().normalized().cross(w.normalized()).norm() < 1e-12);
}

TEST_CASE("A freely spinning sphere turns at constant angular velocity", "[physics][integration]") {
    // No torque: w stays exactly constant and the orientation after n steps is the rotation by
    // n |w| dt about w (the step's half-angle Taylor series is exact to a^6/46080 ~ 1e-19 at
    // a = |w| dt = 1.3e-3; n = 10000 renormalisations add ~1e-12). Tolerance 1e-10.
    ScopedThreads single(1);
    SceneBuilder b;
    const int m = b.material(hertz(2500, 1e8, 0.25));
    const Vec3 w(3, -4, 12); // |w| = 13 rad/s
    b.sphere(Vec3::Zero(), 0.01, m, Vec3::Zero(), w);
    const double dt = 1e-4;
    Simulation sim = b.build(dt);
    Workspace ws;
    REQUIRE(run(sim, ws, 10000));
    const Quat expected(Eigen::AngleAxisd(13.0 * dt * 10000, w.normalized()));
    const Quat& q = sim.particles.ori[0];
    CHECK(sim.particles.angVel[0] == w);
    CHECK(std::abs(std::abs(q.dot(expected)) - 1) < 1e-10);
    CHECK((q.toRotationMatrix() - expected.toRotationMatrix()).norm() < 1e-10);
}
