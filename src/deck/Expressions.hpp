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

    // Evaluates one expression. False with `error` set on a syntax error, an undefined name or
    // a non-finite result.
    bool evaluate(const std::string& text, double& value, std::string& error);

    const std::vector<std::string>& names() const { return names_; }

private:
    std::unique_ptr<mu::Parser> parser_; // one parser, reused: building one is not cheap
    std::vector<std::string> names_;
};

} // namespace dem
