#pragma once
// A deck of equal spheres on a hexagonal lattice (gap half a radius) filling a ball of radius
// 0.5 m in a closed box of 12 facets, 30 steps under gravity: the bench's falling ball in small.
// `radius` sets the count (0.025 m: about 2,700 spheres; 0.0114 m: about 30,000).
#include <fmt/format.h>
#include <string>

namespace demtest {

inline std::string latticeDeck(double radius, double young) {
    return fmt::format(R"(
[simulation]
dt = 1e-4

[[material]]
name = "grain"
law = "hertz_mindlin"
density = 2300
young = {}
poisson = 0.3
friction_angle = 35
restitution = 0.5

[[facets]]
name = "box"
material = "grain"
box = {{ min = [-0.525, -0.525, -0.525], max = [0.525, 0.525, 0.525] }}

[[spheres]]
kind = "hexagonal"
region = {{ sphere = {{ center = [0, 0, 0], radius = 0.5 }} }}
radius = {}
gap = {}
material = "grain"

[[stage]]
gravity = [0, -9.81, 0]
stop = {{ steps = 30 }}
)",
                       young, radius, radius / 2);
}

} // namespace demtest
