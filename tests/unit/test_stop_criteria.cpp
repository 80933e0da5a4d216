// Stop criteria ([[stage]] stop, dem-deck(5)): when they end a stage and what they report.
#include "SceneBuilder.hpp"

#include "core/StopCriteria.hpp"
#include "deck/Deck.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>

using namespace dem;
using namespace dem::test;

TEST_CASE("A time criterion ends the stage at the step nearest to the time", "[stop]") {
    // stop = { time = 1.5 } ends the stage after round(1.5 / dt) steps: with dt = 3.7e-4
    // (1.5 / dt = 4054.05) at t = 4054 dt = 1.49998, before 1.5; with dt = 3.1e-4 (4838.71) at
    // 4839 dt = 1.50009, after it. Either way within half a step of 1.5, and the reason says
    // "time ~ 1.5", not "time >= 1.5", which the first would belie.
    ScopedThreads single(1);
    for (const double dt : {3.7e-4, 3.1e-4}) {
        INFO("dt = " << dt);
        const std::string text = "[simulation]\ndt = " + std::to_string(dt) +
                                 "\n[[material]]\nname = \"m\"\ndensity = 1000\nyoung = 1e7\n"
                                 "[[spheres]]\nkind = \"list\"\nmaterial = \"m\"\n"
                                 "centers = [[0, 0, 0]]\nradius = 0.01\n"
                                 "[[stage]]\nstop = { time = 1.5 }\n";
        Deck deck;
        std::vector<DeckError> errors;
        REQUIRE(loadDeckText("time.toml", text, {}, deck, errors));
        Simulation& sim = deck.sim;
        REQUIRE(sim.dt == dt);
        beginStage(sim);
        Workspace ws;
        StopStatus stop;
        while (!stop.fired && sim.step < 10000) {
            if (!advance(sim, ws))
                FAIL(ws.error);
            stop = checkStop(sim, 0);
        }
        REQUIRE(stop.fired);
        CHECK(sim.step == uint64_t(std::lround(1.5 / dt)));
        CHECK(std::abs(sim.time - 1.5) <= 0.5 * dt);
        CHECK(stop.reason == "time ~ 1.5");
    }
}
