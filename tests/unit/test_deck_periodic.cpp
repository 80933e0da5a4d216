// The deck interface of periodic boundaries: [periodic] sets the cell, a stage's
// velocity_gradient sets Stage::velocityGradient row by row, every misuse is an error located at
// the offending key, and resolved.toml reproduces both.
#include "CommandRunner.hpp"
#include "deck/Deck.hpp"
#include "deck/DeckKeys.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>

using namespace dem;

namespace {

std::string allErrors(const std::vector<DeckError>& errors) {
    std::string out;
    for (const DeckError& e : errors)
        out += formatError(e) + "\n";
    return out;
}

Deck load(const std::string& text) {
    Deck deck;
    std::vector<DeckError> errors;
    const bool ok = loadDeckText("periodic.toml", text, {}, deck, errors);
    INFO(allErrors(errors));
    REQUIRE(ok);
    REQUIRE(errors.empty());
    return deck;
}

std::vector<DeckError> errorsOf(const std::string& text) {
    Deck deck;
    std::vector<DeckError> errors;
    CHECK_FALSE(loadDeckText("periodic.toml", text, {}, deck, errors));
    return errors;
}

// True when one of the errors is at `line` (and `column`, when given) and contains `text`.
bool hasError(const std::vector<DeckError>& errors, int line, const std::string& text,
              int column = 0) {
    return std::any_of(errors.begin(), errors.end(), [&](const DeckError& e) {
        return e.file == "periodic.toml" && e.line == line && (column == 0 || e.column == column) &&
               e.message.find(text) != std::string::npos;
    });
}

// Checks that one of the errors is at `line` (and `column`, unless 0) and contains `text`.
void checkError(const std::vector<DeckError>& errors, int line, int column,
                const std::string& text) {
    INFO("expected at line " << line << ", column " << column << ": " << text << "\nerrors:\n"
                             << allErrors(errors));
    CHECK(hasError(errors, line, text, column));
}

bool bitEqual(double a, double b) {
    return std::memcmp(&a, &b, sizeof a) == 0;
}

bool bitEqual(const Mat3& a, const Mat3& b) {
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            if (!bitEqual(a(r, c), b(r, c)))
                return false;
    return true;
}

// Lines 1-8: a material and two spheres of radius 0.01 (so 3 (2 r + r/2) = 0.075 is the
// smallest cell side); then whatever the test adds.
const std::string header = R"([params]
L = 0.1
[[material]]
name = "m"
density = 1000
young = 1e7
[[spheres]]
kind = "list"
material = "m"
centers = [[0.02, 0.02, 0.02], [0.06, 0.05, 0.05]]
radius = 0.01
)"; // 11 lines

const std::string cell = R"([periodic]
size = ["L", 0.2, 0.3]
min = [-0.01, 0, "L/10"]
)"; // lines 12-14 after the header

const std::string stage = R"([[stage]]
stop = { steps = 10 }
)";

} // namespace

TEST_CASE("[periodic] sets the periodic cell", "[deck][periodic]") {
    const Deck deck = load(header + cell + stage);
    const PeriodicCell& c = deck.sim.cell;
    CHECK(c.enabled);
    CHECK(c.origin == Vec3(-0.01, 0, 0.01));
    CHECK(c.h == Vec3(0.1, 0.2, 0.3).asDiagonal().toDenseMatrix());
    CHECK(c.hAtRebuild == c.h);
    CHECK(c.velGrad == Mat3::Zero());
    CHECK_FALSE(deck.sim.hasDomain);
    CHECK(deck.sim.stages.size() == 1);
    CHECK_FALSE(deck.sim.stages[0].velocityGradient);

    SECTION("min defaults to the origin") {
        const Deck d = load(header + "[periodic]\nsize = [0.1, 0.1, 0.1]\n" + stage);
        CHECK(d.sim.cell.enabled);
        CHECK(d.sim.cell.origin == Vec3::Zero());
        CHECK(d.sim.cell.h == Mat3(Vec3::Constant(0.1).asDiagonal()));
    }
    SECTION("without [periodic] there is no cell") {
        const Deck d = load(header + stage);
        CHECK_FALSE(d.sim.cell.enabled);
    }
}

TEST_CASE("velocity_gradient is read row by row into Stage::velocityGradient", "[deck][periodic]") {
    const Deck deck = load(header + cell + R"([[stage]]
name = "shear"
velocity_gradient = [[1, 2, 3], [4, "5*L", 6], [7, 8, "-9"]]
stop = { steps = 10 }
[[stage]]
name = "keep"
stop = { steps = 10 }
[[stage]]
name = "simple shear"
velocity_gradient = [[0, 0.1, 0], [0, 0, 0], [0, 0, 0]]
stop = { steps = 10 }
)");
    REQUIRE(deck.sim.stages.size() == 3);
    REQUIRE(deck.sim.stages[0].velocityGradient);
    const Mat3& L = *deck.sim.stages[0].velocityGradient;
    Mat3 expected;
    expected << 1, 2, 3, 4, 0.5, 6, 7, 8, -9;
    CHECK(L == expected);
    CHECK(L(0, 1) == 2); // row 0 = dv_x/dx, dv_x/dy, dv_x/dz
    CHECK(L(1, 0) == 4);
    CHECK_FALSE(deck.sim.stages[1].velocityGradient); // unset: the previous stage's stays
    REQUIRE(deck.sim.stages[2].velocityGradient);
    Mat3 shear = Mat3::Zero();
    shear(0, 1) = 0.1; // dv_x/dy: x velocity growing with y
    CHECK(*deck.sim.stages[2].velocityGradient == shear);
}

TEST_CASE("periodic deck errors are located at the offending key", "[deck][periodic][errors]") {
    SECTION("velocity_gradient without [periodic]") {
        const auto errors = errorsOf(header + R"([[stage]]
velocity_gradient = [[0, 0.1, 0], [0, 0, 0], [0, 0, 0]]
stop = { steps = 10 }
)");
        checkError(errors, 13, 21, "the deck has no [periodic] table");
    }
    SECTION("[periodic] with a domain") {
        const auto errors = errorsOf(header + cell + R"([simulation.domain]
min = [0, 0, 0]
max = [1, 1, 1]
)" + stage);
        checkError(errors, 15, 0, "a periodic cell replaces the domain box");
        checkError(errors, 15, 0, "[periodic] at line 12");
    }
    SECTION("[periodic] with a domain in an inline table") {
        const auto errors =
            errorsOf("[simulation]\ndomain = { min = [0, 0, 0], max = [1, 1, 1] }\n" + header +
                     cell + stage);
        checkError(errors, 2, 10, "a periodic cell replaces the domain box");
    }
    SECTION("[periodic] with walls, boxes and facets") {
        const auto errors = errorsOf(header + cell + R"([[wall]]
point = [0, 0, 0]
normal = [0, 0, 1]
material = "m"
[[box]]
center = [0.5, 0.5, 0.5]
half_size = [0.1, 0.1, 0.1]
material = "m"
[[facets]]
material = "m"
rectangle = { center = [0, 0, 1], u = [1, 0, 0], v = [0, 1, 0] }
[[wall]]
point = [0, 0, 1]
normal = [0, 0, -1]
material = "m"
)" + stage);
        checkError(errors, 15, 0,
                   "periodic cells take no walls, facets or boxes (not supported yet)");
        checkError(errors, 19, 0, "[[box]] in a periodic deck");
        checkError(errors, 23, 0, "[[facets]] in a periodic deck");
        checkError(errors, 26, 0, "[[wall]] in a periodic deck ([periodic] at line 12)");
    }
    SECTION("size not positive") {
        const auto errors = errorsOf(header + "[periodic]\nsize = [0.1, 0, \"-L\"]\n" + stage);
        checkError(errors, 13, 14, "size[1] = 0 is out of range: expected a value > 0");
        checkError(errors, 13, 17, "size[2] = \"-L\" = -0.1 is out of range: expected a value > 0");
    }
    SECTION("size not finite") {
        const auto errors = errorsOf(header + "[periodic]\nsize = [0.1, inf, 0.1]\n" + stage);
        checkError(errors, 13, 14, "size[1] = inf is not a finite number");
    }
    SECTION("size not three numbers") {
        const auto errors = errorsOf(header + "[periodic]\nsize = [0.1, 0.1]\n" + stage);
        checkError(errors, 13, 8, "size: expected 3 numbers [x, y, z], got 2");
        const auto more = errorsOf(header + "[periodic]\nsize = 0.1\n" + stage);
        checkError(more, 13, 8, "size: expected an array of 3 numbers, got float");
        const auto text = errorsOf(header + "[periodic]\nsize = [0.1, \"big\", 0.1]\n" + stage);
        checkError(text, 13, 14, "size[1]:");
    }
    SECTION("size missing") {
        const auto errors = errorsOf(header + "[periodic]\nmin = [0, 0, 0]\n" + stage);
        checkError(errors, 12, 0, "missing required key 'size' in [periodic]");
    }
    SECTION("min not finite") {
        const auto errors =
            errorsOf(header + "[periodic]\nsize = [0.1, 0.1, 0.1]\nmin = [0, nan, 0]\n" + stage);
        checkError(errors, 14, 11, "min[1] = nan is not a finite number");
    }
    SECTION("velocity_gradient not 3 rows of 3 finite numbers") {
        const auto rows = errorsOf(header + cell + R"([[stage]]
velocity_gradient = [[0, 0.1, 0], [0, 0, 0]]
stop = { steps = 10 }
)");
        checkError(rows, 16, 21, "velocity_gradient: expected 3 rows of 3 numbers");
        checkError(rows, 16, 21, "got 2 rows");
        const auto columns = errorsOf(header + cell + R"([[stage]]
velocity_gradient = [[0, 0.1, 0], [0, 0], [0, 0, 0]]
stop = { steps = 10 }
)");
        checkError(columns, 16, 35, "velocity_gradient[1]: expected 3 numbers [x, y, z], got 2");
        const auto flat = errorsOf(header + cell + R"([[stage]]
velocity_gradient = [0, 0.1, 0]
stop = { steps = 10 }
)");
        checkError(flat, 16, 22, "velocity_gradient[0]: expected an array of 3 numbers");
        const auto scalar = errorsOf(header + cell + R"([[stage]]
velocity_gradient = 0.1
stop = { steps = 10 }
)");
        checkError(scalar, 16, 21, "velocity_gradient: expected 3 rows of 3 numbers");
        const auto infinite = errorsOf(header + cell + R"([[stage]]
velocity_gradient = [[0, 0.1, 0], [0, 0, 0], [0, "1/0", 0]]
stop = { steps = 10 }
)");
        checkError(infinite, 16, 50, "velocity_gradient[2][1]: expression \"1/0\" is not a finite");
        const auto nan = errorsOf(header + cell + R"([[stage]]
velocity_gradient = [[0, 0.1, 0], [0, 0, 0], [0, 0, -nan]]
stop = { steps = 10 }
)");
        checkError(nan, 16, 53, "velocity_gradient[2][2] = nan is not a finite number");
    }
    SECTION("a cell too small for the spheres") {
        // 3 (2 r_max + skin) = 3 (0.02 + 0.005) = 0.075 with the default skin r_min / 2.
        const auto errors = errorsOf(header + "[periodic]\nsize = [0.08, 0.07, 0.05]\n" + stage);
        checkError(errors, 13, 8, "the periodic cell is too small for the spheres along y, z");
        checkError(errors, 13, 0, "at least 3 (2 r_max + skin) = 0.075");
        checkError(errors, 13, 0, "skin = 0.005 (half the smallest radius)");
        CHECK(errors.size() == 1);
        // A given skin counts instead: 3 (0.02 + 0.01) = 0.09.
        const auto skin = errorsOf("[simulation]\nskin = 0.01\n" + header +
                                   "[periodic]\nsize = [0.1, 0.1, 0.08]\n" + stage);
        checkError(skin, 15, 0,
                   "too small for the spheres along z: each side must be at least 3 "
                   "(2 r_max + skin) = 0.09");
        checkError(skin, 15, 0, "skin = 0.01 ([simulation] skin)");
        // Just above the limit is enough.
        load(header + "[periodic]\nsize = [0.0751, 0.0751, 0.0751]\n" + stage);
    }
}

TEST_CASE("dem check rejects a periodic deck error with the deck error status",
          "[deck][periodic]") {
    const auto dir = demtest::scratchDir("deck-periodic");
    demtest::writeText(dir / "bad.toml", header + cell + R"([[wall]]
point = [0, 0, 0]
normal = [0, 0, 1]
material = "m"
)" + stage);
    const demtest::CommandResult r = demtest::runDem("check bad.toml", dir);
    CHECK(r.code == 2);
    CHECK(r.err.find("bad.toml:15:1: error: [[wall]] in a periodic deck") != std::string::npos);
}

TEST_CASE("resolved.toml of a periodic deck loads again into the same cell and gradients",
          "[deck][periodic]") {
    const Deck first = load(header + cell + R"([[stage]]
name = "shear"
velocity_gradient = [[0, "L/3", 0], [0, 0, 0], [0, 0, "-L"]]
stop = { steps = 10 }
[[stage]]
name = "rest"
stop = { steps = 10 }
)");
    INFO(first.resolvedToml);
    CHECK(first.resolvedToml.find(
              "\n[periodic]\nsize = [0.1, 0.2, 0.3]\nmin = [-0.01, 0.0, 0.01]\n") !=
          std::string::npos);
    CHECK(first.resolvedToml.find("velocity_gradient = [[0.0, 0.03333333333333333, 0.0], [0.0, "
                                  "0.0, 0.0], [0.0, 0.0, -0.1]]") != std::string::npos);
    const Deck again = load(first.resolvedToml);
    CHECK(again.resolvedToml == first.resolvedToml);
    const PeriodicCell &a = first.sim.cell, &b = again.sim.cell;
    CHECK(b.enabled);
    CHECK(bitEqual(a.h, b.h));
    CHECK(bitEqual(a.hAtRebuild, b.hAtRebuild));
    CHECK(bitEqual(a.velGrad, b.velGrad));
    for (int k = 0; k < 3; ++k)
        CHECK(bitEqual(a.origin[k], b.origin[k]));
    REQUIRE(again.sim.stages.size() == 2);
    REQUIRE(again.sim.stages[0].velocityGradient);
    CHECK(bitEqual(*again.sim.stages[0].velocityGradient, *first.sim.stages[0].velocityGradient));
    CHECK_FALSE(again.sim.stages[1].velocityGradient);
    CHECK(bitEqual(again.sim.dt, first.sim.dt));
}

TEST_CASE("the key reference and the schema describe [periodic] and velocity_gradient",
          "[deck][periodic][docs]") {
    const std::string roff = deckKeysRoff();
    CHECK(roff.find(".SS \"[periodic]\"") != std::string::npos);
    CHECK(roff.find(".B velocity_gradient\n(3x3 matrix [1/s])") != std::string::npos);
    const std::string schema = deckSchemaJson();
    CHECK(schema.find("\"periodic\": {") != std::string::npos);
    CHECK(schema.find("\"$ref\": \"#/$defs/mat3\"") != std::string::npos);

    // An independent validator accepts a periodic deck and rejects a two-row gradient.
    namespace fs = std::filesystem;
    const fs::path src(DEM_SOURCE_DIR);
    const auto dir = demtest::scratchDir("deck-periodic-schema");
    demtest::writeText(dir / "good.toml", header + cell + R"([[stage]]
velocity_gradient = [[0, "L", 0], [0, 0, 0], [0, 0, 0]]
stop = { steps = 10 }
)");
    demtest::writeText(dir / "bad.toml", header + cell + R"([[stage]]
velocity_gradient = [[0, 0.1, 0], [0, 0, 0]]
stop = { steps = 10 }
)");
    const auto validate = [&](const std::string& deck) {
        const std::string cmd =
            "/usr/bin/python3 '" + (src / "tests/tools/validate_decks.py").string() + "' '" +
            (src / "schemas/deck.schema.json").string() + "' '" + (dir / deck).string() + "' > '" +
            (dir / "out.txt").string() + "' 2>&1";
        const int status = std::system(cmd.c_str());
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    };
    const int good = validate("good.toml");
    if (good == 77) {
        WARN("skipped: " << demtest::slurp(dir / "out.txt"));
        return;
    }
    INFO(demtest::slurp(dir / "out.txt"));
    CHECK(good == 0);
    CHECK(validate("bad.toml") == 1);
}

TEST_CASE("dem info shows the cell of a periodic checkpoint", "[deck][periodic]") {
    // Simple shear at 2/s for 10 steps: the y edge tilts by 2/s x 0.2 m x t along x (h' = L h,
    // with h_yy constant), and info reports the edges, one per row, and the gradient.
    const auto dir = demtest::scratchDir("deck-periodic-info");
    demtest::writeText(dir / "shear.toml", header + cell + R"([simulation]
dt = 1e-5
[[stage]]
velocity_gradient = [[0, 2, 0], [0, 0, 0], [0, 0, 0]]
stop = { steps = 10 }
)");
    REQUIRE(demtest::runDem("run shear.toml --out runs/shear", dir).code == 0);
    const demtest::CommandResult r =
        demtest::runDem("info runs/shear/checkpoints/step-000000010.dem.gz --json", dir);
    INFO(r.err);
    REQUIRE(r.code == 0);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    CHECK(j["cell_min"] == nlohmann::json::array({-0.01, 0.0, 0.01}));
    const auto& edges = j["cell_edges"];
    CHECK(edges[0] == nlohmann::json::array({0.1, 0.0, 0.0}));
    CHECK(edges[1][0].get<double>() == Approx(2 * 0.2 * 10 * 1e-5).epsilon(1e-12));
    CHECK(edges[1][1].get<double>() == 0.2);
    CHECK(edges[2] == nlohmann::json::array({0.0, 0.0, 0.3}));
    CHECK(j["velocity_gradient"][0] == nlohmann::json::array({0.0, 2.0, 0.0}));
}

TEST_CASE("dem info shows the servos in force in a checkpoint", "[deck][servo]") {
    // The cell's stress control (target and stress now per axis) and a servo-controlled wall
    // (servo_force and the push now), both with an integral term, which the deck reads.
    const auto dir = demtest::scratchDir("deck-servo-info");
    const std::string cellDeck = header + cell + R"([simulation]
dt = 1e-5
[[stage]]
stress_control = { zz = -1e4, max_strain_rate = 1, integral_time = 0.5 }
stop = { steps = 10 }
)";
    const std::string lidDeck = R"([[material]]
name = "glass"
density = 2500
young = 1e7
[[wall]]
name = "lid"
point = [0, 0, 0.1]
normal = [0, 0, -1]
material = "glass"
[[spheres]]
kind = "list"
material = "glass"
centers = [[0, 0, 0]]
radius = 0.01
[[stage]]
motion = [{ object = "lid", servo_force = 2, direction = [0, 0, -1], max_speed = 0.1, integral_time = 0.25 }]
stop = { steps = 10 }
)";
    CHECK(load(cellDeck).sim.stages[0].stressControl->integralTime == 0.5);
    CHECK(load(lidDeck).sim.stages[0].motions[0].integralTime == 0.25);
    demtest::writeText(dir / "cell.toml", cellDeck);
    demtest::writeText(dir / "lid.toml", lidDeck);
    for (const char* name : {"cell", "lid"}) {
        const std::string run = fmt::format("run {0}.toml --out runs/{0}", name);
        REQUIRE(demtest::runDem(run, dir).code == 0);
    }
    const auto info = [&](const char* name, const char* flags) {
        const demtest::CommandResult r = demtest::runDem(
            fmt::format("info runs/{}/checkpoints/step-000000010.dem.gz{}", name, flags), dir);
        INFO(r.err);
        CHECK(r.code == 0);
        return r.out;
    };
    // Two spheres apart: no stress yet, the cell shrinking along z at max_strain_rate.
    const nlohmann::json c = nlohmann::json::parse(info("cell", " --json"));
    CHECK(c["stress_control"]["zz"]["target"] == -1e4);
    CHECK(c["stress_control"]["zz"]["stress"] == 0.0);
    CHECK(!c["stress_control"].contains("xx"));
    CHECK(c["stress_control"]["max_strain_rate"] == 1.0);
    CHECK(c["stress_control"]["integral_time"] == 0.5);
    CHECK(c["velocity_gradient"][2] == nlohmann::json::array({0.0, 0.0, -1.0}));
    CHECK(info("cell", "")
              .find("zz 0 Pa of -10000, max_strain_rate 1 /s, gain 0.0001 /(s Pa), "
                    "integral_time 0.5 s") != std::string::npos);
    // Nothing touches the lid yet.
    const nlohmann::json l = nlohmann::json::parse(info("lid", " --json"));
    REQUIRE(l["servos"].size() == 1);
    CHECK(l["servos"][0]["object"] == "lid");
    CHECK(l["servos"][0]["servo_force"] == 2.0);
    CHECK(l["servos"][0]["force"] == 0.0);
    CHECK(!l.contains("stress_control"));
    CHECK(info("lid", "").find("lid 0 N of 2") != std::string::npos);
}
