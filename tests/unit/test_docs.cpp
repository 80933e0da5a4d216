// The files generated from the deck key tables must match the code: the JSON Schema and the KEYS
// section of dem-deck(5). Regenerate both with tools/update-docs.
#include "CommandRunner.hpp"
#include "deck/Deck.hpp"
#include "deck/DeckKeys.hpp"
#include "io/Checkpoint.hpp"

#include <catch2/catch.hpp>

using namespace demtest;

TEST_CASE("man/dem-deck.5 KEYS section is generated from the key tables", "[docs]") {
    const std::string page = slurp(std::string(DEM_SOURCE_DIR) + "/man/dem-deck.5");
    const std::string begin = ".\\\" KEYS-BEGIN\n", end = ".\\\" KEYS-END\n";
    const size_t b = page.find(begin), e = page.find(end);
    REQUIRE(b != std::string::npos);
    REQUIRE(e != std::string::npos);
    const std::string section = page.substr(b + begin.size(), e - b - begin.size());
    INFO("man/dem-deck.5 is out of date: run tools/update-docs");
    CHECK(section == dem::deckKeysRoff());
}

TEST_CASE("man/dem-checkpoint.5 names the current format version", "[docs]") {
    // Its header table and its history of versions: a new version must reach both.
    const std::string page = slurp(std::string(DEM_SOURCE_DIR) + "/man/dem-checkpoint.5");
    const std::string v = std::to_string(dem::checkpointFormatVersion);
    CHECK(page.find("format version, u32 (currently " + v + ")") != std::string::npos);
    CHECK(page.find("version " + v + " added") != std::string::npos);
    CHECK(page.find("reads version 1 to " + std::to_string(dem::checkpointFormatVersion - 1)) !=
          std::string::npos);
}

TEST_CASE("dem schema prints the committed schema and dem schema --man the man page keys",
          "[docs][cli]") {
    const auto dir = scratchDir("schema");
    const CommandResult schema = runDem("schema", dir);
    CHECK(schema.code == 0);
    INFO("schemas/deck.schema.json is out of date: run tools/update-docs");
    CHECK(schema.out == slurp(std::string(DEM_SOURCE_DIR) + "/schemas/deck.schema.json"));
    const CommandResult man = runDem("schema --man", dir);
    CHECK(man.code == 0);
    CHECK(man.out == dem::deckKeysRoff());
}

TEST_CASE("every deck under decks/ and examples/ validates against the schema (python3-jsonschema)",
          "[docs][schema]") {
    namespace fs = std::filesystem;
    const fs::path src(DEM_SOURCE_DIR);
    std::string decks;
    for (const char* dir : {"decks", "examples"})
        for (const auto& e : fs::recursive_directory_iterator(src / dir))
            if (e.path().extension() == ".toml")
                decks += " '" + e.path().string() + "'";
    REQUIRE(!decks.empty());
    const auto dir = scratchDir("validate");
    const std::string cmd = "/usr/bin/python3 '" +
                            (src / "tests/tools/validate_decks.py").string() + "' '" +
                            (src / "schemas/deck.schema.json").string() + "'" + decks + " > '" +
                            (dir / "out.txt").string() + "' 2>&1";
    const int status = std::system(cmd.c_str());
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    const std::string out = slurp(dir / "out.txt");
    if (code == 77) {
        WARN("skipped: " << out);
        return;
    }
    INFO(out);
    CHECK(code == 0);
}
