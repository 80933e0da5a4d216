// A state that becomes non-finite must stop the run with an error naming the step and the sphere
// (Workspace.hpp: advance returns false with ws.error set).
#include "SceneBuilder.hpp"

#include <catch2/catch.hpp>

#include <limits>

using namespace dem;
using namespace dem::test;

namespace {

// Five spheres with body ids 100..104, far apart, falling; `prepare` spoils the state after five
// good steps. Returns the error of the sixth step (empty if it succeeded).
template <class F> std::string failAtSixthStep(F prepare) {
    ScopedThreads single(1);
    SceneBuilder b;
    const int m = b.material(hertz(2500, 1e8, 0.25));
    for (int k = 0; k < 5; ++k)
        b.sphere(Vec3(0.1 * k, 0, 0), 0.01, m, Vec3::Zero(), Vec3::Zero(), 100 + k);
    b.gravity(Vec3(0, 0, -9.81));
    Simulation sim = b.build(1e-5);
    Workspace ws;
    if (!run(sim, ws, 5))
        return "early failure: " + ws.error;
    prepare(sim);
    if (advance(sim, ws))
        return "";
    return ws.error;
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

} // namespace

TEST_CASE("A NaN velocity stops the run at that step, naming the sphere", "[physics][nonfinite]") {
    const std::string e = failAtSixthStep([](Simulation& s) { s.particles.vel[3].y() = kNaN; });
    INFO(e);
    CHECK_THAT(e, Catch::Contains("step 6"));
    CHECK_THAT(e, Catch::Contains("sphere 103"));
}

TEST_CASE("A NaN angular velocity or position is reported too", "[physics][nonfinite]") {
    SECTION("angular velocity") {
        const std::string e =
            failAtSixthStep([](Simulation& s) { s.particles.angVel[1].z() = kNaN; });
        INFO(e);
        CHECK_THAT(e, Catch::Contains("step 6"));
        CHECK_THAT(e, Catch::Contains("sphere 101"));
    }
    SECTION("position, without a neighbour rebuild") {
        const std::string e = failAtSixthStep([](Simulation& s) { s.particles.pos[4].x() = kNaN; });
        INFO(e);
        CHECK_THAT(e, Catch::Contains("step 6"));
        CHECK_THAT(e, Catch::Contains("sphere 104"));
    }
    SECTION("position, when the neighbour lists are rebuilt first") {
        const std::string e = failAtSixthStep([](Simulation& s) {
            s.particles.pos[2].z() = kNaN;
            s.neighbours.needRebuild = true;
        });
        INFO(e);
        CHECK_THAT(e, Catch::Contains("step 6"));
        CHECK_THAT(e, Catch::Contains("sphere 102"));
        CHECK_THAT(e, Catch::Contains("non-finite"));
    }
    SECTION("position, when spheres leaving the domain are removed") {
        // Removal is for spheres that leave the domain box; a NaN sphere must not vanish
        // silently with it.
        const std::string e = failAtSixthStep([](Simulation& s) {
            s.hasDomain = true;
            s.domainMin = Vec3::Constant(-1);
            s.domainMax = Vec3::Constant(1);
            s.outOfDomain = OutOfDomain::Remove;
            s.particles.pos[2].z() = kNaN;
            s.neighbours.needRebuild = true;
        });
        INFO(e);
        CHECK_THAT(e, Catch::Contains("step 6"));
        CHECK_THAT(e, Catch::Contains("sphere 102"));
    }
    SECTION("infinite force") {
        const std::string e = failAtSixthStep([](Simulation& s) {
            s.forces.push_back({0, Vec3(kInf, 0, 0)});
            s.groupNames = {"all"};
            s.particles.joinGroups(0, 1);
        });
        INFO(e);
        CHECK_THAT(e, Catch::Contains("step 6"));
        CHECK_THAT(e, Catch::Contains("sphere 100"));
    }
}

TEST_CASE("An overflowing contact force stops the run", "[physics][nonfinite]") {
    // E = 1e300 makes the series stiffness 2 ka kb / (ka + kb) overflow to inf: the first step of
    // two overlapping spheres (ids 7 and 8) gives them non-finite velocities; the lower index is
    // named.
    ScopedThreads single(1);
    SceneBuilder b;
    const int m = b.material(linear(2500, 1e300, 0.25));
    b.sphere(Vec3(0, 0, 0), 0.01, m, Vec3::Zero(), Vec3::Zero(), 7);
    b.sphere(Vec3(0.019, 0, 0), 0.01, m, Vec3::Zero(), Vec3::Zero(), 8);
    Simulation sim = b.build(1e-6);
    Workspace ws;
    CHECK_FALSE(advance(sim, ws));
    INFO(ws.error);
    CHECK_THAT(ws.error, Catch::Contains("step 1"));
    CHECK_THAT(ws.error, Catch::Contains("sphere 7"));
}
