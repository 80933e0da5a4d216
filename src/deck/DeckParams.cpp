// [params]: named numbers or expressions, evaluated in file order; --set overrides replace a
// parameter's value (itself an expression) before it is evaluated.
#include "deck/DeckBuild.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace dem {

namespace {

struct ParamEntry {
    std::string name;
    const toml::node* value;
    toml::source_region where; // of the key
};

// toml++ keeps keys sorted by name; parameters must be evaluated in the order they are written.
std::vector<ParamEntry> paramsInFileOrder(const toml::table& params) {
    std::vector<ParamEntry> entries;
    for (auto&& [key, value] : params)
        entries.push_back({std::string(key.str()), &value, key.source()});
    std::sort(entries.begin(), entries.end(), [](const ParamEntry& a, const ParamEntry& b) {
        return std::pair(a.where.begin.line, a.where.begin.column) <
               std::pair(b.where.begin.line, b.where.begin.column);
    });
    return entries;
}

// The value of one parameter from the deck: a number or an expression over earlier ones.
std::optional<double> deckValue(TableReader& root, const ParamEntry& p,
                                const std::vector<ParamEntry>& all) {
    DeckContext& ctx = root.context();
    const toml::node& n = *p.value;
    if (const auto* i = n.as_integer())
        return double(i->get());
    if (const auto* f = n.as_floating_point()) {
        if (std::isfinite(f->get()))
            return f->get();
        root.errorAt(n,
                     fmt::format("parameter '{}' = {} is not a finite number", p.name, f->get()));
        return std::nullopt;
    }
    const auto* s = n.as_string();
    if (!s) {
        root.errorAt(n, fmt::format("parameter '{}': expected a number or expression, got {}",
                                    p.name, tomlTypeName(n)));
        return std::nullopt;
    }
    double value = 0;
    std::string why;
    if (ctx.expr.evaluate(s->get(), value, why))
        return value;
    if (why.empty())
        return std::nullopt; // it uses a parameter in error, reported there
    // Say so when the expression refers to a parameter written further down.
    for (const ParamEntry& later : all) {
        if (why.find("undefined parameter '" + later.name + "'") == 0) {
            root.errorAt(n, fmt::format("parameter '{}' refers to '{}', which is defined later "
                                        "(line {}); parameters may only refer to earlier ones",
                                        p.name, later.name, later.where.begin.line));
            return std::nullopt;
        }
    }
    root.errorAt(n, fmt::format("parameter '{}': {}", p.name, why));
    return std::nullopt;
}

} // namespace

void readParams(TableReader& root, const ParamOverrides& overrides, DeckBuild& b) {
    DeckContext& ctx = root.context();
    std::vector<ParamEntry> entries;
    if (const toml::node* n = root.node("params")) {
        if (const toml::table* t = n->as_table())
            entries = paramsInFileOrder(*t);
        else
            root.errorAt(*n, fmt::format("params: expected a table, got {}", tomlTypeName(*n)));
    }
    std::vector<std::string_view> defined;
    for (const ParamEntry& p : entries)
        defined.push_back(p.name);
    for (const auto& [name, value] : overrides) {
        if (std::find(defined.begin(), defined.end(), name) == defined.end())
            ctx.diag.error(fmt::format("unknown parameter '{}' in --set (deck defines: {}){}", name,
                                       joinNames(defined), didYouMean(name, defined)));
    }

    toml::table resolved;
    for (const ParamEntry& p : entries) {
        std::optional<double> value;
        const auto over = std::find_if(overrides.rbegin(), overrides.rend(),
                                       [&](const auto& o) { return o.first == p.name; });
        if (over != overrides.rend()) {
            double v = 0;
            std::string why;
            if (ctx.expr.evaluate(over->second, v, why))
                value = v;
            else if (!why.empty())
                ctx.diag.error(fmt::format("--set {}={}: {}", p.name, over->second, why));
        } else {
            value = deckValue(root, p, entries);
        }
        // A parameter in error is still defined, so that the expressions using it fail quietly
        // instead of adding an error each ("undefined parameter", or a range error for 0).
        std::string why;
        if (!(value ? ctx.expr.define(p.name, *value, why) : ctx.expr.defineFailed(p.name, why)))
            ctx.diag.error(p.where, why);
        if (value) {
            b.params[p.name] = *value;
            b.paramOrder.push_back(p.name);
            resolved.insert_or_assign(p.name, *value);
        }
    }
    if (!entries.empty())
        root.put("params", std::move(resolved));
}

} // namespace dem
