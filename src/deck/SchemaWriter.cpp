// deckSchemaJson: the JSON Schema (draft 2020-12) of the deck, generated from the key tables.
#include "deck/Deck.hpp"
#include "deck/DeckKeys.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>
#include <utility>

namespace dem {

namespace {

// A minimal JSON value that keeps object keys in insertion order, so that the schema reads in
// the order the tables are written and is byte-for-byte reproducible.
class Json {
public:
    enum class Kind : uint8_t { Raw, String, Array, Object };

    static Json raw(std::string text) { return Json(Kind::Raw, std::move(text)); }
    static Json string(std::string_view text) { return Json(Kind::String, std::string(text)); }
    static Json array() { return Json(Kind::Array, {}); }
    static Json object() { return Json(Kind::Object, {}); }
    static Json number(double x) { return raw(fmt::format("{}", x)); }
    static Json strings(const std::vector<std::string_view>& items) {
        Json a = array();
        for (std::string_view s : items)
            a.push(string(s));
        return a;
    }

    Json& set(std::string_view key, Json value) {
        for (auto& [k, v] : members_)
            if (k == key)
                return v = std::move(value);
        members_.emplace_back(std::string(key), std::move(value));
        return members_.back().second;
    }
    Json& push(Json value) {
        members_.emplace_back(std::string(), std::move(value));
        return members_.back().second;
    }
    bool empty() const { return members_.empty(); }
    // Appends the members of another object (keys already present are replaced in place).
    void merge(Json other) {
        for (auto& [k, v] : other.members_)
            set(k, std::move(v));
    }

    void write(std::string& out, int indent) const {
        switch (kind_) {
        case Kind::Raw:
            out += text_;
            return;
        case Kind::String:
            writeString(out, text_);
            return;
        case Kind::Array:
        case Kind::Object:
            break;
        }
        const bool object = kind_ == Kind::Object;
        if (members_.empty()) {
            out += object ? "{}" : "[]";
            return;
        }
        // Short arrays of scalars stay on one line.
        if (!object && scalarsOnly()) {
            out += '[';
            for (size_t k = 0; k < members_.size(); ++k) {
                if (k)
                    out += ", ";
                members_[k].second.write(out, indent);
            }
            out += ']';
            return;
        }
        out += object ? "{\n" : "[\n";
        for (size_t k = 0; k < members_.size(); ++k) {
            out.append(size_t(indent + 2), ' ');
            if (object) {
                writeString(out, members_[k].first);
                out += ": ";
            }
            members_[k].second.write(out, indent + 2);
            out += k + 1 < members_.size() ? ",\n" : "\n";
        }
        out.append(size_t(indent), ' ');
        out += object ? '}' : ']';
    }

private:
    Json(Kind kind, std::string text) : kind_(kind), text_(std::move(text)) {}

    bool scalarsOnly() const {
        for (const auto& m : members_)
            if (m.second.kind_ == Kind::Array || m.second.kind_ == Kind::Object)
                return false;
        return true;
    }

    static void writeString(std::string& out, std::string_view s) {
        out += '"';
        for (char c : s) {
            if (c == '"' || c == '\\') {
                out += '\\';
                out += c;
            } else if ((unsigned char)c < 0x20) {
                out += fmt::format("\\u{:04x}", int(c));
            } else {
                out += c;
            }
        }
        out += '"';
    }

    Kind kind_;
    std::string text_;
    std::vector<std::pair<std::string, Json>> members_;
};

// A TOML literal (the tables' defaults) as JSON.
Json fromToml(const toml::node& n) {
    if (const auto* s = n.as_string())
        return Json::string(s->get());
    if (const auto* b = n.as_boolean())
        return Json::raw(b->get() ? "true" : "false");
    if (const auto* i = n.as_integer())
        return Json::raw(std::to_string(i->get()));
    if (const auto* f = n.as_floating_point())
        return Json::number(f->get());
    Json a = Json::array();
    if (const auto* arr = n.as_array())
        for (const toml::node& e : *arr)
            a.push(fromToml(e));
    return a;
}

Json defaultValue(std::string_view literal) {
    const toml::table t = toml::parse("v = " + std::string(literal), std::string_view("(default)"));
    return fromToml(*t.get("v"));
}

void addRange(Json& schema, const Range& range) {
    if (range.low.kind != Bound::None)
        schema.set(range.low.kind == Bound::Open ? "exclusiveMinimum" : "minimum",
                   Json::number(range.low.value));
    if (range.high.kind != Bound::None)
        schema.set(range.high.kind == Bound::Open ? "exclusiveMaximum" : "maximum",
                   Json::number(range.high.value));
}

// A number or an expression string; `type` is "number" or "integer".
Json numeric(const char* type, const Range& range) {
    Json number = Json::object();
    number.set("type", Json::string(type));
    addRange(number, range);
    Json expression = Json::object();
    expression.set("type", Json::string("string"));
    expression.set("description", Json::string("expression over pi, e and the parameters"));
    Json oneOf = Json::array();
    oneOf.push(std::move(number));
    oneOf.push(std::move(expression));
    Json schema = Json::object();
    schema.set("oneOf", std::move(oneOf));
    return schema;
}

Json ref(std::string_view name) {
    Json schema = Json::object();
    schema.set("$ref", Json::string(fmt::format("#/$defs/{}", name)));
    return schema;
}

Json arrayOf(Json items) {
    Json schema = Json::object();
    schema.set("type", Json::string("array"));
    schema.set("items", std::move(items));
    return schema;
}

Json stringSchema(std::string_view choices) {
    Json schema = Json::object();
    schema.set("type", Json::string("string"));
    if (!choices.empty())
        schema.set("enum", Json::strings(splitBar(choices)));
    return schema;
}

Json requiredOf(const std::vector<std::string_view>& keys) {
    Json schema = Json::object();
    schema.set("required", Json::strings(keys));
    return schema;
}

Json sectionSchema(const SectionSpec& spec);

// The schema of a value of the key's type, without description.
Json typeSchema(const KeySpec& key) {
    switch (key.type) {
    case KeyType::Number:
        return numeric("number", key.range);
    case KeyType::Integer:
        return numeric("integer", key.range);
    case KeyType::String: {
        Json schema = stringSchema(key.choices);
        if (mustNotBeEmpty(key))
            schema.set("minLength", Json::raw("1"));
        return schema;
    }
    case KeyType::Bool: {
        Json schema = Json::object();
        schema.set("type", Json::string("boolean"));
        return schema;
    }
    case KeyType::Vec3: {
        if (key.range.unbounded())
            return ref("vec3");
        Json schema = arrayOf(numeric("number", key.range));
        schema.set("minItems", Json::raw("3"));
        schema.set("maxItems", Json::raw("3"));
        return schema;
    }
    case KeyType::Mat3:
        return ref("mat3");
    case KeyType::NumberList:
        return arrayOf(numeric("number", key.range));
    case KeyType::Vec3List:
        return arrayOf(ref("vec3"));
    case KeyType::StringList:
        return arrayOf(stringSchema(key.choices));
    case KeyType::Table:
        return sectionSchema(*key.table);
    case KeyType::TableList:
        return arrayOf(sectionSchema(*key.table));
    case KeyType::Region:
        return ref("region");
    case KeyType::RegionList: {
        Json schema = arrayOf(ref("region"));
        schema.set("minItems", Json::raw("1"));
        return schema;
    }
    case KeyType::Params: {
        Json schema = Json::object();
        schema.set("type", Json::string("object"));
        schema.set("additionalProperties", numeric("number", Range{}));
        return schema;
    }
    }
    return Json::object();
}

Json keySchema(const KeySpec& key) {
    std::string description(key.description);
    if (!key.unit.empty())
        description += fmt::format(" [{}]", key.unit);
    Json schema = Json::object();
    schema.set("description", Json::string(description));
    if (!key.defaultValue.empty())
        schema.set("default", defaultValue(key.defaultValue));
    schema.merge(typeSchema(key));
    // A sub-table brings its own description; the key's says more about its role here.
    schema.set("description", Json::string(description));
    return schema;
}

// A rule over keys as a schema: exactly one / at most one / at least one of them present.
Json ruleSchema(KeyRule::Kind kind, const std::vector<std::string_view>& keys) {
    Json schema = Json::object();
    if (kind == KeyRule::AtMostOne) {
        Json pairs = Json::array();
        for (size_t i = 0; i < keys.size(); ++i)
            for (size_t j = i + 1; j < keys.size(); ++j)
                pairs.push(requiredOf({keys[i], keys[j]}));
        Json anyOf = Json::object();
        anyOf.set("anyOf", std::move(pairs));
        schema.set("not", std::move(anyOf));
        return schema;
    }
    Json alternatives = Json::array();
    for (std::string_view k : keys)
        alternatives.push(requiredOf({k}));
    schema.set(kind == KeyRule::ExactlyOne ? "oneOf" : "anyOf", std::move(alternatives));
    return schema;
}

Json conditional(Json condition, Json consequence) {
    Json schema = Json::object();
    schema.set("if", std::move(condition));
    schema.set("then", std::move(consequence));
    return schema;
}

// The variant selected by the discriminator: {"properties": {"law": {"const": "linear"}}},
// requiring the key unless the variant is its default (an absent key selects the default).
Json variantCondition(const SectionSpec& spec, std::string_view variant) {
    const KeySpec* disc = spec.find(spec.discriminator);
    Json value = Json::object();
    value.set("const", Json::string(variant));
    Json properties = Json::object();
    properties.set(spec.discriminator, std::move(value));
    Json condition = Json::object();
    condition.set("properties", std::move(properties));
    if (disc->defaultValue != fmt::format("\"{}\"", variant))
        condition.set("required", Json::strings({spec.discriminator}));
    return condition;
}

// What a variant requires and forbids.
Json variantRules(const SectionSpec& spec, std::string_view variant) {
    Json schema = Json::object();
    std::vector<std::string_view> required;
    Json forbidden = Json::object();
    for (const KeySpec& key : spec.keys) {
        if (key.only.empty())
            continue;
        if (!barContains(key.only, variant))
            forbidden.set(key.name, Json::raw("false"));
        else if (key.required)
            required.push_back(key.name);
    }
    Json rules = Json::array();
    for (const KeyRule& rule : spec.rules)
        if (!rule.only.empty() && barContains(rule.only, variant))
            rules.push(ruleSchema(rule.kind, splitBar(rule.keys)));
    if (!required.empty())
        schema.set("required", Json::strings(required));
    if (!forbidden.empty())
        schema.set("properties", std::move(forbidden));
    if (!rules.empty())
        schema.set("allOf", std::move(rules));
    return schema;
}

Json sectionSchema(const SectionSpec& spec) {
    Json schema = Json::object();
    schema.set("description", Json::string(spec.description));
    schema.set("type", Json::string("object"));
    Json properties = Json::object();
    std::vector<std::string_view> required;
    Json dependent = Json::object();
    for (const KeySpec& key : spec.keys) {
        properties.set(key.name, keySchema(key));
        if (key.required && key.only.empty())
            required.push_back(key.name);
        if (!key.with.empty())
            dependent.set(key.name, Json::strings(splitBar(key.with)));
    }
    Json rules = Json::array();
    for (const KeyRule& rule : spec.rules) {
        if (!rule.only.empty())
            continue; // in the variants' rules
        const auto keys = splitBar(rule.keys);
        if (rule.kind != KeyRule::AtMostOne && keys.size() == 1 && rule.when.empty()) {
            required.push_back(keys[0]);
        } else if (!rule.when.empty()) {
            rules.push(conditional(requiredOf({rule.when}), ruleSchema(rule.kind, keys)));
        } else {
            rules.push(ruleSchema(rule.kind, keys));
        }
    }
    if (!spec.discriminator.empty()) {
        for (std::string_view variant : splitBar(spec.find(spec.discriminator)->choices)) {
            Json then = variantRules(spec, variant);
            if (!then.empty())
                rules.push(conditional(variantCondition(spec, variant), std::move(then)));
        }
    }
    schema.set("properties", std::move(properties));
    if (!required.empty())
        schema.set("required", Json::strings(required));
    if (!dependent.empty())
        schema.set("dependentRequired", std::move(dependent));
    if (!rules.empty())
        schema.set("allOf", std::move(rules));
    schema.set("additionalProperties", Json::raw("false"));
    return schema;
}

Json definitions() {
    Json defs = Json::object();
    Json vec3 = arrayOf(numeric("number", Range{}));
    vec3.set("minItems", Json::raw("3"));
    vec3.set("maxItems", Json::raw("3"));
    Json described = Json::object();
    described.set("description", Json::string("[x, y, z]; each a number or an expression"));
    described.merge(std::move(vec3));
    defs.set("vec3", std::move(described));
    Json mat3 = arrayOf(ref("vec3"));
    mat3.set("minItems", Json::raw("3"));
    mat3.set("maxItems", Json::raw("3"));
    Json rows = Json::object();
    rows.set("description", Json::string("[[a, b, c], [d, e, f], [g, h, i]]: three rows of three "
                                         "numbers or expressions"));
    rows.merge(std::move(mat3));
    defs.set("mat3", std::move(rows));
    defs.set("region", sectionSchema(regionSpec()));
    return defs;
}

} // namespace

std::string deckSchemaJson() {
    Json schema = Json::object();
    schema.set("$schema", Json::string("https://json-schema.org/draft/2020-12/schema"));
    schema.set("title", Json::string("dem deck"));
    schema.merge(sectionSchema(deckSpec()));
    schema.set("$defs", definitions());
    std::string out;
    schema.write(out, 0);
    out += '\n';
    return out;
}

} // namespace dem
