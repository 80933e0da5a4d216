#pragma once
// Reads one TOML table of a deck against its SectionSpec: reports unknown keys (with a
// suggestion), keys that do not apply to the chosen variant, missing required keys and broken
// key rules; then converts values on request (numbers through expressions, with ranges and
// defaults) and mirrors every value read, resolved, into an output table (resolved.toml).
#include "core/Types.hpp"
#include "deck/DeckKeys.hpp"
#include "deck/Diagnostics.hpp"
#include "deck/Expressions.hpp"

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <toml++/toml.h>
#include <vector>

namespace dem {

// What every section reader needs: where errors go, how expressions are evaluated and where
// files named in the deck are looked up.
struct DeckContext {
    Diagnostics diag;
    Expressions expr;
    std::filesystem::path deckDir;
};

class TableReader {
public:
    TableReader(DeckContext& ctx, const toml::table& in, toml::table& out, const SectionSpec& spec,
                TableReader* parent = nullptr);
    TableReader(const TableReader&) = delete;
    TableReader& operator=(const TableReader&) = delete;

    const SectionSpec& spec() const { return spec_; }
    // Value of the discriminator key ("law", "kind"); empty when there is none or it was invalid.
    const std::string& variant() const { return variant_; }
    // True once any error was found in this table or a table read through it.
    bool failed() const { return failed_; }
    bool has(std::string_view key) const { return in_.contains(key); }
    const toml::node* node(std::string_view key) const { return in_.get(key); }
    const toml::table& input() const { return in_; }
    toml::table& output() { return out_; }
    DeckContext& context() { return ctx_; }

    // Location of the table itself, and of a key's value (the table's when the key is absent).
    const toml::source_region& where() const { return in_.source(); }
    const toml::source_region& where(std::string_view key) const;

    // Typed reads; nullopt when the key is absent without default, or on error (reported).
    std::optional<double> number(std::string_view key);
    std::optional<int64_t> integer(std::string_view key);
    std::optional<std::string> string(std::string_view key);
    std::optional<bool> boolean(std::string_view key);
    std::optional<Vec3> vec3(std::string_view key);
    std::optional<Mat3> mat3(std::string_view key); // rows [[a, b, c], [d, e, f], [g, h, i]]
    std::optional<std::vector<double>> numbers(std::string_view key);
    std::optional<std::vector<Vec3>> vec3s(std::string_view key);
    std::optional<std::vector<std::string>> strings(std::string_view key);

    // Nested table (Table or Region key): calls `read` with its reader; false when absent or
    // not a table.
    bool table(std::string_view key, const std::function<void(TableReader&)>& read);
    // Array of tables (TableList or RegionList key): calls `read` for each element.
    void tables(std::string_view key, const std::function<void(TableReader&, size_t)>& read);

    // Reports an error at a key's value (or at the table), and marks this table as failed.
    void error(std::string_view key, std::string message);
    void error(std::string message);
    void errorAt(const toml::node& at, std::string message);

    // Writes a value into the resolved output (for values the section computes itself).
    template <class T> void put(std::string_view key, T&& value) {
        out_.insert_or_assign(key, std::forward<T>(value));
    }
    void putVec3(std::string_view key, const Vec3& v);

private:
    void checkKeys();
    void checkVariant();
    void checkRules();
    bool applies(const KeySpec& key) const;
    const KeySpec* keySpec(std::string_view key);
    // The key's node, or its default (parsed from the spec) when absent, or null.
    const toml::node* valueOrDefault(const KeySpec& key);
    std::optional<double> toNumber(const toml::node& n, const std::string& label,
                                   const Range& range);
    std::optional<int64_t> toInteger(const toml::node& n, const std::string& label,
                                     const Range& range);
    std::optional<Vec3> toVec3(const toml::node& n, const std::string& label, const Range& range);
    bool checkChoice(const toml::node& n, const std::string& label, std::string_view value,
                     std::string_view choices);
    void markFailed();

    DeckContext& ctx_;
    const toml::table& in_;
    toml::table& out_;
    const SectionSpec& spec_;
    TableReader* parent_;
    std::string variant_;
    bool failed_ = false;
    std::vector<std::unique_ptr<toml::table>> defaults_; // parsed default values, kept alive
};

// "array", "table", "string", ... as messages name TOML types.
const char* tomlTypeName(const toml::node& n);

} // namespace dem
