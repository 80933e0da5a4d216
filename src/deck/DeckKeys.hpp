#pragma once
// The deck's keys, defined once. The loader validates decks against these tables (unknown keys,
// types, required keys, ranges, defaults), and the JSON Schema (deckSchemaJson) and the man
// page's key reference (deckKeysRoff) are generated from them, so the three cannot disagree.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dem {

enum class KeyType : uint8_t {
    Number,  // TOML number, or a string holding an expression
    Integer, // TOML integer, or an expression whose value is an integer
    String,
    Bool,
    Vec3,       // array of 3 numbers or expressions
    Mat3,       // array of 3 rows, each an array of 3 numbers or expressions
    NumberList, // array of numbers or expressions
    Vec3List,   // array of Vec3
    StringList,
    Table,      // nested table, keys in KeySpec::table
    TableList,  // array of tables, keys in KeySpec::table
    Region,     // a region table (recursive, see regionSpec)
    RegionList, // array of region tables
    Params,     // free-form table of named numbers or expressions
};

const char* keyTypeName(KeyType type); // "number", "vec3", ... as the documentation names them

// One end of an allowed interval.
struct Bound {
    enum Kind : uint8_t { None, Open, Closed };
    Kind kind = None;
    double value = 0;
};

// Allowed values of a number: an interval, possibly half-infinite, possibly empty (= anything).
struct Range {
    Bound low, high;
    bool unbounded() const { return low.kind == Bound::None && high.kind == Bound::None; }
    bool contains(double x) const;
    std::string text() const; // "in [0, 90)", "> 0", ">= 1"
};

Range greaterThan(double x);
Range atLeast(double x);
Range interval(Bound::Kind lowKind, double low, double high, Bound::Kind highKind);

struct SectionSpec;

struct KeySpec {
    std::string_view name;
    KeyType type = KeyType::Number;
    std::string_view description;
    std::string_view unit;              // "m", "Pa", "deg", ...; empty when dimensionless
    std::string_view defaultValue;      // TOML literal used when the key is absent; empty = none
    Range range;                        // Number and Integer (also every element of lists)
    std::string_view choices;           // String and StringList: allowed values, '|'-separated
    bool required = false;              // required in every variant the key applies to
    std::string_view only;              // variants (values of the section's discriminator, '|'-
                                        // separated) in which the key may appear; empty = all
    std::string_view with;              // keys that must be present with this one, '|'-separated
    std::string_view misplacedIn;       // a variant the key is not for but is mistaken for, and
    std::string_view misplaced;         // what that variant uses instead: added to the error there
    const SectionSpec* table = nullptr; // Table and TableList
};

// Whether a string key may not be empty: every `name` names something others refer to, a file,
// or a stage in the log. TableReader refuses an empty one; the schema says minLength 1.
inline bool mustNotBeEmpty(const KeySpec& key) {
    return key.type == KeyType::String && key.name == "name";
}

// A rule over several keys of one table.
struct KeyRule {
    enum Kind : uint8_t { ExactlyOne, AtMostOne, AtLeastOne };
    Kind kind = ExactlyOne;
    std::string_view keys;    // '|'-separated
    std::string_view only;    // variants the rule applies to; empty = all
    std::string_view when;    // the rule applies only when this key is present; empty = always
    std::string_view message; // what to say when no key is present; empty = generated
};

struct SectionSpec {
    std::string_view title; // how messages and documentation name it: "[[material]]"
    std::string_view description;
    std::string_view discriminator; // key whose value selects the variant ("law", "kind")
    std::vector<KeySpec> keys;
    std::vector<KeyRule> rules;

    const KeySpec* find(std::string_view name) const;
    std::vector<std::string_view> names() const;
};

// The top level of a deck: one key per section.
const SectionSpec& deckSpec();
// A region: exactly one of box, sphere, cylinder, union, intersection, difference.
const SectionSpec& regionSpec();

// The key reference as roff (man page section "KEYS"), generated from the tables above.
std::string deckKeysRoff();

// Splits "a|b|c" into its parts; an empty text gives no parts.
std::vector<std::string_view> splitBar(std::string_view text);
bool barContains(std::string_view bars, std::string_view value);

// The largest number of spheres a deck may generate; larger requests are errors, which keeps
// a mistyped count (or a fuzzed deck) from exhausting memory.
inline constexpr int64_t maxGeneratedSpheres = 10'000'000;

} // namespace dem
