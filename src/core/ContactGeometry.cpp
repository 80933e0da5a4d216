#include "core/ContactGeometry.hpp"

#include <algorithm>
#include <cmath>

namespace dem {

namespace {

struct Closest {
    Vec3 point;
    FacetRegion region;
    int i0, i1; // local vertex indices of the feature (face: -1)
};

Closest closestOnTriangle(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c) {
    const Vec3 ab = b - a, ac = c - a, ap = p - a;
    const double d1 = ab.dot(ap), d2 = ac.dot(ap);
    if (d1 <= 0 && d2 <= 0)
        return {a, FacetRegion::Vertex, 0, 0};
    const Vec3 bp = p - b;
    const double d3 = ab.dot(bp), d4 = ac.dot(bp);
    if (d3 >= 0 && d4 <= d3)
        return {b, FacetRegion::Vertex, 1, 1};
    const double vc = d1 * d4 - d3 * d2;
    if (vc <= 0 && d1 >= 0 && d3 <= 0)
        return {a + ab * (d1 / (d1 - d3)), FacetRegion::Edge, 0, 1};
    const Vec3 cp = p - c;
    const double d5 = ab.dot(cp), d6 = ac.dot(cp);
    if (d6 >= 0 && d5 <= d6)
        return {c, FacetRegion::Vertex, 2, 2};
    const double vb = d5 * d2 - d1 * d6;
    if (vb <= 0 && d2 >= 0 && d6 <= 0)
        return {a + ac * (d2 / (d2 - d6)), FacetRegion::Edge, 0, 2};
    const double va = d3 * d6 - d5 * d4;
    if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0)
        return {b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6))), FacetRegion::Edge, 1, 2};
    const double denom = 1.0 / (va + vb + vc);
    return {a + ab * (vb * denom) + ac * (vc * denom), FacetRegion::Face, -1, -1};
}

} // namespace

FacetGeom sphereFacet(const Facet& f, uint32_t facetIndex, const Vec3& x, double r) {
    const Closest c = closestOnTriangle(x, f.v[0], f.v[1], f.v[2]);
    FacetGeom g;
    g.closest = c.point;
    g.region = c.region;
    const Vec3 d = x - c.point;
    const double l = d.norm();
    if (c.region == FacetRegion::Face) {
        // Face contact: the normal is the face normal on the sphere's side (exact, no round-off
        // from the closest-point construction, so a resting sphere feels exactly its weight).
        const double h = (x - f.v[0]).dot(f.normal);
        g.n = h >= 0 ? f.normal : Vec3(-f.normal);
        g.overlap = r - std::abs(h);
        g.a = g.b = facetIndex;
    } else {
        g.n = l > 0 ? Vec3(d / l) : f.normal;
        g.overlap = r - l;
        g.a = std::min(f.vid[c.i0], f.vid[c.i1]);
        g.b = std::max(f.vid[c.i0], f.vid[c.i1]);
    }
    return g;
}

double pointTriangleDistance(const Facet& f, const Vec3& x) {
    return (x - closestOnTriangle(x, f.v[0], f.v[1], f.v[2]).point).norm();
}

BoxGeom sphereBox(const Box& b, const Vec3& x, double r) {
    const Mat3 R = b.ori.toRotationMatrix();
    const Vec3 p = R.transpose() * (x - b.center);
    const Vec3 pc = p.cwiseMax(-b.half).cwiseMin(b.half);
    BoxGeom g;
    if (pc != p) { // centre outside: nearest point on the surface
        const Vec3 d = p - pc;
        const double l = d.norm();
        g.n = R * (d / l);
        g.overlap = r - l;
        g.closest = b.center + R * pc;
        return g;
    }
    // Centre inside: push out through the nearest face.
    int k = 0;
    double best = b.half[0] - std::abs(p[0]);
    for (int a = 1; a < 3; ++a) {
        const double dist = b.half[a] - std::abs(p[a]);
        if (dist < best) {
            best = dist;
            k = a;
        }
    }
    Vec3 local = Vec3::Zero();
    local[k] = p[k] >= 0 ? 1 : -1;
    g.n = R * local;
    g.overlap = r + best;
    Vec3 onFace = p;
    onFace[k] = local[k] * b.half[k];
    g.closest = b.center + R * onFace;
    return g;
}

} // namespace dem
