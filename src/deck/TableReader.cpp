#include "deck/TableReader.hpp"

#include <cmath>
#include <fmt/format.h>

namespace dem {

const char* tomlTypeName(const toml::node& n) {
    switch (n.type()) {
    case toml::node_type::table:
        return "table";
    case toml::node_type::array:
        return "array";
    case toml::node_type::string:
        return "string";
    case toml::node_type::integer:
        return "integer";
    case toml::node_type::floating_point:
        return "float";
    case toml::node_type::boolean:
        return "boolean";
    case toml::node_type::date:
        return "date";
    case toml::node_type::time:
        return "time";
    case toml::node_type::date_time:
        return "date-time";
    case toml::node_type::none:
        break;
    }
    return "nothing";
}

namespace {

// How a value is shown in messages: the number, or the expression and its value.
std::string shown(const toml::node& n, double value) {
    if (const auto* s = n.as_string())
        return fmt::format("\"{}\" = {}", s->get(), value);
    return fmt::format("{}", value);
}

std::string variantLabel(const SectionSpec& spec, const std::string& variant) {
    return fmt::format("{} = \"{}\"", spec.discriminator, variant);
}

std::string listText(std::string_view bars) {
    std::string out;
    for (std::string_view part : splitBar(bars)) {
        if (!out.empty())
            out += ", ";
        out += part;
    }
    return out;
}

bool isRoot(const SectionSpec& spec) {
    return &spec == &deckSpec();
}

} // namespace

TableReader::TableReader(DeckContext& ctx, const toml::table& in, toml::table& out,
                         const SectionSpec& spec, TableReader* parent)
    : ctx_(ctx), in_(in), out_(out), spec_(spec), parent_(parent) {
    checkKeys();
    if (!spec_.discriminator.empty()) {
        if (auto v = string(spec_.discriminator))
            variant_ = *v;
    }
    checkVariant();
    checkRules();
}

const toml::source_region& TableReader::where(std::string_view key) const {
    if (const toml::node* n = in_.get(key))
        return n->source();
    return in_.source();
}

void TableReader::markFailed() {
    for (TableReader* r = this; r; r = r->parent_)
        r->failed_ = true;
}

void TableReader::error(std::string_view key, std::string message) {
    ctx_.diag.error(where(key), std::move(message));
    markFailed();
}

void TableReader::error(std::string message) {
    ctx_.diag.error(in_.source(), std::move(message));
    markFailed();
}

void TableReader::errorAt(const toml::node& at, std::string message) {
    ctx_.diag.error(at.source(), std::move(message));
    markFailed();
}

void TableReader::putVec3(std::string_view key, const Vec3& v) {
    out_.insert_or_assign(key, toml::array{v.x(), v.y(), v.z()});
}

// ------------------------------------------------------------------------------------------------
// Structure checks, done once when the table is opened.

void TableReader::checkKeys() {
    const std::vector<std::string_view> names = spec_.names();
    for (auto&& [key, value] : in_) {
        if (spec_.find(key.str()))
            continue;
        std::string hint = didYouMean(key.str(), names);
        if (hint.empty())
            hint = " (valid: " + joinNames(names) + ")";
        const std::string what = isRoot(spec_) ? "unknown section '" + std::string(key.str()) + "'"
                                               : "unknown key '" + std::string(key.str()) +
                                                     "' in " + std::string(spec_.title);
        ctx_.diag.error(key.source(), what + hint);
        markFailed();
    }
}

bool TableReader::applies(const KeySpec& key) const {
    return key.only.empty() || variant_.empty() || barContains(key.only, variant_);
}

void TableReader::checkVariant() {
    for (const KeySpec& key : spec_.keys) {
        const toml::node* n = in_.get(key.name);
        if (n && !applies(key)) {
            std::string message =
                fmt::format("key '{}' does not apply to {} (it is used with {})", key.name,
                            variantLabel(spec_, variant_), listText(key.only));
            if (!key.misplaced.empty() && variant_ == key.misplacedIn)
                message += fmt::format("; {}", key.misplaced);
            error(key.name, message);
        }
        // A key restricted to some variants is only required once the variant is known.
        if (!n && key.required && (key.only.empty() || (!variant_.empty() && applies(key)))) {
            std::string message =
                fmt::format("missing required key '{}' in {}", key.name, spec_.title);
            if (!key.only.empty())
                message += " with " + variantLabel(spec_, variant_);
            error(message);
        }
        if (n && applies(key)) {
            for (std::string_view other : splitBar(key.with))
                if (!in_.contains(other))
                    error(key.name, fmt::format("key '{}' needs '{}' too", key.name, other));
        }
    }
}

void TableReader::checkRules() {
    for (const KeyRule& rule : spec_.rules) {
        if (!rule.only.empty() && (variant_.empty() || !barContains(rule.only, variant_)))
            continue;
        if (!rule.when.empty() && !in_.contains(rule.when))
            continue;
        std::vector<std::string_view> present;
        for (std::string_view k : splitBar(rule.keys))
            if (in_.contains(k))
                present.push_back(k);
        const std::string context =
            std::string(spec_.title) +
            (rule.only.empty() ? std::string() : " with " + variantLabel(spec_, variant_)) +
            (rule.when.empty() ? std::string() : fmt::format(" (when {} is given)", rule.when));
        if (present.empty() && rule.kind != KeyRule::AtMostOne) {
            if (!rule.message.empty())
                error(std::string(rule.message));
            else if (splitBar(rule.keys).size() == 1)
                error(fmt::format("missing required key '{}' in {}", rule.keys, context));
            else
                error(fmt::format("{} needs {} of: {}", context,
                                  rule.kind == KeyRule::ExactlyOne ? "one" : "at least one",
                                  listText(rule.keys)));
        }
        if (present.size() > 1 && rule.kind != KeyRule::AtLeastOne) {
            error(present[1], fmt::format("'{}' and '{}' exclude each other in {}: give only one "
                                          "of {}",
                                          present[0], present[1], context, listText(rule.keys)));
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Values.

const KeySpec* TableReader::keySpec(std::string_view key) {
    const KeySpec* spec = spec_.find(key);
    if (!spec)
        error(fmt::format("internal error: key '{}' is not in the table of {}", key, spec_.title));
    return spec;
}

const toml::node* TableReader::valueOrDefault(const KeySpec& key) {
    if (const toml::node* n = in_.get(key.name))
        return applies(key) ? n : nullptr;
    if (key.defaultValue.empty() || !applies(key))
        return nullptr;
    try {
        defaults_.push_back(std::make_unique<toml::table>(
            toml::parse("v = " + std::string(key.defaultValue), std::string_view("(default)"))));
    } catch (const toml::parse_error&) {
        error(fmt::format("internal error: bad default for '{}'", key.name));
        return nullptr;
    }
    return defaults_.back()->get("v");
}

std::optional<double> TableReader::toNumber(const toml::node& n, const std::string& label,
                                            const Range& range) {
    double value = 0;
    if (const auto* i = n.as_integer()) {
        value = double(i->get());
    } else if (const auto* f = n.as_floating_point()) {
        value = f->get();
    } else if (const auto* s = n.as_string()) {
        std::string why;
        if (!ctx_.expr.evaluate(s->get(), value, why)) {
            if (why.empty())
                markFailed(); // a parameter it uses was in error, reported there
            else
                errorAt(n, label + ": " + why);
            return std::nullopt;
        }
    } else {
        errorAt(n,
                fmt::format("{}: expected a number or expression, got {}", label, tomlTypeName(n)));
        return std::nullopt;
    }
    if (!std::isfinite(value)) {
        errorAt(n, fmt::format("{} = {} is not a finite number", label, value));
        return std::nullopt;
    }
    if (!range.contains(value)) {
        // Angles are the one place where the unit is worth repeating: degrees, not radians.
        const KeySpec* spec = spec_.find(label);
        const char* what = spec && spec->unit == "deg" ? "degrees" : "a value";
        errorAt(n, fmt::format("{} = {} is out of range: expected {} {}", label, shown(n, value),
                               what, range.text()));
        return std::nullopt;
    }
    return value;
}

std::optional<int64_t> TableReader::toInteger(const toml::node& n, const std::string& label,
                                              const Range& range) {
    if (n.is_boolean() || n.is_array() || n.is_table() || n.is_date() || n.is_time() ||
        n.is_date_time()) {
        errorAt(n, fmt::format("{}: expected an integer or expression, got {}", label,
                               tomlTypeName(n)));
        return std::nullopt;
    }
    double value = 0;
    if (const auto* i = n.as_integer()) {
        // Ranges are checked in doubles, which hold integers exactly only up to 2^53: beyond,
        // 2^53 + 1 would pass a bound of 2^53 and be quoted rounded.
        constexpr int64_t exact = int64_t(1) << 53;
        if (i->get() > exact || i->get() < -exact) {
            errorAt(n, fmt::format("{} = {} is too large: integers in a deck go up to 2^53 = {}",
                                   label, i->get(), exact));
            return std::nullopt;
        }
        value = double(i->get());
        if (range.contains(value))
            return i->get();
    } else {
        const std::optional<double> v = toNumber(n, label, Range{});
        if (!v)
            return std::nullopt;
        value = *v;
        if (value != std::floor(value)) {
            errorAt(n, fmt::format("{} = {} is not an integer", label, shown(n, value)));
            return std::nullopt;
        }
        // Beyond 2^63 the conversion to int64_t is undefined; no deck needs such counts.
        if (std::fabs(value) >= 9.2e18) {
            errorAt(n, fmt::format("{} = {} is too large for an integer", label, shown(n, value)));
            return std::nullopt;
        }
    }
    if (range.high.kind != Bound::None && !range.contains(value) && value > range.high.value) {
        errorAt(n, fmt::format("{} = {} is too large: expected at most {}", label, shown(n, value),
                               int64_t(range.high.value)));
        return std::nullopt;
    }
    if (!range.contains(value)) {
        errorAt(n, fmt::format("{} = {} is out of range: expected a value {}", label,
                               shown(n, value), range.text()));
        return std::nullopt;
    }
    return int64_t(value);
}

std::optional<Vec3> TableReader::toVec3(const toml::node& n, const std::string& label,
                                        const Range& range) {
    const toml::array* a = n.as_array();
    if (!a) {
        errorAt(n,
                fmt::format("{}: expected an array of 3 numbers, got {}", label, tomlTypeName(n)));
        return std::nullopt;
    }
    if (a->size() != 3) {
        errorAt(n, fmt::format("{}: expected 3 numbers [x, y, z], got {}", label, a->size()));
        return std::nullopt;
    }
    Vec3 v;
    bool ok = true;
    for (size_t k = 0; k < 3; ++k) {
        const std::optional<double> x =
            toNumber(*a->get(k), fmt::format("{}[{}]", label, k), range);
        if (x)
            v[int(k)] = *x;
        ok = ok && x;
    }
    if (!ok)
        return std::nullopt;
    return v;
}

bool TableReader::checkChoice(const toml::node& n, const std::string& label, std::string_view value,
                              std::string_view choices) {
    if (choices.empty() || barContains(choices, value))
        return true;
    errorAt(n, fmt::format("{} = \"{}\" is not one of {}{}", label, value, listText(choices),
                           didYouMean(value, splitBar(choices))));
    return false;
}

std::optional<double> TableReader::number(std::string_view key) {
    const KeySpec* spec = keySpec(key);
    const toml::node* n = spec ? valueOrDefault(*spec) : nullptr;
    if (!n)
        return std::nullopt;
    const std::optional<double> v = toNumber(*n, std::string(key), spec->range);
    if (v)
        put(key, *v);
    return v;
}

std::optional<int64_t> TableReader::integer(std::string_view key) {
    const KeySpec* spec = keySpec(key);
    const toml::node* n = spec ? valueOrDefault(*spec) : nullptr;
    if (!n)
        return std::nullopt;
    const std::optional<int64_t> v = toInteger(*n, std::string(key), spec->range);
    if (v)
        put(key, *v);
    return v;
}

std::optional<std::string> TableReader::string(std::string_view key) {
    const KeySpec* spec = keySpec(key);
    const toml::node* n = spec ? valueOrDefault(*spec) : nullptr;
    if (!n)
        return std::nullopt;
    const auto* s = n->as_string();
    if (!s) {
        errorAt(*n, fmt::format("{}: expected a string, got {}", key, tomlTypeName(*n)));
        return std::nullopt;
    }
    if (!checkChoice(*n, std::string(key), s->get(), spec->choices))
        return std::nullopt;
    if (mustNotBeEmpty(*spec) && s->get().empty()) {
        errorAt(*n, "name may not be empty");
        return std::nullopt;
    }
    put(key, s->get());
    return s->get();
}

std::optional<bool> TableReader::boolean(std::string_view key) {
    const KeySpec* spec = keySpec(key);
    const toml::node* n = spec ? valueOrDefault(*spec) : nullptr;
    if (!n)
        return std::nullopt;
    const auto* b = n->as_boolean();
    if (!b) {
        errorAt(*n, fmt::format("{}: expected true or false, got {}", key, tomlTypeName(*n)));
        return std::nullopt;
    }
    put(key, b->get());
    return b->get();
}

std::optional<Vec3> TableReader::vec3(std::string_view key) {
    const KeySpec* spec = keySpec(key);
    const toml::node* n = spec ? valueOrDefault(*spec) : nullptr;
    if (!n)
        return std::nullopt;
    const std::optional<Vec3> v = toVec3(*n, std::string(key), spec->range);
    if (v)
        putVec3(key, *v);
    return v;
}

std::optional<Mat3> TableReader::mat3(std::string_view key) {
    const KeySpec* spec = keySpec(key);
    const toml::node* n = spec ? valueOrDefault(*spec) : nullptr;
    if (!n)
        return std::nullopt;
    const toml::array* a = n->as_array();
    if (!a) {
        errorAt(*n, fmt::format("{}: expected 3 rows of 3 numbers [[a, b, c], [d, e, f], [g, h, "
                                "i]], got {}",
                                key, tomlTypeName(*n)));
        return std::nullopt;
    }
    if (a->size() != 3) {
        errorAt(*n, fmt::format("{}: expected 3 rows of 3 numbers [[a, b, c], [d, e, f], [g, h, "
                                "i]], got {} row{}",
                                key, a->size(), a->size() == 1 ? "" : "s"));
        return std::nullopt;
    }
    Mat3 m;
    toml::array resolved;
    bool ok = true;
    for (size_t r = 0; r < 3; ++r) {
        const auto row = toVec3(*a->get(r), fmt::format("{}[{}]", key, r), spec->range);
        ok = ok && row;
        if (row) {
            m.row(int(r)) = row->transpose();
            resolved.push_back(toml::array{row->x(), row->y(), row->z()});
        }
    }
    if (!ok)
        return std::nullopt;
    put(key, std::move(resolved));
    return m;
}

std::optional<std::vector<double>> TableReader::numbers(std::string_view key) {
    const KeySpec* spec = keySpec(key);
    const toml::node* n = spec ? valueOrDefault(*spec) : nullptr;
    if (!n)
        return std::nullopt;
    const toml::array* a = n->as_array();
    if (!a) {
        errorAt(*n, fmt::format("{}: expected an array of numbers, got {}", key, tomlTypeName(*n)));
        return std::nullopt;
    }
    std::vector<double> values;
    toml::array resolved;
    bool ok = true;
    for (size_t k = 0; k < a->size(); ++k) {
        const auto v = toNumber(*a->get(k), fmt::format("{}[{}]", key, k), spec->range);
        ok = ok && v;
        if (v)
            values.push_back(*v);
        if (v)
            resolved.push_back(*v);
    }
    if (!ok)
        return std::nullopt;
    put(key, std::move(resolved));
    return values;
}

std::optional<std::vector<Vec3>> TableReader::vec3s(std::string_view key) {
    const KeySpec* spec = keySpec(key);
    const toml::node* n = spec ? valueOrDefault(*spec) : nullptr;
    if (!n)
        return std::nullopt;
    const toml::array* a = n->as_array();
    if (!a) {
        errorAt(*n, fmt::format("{}: expected an array of [x, y, z] arrays, got {}", key,
                                tomlTypeName(*n)));
        return std::nullopt;
    }
    std::vector<Vec3> values;
    toml::array resolved;
    bool ok = true;
    for (size_t k = 0; k < a->size(); ++k) {
        const auto v = toVec3(*a->get(k), fmt::format("{}[{}]", key, k), spec->range);
        ok = ok && v;
        if (v)
            values.push_back(*v);
        if (v)
            resolved.push_back(toml::array{v->x(), v->y(), v->z()});
    }
    if (!ok)
        return std::nullopt;
    put(key, std::move(resolved));
    return values;
}

std::optional<std::vector<std::string>> TableReader::strings(std::string_view key) {
    const KeySpec* spec = keySpec(key);
    const toml::node* n = spec ? valueOrDefault(*spec) : nullptr;
    if (!n)
        return std::nullopt;
    const toml::array* a = n->as_array();
    if (!a) {
        errorAt(*n, fmt::format("{}: expected an array of strings, got {}", key, tomlTypeName(*n)));
        return std::nullopt;
    }
    std::vector<std::string> values;
    toml::array resolved;
    bool ok = true;
    for (size_t k = 0; k < a->size(); ++k) {
        const toml::node& e = *a->get(k);
        const std::string label = fmt::format("{}[{}]", key, k);
        if (const auto* s = e.as_string()) {
            if (checkChoice(e, label, s->get(), spec->choices)) {
                values.push_back(s->get());
                resolved.push_back(s->get());
                continue;
            }
        } else {
            errorAt(e, fmt::format("{}: expected a string, got {}", label, tomlTypeName(e)));
        }
        ok = false;
    }
    if (!ok)
        return std::nullopt;
    put(key, std::move(resolved));
    return values;
}

bool TableReader::table(std::string_view key, const std::function<void(TableReader&)>& read) {
    const KeySpec* spec = keySpec(key);
    const toml::node* n = spec ? valueOrDefault(*spec) : nullptr;
    if (!n)
        return false;
    const toml::table* t = n->as_table();
    if (!t) {
        errorAt(*n, fmt::format("{}: expected a table, got {}", key, tomlTypeName(*n)));
        return false;
    }
    const SectionSpec& sub = spec->type == KeyType::Region ? regionSpec() : *spec->table;
    toml::table resolved;
    resolved.is_inline(t->is_inline());
    auto* out = out_.insert_or_assign(key, std::move(resolved)).first->second.as_table();
    TableReader reader(ctx_, *t, *out, sub, this);
    read(reader);
    return true;
}

void TableReader::tables(std::string_view key,
                         const std::function<void(TableReader&, size_t)>& read) {
    const KeySpec* spec = keySpec(key);
    const toml::node* n = spec ? valueOrDefault(*spec) : nullptr;
    if (!n)
        return;
    const toml::array* a = n->as_array();
    const char* expected = isRoot(spec_) ? "expected an array of tables [[{}]], got {}"
                                         : "{}: expected an array of tables, got {}";
    if (!a) {
        errorAt(*n, fmt::format(fmt::runtime(expected), key, tomlTypeName(*n)));
        return;
    }
    const SectionSpec& sub = spec->type == KeyType::RegionList ? regionSpec() : *spec->table;
    auto* out = out_.insert_or_assign(key, toml::array{}).first->second.as_array();
    for (size_t k = 0; k < a->size(); ++k) {
        const toml::table* t = a->get(k)->as_table();
        if (!t) {
            errorAt(*a->get(k), fmt::format("{}[{}]: expected a table, got {}", key, k,
                                            tomlTypeName(*a->get(k))));
            continue;
        }
        toml::table resolved;
        resolved.is_inline(t->is_inline());
        out->push_back(std::move(resolved));
        TableReader reader(ctx_, *t, *out->back().as_table(), sub, this);
        read(reader, k);
    }
}

} // namespace dem
