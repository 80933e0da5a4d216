// Deck loading: the shipped decks and the README's deck load; expressions, parameters and --set
// overrides work; resolved.toml reproduces the same simulation; the committed schema is current.
#include "ScratchDir.hpp"
#include "core/Workspace.hpp"
#include "deck/Deck.hpp"
#include "deck/DeckKeys.hpp"
#include "deck/Expressions.hpp"

#include <catch2/catch.hpp>

#include "core/TimeStep.hpp"
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numbers>
#include <sstream>

using namespace dem;

namespace {

const std::string sourceDir = DEM_SOURCE_DIR;

const char* readmeDeck = R"([params]
r = 0.005
[[material]]
name = "glass"
law = "hertz_mindlin"
density = 2500
young = 1e8
poisson = 0.25
friction_angle = 30
restitution = 0.5
[[wall]]
point = [0, 0, 0]
normal = [0, 0, 1]
material = "glass"
[[spheres]]
kind = "random"
region = { box = { min = [-0.05, -0.05, 0.0], max = [0.05, 0.05, 0.1] } }
radius = "r"
count = 200
material = "glass"
[[stage]]
name = "settle"
gravity = [0, 0, -9.81]
stop = { time = 0.5 }
)";

std::string allErrors(const std::vector<DeckError>& errors) {
    std::string out;
    for (const DeckError& e : errors)
        out += formatError(e) + "\n";
    return out;
}

Deck load(const std::string& text, const ParamOverrides& overrides = {}) {
    Deck deck;
    std::vector<DeckError> errors;
    const bool ok = loadDeckText("test.toml", text, overrides, deck, errors);
    INFO(allErrors(errors));
    REQUIRE(ok);
    REQUIRE(errors.empty());
    return deck;
}

Deck loadFile(const std::string& path) {
    Deck deck;
    std::vector<DeckError> errors;
    const bool ok = loadDeck(path, {}, deck, errors);
    INFO(path << "\n" << allErrors(errors));
    REQUIRE(ok);
    return deck;
}

// A small deck with one sphere whose radius and friction come from the text given.
std::string oneSphere(const std::string& params, const std::string& radius,
                      const std::string& friction = "30") {
    return "[params]\n" + params + "\n[[material]]\nname = \"m\"\ndensity = 1000\nyoung = 1e7\n" +
           "friction_angle = " + friction + "\n[[spheres]]\nkind = \"list\"\nmaterial = \"m\"\n" +
           "centers = [[0, 0, 0]]\nradius = " + radius + "\n[[stage]]\nstop = { steps = 10 }\n";
}

bool bitEqual(double a, double b) {
    return std::memcmp(&a, &b, sizeof a) == 0;
}

void requireSameSimulation(const Simulation& a, const Simulation& b) {
    REQUIRE(a.particles.size() == b.particles.size());
    for (size_t k = 0; k < a.particles.size(); ++k) {
        for (int c = 0; c < 3; ++c) {
            REQUIRE(bitEqual(a.particles.pos[k][c], b.particles.pos[k][c]));
            REQUIRE(bitEqual(a.particles.vel[k][c], b.particles.vel[k][c]));
        }
        REQUIRE(bitEqual(a.particles.radius[k], b.particles.radius[k]));
        REQUIRE(bitEqual(a.particles.mass(k), b.particles.mass(k)));
        REQUIRE(a.particles.material[k] == b.particles.material[k]);
        REQUIRE(a.particles.blocked(k) == b.particles.blocked(k));
        REQUIRE(a.particles.groups(k) == b.particles.groups(k));
    }
    REQUIRE(a.materials.size() == b.materials.size());
    for (size_t k = 0; k < a.materials.size(); ++k) {
        const Material &m = a.materials[k], &n = b.materials[k];
        REQUIRE(m.name == n.name);
        REQUIRE(m.law == n.law);
        REQUIRE(bitEqual(m.density, n.density));
        REQUIRE(bitEqual(m.young, n.young));
        REQUIRE(bitEqual(m.poisson, n.poisson));
        REQUIRE(bitEqual(m.frictionAngle, n.frictionAngle));
        REQUIRE(bitEqual(m.restitution, n.restitution));
        REQUIRE(bitEqual(m.rollingFriction, n.rollingFriction));
        REQUIRE(bitEqual(m.twistingFriction, n.twistingFriction));
    }
    REQUIRE(a.obstacles.objects.size() == b.obstacles.objects.size());
    REQUIRE(a.obstacles.facets.size() == b.obstacles.facets.size());
    for (size_t k = 0; k < a.obstacles.facets.size(); ++k)
        for (int v = 0; v < 3; ++v)
            REQUIRE(a.obstacles.facets[k].v[v] == b.obstacles.facets[k].v[v]);
    REQUIRE(a.obstacles.walls.size() == b.obstacles.walls.size());
    REQUIRE(a.groupNames == b.groupNames);
    REQUIRE(bitEqual(a.dt, b.dt));
    REQUIRE(a.stages.size() == b.stages.size());
    for (size_t s = 0; s < a.stages.size(); ++s) {
        const Stage &x = a.stages[s], &y = b.stages[s];
        REQUIRE(x.name == y.name);
        REQUIRE(x.gravity.has_value() == y.gravity.has_value());
        if (x.gravity)
            REQUIRE(*x.gravity == *y.gravity);
        REQUIRE(x.damping == y.damping);
        REQUIRE(x.motions.size() == y.motions.size());
        REQUIRE(x.stop.size() == y.stop.size());
        for (size_t c = 0; c < x.stop.size(); ++c) {
            REQUIRE(x.stop[c].label == y.stop[c].label);
            REQUIRE(bitEqual(x.stop[c].value, y.stop[c].value));
            REQUIRE(x.stop[c].checkEvery == y.stop[c].checkEvery);
        }
    }
}

} // namespace

TEST_CASE("the shipped decks and the README deck load", "[deck]") {
    for (const char* name :
         {"quickstart", "bouncing", "deposition", "plate-push", "rolling", "oedometer"}) {
        const Deck deck = loadFile(sourceDir + "/decks/" + name + ".toml");
        CHECK(deck.name == name);
        CHECK(deck.sim.particles.size() > 0);
        CHECK(deck.sim.dt > 0);
        CHECK(!deck.sim.stages.empty());
        for (const Stage& s : deck.sim.stages)
            CHECK(!s.stop.empty());
    }
    const Deck readme = load(readmeDeck);
    CHECK(readme.sim.particles.size() == 200);
    CHECK(readme.sim.obstacles.walls.size() == 1);
    CHECK(readme.sim.obstacles.objects[0].name == "wall0");
    REQUIRE(readme.sim.stages.size() == 1);
    CHECK(readme.sim.stages[0].stop[0].label == "time ~ 0.5");
}

TEST_CASE("quickstart deck content", "[deck]") {
    const Deck deck = loadFile(sourceDir + "/decks/quickstart.toml");
    const Simulation& sim = deck.sim;
    CHECK(sim.particles.size() == 300);
    CHECK(sim.materials.at(0).law == LawKind::HertzMindlin);
    CHECK(sim.obstacles.objects.size() == 1);
    CHECK(sim.obstacles.facets.size() == 10); // a box without its top
    const Stage& stage = sim.stages.at(0);
    REQUIRE(stage.stop.size() == 2);
    CHECK(stage.stop[0].label == "time ~ 1");
    CHECK(stage.stop[1].label == "unbalanced_force < 0.05");
    CHECK(stage.stop[1].checkEvery == 200);
    CHECK(stage.stop[1].minSteps == 2000);
    CHECK(deck.output.history.every == 100);
    REQUIRE(deck.output.history.columns.size() == 6);
    CHECK(deck.output.history.columns[0].name == "step");
    CHECK(deck.output.history.columns[1].name == "time");
    CHECK(deck.output.history.columns[2].name == "kinetic_energy");
    // Default step: dt_factor times the critical step of the contact law.
    CHECK(sim.dt == Approx(defaultTimeStepFactor * criticalTimeStep(sim)));
}

TEST_CASE("plate-push deck: two stages, a moving plate and a force criterion", "[deck]") {
    const Deck deck = loadFile(sourceDir + "/decks/plate-push.toml");
    const Simulation& sim = deck.sim;
    REQUIRE(sim.stages.size() == 2);
    const int plate = sim.obstacles.findObject("plate");
    REQUIRE(plate >= 0);
    CHECK(sim.obstacles.walls.at(0).normal == Vec3(0, 0, -1));
    const Stage& push = sim.stages[1];
    REQUIRE(push.motions.size() == 1);
    CHECK(push.motions[0].object == plate);
    CHECK(push.motions[0].velocity == Vec3(0, 0, -0.1));
    bool force = false;
    for (const StopCriterion& c : push.stop) {
        if (c.kind != StopCriterion::Kind::Measure)
            continue;
        force = true;
        CHECK(c.above);
        CHECK(c.value == 50);
        CHECK(c.label == "object:plate.force.z > 50");
        CHECK(c.measure.scope == MeasureRef::Scope::Object);
        CHECK(c.measure.target == plate);
        CHECK(c.measure.component == 2);
    }
    CHECK(force);
}

TEST_CASE("oedometer deck: servo stages wait for their force and for rest", "[deck]") {
    const Deck deck = loadFile(sourceDir + "/decks/oedometer.toml");
    const Simulation& sim = deck.sim;
    REQUIRE(sim.stages.size() == 4);
    const int plate = sim.obstacles.findObject("plate");
    const double area = 0.1 * 0.1;
    const double targets[] = {5e3 * area, 10e3 * area, 5e3 * area};
    for (size_t k = 1; k < 4; ++k) {
        const Stage& s = sim.stages[k];
        REQUIRE(s.motions.size() == 1);
        const Motion& m = s.motions[0];
        CHECK(m.kind == Motion::Kind::Servo);
        CHECK(m.object == plate);
        CHECK(m.direction == Vec3(0, 0, -1));
        CHECK(m.servoForce == Approx(targets[k - 1]).epsilon(1e-15));
        CHECK(m.maxSpeed == 0.2);
        CHECK(m.gain == Approx(0.2 / targets[k - 1]).epsilon(1e-15)); // the default
        REQUIRE(s.stop.size() == 2);
        CHECK(s.stop[0].label == "time ~ 3");
        CHECK(s.stop[0].servoTolerance == 0); // steps and times are not held back
        CHECK(s.stop[1].label == "unbalanced_force < 0.01 (servos within 0.01)");
        CHECK(s.stop[1].servoTolerance == 0.01);
    }
    // The resolved deck shows the gain it took.
    CHECK(deck.resolvedToml.find("gain = ") != std::string::npos);
}

TEST_CASE("triaxial deck: a stress-controlled cell, then a controlled confinement", "[deck]") {
    const Deck deck = loadFile(sourceDir + "/decks/triaxial.toml");
    const Simulation& sim = deck.sim;
    REQUIRE(sim.cell.enabled);
    REQUIRE(sim.stages.size() == 2);
    const StressControl& confine = sim.stages[0].stressControl.value();
    CHECK(confine.axes == 7);
    CHECK(confine.target == Vec3::Constant(-1e5));
    CHECK(confine.maxRate == 10);
    CHECK(confine.gain == Approx(10 / 1e5).epsilon(1e-15)); // the default
    CHECK(sim.stages[0].stop[1].label == "unbalanced_force < 0.02 (servos within 0.01)");
    const StressControl& lateral = sim.stages[1].stressControl.value();
    CHECK(lateral.axes == 3);
    CHECK(lateral.target == Vec3(-1e5, -1e5, 0));
    CHECK(sim.stages[1].velocityGradient.value()(2, 2) == -0.5);
}

TEST_CASE("a servo's object may also slide across its direction", "[deck]") {
    const Deck deck = load(R"([[material]]
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
motion = [{ object = "lid", servo_force = 2, direction = [0, 0, -2], max_speed = 0.1, velocity = [0.01, 0, 0] }]
stop = { steps = 10 }
)");
    const Motion& m = deck.sim.stages[0].motions.at(0);
    CHECK(m.kind == Motion::Kind::Servo);
    CHECK(m.direction == Vec3(0, 0, -1));
    CHECK(m.velocity == Vec3(0.01, 0, 0));
    CHECK(m.gain == Approx(0.05).epsilon(1e-15));
}

TEST_CASE("a stage may change a material's rolling and twisting friction", "[deck]") {
    // Turning rolling resistance on in a later stage divides the default step from the start.
    const std::string deck = R"([[material]]
name = "glass"
density = 2500
young = 1e7
[[spheres]]
kind = "list"
material = "glass"
centers = [[0, 0, 0]]
radius = 0.01
[[stage]]
stop = { steps = 10 }
[[stage]]
stop = { steps = 10 }
friction = [{ material = "glass", rolling_friction = 0.1 }]
)";
    const Deck d = load(deck);
    REQUIRE(d.sim.stages[1].rollingChanges.size() == 1);
    CHECK(d.sim.stages[1].rollingChanges[0].rolling == 0.1);
    CHECK(!d.sim.stages[1].rollingChanges[0].twisting);
    CHECK(d.sim.stages[1].frictionAngles.empty());
    CHECK(!d.sim.pairTable.resistsRolling());
    CHECK(d.sim.dt == Approx(defaultTimeStepFactor * criticalTimeStep(d.sim)).epsilon(1e-15));
    Simulation plain = d.sim;
    plain.stages[1].rollingChanges.clear();
    CHECK(criticalTimeStep(d.sim) ==
          Approx(criticalTimeStep(plain) / rollingStepDivisor).epsilon(1e-15));
}

TEST_CASE("servo_tolerance follows the stress control the stages carry over", "[deck]") {
    // A stage without velocity_gradient or stress_control keeps the previous one's control; one
    // with velocity_gradient alone ends it, and servo_tolerance has nothing to wait for there.
    const std::string head = R"([periodic]
size = [0.1, 0.1, 0.1]
[[material]]
name = "glass"
density = 2500
young = 1e7
[[spheres]]
kind = "list"
material = "glass"
centers = [[0.05, 0.05, 0.05]]
radius = 0.01
[[stage]]
stress_control = { zz = -1e4, max_strain_rate = 1 }
stop = { unbalanced_force = 0.1, servo_tolerance = 0.01, time = 1 }
[[stage]]
stop = { unbalanced_force = 0.1, servo_tolerance = 0.01, time = 1 }
)";
    const Deck carried = load(head);
    CHECK(!carried.sim.stages[1].stressControl);
    CHECK(carried.sim.stages[1].stop[1].servoTolerance == 0.01);
    Deck deck;
    std::vector<DeckError> errors;
    CHECK_FALSE(loadDeckText("t.toml", head + R"([[stage]]
velocity_gradient = [[0, 0, 0], [0, 0, 0], [0, 0, -1]]
stop = { unbalanced_force = 0.1, servo_tolerance = 0.01, time = 1 }
)",
                             {}, deck, errors));
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].line == 19); // the third stage's stop table
    CHECK(errors[0].message.find("no servo runs in this stage") != std::string::npos);
}

TEST_CASE("bouncing deck: fixed support and free ball", "[deck]") {
    const Deck deck = loadFile(sourceDir + "/decks/bouncing.toml");
    const Particles& p = deck.sim.particles;
    REQUIRE(p.size() == 2);
    CHECK(p.blocked(0) == BlockAll);
    CHECK(p.blocked(1) == 0);
    CHECK(p.pos[1] == Vec3(0, 0, 0.2));
    CHECK(p.radius[0] == 0.05);
    CHECK(deck.sim.materials[0].law == LawKind::Linear);
    CHECK(deck.sim.materials[0].poisson == 0.3); // stiffness_ratio, k_t/k_n
    CHECK(deck.sim.groupNames == std::vector<std::string>{"support", "ball"});
    CHECK(p.groups(1) == 2u);
}

TEST_CASE("expressions: parameters, constants and functions", "[deck]") {
    const Deck deck = load(oneSphere("a = 0.002\nb = \"2*a + a/2\"", "\"b\"", "\"degrees(pi/6)\""));
    CHECK(deck.params.at("a") == 0.002);
    CHECK(deck.params.at("b") == Approx(0.005));
    CHECK(deck.sim.particles.radius[0] == Approx(0.005));
    CHECK(deck.sim.materials[0].frictionAngle == Approx(std::numbers::pi / 6));

    const Deck r = load(oneSphere("x = \"sqrt(16) * cos(radians(60))\"", "\"x/1000\""));
    CHECK(r.params.at("x") == Approx(2.0));
    CHECK(r.sim.particles.radius[0] == Approx(0.002));
}

// Numbers in expressions are read as the nearest double, as TOML's are, and what is not a number
// is an error naming the expression.
TEST_CASE("expressions: numbers read exactly, malformed ones refused", "[deck]") {
    Expressions x;
    std::string error;
    REQUIRE(x.define("r", 0.25, error));
    const std::pair<const char*, double> exact[] = {
        {"0.1", 0.1},
        {"2.5e-3", 2.5e-3},
        {".5", 0.5},
        {"5.", 5.0},
        {"1E3+1", 1001.0},
        {"-2", -2.0},
        {"2*-3", -6.0},
        {"4*r", 1.0},
        {"1e-3*r", 2.5e-4},
        {"0.30000000000000004", 0.30000000000000004},
        {"1.7976931348623157e308", std::numeric_limits<double>::max()}};
    for (const auto& [text, expected] : exact) {
        INFO(text);
        double v = 0;
        REQUIRE(x.evaluate(text, v, error));
        CHECK(v == expected);
    }
    for (const char* text :
         {"1e400", "1e-400", "2*1e-400", "0x10", "1.2.3", "2r", "1e", "inf", "nan", "3 4"}) {
        INFO(text);
        double v = 0;
        CHECK_FALSE(x.evaluate(text, v, error));
        CHECK(error.find(std::string("\"") + text + "\"") != std::string::npos);
    }
    double v = 0;
    CHECK_FALSE(x.evaluate("2*1e-400", v, error));
    CHECK(error == "bad expression \"2*1e-400\": '1e-400' is not representable in 64 bits");
    REQUIRE(x.evaluate("1e-310", v, error)); // subnormal, not zero
    CHECK(v == 1e-310);
}

TEST_CASE("a --set override changes a parameter and shows in resolvedToml", "[deck]") {
    const std::string text = oneSphere("r = 0.005\nd = \"2*r\"", "\"d/2\"");
    const Deck base = load(text);
    CHECK(base.sim.particles.radius[0] == Approx(0.005));
    const Deck changed = load(text, {{"r", "0.001*3"}});
    CHECK(changed.params.at("r") == Approx(0.003));
    CHECK(changed.params.at("d") == Approx(0.006));
    CHECK(changed.sim.particles.radius[0] == Approx(0.003));
    CHECK(changed.resolvedToml.find("r = 0.003") != std::string::npos);
    CHECK(changed.resolvedToml.find("d = 0.006") != std::string::npos);
}

TEST_CASE("a --set of an unknown parameter is an error listing the deck's", "[deck]") {
    Deck deck;
    std::vector<DeckError> errors;
    CHECK_FALSE(loadDeckText("t.toml", oneSphere("a = 1\nb = 2\nc = 3", "0.01"), {{"x", "1"}}, deck,
                             errors));
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].message == "unknown parameter 'x' in --set (deck defines: a, b, c)");
    CHECK(formatError(errors[0]) ==
          "t.toml: error: unknown parameter 'x' in --set (deck defines: a, b, c)");
}

TEST_CASE("resolvedToml loads again into the same simulation", "[deck]") {
    std::vector<std::pair<std::string, std::string>> decks{{"README", readmeDeck}};
    for (const char* name :
         {"quickstart", "bouncing", "deposition", "plate-push", "rolling", "oedometer"}) {
        std::ifstream in(sourceDir + "/decks/" + name + ".toml");
        std::stringstream text;
        text << in.rdbuf();
        decks.emplace_back(name, text.str());
    }
    for (const auto& [name, text] : decks) {
        INFO(name);
        // With an override where the deck has an r, so that it must show in the resolved text.
        ParamOverrides set;
        if (text.find("\nr = ") != std::string::npos)
            set = {{"r", "0.0045"}};
        const Deck first = load(text, set);
        const Deck again = load(first.resolvedToml);
        INFO(first.resolvedToml);
        requireSameSimulation(first.sim, again.sim);
        CHECK(again.resolvedToml == first.resolvedToml);
        CHECK(again.params == first.params);
    }
}

TEST_CASE("formatError gives file:line:column: error: message", "[deck]") {
    CHECK(formatError(DeckError{"deck.toml", 12, 17, "friction_angle = 95 is out of range"}) ==
          "deck.toml:12:17: error: friction_angle = 95 is out of range");
}

TEST_CASE("the committed JSON Schema is generated from the key tables", "[deck]") {
    const std::string path = sourceDir + "/schemas/deck.schema.json";
    std::ifstream in(path, std::ios::binary);
    std::stringstream committed;
    committed << in.rdbuf();
    const std::string generated = deckSchemaJson();
    // Name the first line that differs rather than printing both files.
    std::istringstream a(generated), b(committed.str());
    std::string lineA, lineB;
    int line = 0;
    bool moreA = true, moreB = true;
    while (moreA || moreB) {
        moreA = bool(std::getline(a, lineA));
        moreB = bool(std::getline(b, lineB));
        ++line;
        if (moreA != moreB || lineA != lineB)
            break;
    }
    INFO("schemas/deck.schema.json is out of date (first difference at line "
         << line << ": generated \"" << lineA << "\", committed \"" << lineB
         << "\"). Regenerate it with\n"
         << "  DEM_WRITE_SCHEMA=1 build/bin/dem_tests \"[schema-write]\"");
    const bool upToDate = generated == committed.str();
    CHECK(upToDate);
    CHECK(generated.find("\"$schema\": \"https://json-schema.org/draft/2020-12/schema\"") !=
          std::string::npos);
    CHECK(generated.find("\"additionalProperties\": false") != std::string::npos);
}

// Not a check: writes the schema file when asked (DEM_WRITE_SCHEMA=1), for regeneration.
TEST_CASE("write the JSON Schema", "[.][schema-write]") {
    if (!std::getenv("DEM_WRITE_SCHEMA"))
        return;
    std::ofstream(sourceDir + "/schemas/deck.schema.json", std::ios::binary) << deckSchemaJson();
}

TEST_CASE("the man page key reference covers every section", "[deck]") {
    const std::string roff = deckKeysRoff();
    for (const char* s : {"[simulation]", "[[material]]", "[[pair]]", "[[wall]]", "[[box]]",
                          "[[facets]]", "[[spheres]]", "[[group]]", "[[stage]]", "[output]"})
        CHECK(roff.find(std::string(".SS \"") + s) != std::string::npos);
    CHECK(roff.find("friction_angle") != std::string::npos);
}

TEST_CASE("a deck using most keys builds the expected simulation", "[deck]") {
    // Files named by the deck are looked up next to it.
    const auto dir = demtest::scratchDir("deck-most-keys");
    std::ofstream(dir / "spheres.txt") << "# x y z r\n0.5 0.5 0.5 0.01\n0.6 0.5 0.5 0.02\n";
    std::ofstream(dir / "tri.off") << "OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n";
    const std::string text = R"(
[simulation]
dt = 1e-6
skin = 0.001
track_energy = false
domain = { min = [-1, -1, -1], max = [2, 2, 2], out_of_domain = "remove" }
[params]
a = 30
[[material]]
name = "m1"
density = 2000
young = 1e7
friction_angle = "a"
[[material]]
name = "m2"
density = 3000
young = 2e7
rolling_friction = 0.3
twisting_friction = 0.1
[[pair]]
materials = ["m1", "m2"]
friction_angle = 10
restitution = 0.7
rolling_friction = 0.05
[[wall]]
name = "floor"
point = [0, 0, -0.5]
normal = [0, 0, 2]
material = "m1"
groups = ["boundary", "bottom"]
[[box]]
name = "block"
min = [1, 1, 1]
max = [1.2, 1.4, 1.6]
rotation = { axis = [0, 0, 1], angle = 90 }
material = "m2"
[[facets]]
name = "lid"
material = "m1"
rectangle = { center = [0.5, 0.5, 1.5], u = [0.5, 0, 0], v = [0, -0.5, 0] }
[[facets]]
name = "tri"
material = "m1"
file = "tri.off"
scale = 2
translate = [0, 0, 1]
[[spheres]]
kind = "file"
file = "spheres.txt"
material = "m2"
blocked = "zXY"
[[spheres]]
kind = "cubic"
material = "m1"
region = { difference = [{ box = { min = [0, 0, 0], max = [0.1, 0.1, 0.1] } }, { sphere = { center = [0, 0, 0], radius = 0.03 } }] }
radius = 0.01
group = "lattice"
velocity = [0, 0, "-1"]
[[spheres]]
kind = "hexagonal"
material = "m1"
region = { cylinder = { a = [-0.5, -0.5, 0], b = [-0.5, -0.5, 0.1], radius = 0.05 } }
radius = 0.01
gap = 0.001
[[group]]
name = "low"
region = { box = { min = [-1, -1, -1], max = [2, 2, 0.02] } }
[[stage]]
name = "spin"
gravity = [0, 0, -9.81]
damping = 0.1
motion = [{ object = "lid", angular_velocity = 2, axis = [0, 0, 3] },
          { object = "block", amplitude = [0.01, 0, 0], frequency = 5, phase = 90 },
          { group = "lattice", velocity = [0, 0, -0.1] }]
force = [{ group = "low", force = [0, 0, 1] }]
friction = [{ material = "m1", friction_angle = 5 }]
stop = { steps = 100, kinetic_energy = 1e-9, wall_time = 60 }
[[stage]]
stop_motion = true
stop = { measure = "group:low.position.z", below = 0.0, min_steps = 10, check_every = 5 }
[output]
history = { every = 10, columns = ["body:0.position", "group:lattice.velocity.z"] }
progress_every = 500
)";
    Deck deck;
    std::vector<DeckError> errors;
    const bool ok = loadDeckText((dir / "tour.toml").string(), text, {}, deck, errors);
    INFO(allErrors(errors));
    REQUIRE(ok);
    const Simulation& sim = deck.sim;
    CHECK(sim.dt == 1e-6);
    CHECK(sim.neighbours.skin == 0.001);
    CHECK_FALSE(sim.trackEnergy);
    CHECK(sim.hasDomain);
    CHECK(sim.outOfDomain == OutOfDomain::Remove);
    REQUIRE(sim.materials.size() == 2);
    CHECK(sim.materials[0].frictionAngle == Approx(std::numbers::pi / 6));
    REQUIRE(sim.overrides.size() == 1);
    CHECK(*sim.overrides[0].frictionAngle == Approx(std::numbers::pi / 18));
    CHECK(*sim.overrides[0].restitution == 0.7);
    CHECK(sim.pairTable.count == 2);
    // Rolling and twisting friction: the smaller of the materials' (m1 has none), or the pair's.
    CHECK(sim.materials[1].rollingFriction == 0.3);
    CHECK(sim.materials[1].twistingFriction == 0.1);
    CHECK(*sim.overrides[0].rollingFriction == 0.05);
    CHECK_FALSE(sim.overrides[0].twistingFriction.has_value());
    CHECK(sim.pairTable(0, 0).muRoll == 0);
    CHECK(sim.pairTable(1, 1).muRoll == 0.3);
    CHECK(sim.pairTable(1, 1).muTwist == 0.1);
    CHECK(sim.pairTable(0, 1).muRoll == 0.05);
    CHECK(sim.pairTable(1, 0).muRoll == 0.05);
    CHECK(sim.pairTable(0, 1).muTwist == 0);
    CHECK(sim.pairTable.resistsRolling());

    const Obstacles& obs = sim.obstacles;
    REQUIRE(obs.objects.size() == 4);
    CHECK(obs.walls.at(0).normal == Vec3(0, 0, 1));
    CHECK(obs.objects[0].groups == 3u); // boundary and bottom
    CHECK(obs.boxes.at(0).center.isApprox(Vec3(1.1, 1.2, 1.3)));
    CHECK(obs.boxes[0].half.isApprox(Vec3(0.1, 0.2, 0.3)));
    CHECK((obs.boxes[0].ori * Vec3::UnitX()).isApprox(Vec3::UnitY()));
    CHECK(obs.objects[2].center.isApprox(Vec3(0.5, 0.5, 1.5)));
    REQUIRE(obs.facets.size() == 3);
    CHECK(obs.facets[0].normal.isApprox(Vec3(0, 0, -1))); // u x v points down
    CHECK(obs.facets[2].v[1].isApprox(Vec3(2, 0, 1)));
    CHECK(obs.facets[2].vid[0] >= 4); // vertex ids continue after the rectangle's
    CHECK(obs.nextVertexId == 7);

    const Particles& p = sim.particles;
    REQUIRE(p.size() > 10);
    CHECK(p.pos[1] == Vec3(0.6, 0.5, 0.5));
    CHECK(p.radius[1] == 0.02);
    CHECK(p.blocked(0) == (BlockZ | BlockRX | BlockRY));
    CHECK(p.mass(0) == Approx(3000 * 4.0 / 3.0 * std::numbers::pi * 1e-6));
    const int lattice = sim.groupIndex("lattice");
    const int low = sim.groupIndex("low");
    REQUIRE(lattice >= 0);
    REQUIRE(low >= 0);
    for (size_t k = 2; k < p.size(); ++k) {
        const bool inLattice = p.groups(k) & (1u << lattice);
        if (inLattice)
            CHECK(p.vel[k] == Vec3(0, 0, -1));
        CHECK(bool(p.groups(k) & (1u << low)) == (p.pos[k].z() <= 0.02));
        for (size_t j = 0; j < k; ++j) // lattice spheres do not overlap
            CHECK((p.pos[k] - p.pos[j]).norm() >= p.radius[k] + p.radius[j] - 1e-12);
    }

    REQUIRE(sim.stages.size() == 2);
    const Stage& spin = sim.stages[0];
    REQUIRE(spin.motions.size() == 3);
    CHECK(spin.motions[0].kind == Motion::Kind::Rotation);
    CHECK(spin.motions[0].axis == Vec3(0, 0, 1));
    // About the object's centre when the stage begins, there the one the deck gives it.
    CHECK(spin.motions[0].centerAtObject);
    Simulation begun = sim;
    begun.stageStarted = false;
    beginStage(begun);
    CHECK(begun.motions.at(0).center.isApprox(Vec3(0.5, 0.5, 1.5)));
    CHECK(deck.resolvedToml.find(R"(motion = [{ object = "lid", angular_velocity = 2.0, axis = )"
                                 "[0.0, 0.0, 1.0] },") != std::string::npos); // no center
    CHECK(spin.motions[1].kind == Motion::Kind::Harmonic);
    CHECK(spin.motions[1].phase == Approx(std::numbers::pi / 2));
    CHECK(spin.motions[2].group == lattice);
    REQUIRE(spin.forces.size() == 1);
    CHECK(spin.forces[0].group == low);
    REQUIRE(spin.frictionAngles.size() == 1);
    CHECK(spin.frictionAngles[0].second == Approx(std::numbers::pi / 36));
    REQUIRE(spin.stop.size() == 3);
    CHECK(spin.stop[0].label == "steps >= 100");
    CHECK(spin.stop[1].label == "wall_time >= 60");
    CHECK(spin.stop[2].label == "kinetic_energy < 1e-09");
    const Stage& second = sim.stages[1];
    CHECK(second.name == "stage1");
    CHECK(second.clearMotions);
    CHECK_FALSE(second.gravity.has_value());
    REQUIRE(second.stop.size() == 1);
    CHECK(second.stop[0].label == "group:low.position.z < 0");
    CHECK(second.stop[0].minSteps == 10);
    CHECK(second.stop[0].checkEvery == 5);
    CHECK(deck.output.history.every == 10);
    CHECK(deck.output.history.columns.size() == 4);
    CHECK(deck.output.progressEverySteps == 500);

    // resolved.toml names the files by absolute path, so it loads from anywhere.
    Deck again;
    std::vector<DeckError> againErrors;
    const bool againOk =
        loadDeckText("/elsewhere/resolved.toml", deck.resolvedToml, {}, again, againErrors);
    INFO(deck.resolvedToml << allErrors(againErrors));
    REQUIRE(againOk);
    requireSameSimulation(deck.sim, again.sim);
}

TEST_CASE("viscoelastic decks take their time step from the contact time", "[deck]") {
    const Deck deck = load(R"([[material]]
name = "v"
law = "viscoelastic"
density = 1000
contact_time = 1e-3
restitution_normal = 0.5
[[spheres]]
kind = "list"
material = "v"
centers = [[0, 0, 0]]
radius = 0.01
[[stage]]
stop = { steps = 1 }
)");
    CHECK(deck.sim.materials[0].law == LawKind::ViscoElastic);
    CHECK(deck.sim.materials[0].restitutionN == 0.5);
    CHECK(deck.sim.materials[0].restitutionT == 1.0);
    // Default step: 0.1 x 2 t_c / sqrt(pi^2 + ln^2 e_n), t_c = 1e-3 s, e_n = 0.5.
    CHECK(deck.sim.dt ==
          Approx(0.1 * 2e-3 / std::sqrt(M_PI * M_PI + std::log(0.5) * std::log(0.5))));
}

TEST_CASE("a deck's spheres keep the orientation and start position its outputs read", "[deck]") {
    const std::string base = oneSphere("", "0.01");
    auto kept = [](const Deck& d) {
        const Particles& P = d.sim.particles;
        CHECK(P.ori.size() == (P.keepsOrientation ? P.size() : 0));
        CHECK(P.pos0.size() == (P.keepsStart ? P.size() : 0));
        return std::pair{P.keepsOrientation, P.keepsStart};
    };
    CHECK(kept(load(base)) == std::pair{false, false});
    CHECK(kept(load(base + "[output]\nvtk = { every = 10 }\n")) == std::pair{true, true});
    CHECK(kept(load(base + "[output.vtk]\nfields = [\"velocity\"]\n")) == std::pair{false, false});
    CHECK(kept(load(base + "[output.vtk]\nfields = [\"orientation\"]\n")) ==
          std::pair{true, false});
    CHECK(kept(load(base + "[output.vtk]\nkinds = [\"contacts\"]\n")) == std::pair{false, false});
    CHECK(kept(load(base + "[output.history]\ncolumns = [\"body:0.displacement.z\"]\n")) ==
          std::pair{false, true});
    CHECK(kept(load(base + "[output.history]\ncolumns = [\"body:0.position.z\"]\n")) ==
          std::pair{false, false});
    std::string stop = base;
    stop.replace(stop.find("stop = { steps = 10 }"), 21,
                 "stop = { measure = \"body:0.displacement\", above = 0.1 }");
    CHECK(kept(load(stop)) == std::pair{false, true});
}
