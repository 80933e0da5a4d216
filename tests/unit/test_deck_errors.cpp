// Broken decks: every file in tests/decks/broken/ must be rejected with an error at the line and
// column its first line announces ("# expect: LINE:COL substring of the message").
#include "ScratchDir.hpp"
#include "deck/Deck.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <regex>

using namespace dem;

namespace {

struct Expectation {
    int line = 0, column = 0;
    std::string message;
};

bool readExpectation(const std::string& path, Expectation& e) {
    std::ifstream in(path);
    std::string first;
    std::getline(in, first);
    std::smatch m;
    static const std::regex pattern(R"(^# expect: (\d+):(\d+) (.+)$)");
    if (!std::regex_match(first, m, pattern))
        return false;
    e.line = std::stoi(m[1]);
    e.column = std::stoi(m[2]);
    e.message = m[3];
    return true;
}

std::string allErrors(const std::vector<DeckError>& errors) {
    std::string out;
    for (const DeckError& e : errors)
        out += formatError(e) + "\n";
    return out;
}

} // namespace

TEST_CASE("broken decks are rejected with located errors", "[deck][errors]") {
    const std::filesystem::path dir = std::filesystem::path(DEM_SOURCE_DIR) / "tests/decks/broken";
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::directory_iterator(dir))
        if (entry.path().extension() == ".toml")
            files.push_back(entry.path().string());
    std::sort(files.begin(), files.end());
    REQUIRE(files.size() >= 30);
    for (const std::string& path : files) {
        INFO(path);
        Expectation expected;
        REQUIRE(readExpectation(path, expected));
        Deck deck;
        std::vector<DeckError> errors;
        CHECK_FALSE(loadDeck(path, {}, deck, errors));
        INFO("errors:\n" << allErrors(errors));
        REQUIRE(!errors.empty());
        const bool found = std::any_of(errors.begin(), errors.end(), [&](const DeckError& e) {
            return e.line == expected.line && e.column == expected.column &&
                   e.message.find(expected.message) != std::string::npos;
        });
        CHECK(found);
        for (const DeckError& e : errors) {
            CHECK(e.file == path);
            CHECK(formatError(e).rfind(path + ":", 0) == 0);
        }
    }
}

TEST_CASE("all the errors of a deck are reported, not only the first", "[deck][errors]") {
    const std::string text = R"([[material]]
name = "glass"
density = -2500
young = 1e7
friction_angle = 95
[[spheres]]
kind = "list"
material = "steel"
centers = [[0, 0, 0]]
radius = 0.01
[[stage]]
stop = { steps = 10 }
)";
    Deck deck;
    std::vector<DeckError> errors;
    CHECK_FALSE(loadDeckText("three.toml", text, {}, deck, errors));
    INFO(allErrors(errors));
    REQUIRE(errors.size() == 3);
    CHECK(formatError(errors[0]) ==
          "three.toml:3:11: error: density = -2500 is out of range: expected a value > 0");
    CHECK(
        formatError(errors[1]) ==
        "three.toml:5:18: error: friction_angle = 95 is out of range: expected degrees in [0, 90)");
    CHECK(formatError(errors[2]) ==
          "three.toml:8:12: error: undefined material 'steel' (defined: glass)");
}

// A parameter in error used to be defined as 0, so each use added an error about a value the
// deck never gave ("radius = "r" = 0 is out of range").
TEST_CASE("a parameter in error is reported once and not again where it is used",
          "[deck][errors]") {
    const std::string text = R"([params]
a = "zz"
b = "a * 2"
r = 0.01
[[material]]
name = "glass"
density = "b"
young = 1e7
[[spheres]]
kind = "random"
material = "glass"
region = { box = { min = [0, 0, 0], max = ["a", 1, 1] } }
radius = "r"
count = "b"
seed = 1
[[stage]]
stop = { steps = "b" }
)";
    Deck deck;
    std::vector<DeckError> errors;
    CHECK_FALSE(loadDeckText("params.toml", text, {}, deck, errors));
    INFO(allErrors(errors));
    REQUIRE(errors.size() == 1);
    CHECK(formatError(errors[0]).rfind("params.toml:2:5: error: parameter 'a': undefined "
                                       "parameter 'zz'",
                                       0) == 0);
    // The same for a --set that cannot be evaluated.
    errors.clear();
    CHECK_FALSE(loadDeckText("params.toml", text, {{"a", "1"}, {"r", "nope"}}, deck, errors));
    INFO(allErrors(errors));
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].message.find("--set r=nope") != std::string::npos);
    // A reserved name: its uses meant the parameter, not the constant e = 2.718...
    std::string reserved = text;
    reserved.replace(reserved.find("r = 0.01"), 8, "e = 0.01");
    reserved.replace(reserved.find("radius = \"r\""), 12, "radius = \"e\"");
    errors.clear();
    CHECK_FALSE(loadDeckText("params.toml", reserved, {{"a", "1"}}, deck, errors));
    INFO(allErrors(errors));
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].message.find("parameter name 'e' is reserved") != std::string::npos);
}

TEST_CASE("a missing deck file is an error, not an exception", "[deck][errors]") {
    Deck deck;
    std::vector<DeckError> errors;
    CHECK_FALSE(loadDeck("/nonexistent/deck.toml", {}, deck, errors));
    REQUIRE(errors.size() == 1);
    CHECK(formatError(errors[0]) == "/nonexistent/deck.toml: error: cannot open the deck file");
}

// A directory opens but cannot be read: the error says why (the whole file is read at once, and
// a read that fails is never taken for an empty deck).
TEST_CASE("a deck that cannot be read is an error that says why", "[deck][errors]") {
    const std::string dir = std::filesystem::temp_directory_path().string();
    Deck deck;
    std::vector<DeckError> errors;
    CHECK_FALSE(loadDeck(dir, {}, deck, errors));
    REQUIRE(errors.size() == 1);
    CHECK(formatError(errors[0]) == dir + ": error: cannot read the deck file (Is a directory)");
}

// /dev/zero never ends: its read stops at the size limit instead of filling the memory.
TEST_CASE("a deck file without end is refused at the size limit", "[deck][errors]") {
    Deck deck;
    std::vector<DeckError> errors;
    CHECK_FALSE(loadDeck("/dev/zero", {}, deck, errors));
    REQUIRE(errors.size() == 1);
    CHECK(formatError(errors[0]) ==
          "/dev/zero: error: the deck file is larger than 64 MiB: not a deck");
}

TEST_CASE("a directory given as a mesh or sphere file is called one", "[deck][errors]") {
    const auto scratch = demtest::scratchDir("deck-errors-dir");
    const std::filesystem::path dir = scratch / "mesh.stl";
    std::filesystem::create_directories(dir);
    for (const char* kind : {"[[facets]]\nmaterial = \"glass\"\n",
                             "[[spheres]]\nkind = \"file\"\nmaterial = \"glass\"\n"}) {
        const std::string text = "[[material]]\nname = \"glass\"\ndensity = 2500\nyoung = 1e7\n" +
                                 std::string(kind) + "file = \"" + dir.string() +
                                 "\"\n[[stage]]\nstop = { steps = 1 }\n";
        Deck deck;
        std::vector<DeckError> errors;
        CHECK_FALSE(loadDeckText("dir.toml", text, {}, deck, errors));
        INFO(allErrors(errors));
        REQUIRE(errors.size() == 1);
        CHECK(errors[0].message == fmt::format("{} file '{}' is a directory",
                                               kind[2] == 'f' ? "mesh" : "sphere", dir.string()));
    }
}

// A sparse file's size says it is too long before any of it is read (or reserved).
TEST_CASE("a deck file larger than the limit is refused before it is read", "[deck][errors]") {
    const auto dir = demtest::scratchDir("deck-errors-sparse");
    const std::filesystem::path deckPath = dir / "huge.toml";
    { std::ofstream(deckPath).put('#'); }
    std::filesystem::resize_file(deckPath, std::uintmax_t(1) << 40); // a terabyte of holes
    Deck deck;
    std::vector<DeckError> errors;
    CHECK_FALSE(loadDeck(deckPath.string(), {}, deck, errors));
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].message == "the deck file is larger than 64 MiB: not a deck");
}

// The hint that names stiffness_ratio is for a linear material given `poisson` only: a
// viscoelastic one got it too, which told its user about a key its law does not have.
TEST_CASE("a key's hint for another variant's key is given in that variant only",
          "[deck][errors]") {
    const std::string text = R"([[material]]
name = "glass"
law = "viscoelastic"
density = 2500
contact_time = 1e-4
poisson = 0.3
[[spheres]]
kind = "list"
material = "glass"
centers = [[0, 0, 0]]
radius = 0.01
[[stage]]
stop = { steps = 10 }
)";
    Deck deck;
    std::vector<DeckError> errors;
    CHECK_FALSE(loadDeckText("visc.toml", text, {}, deck, errors));
    INFO(allErrors(errors));
    REQUIRE(errors.size() == 1);
    CHECK(formatError(errors[0]) ==
          "visc.toml:6:11: error: key 'poisson' does not apply to law = \"viscoelastic\" (it is "
          "used with hertz_mindlin)");
}
