#include "deck/Expressions.hpp"

#include "deck/Diagnostics.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <muParser.h>
#include <numbers>

namespace dem {

namespace {

double radians(double degrees) {
    return degrees * std::numbers::pi / 180.0;
}
double degrees(double radians) {
    return radians * 180.0 / std::numbers::pi;
}

// Names a parameter may not take: the constants and every function an expression can call.
constexpr const char* reserved[] = {
    "pi",   "e",    "radians", "degrees", "sin",   "cos",  "tan",   "asin", "acos", "atan", "sinh",
    "cosh", "tanh", "asinh",   "acosh",   "atanh", "log2", "log10", "log",  "ln",   "exp",  "sqrt",
    "sign", "rint", "abs",     "sum",     "avg",   "min",  "max",   "_pi",  "_e"};

bool isIdentifier(const std::string& name) {
    if (name.empty() || !(std::isalpha((unsigned char)name[0]) || name[0] == '_'))
        return false;
    for (char c : name)
        if (!(std::isalnum((unsigned char)c) || c == '_'))
            return false;
    return true;
}

// A number in an expression, read with std::from_chars, which allocates nothing: muParser's own
// reader goes through a string stream, which swallows a failed allocation and so reported running
// out of memory as a malformed number. Added after muParser's, it is tried first (AddValIdent).
// It reads what that one reads, a decimal number starting with a digit or a point (signs are
// operators; inf and nan are names), and leaves anything else to it. A number beyond the range of
// a double is an error, as in TOML: the stream read 1e-400 as zero.
int readNumber(const char* text, int* position, double* value) {
    const auto digit = [](char c) { return c >= '0' && c <= '9'; };
    if (!digit(text[0]) && !(text[0] == '.' && digit(text[1])))
        return 0;
    double v = 0;
    const auto [end, ec] = std::from_chars(text, text + std::strlen(text), v);
    if (ec == std::errc::result_out_of_range)
        throw mu::ParserError("'" + std::string(text, end) + "' is not representable in 64 bits");
    if (ec != std::errc())
        return 0;
    *position += int(end - text);
    *value = v;
    return 1;
}

} // namespace

Expressions::Expressions() : parser_(std::make_unique<mu::Parser>()) {
    parser_->AddValIdent(readNumber);
    parser_->DefineConst("pi", std::numbers::pi);
    parser_->DefineConst("e", std::numbers::e);
    parser_->DefineFun("radians", radians);
    parser_->DefineFun("degrees", degrees);
}

Expressions::~Expressions() = default;

bool Expressions::define(const std::string& name, double value, std::string& error) {
    if (!isIdentifier(name)) {
        error = "parameter name '" + name +
                "' is not an identifier (letters, digits and _, not starting with a digit)";
        return false;
    }
    for (const char* r : reserved) {
        if (name == r) {
            error = "parameter name '" + name + "' is reserved (a constant or function name)";
            failed_.push_back(name); // its uses meant the parameter: no error of their own
            return false;
        }
    }
    for (const std::string& n : names_) {
        if (n == name) {
            error = "parameter '" + name + "' is already defined";
            return false;
        }
    }
    try {
        parser_->DefineConst(name, value);
    } catch (const mu::Parser::exception_type& e) {
        error = "parameter name '" + name + "': " + e.GetMsg();
        return false;
    }
    names_.push_back(name);
    return true;
}

bool Expressions::defineFailed(const std::string& name, std::string& error) {
    if (!define(name, std::nan(""), error))
        return false;
    failed_.push_back(name);
    return true;
}

// Whether an identifier of `text` names a failed parameter.
bool Expressions::usesFailed(const std::string& text) const {
    if (failed_.empty())
        return false;
    const auto word = [](char c) { return std::isalnum((unsigned char)c) || c == '_'; };
    for (size_t i = 0; i < text.size();) {
        if (!word(text[i])) {
            ++i;
            continue;
        }
        size_t j = i;
        while (j < text.size() && word(text[j]))
            ++j;
        const std::string token = text.substr(i, j - i);
        for (const std::string& f : failed_)
            if (token == f)
                return true;
        i = j;
    }
    return false;
}

bool Expressions::evaluate(const std::string& text, double& value, std::string& error) {
    if (usesFailed(text)) {
        error.clear(); // its parameter's error was reported
        return false;
    }
    try {
        parser_->SetExpr(text);
        value = parser_->Eval();
        if (parser_->GetNumResults() != 1) {
            error = "expression \"" + text + "\" gives several values; write a single one";
            return false;
        }
    } catch (const mu::Parser::exception_type& e) {
        const std::string token = e.GetToken();
        if (e.GetCode() == mu::ecUNASSIGNABLE_TOKEN && isIdentifier(token)) {
            std::vector<std::string_view> known(names_.begin(), names_.end());
            error = "undefined parameter '" + token + "' in expression \"" + text +
                    "\" (defined: " + joinNames(known) + ")" + didYouMean(token, known);
        } else {
            error = "bad expression \"" + text + "\": " + e.GetMsg();
        }
        return false;
    }
    if (!std::isfinite(value)) {
        error = "expression \"" + text + "\" is not a finite number (" +
                (std::isnan(value) ? std::string("nan") : std::string(value > 0 ? "inf" : "-inf")) +
                ")";
        return false;
    }
    return true;
}

} // namespace dem
