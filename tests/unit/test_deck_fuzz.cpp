// Fuzzing the deck loader: seeded random mutations of the shipped decks must give a result
// (true or false) without throwing, crashing or hanging, and accepted decks stay bounded.
#include "deck/Deck.hpp"
#include "deck/DeckKeys.hpp"

#include <catch2/catch.hpp>
#include <fstream>
#include <random>
#include <sstream>

using namespace dem;

namespace {

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// Start and end of every number-looking token, for replacing values.
std::vector<std::pair<size_t, size_t>> numbers(const std::string& text) {
    std::vector<std::pair<size_t, size_t>> out;
    for (size_t k = 0; k < text.size();) {
        const bool startsNumber = std::isdigit((unsigned char)text[k]) &&
                                  (k == 0 || !std::isalnum((unsigned char)text[k - 1]));
        if (!startsNumber) {
            ++k;
            continue;
        }
        size_t end = k;
        while (end < text.size() && (std::isalnum((unsigned char)text[end]) || text[end] == '.' ||
                                     ((text[end] == '-' || text[end] == '+') &&
                                      (text[end - 1] == 'e' || text[end - 1] == 'E'))))
            ++end;
        out.emplace_back(k, end);
        k = end;
    }
    return out;
}

std::string mutate(std::string text, std::mt19937_64& rng) {
    const auto pick = [&](size_t n) { return size_t(rng() % std::max<size_t>(n, 1)); };
    switch (rng() % 5) {
    case 0: { // delete a line
        std::vector<size_t> starts{0};
        for (size_t k = 0; k < text.size(); ++k)
            if (text[k] == '\n')
                starts.push_back(k + 1);
        const size_t s = starts[pick(starts.size())];
        const size_t e = text.find('\n', s);
        text.erase(s, e == std::string::npos ? std::string::npos : e - s + 1);
        break;
    }
    case 1: { // replace a number by something else
        const auto spans = numbers(text);
        if (spans.empty())
            break;
        const auto [s, e] = spans[pick(spans.size())];
        static const char* replacements[] = {"\"x\"",   "[1, 2]",    "1e308", "-1e308",
                                             "-1",      "nan",       "inf",   "0",
                                             "\"1/0\"", "{ a = 1 }", "true",  "9223372036854775807",
                                             "1e-300",  "\"r*1e9\""};
        text.replace(s, e - s, replacements[pick(std::size(replacements))]);
        break;
    }
    case 2: // truncate
        text.resize(pick(text.size()));
        break;
    case 3: { // insert random bytes
        const size_t at = pick(text.size() + 1);
        std::string bytes(1 + pick(8), '\0');
        for (char& c : bytes)
            c = char(rng() % 256);
        text.insert(at, bytes);
        break;
    }
    case 4: { // negate a number
        const auto spans = numbers(text);
        if (spans.empty())
            break;
        // Rebuilt rather than insert(): GCC 12 gives a false -Wrestrict on insert of a literal.
        const size_t at = spans[pick(spans.size())].first;
        text = text.substr(0, at) + "-" + text.substr(at);
        break;
    }
    }
    return text;
}

} // namespace

TEST_CASE("mutated decks never throw and accepted ones stay bounded", "[deck][fuzz]") {
    std::vector<std::string> decks;
    for (const char* name : {"quickstart", "bouncing", "plate-push", "deposition", "oedometer"})
        decks.push_back(readFile(std::string(DEM_SOURCE_DIR) + "/decks/" + name + ".toml"));
    std::mt19937_64 rng(20240611);
    int accepted = 0, rejected = 0;
    for (int k = 0; k < 2000; ++k) {
        std::string text = decks[size_t(k) % decks.size()];
        const int mutations = 1 + int(rng() % 3);
        for (int m = 0; m < mutations; ++m)
            text = mutate(text, rng);
        Deck deck;
        std::vector<DeckError> errors;
        bool ok = false;
        INFO("mutation " << k << ":\n" << text);
        REQUIRE_NOTHROW(ok = loadDeckText("fuzz.toml", text, {}, deck, errors));
        if (ok) {
            ++accepted;
            CHECK(errors.empty());
            CHECK(int64_t(deck.sim.particles.size()) <= maxGeneratedSpheres);
            CHECK(deck.sim.dt > 0);
        } else {
            ++rejected;
            CHECK(!errors.empty());
        }
    }
    INFO(accepted << " accepted, " << rejected << " rejected");
    CHECK(accepted > 100);
    CHECK(rejected > 100);
}
