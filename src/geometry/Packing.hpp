#pragma once
// Sphere packings: explicit lists, sphere files, random loose clouds and lattices, clipped to a
// region. All generators are deterministic for a given seed.
#include "core/Types.hpp"
#include "geometry/Region.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace dem {

struct SphereSpec {
    Vec3 center;
    double radius;
};

// Radius distribution: either mean radius with uniform relative spread (r in rMean(1 +- spread)),
// or a table of diameters with cumulative mass fractions in (0, 1], increasing.
struct SizeDistribution {
    double meanRadius = 0;
    double spread = 0;
    std::vector<double> diameters; // when non-empty, used instead of meanRadius/spread
    std::vector<double> cumulativeFractions;
};

struct RandomCloudSpec {
    Region region;
    SizeDistribution sizes;
    int64_t count = -1;   // target number of spheres (one of count or porosity)
    double porosity = -1; // target porosity in (0, 1)
    uint64_t seed = 1;
    int64_t maxAttempts = 0; // 0 = 1000 per sphere
};

// Random non-overlapping spheres inside `region`, also not overlapping `existing`. When fewer than
// requested fit, returns what fit and sets `shortfall` to the number missing.
std::vector<SphereSpec> randomCloud(const RandomCloudSpec& spec,
                                    const std::vector<SphereSpec>& existing, int64_t& shortfall);

// Hexagonal close-packed (or simple cubic) lattice of spheres of radius r with the given gap
// between neighbours, clipped to the region (whole spheres only). `origin` fixes the lattice
// position.
std::vector<SphereSpec> hexagonalLattice(const Region& region, double radius, double gap,
                                         const Vec3& origin);
std::vector<SphereSpec> cubicLattice(const Region& region, double radius, double gap,
                                     const Vec3& origin);

// Reads "x y z r" lines ('#' comments, blank lines allowed). On error returns false and sets
// `error` to "line N: what is wrong".
bool readSphereFile(const std::string& path, std::vector<SphereSpec>& out, std::string& error);

} // namespace dem
