// deckKeysRoff: the key reference of the man page (section KEYS), generated from the tables.
#include "deck/DeckKeys.hpp"

#include <fmt/format.h>

namespace dem {

namespace {

// Text safe inside a roff line: backslashes and hyphens escaped, no control character first.
std::string escape(std::string_view text) {
    std::string out;
    for (char c : text) {
        if (c == '\\')
            out += "\\e";
        else if (c == '-')
            out += "\\-";
        else
            out += c;
    }
    if (!out.empty() && (out[0] == '.' || out[0] == '\''))
        out.insert(0, "\\&");
    return out;
}

std::string joined(std::string_view bars) {
    std::string out;
    for (std::string_view part : splitBar(bars))
        out += (out.empty() ? "" : ", ") + std::string(part);
    return out;
}

// "number [Pa]; required; > 0; only with law = linear, hertz_mindlin"
std::string keyFacts(const SectionSpec& spec, const KeySpec& key) {
    std::string facts = keyTypeName(key.type);
    if (!key.unit.empty())
        facts += fmt::format(" [{}]", key.unit);
    if (key.required)
        facts += "; required";
    if (!key.defaultValue.empty())
        facts += fmt::format("; default {}", key.defaultValue);
    if (!key.range.unbounded())
        facts += "; " + key.range.text();
    if (!key.choices.empty())
        facts += "; one of " + joined(key.choices);
    if (!key.only.empty())
        facts += fmt::format("; only with {} = {}", spec.discriminator, joined(key.only));
    if (!key.with.empty())
        facts += "; needs " + joined(key.with);
    return facts;
}

std::string ruleText(const KeyRule& rule) {
    const char* kind = rule.kind == KeyRule::ExactlyOne  ? "Exactly one of"
                       : rule.kind == KeyRule::AtMostOne ? "At most one of"
                                                         : "At least one of";
    std::string text = fmt::format("{} {}", kind, joined(rule.keys));
    if (!rule.when.empty())
        text += fmt::format(" when {} is given", rule.when);
    if (!rule.only.empty())
        text += fmt::format(" (for {})", joined(rule.only));
    return text + ".";
}

void writeSection(std::string& out, const SectionSpec& spec, const std::string& title) {
    out += fmt::format(".SS \"{}\"\n{}\n", escape(title), escape(spec.description));
    for (const KeyRule& rule : spec.rules)
        out += escape(ruleText(rule)) + "\n";
    for (const KeySpec& key : spec.keys) {
        out += fmt::format(".TP\n.B {}\n({})\n{}\n", escape(key.name), escape(keyFacts(spec, key)),
                           escape(key.description));
    }
    for (const KeySpec& key : spec.keys) {
        if (key.table && (key.type == KeyType::Table || key.type == KeyType::TableList))
            writeSection(out, *key.table, title + " " + std::string(key.name));
    }
}

} // namespace

std::string deckKeysRoff() {
    std::string out = ".SH KEYS\n"
                      "Each key is given with its type, unit, default and allowed values.\n"
                      "A number may always be written as an expression string.\n"
                      "A region is a table with exactly one of the keys of\n"
                      ".B region\n"
                      "below.\n";
    for (const KeySpec& section : deckSpec().keys) {
        if (section.type == KeyType::Params) {
            out += fmt::format(".SS \"[{}]\"\n{}\n", section.name, escape(section.description));
            continue;
        }
        if (!section.table)
            continue;
        const bool many = section.type == KeyType::TableList;
        const std::string name(section.name);
        writeSection(out, *section.table, many ? "[[" + name + "]]" : "[" + name + "]");
    }
    writeSection(out, regionSpec(), "region");
    return out;
}

} // namespace dem
