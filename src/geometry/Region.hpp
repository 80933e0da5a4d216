#pragma once
// Regions that clip packings and select groups: box, sphere, cylinder and their combinations.
#include "core/Types.hpp"

#include <memory>
#include <variant>
#include <vector>

namespace dem {

struct Region;
struct RegionBox {
    Vec3 min, max;
};
struct RegionSphere {
    Vec3 center;
    double radius;
};
struct RegionCylinder {
    Vec3 a, b;
    double radius;
}; // axis from a to b, capped
struct RegionUnion {
    std::vector<Region> parts;
};
struct RegionIntersection {
    std::vector<Region> parts;
};
struct RegionDifference {
    std::vector<Region> parts;
}; // parts[0] minus all others

struct Region {
    std::variant<RegionBox, RegionSphere, RegionCylinder, RegionUnion, RegionIntersection,
                 RegionDifference>
        shape;
};

bool contains(const Region& region, const Vec3& p);
// True when a sphere of radius r at p lies entirely inside the region (used for clipping packings).
bool containsSphere(const Region& region, const Vec3& p, double r);
// Axis-aligned bounding box; false when the region is unbounded or empty.
bool bounds(const Region& region, Vec3& min, Vec3& max);

} // namespace dem
