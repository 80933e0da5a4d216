#pragma once
// SHA-256 over the exact bytes of the dynamic state, so runs can be compared bit for bit.
#include "core/Simulation.hpp"

#include <string>

namespace dem {

// Covers body ids, positions, velocities, orientations, angular velocities, the contact lists with
// their history, obstacle positions and velocities, time and step. Hex string.
std::string stateDigest(const Simulation& sim);

// SHA-256 of arbitrary bytes, hex.
std::string sha256Hex(const std::string& bytes);

} // namespace dem
