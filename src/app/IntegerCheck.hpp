#pragma once
// A command-line check for integer options. CLI11's PositiveNumber and NonNegativeNumber report
// "Value 0 not in range 0.000000 to 1797693...": a 300-digit bound instead of what is expected.
#include <CLI/CLI.hpp>

#include <charconv>
#include <string>

namespace dem {

// An integer of at least `min`: "expected an integer of at least 1, got 0".
inline CLI::Validator integerAtLeast(long long min) {
    return CLI::Validator(
        [min](std::string& text) -> std::string {
            long long value = 0;
            const char* end = text.data() + text.size();
            const auto [stop, ec] = std::from_chars(text.data(), end, value);
            if (ec == std::errc() && stop == end && value >= min)
                return {};
            return "expected an integer of at least " + std::to_string(min) + ", got '" + text +
                   "'";
        },
        // As --help showed with CLI11's checks.
        min == 1   ? "POSITIVE"
        : min == 0 ? "NONNEGATIVE"
                   : ">=" + std::to_string(min));
}

} // namespace dem
