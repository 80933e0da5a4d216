// The default time step (dt_factor 0.1 of the critical step) keeps a dense, damped, frictional
// Hertz–Mindlin packing stable. The critical step follows one contact's normal oscillation; the
// tangential mode with rotation is about 1.7 times faster (effective mass (2/7) m*) and, with the
// shear dashpot c_s = 2 beta sqrt(m* k_s), damped at about sqrt(3.5) beta: with six contacts per
// sphere the step 0.2 lets such a packing spin itself up.
#include "CommandRunner.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>

using namespace demtest;

namespace {

// 500 spheres (r 1 mm +- 30 %) in a periodic cell compressed isotropically to about 90 kPa, then
// held: nothing drives the packing in the second stage, so it must come to rest.
const char* packingDeck = R"(
[params]
f = 0.1
[simulation]
dt_factor = "f"
[periodic]
size = [0.0197, 0.0197, 0.0197]
[[material]]
name = "g"
law = "hertz_mindlin"
density = 2600
young = 1e8
poisson = 0.3
friction_angle = 20
restitution = 0.3
[[spheres]]
kind = "random"
material = "g"
region = { box = { min = [0, 0, 0], max = [0.0197, 0.0197, 0.0197] } }
radius = 0.001
spread = 0.3
count = 500
seed = 5
group = "all"
[[stage]]
name = "compress"
velocity_gradient = [[-10, 0, 0], [0, -10, 0], [0, 0, -10]]
stop = { time = 0.0247 }
[[stage]]
name = "hold"
velocity_gradient = [[0, 0, 0], [0, 0, 0], [0, 0, 0]]
stop = { time = 0.01 }
[output]
history = { every = 1000, columns = ["pressure", "stress_xz", "stress_zx", "kinetic_energy",
                                      "kinetic_energy_rotational"] }
)";

nlohmann::json finalValues(const std::string& args, const std::filesystem::path& dir) {
    const CommandResult r = runDem("run packing.toml --quiet --json --threads 1 " + args, dir);
    INFO(r.err);
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out)["final"];
}

} // namespace

TEST_CASE("the default step keeps a dense damped Hertz-Mindlin packing at rest, where 0.2 spins "
          "it up",
          "[physics][timestep]") {
    const auto dir = scratchDir("default-step");
    writeText(dir / "packing.toml", packingDeck);
    // At rest: the kinetic energy against the stored elastic energy (~1e-2 J), and the stress
    // symmetric (a net couple of the contacts on the spheres would make it antisymmetric).
    const nlohmann::json atRest = finalValues("--set f=0.1 --out default", dir);
    const double p = atRest["pressure"].get<double>();
    INFO(atRest.dump());
    CHECK(p > 5e4); // compressed to ~90 kPa
    CHECK(atRest["kinetic_energy"].get<double>() < 1e-6);
    CHECK(std::abs(atRest["stress_xz"].get<double>() - atRest["stress_zx"].get<double>()) <
          0.01 * p);
    // The scene is one the step matters for: at 0.2 the spheres keep spinning.
    const nlohmann::json spinning = finalValues("--set f=0.2 --out double", dir);
    INFO(spinning.dump());
    CHECK(spinning["kinetic_energy"].get<double>() > 1e-5);
    CHECK(spinning["kinetic_energy_rotational"].get<double>() >
          0.5 * spinning["kinetic_energy"].get<double>());
}
