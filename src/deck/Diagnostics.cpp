#include "deck/Diagnostics.hpp"

#include <algorithm>
#include <toml++/toml.h>

namespace dem {

std::string formatError(const DeckError& e) {
    if (e.line <= 0)
        return e.file + ": error: " + e.message;
    return e.file + ":" + std::to_string(e.line) + ":" + std::to_string(e.column) +
           ": error: " + e.message;
}

void Diagnostics::error(const toml::source_region& where, std::string message) {
    error(int(where.begin.line), int(where.begin.column), std::move(message));
}

void Diagnostics::error(int line, int column, std::string message) {
    errors_.push_back(DeckError{file_, line, column, std::move(message)});
}

void Diagnostics::error(std::string message) {
    error(0, 0, std::move(message));
}

namespace {

size_t editDistance(std::string_view a, std::string_view b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j)
        row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
            diagonal = above;
        }
    }
    return row[b.size()];
}

} // namespace

std::string_view closestName(std::string_view word,
                             const std::vector<std::string_view>& candidates) {
    // The one candidate a short word begins ("gz" for "gzip", which is one edit from "xz").
    std::string_view prefixed;
    int prefixes = 0;
    if (word.size() >= 2)
        for (std::string_view c : candidates)
            if (c.size() > word.size() && c.starts_with(word)) {
                prefixed = c;
                ++prefixes;
            }
    if (prefixes == 1)
        return prefixed;
    std::string_view best;
    size_t bestDistance = 3;
    for (std::string_view c : candidates) {
        const size_t d = editDistance(word, c);
        // A one-letter name is within 2 edits of every short name: that is no suggestion.
        if (d < bestDistance && d < word.size()) {
            best = c;
            bestDistance = d;
        }
    }
    if (!best.empty())
        return best;
    // A prefix match catches abbreviations and truncations ("friction" for "friction_angle").
    if (word.size() >= 3)
        for (std::string_view c : candidates)
            if (c.starts_with(word) || word.starts_with(c))
                return c;
    return {};
}

std::string didYouMean(std::string_view word, const std::vector<std::string_view>& candidates) {
    const std::string_view best = closestName(word, candidates);
    if (best.empty())
        return {};
    return "; did you mean '" + std::string(best) + "'?";
}

std::string joinNames(const std::vector<std::string_view>& names) {
    if (names.empty())
        return "none";
    std::string out;
    for (std::string_view n : names) {
        if (!out.empty())
            out += ", ";
        out += n;
    }
    return out;
}

std::string joinNames(const std::vector<std::string>& names) {
    return joinNames(std::vector<std::string_view>(names.begin(), names.end()));
}

} // namespace dem
