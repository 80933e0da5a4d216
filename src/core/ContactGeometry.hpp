#pragma once
// Contact geometry of a sphere against each kind of body (physics.md §2). Every routine reports the
// unit normal n pointing from body 1 towards the sphere (body 2) and the overlap u (> 0 in
// contact).
#include "core/Obstacles.hpp"

namespace dem {

struct SphereSphereGeom {
    Vec3 n;
    double overlap;
};

// Sphere i (body 1) and sphere j (body 2).
inline SphereSphereGeom sphereSphere(const Vec3& xi, double ri, const Vec3& xj, double rj) {
    const Vec3 d = xj - xi;
    const double l = d.norm();
    return {l > 0 ? Vec3(d / l) : Vec3::UnitZ(), ri + rj - l};
}

// Which part of a triangle is closest to a point.
enum class FacetRegion : uint8_t { Face, Edge, Vertex };

struct FacetGeom {
    Vec3 n; // from the closest point towards the sphere centre
    double overlap;
    Vec3 closest; // closest point of the triangle
    FacetRegion region;
    uint32_t a, b; // feature: edge (a < b) or vertex (a == b) by mesh vertex id; face: facet index
};

// Closest point of triangle `f` to `x`, with the region it lies in (Ericson, Real-Time Collision
// Detection, §5.1.5, written with explicit region labels).
FacetGeom sphereFacet(const Facet& f, uint32_t facetIndex, const Vec3& x, double r);

// One-sided wall: spheres in front of the plane are pushed along its normal.
inline SphereSphereGeom sphereWall(const Wall& w, const Vec3& x, double r) {
    return {w.normal, r - (x - w.point).dot(w.normal)};
}

struct BoxGeom {
    Vec3 n;
    double overlap;
    Vec3 closest; // point on the box surface
};

// Oriented box obstacle; handles a sphere centre inside the box by the nearest face.
BoxGeom sphereBox(const Box& b, const Vec3& x, double r);

// Distance from a point to a triangle (used by the neighbour search).
double pointTriangleDistance(const Facet& f, const Vec3& x);

} // namespace dem
