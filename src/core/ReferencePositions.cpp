#include "core/ReferencePositions.hpp"

#include "core/Parallel.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace dem {

namespace {

// From the floats themselves, so that a checkpoint need not store it: |y - float(y)| <= 2^-24 |y|
// <= 2^-23 |float(y)| for y = x - origin, rounded to nearest in float's normal range (at most half
// the smallest subnormal below it), and the rounding of x - origin and of origin + float(y) in
// double precision, each at most 2^-53 of the larger magnitude. The grid's range keeps
// coordinates far inside float's largest value.
double roundingBound(double largestFloat, const Vec3& origin) {
    const double largest = origin.cwiseAbs().maxCoeff() + 2 * largestFloat;
    return std::ldexp(largestFloat, -23) + double(std::numeric_limits<float>::denorm_min()) +
           std::ldexp(largest, -52);
}

double largestOf(const float f[3]) {
    return double(std::max({std::abs(f[0]), std::abs(f[1]), std::abs(f[2])}));
}

} // namespace

void ReferencePositions::assign(const std::vector<Vec3>& pos) {
    resize(pos.size());
    const int64_t n = int64_t(pos.size());
    double lo[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL}, hi[3] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
    // clang-format off
#pragma omp parallel for schedule(static) reduction(min : lo[:3]) reduction(max : hi[:3]) \
    if (pos.size() > parallelThreshold)
    // clang-format on
    for (int64_t p = 0; p < n; ++p)
        for (int a = 0; a < 3; ++a) {
            lo[a] = std::min(lo[a], pos[p][a]);
            hi[a] = std::max(hi[a], pos[p][a]);
        }
    origin = n ? Vec3(0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1]), 0.5 * (lo[2] + hi[2]))
               : Vec3::Zero();
    double largest = 0;
#pragma omp parallel for schedule(static) reduction(max                                            \
                                                    : largest) if (pos.size() > parallelThreshold)
    for (int64_t p = 0; p < n; ++p) {
        const Vec3 y = pos[p] - origin;
        const float f[3] = {float(y.x()), float(y.y()), float(y.z())};
        setFloats(size_t(p), f);
        largest = std::max(largest, largestOf(f));
    }
    error = roundingBound(largest, origin);
}

void ReferencePositions::boundError() {
    double largest = 0;
    for (size_t p = 0; p < count; ++p) {
        float f[3];
        getFloats(p, f);
        largest = std::max(largest, largestOf(f));
    }
    error = roundingBound(largest, origin);
}

bool operator==(const ReferencePositions& a, const ReferencePositions& b) {
    if (a.count != b.count || a.origin != b.origin) // `error` follows from the rest
        return false;
    for (size_t p = 0; p < a.count; ++p) {
        float x[3], y[3];
        a.getFloats(p, x);
        b.getFloats(p, y);
        if (std::memcmp(x, y, sizeof x) != 0)
            return false;
    }
    return true;
}

} // namespace dem
