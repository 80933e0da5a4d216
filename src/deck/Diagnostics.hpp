#pragma once
// Collects the errors found in a deck, each located at a line and column of the file.
#include "deck/Deck.hpp"

#include <string>
#include <string_view>
#include <toml++/toml.h>
#include <vector>

namespace dem {

class Diagnostics {
public:
    Diagnostics(std::string file, std::vector<DeckError>& errors)
        : file_(std::move(file)), errors_(errors) {}

    void error(const toml::source_region& where, std::string message);
    void error(int line, int column, std::string message);
    void error(std::string message); // no location in the file (e.g. --set)

    size_t count() const { return errors_.size() - initial_; }
    const std::string& file() const { return file_; }

private:
    std::string file_;
    std::vector<DeckError>& errors_;
    size_t initial_ = errors_.size();
};

// The closest candidate to a misspelt name (edit distance <= 2, or one a prefix of the other);
// empty when none is close.
std::string_view closestName(std::string_view word,
                             const std::vector<std::string_view>& candidates);
// " (did you mean 'x'?)"-style hint: "; did you mean 'x'?" or "" when nothing is close.
std::string didYouMean(std::string_view word, const std::vector<std::string_view>& candidates);
// "a, b, c", or "none" for an empty list.
std::string joinNames(const std::vector<std::string_view>& names);
std::string joinNames(const std::vector<std::string>& names);

} // namespace dem
