#include "geometry/Region.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace dem {

namespace {

template <class... Fs> struct Overloaded : Fs... { using Fs::operator()...; };
template <class... Fs> Overloaded(Fs...) -> Overloaded<Fs...>;

// Position of p relative to a capped cylinder: distance along the axis from `a` (may be outside
// [0, length]) and distance from the axis line.
struct AxialCoords {
    double along, radial, length;
};

AxialCoords axialCoords(const RegionCylinder& c, const Vec3& p) {
    const Vec3 axis = c.b - c.a;
    const double length = axis.norm();
    if (length == 0)
        return {0, (p - c.a).norm(), 0};
    const Vec3 d = axis / length;
    const double along = (p - c.a).dot(d);
    const double radial = ((p - c.a) - along * d).norm();
    return {along, radial, length};
}

double distanceToBox(const RegionBox& b, const Vec3& p) {
    const Vec3 below = (b.min - p).cwiseMax(0.0);
    const Vec3 above = (p - b.max).cwiseMax(0.0);
    return (below + above).norm();
}

double distanceToCylinder(const RegionCylinder& c, const Vec3& p) {
    const AxialCoords q = axialCoords(c, p);
    const double axialExcess = std::max({-q.along, q.along - q.length, 0.0});
    const double radialExcess = std::max(q.radial - c.radius, 0.0);
    return std::hypot(axialExcess, radialExcess);
}

// The 26 points where the directions of a 3x3x3 stencil (normalised) meet a sphere's surface.
const std::array<Vec3, 26>& surfaceDirections() {
    static const std::array<Vec3, 26> dirs = [] {
        std::array<Vec3, 26> out;
        size_t n = 0;
        for (int i = -1; i <= 1; ++i)
            for (int j = -1; j <= 1; ++j)
                for (int k = -1; k <= 1; ++k)
                    if (i != 0 || j != 0 || k != 0)
                        out[n++] = Vec3(i, j, k).normalized();
        return out;
    }();
    return dirs;
}

bool anyContains(const std::vector<Region>& parts, const Vec3& p) {
    return std::any_of(parts.begin(), parts.end(), [&](const Region& r) { return contains(r, p); });
}

// Whether a sphere may touch the region. Exact for primitives; for combinations it may answer
// true for a sphere that does not touch, which is the safe side for its one use (keeping spheres
// clear of the subtracted parts of a difference).
bool overlapsSphere(const Region& region, const Vec3& p, double r) {
    return std::visit(
        Overloaded{
            [&](const RegionBox& b) { return distanceToBox(b, p) <= r; },
            [&](const RegionSphere& s) { return (p - s.center).norm() <= s.radius + r; },
            [&](const RegionCylinder& c) { return distanceToCylinder(c, p) <= r; },
            [&](const RegionUnion& u) {
                return std::any_of(u.parts.begin(), u.parts.end(),
                                   [&](const Region& part) { return overlapsSphere(part, p, r); });
            },
            // Touching every part is necessary, not sufficient, for touching the intersection.
            [&](const RegionIntersection& u) {
                return !u.parts.empty() &&
                       std::all_of(u.parts.begin(), u.parts.end(),
                                   [&](const Region& part) { return overlapsSphere(part, p, r); });
            },
            // A sphere wholly inside a subtracted part cannot touch the difference.
            [&](const RegionDifference& d) {
                if (d.parts.empty() || !overlapsSphere(d.parts[0], p, r))
                    return false;
                return std::none_of(d.parts.begin() + 1, d.parts.end(),
                                    [&](const Region& part) { return containsSphere(part, p, r); });
            },
        },
        region.shape);
}

bool sphereInsideUnion(const RegionUnion& u, const Vec3& p, double r) {
    for (const Region& part : u.parts)
        if (containsSphere(part, p, r))
            return true;
    // A sphere straddling two parts is inside neither of them; accept it when its centre and
    // 26 points spread over its surface all lie in the union (an approximation: a thin gap
    // between sample points could be missed).
    if (!anyContains(u.parts, p))
        return false;
    for (const Vec3& d : surfaceDirections())
        if (!anyContains(u.parts, p + r * d))
            return false;
    return true;
}

void mergeBox(Vec3& min, Vec3& max, const Vec3& otherMin, const Vec3& otherMax) {
    min = min.cwiseMin(otherMin);
    max = max.cwiseMax(otherMax);
}

bool nonEmpty(const Vec3& min, const Vec3& max) {
    return (min.array() <= max.array()).all();
}

bool cylinderBounds(const RegionCylinder& c, Vec3& min, Vec3& max) {
    if (!(c.radius >= 0))
        return false;
    const Vec3 axis = c.b - c.a;
    const double length = axis.norm();
    // The cap discs stick out along axis k by radius * sin(angle between the axis and e_k).
    Vec3 reach = Vec3::Constant(c.radius);
    if (length > 0) {
        const Vec3 d = axis / length;
        for (int k = 0; k < 3; ++k)
            reach[k] = c.radius * std::sqrt(std::max(0.0, 1 - d[k] * d[k]));
    }
    min = c.a.cwiseMin(c.b) - reach;
    max = c.a.cwiseMax(c.b) + reach;
    return true;
}

} // namespace

bool contains(const Region& region, const Vec3& p) {
    return std::visit(
        Overloaded{
            [&](const RegionBox& b) {
                return (p.array() >= b.min.array()).all() && (p.array() <= b.max.array()).all();
            },
            [&](const RegionSphere& s) {
                return (p - s.center).squaredNorm() <= s.radius * s.radius;
            },
            [&](const RegionCylinder& c) {
                const AxialCoords q = axialCoords(c, p);
                return q.along >= 0 && q.along <= q.length && q.radial <= c.radius;
            },
            [&](const RegionUnion& u) { return anyContains(u.parts, p); },
            [&](const RegionIntersection& u) {
                return !u.parts.empty() &&
                       std::all_of(u.parts.begin(), u.parts.end(),
                                   [&](const Region& part) { return contains(part, p); });
            },
            [&](const RegionDifference& d) {
                if (d.parts.empty() || !contains(d.parts[0], p))
                    return false;
                return std::none_of(d.parts.begin() + 1, d.parts.end(),
                                    [&](const Region& part) { return contains(part, p); });
            },
        },
        region.shape);
}

bool containsSphere(const Region& region, const Vec3& p, double r) {
    return std::visit(
        Overloaded{
            [&](const RegionBox& b) {
                return (p.array() >= b.min.array() + r).all() &&
                       (p.array() <= b.max.array() - r).all();
            },
            [&](const RegionSphere& s) { return (p - s.center).norm() <= s.radius - r; },
            [&](const RegionCylinder& c) {
                const AxialCoords q = axialCoords(c, p);
                return q.along >= r && q.along <= q.length - r && q.radial <= c.radius - r;
            },
            [&](const RegionUnion& u) { return sphereInsideUnion(u, p, r); },
            [&](const RegionIntersection& u) {
                return !u.parts.empty() &&
                       std::all_of(u.parts.begin(), u.parts.end(),
                                   [&](const Region& part) { return containsSphere(part, p, r); });
            },
            [&](const RegionDifference& d) {
                if (d.parts.empty() || !containsSphere(d.parts[0], p, r))
                    return false;
                return std::none_of(d.parts.begin() + 1, d.parts.end(),
                                    [&](const Region& part) { return overlapsSphere(part, p, r); });
            },
        },
        region.shape);
}

bool bounds(const Region& region, Vec3& min, Vec3& max) {
    return std::visit(Overloaded{
                          [&](const RegionBox& b) {
                              min = b.min;
                              max = b.max;
                              return nonEmpty(min, max);
                          },
                          [&](const RegionSphere& s) {
                              min = s.center - Vec3::Constant(s.radius);
                              max = s.center + Vec3::Constant(s.radius);
                              return s.radius >= 0;
                          },
                          [&](const RegionCylinder& c) { return cylinderBounds(c, min, max); },
                          // Empty parts add nothing to a union.
                          [&](const RegionUnion& u) {
                              bool any = false;
                              for (const Region& part : u.parts) {
                                  Vec3 lo, hi;
                                  if (!bounds(part, lo, hi))
                                      continue;
                                  if (!any) {
                                      min = lo;
                                      max = hi;
                                  } else {
                                      mergeBox(min, max, lo, hi);
                                  }
                                  any = true;
                              }
                              return any;
                          },
                          [&](const RegionIntersection& u) {
                              if (u.parts.empty())
                                  return false;
                              min = Vec3::Constant(-INFINITY);
                              max = Vec3::Constant(INFINITY);
                              for (const Region& part : u.parts) {
                                  Vec3 lo, hi;
                                  if (!bounds(part, lo, hi))
                                      return false;
                                  min = min.cwiseMax(lo);
                                  max = max.cwiseMin(hi);
                              }
                              return nonEmpty(min, max);
                          },
                          [&](const RegionDifference& d) {
                              return !d.parts.empty() && bounds(d.parts[0], min, max);
                          },
                      },
                      region.shape);
}

} // namespace dem
