#pragma once
// Arithmetic expressions in deck values ("2*r", "radians(30)"), evaluated with muParser over the
// constants pi and e and the deck's parameters defined so far.
#include <memory>
#include <string>
#include <vector>

namespace mu {
class Parser;
}

namespace dem {

class Expressions {
public:
    Expressions();
    ~Expressions();
    Expressions(const Expressions&) = delete;
    Expressions& operator=(const Expressions&) = delete;

    // Makes `name` usable in later expressions. False with `error` set when the name is not an
    // identifier or is reserved (pi, e, a function name) or already defined.
    bool define(const std::string& name, double value, std::string& error);
    // Defines `name` as a parameter whose own value was in error (and reported): expressions
    // using it fail without a message of their own, rather than go on with a made-up value.
    bool defineFailed(const std::string& name, std::string& error);

    // Evaluates one expression. False with `error` set on a syntax error, an undefined name or
    // a non-finite result; false with `error` empty when it uses a failed parameter.
    bool evaluate(const std::string& text, double& value, std::string& error);

    const std::vector<std::string>& names() const { return names_; }

private:
    std::unique_ptr<mu::Parser> parser_; // one parser, reused: building one is not cheap
    std::vector<std::string> names_;
    std::vector<std::string> failed_; // defined with defineFailed, or refused as reserved
    bool usesFailed(const std::string& text) const;
};

} // namespace dem
