#pragma once
// Writes the resolved deck (resolved.toml): TOML text with keys in the order of the key tables
// and numbers in their shortest form that reads back to the same double.
#include <string>
#include <toml++/toml.h>
#include <vector>

namespace dem {

// `paramOrder`: the parameters in the order the deck defines them (they depend on each other in
// that order, which toml++'s sorted tables forget).
std::string writeResolvedToml(const toml::table& resolved,
                              const std::vector<std::string>& paramOrder);

} // namespace dem
