#include "deck/ResolvedWriter.hpp"

#include "deck/DeckKeys.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace dem {

namespace {

std::string quoted(std::string_view s) {
    std::string out = "\"";
    for (char c : s) {
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\t':
            out += "\\t";
            break;
        case '\r':
            out += "\\r";
            break;
        default:
            if ((unsigned char)c < 0x20 || c == 0x7f)
                out += fmt::format("\\u{:04x}", int(c));
            else
                out += c;
        }
    }
    return out + "\"";
}

std::string keyText(std::string_view key) {
    const bool bare = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
        return std::isalnum((unsigned char)c) || c == '_' || c == '-';
    });
    return bare ? std::string(key) : quoted(key);
}

// Shortest text that parses back to the same double (fmt's default), kept a TOML float.
std::string floatText(double x) {
    std::string s = fmt::format("{}", x);
    if (s.find_first_of(".eEn") == std::string::npos)
        s += ".0";
    return s;
}

// The spec describing a key's value, for ordering its keys; null when free-form.
const SectionSpec* childSpec(const SectionSpec* spec, std::string_view key) {
    const KeySpec* k = spec ? spec->find(key) : nullptr;
    if (!k)
        return nullptr;
    if (k->type == KeyType::Region || k->type == KeyType::RegionList)
        return &regionSpec();
    return k->table;
}

// Keys of a table in the spec's order (or the given order), then any others in the table's
// (sorted) order.
std::vector<std::string_view> orderedKeys(const toml::table& t, const SectionSpec* spec,
                                          const std::vector<std::string>* order = nullptr) {
    std::vector<std::string_view> keys;
    if (spec)
        for (const KeySpec& k : spec->keys)
            if (t.contains(k.name))
                keys.push_back(k.name);
    if (order)
        for (const std::string& k : *order)
            if (t.contains(k))
                keys.push_back(k);
    for (auto&& [key, value] : t)
        if (std::find(keys.begin(), keys.end(), key.str()) == keys.end())
            keys.push_back(key.str());
    return keys;
}

std::string inlineValue(const toml::node& n, const SectionSpec* spec);

std::string inlineTable(const toml::table& t, const SectionSpec* spec) {
    std::string out;
    for (std::string_view key : orderedKeys(t, spec)) {
        out += out.empty() ? "{ " : ", ";
        out += keyText(key) + " = " + inlineValue(*t.get(key), childSpec(spec, key));
    }
    return out.empty() ? "{}" : out + " }";
}

std::string inlineValue(const toml::node& n, const SectionSpec* spec) {
    if (const auto* s = n.as_string())
        return quoted(s->get());
    if (const auto* i = n.as_integer())
        return std::to_string(i->get());
    if (const auto* f = n.as_floating_point())
        return floatText(f->get());
    if (const auto* b = n.as_boolean())
        return b->get() ? "true" : "false";
    if (const auto* t = n.as_table())
        return inlineTable(*t, spec);
    std::string out = "[";
    if (const auto* a = n.as_array()) {
        for (size_t k = 0; k < a->size(); ++k)
            out += (k ? ", " : "") + inlineValue(*a->get(k), spec);
    }
    return out + "]";
}

// Non-inline tables and arrays of them become [headers]; everything else is a key = value line.
bool isSection(const toml::node& n) {
    if (const auto* t = n.as_table())
        return !t->is_inline();
    const auto* a = n.as_array();
    return a && !a->empty() && a->is_array_of_tables() && !a->get(0)->as_table()->is_inline();
}

void writeTable(std::string& out, const toml::table& t, const SectionSpec* spec,
                const std::string& path, const std::vector<std::string>* order = nullptr) {
    const auto keys = orderedKeys(t, spec, order);
    for (std::string_view key : keys) {
        const toml::node& n = *t.get(key);
        if (!isSection(n))
            out += keyText(key) + " = " + inlineValue(n, childSpec(spec, key)) + "\n";
    }
    for (std::string_view key : keys) {
        const toml::node& n = *t.get(key);
        if (!isSection(n))
            continue;
        const std::string name = (path.empty() ? "" : path + ".") + keyText(key);
        if (const auto* sub = n.as_table()) {
            out += "\n[" + name + "]\n";
            writeTable(out, *sub, childSpec(spec, key), name,
                       path.empty() && key == "params" ? order : nullptr);
        } else {
            for (const toml::node& e : *n.as_array()) {
                out += "\n[[" + name + "]]\n";
                writeTable(out, *e.as_table(), childSpec(spec, key), name);
            }
        }
    }
}

} // namespace

std::string writeResolvedToml(const toml::table& resolved,
                              const std::vector<std::string>& paramOrder) {
    std::string out =
        "# Every value of the deck after defaults, --set overrides and expressions.\n";
    writeTable(out, resolved, &deckSpec(), "", &paramOrder);
    return out;
}

} // namespace dem
