// tools/peers/dense_export.py decodes dem's checkpoint format by hand (man/dem-checkpoint.5) to
// give the peers of the dense benchmark the packing dem settled. This checks that it still reads
// what the current code writes: a change of the format that leaves the exporter behind fails here,
// not silently in a benchmark.
#include "CommandRunner.hpp"
#include "DeterminismScene.hpp"
#include "io/Checkpoint.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace dem;
using namespace dem::test;

TEST_CASE("the dense-scene exporter reads the checkpoints dem writes", "[bench][checkpoint]") {
    if (!std::filesystem::exists("/usr/bin/python3")) {
        WARN("SKIPPED: no /usr/bin/python3 to run tools/peers/dense_export.py");
        return;
    }
    Simulation sim = densePacking(4, 3, 4); // six walls, Hertz-Mindlin, gravity, damping
    Workspace ws;
    REQUIRE(run(sim, ws, 50));
    const auto dir = demtest::scratchDir("dense-export");
    const std::string checkpoint = (dir / "settled.dem.gz").string();
    std::string error;
    REQUIRE(writeCheckpoint(checkpoint, sim, CheckpointMeta{}, 1, error));
    const std::string cmd = "/usr/bin/python3 '" DEM_SOURCE_DIR "/tools/peers/dense_export.py' '" +
                            checkpoint + "' '" + (dir / "packing").string() + "' > /dev/null";
    REQUIRE(std::system(cmd.c_str()) == 0);

    const nlohmann::json j = nlohmann::json::parse(demtest::slurp(dir / "packing.json"));
    CHECK(j["dt"].get<double>() == sim.dt);
    CHECK(j["skin"].get<double>() == sim.neighbours.skin);
    CHECK(j["damping"].get<double>() == sim.damping);
    CHECK(j["walls"].size() == sim.obstacles.walls.size());
    const Particles& P = sim.particles;
    REQUIRE(j["spheres"].size() == P.size());
    // Each entry: x y z r vx vy vz wx wy wz, in the order of the spheres' ids, printed exactly.
    std::vector<size_t> byId(P.size());
    for (size_t p = 0; p < P.size(); ++p)
        byId[P.id[p]] = p; // densePacking numbers its spheres 0..n-1
    for (size_t k = 0; k < P.size(); ++k) {
        const auto& s = j["spheres"][k];
        const size_t p = byId[k];
        for (int a = 0; a < 3; ++a) {
            CHECK(s[a].get<double>() == P.pos[p][a]);
            CHECK(s[4 + a].get<double>() == P.vel[p][a]);
            CHECK(s[7 + a].get<double>() == P.angVel[p][a]);
        }
        CHECK(s[3].get<double>() == P.radius[p]);
    }
    std::filesystem::remove_all(dir);
}
