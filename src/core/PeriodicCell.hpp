#pragma once
// A periodic cell (physics.md §11): space is tiled by copies of the parallelepiped spanned by the
// columns of h from `origin`, and a sphere interacts with the nearest image of every other. The
// cell deforms with the imposed velocity gradient L (h' = L h, Yade's Cell.velGrad), and the
// spheres are carried by the mean flow u = L (x - origin) (Yade's homoDeform = 2: the convective
// term L v is added to each sphere's acceleration, a change of L changes every velocity by
// dL (x - origin), and the damping acts on v - u).
//
// Images: a pair's branch vector is d = x_j - x_i - h c with c = round(h^-1 (x_j - x_i)), the
// image of j nearest to i as long as the cell is more than twice the reach thick along every axis
// (the neighbour search requires three grid cells per axis, so it is), and the image moves with
// velocity v_j - L h c. Positions are wrapped into the cell at each neighbour rebuild, which
// finds c of every listed pair; the pair keeps it until the next rebuild (SpherePairs::image).
#include "core/Types.hpp"

#include <cmath>

namespace dem {

struct PeriodicCell {
    bool enabled = false;
    Vec3 origin = Vec3::Zero();         // corner of the cell [m]
    Mat3 h = Mat3::Identity();          // columns: the edge vectors of the cell [m]
    Mat3 velGrad = Mat3::Zero();        // L, set by the stages [1/s]
    Mat3 hAtRebuild = Mat3::Identity(); // h when the neighbour lists were built
};

// The image of a listed pair as one byte: c in {-1, 0, 1}^3 (the spheres are wrapped into the
// cell at each rebuild, so neighbours are at most one cell apart) coded 9 (c_x+1) + 3 (c_y+1) +
// (c_z+1); 13 is c = 0.
constexpr int imageCodes = 27;
inline uint8_t imageCode(const Vec3& c) {
    return uint8_t(9 * (int(c.x()) + 1) + 3 * (int(c.y()) + 1) + (int(c.z()) + 1));
}
inline Vec3 imageOfCode(int code) {
    return Vec3(code / 9 - 1, code / 3 % 3 - 1, code % 3 - 1);
}

// The cell after a step of dt, h + dt L h (the step loop's update, physics.md §11.2).
inline Mat3 cellAfterStep(const PeriodicCell& c, double dt) {
    return c.h + dt * (c.velGrad * c.h);
}

// What the step loop needs of the cell in one step: for each image code, the shift h c of the
// image and its velocity L h c; and the mean flow's deformation from the last rebuild to the end
// of the step, F = h(t + dt) h_rebuild^-1, which moves a point that follows the flow from x to
// origin + F (x - origin).
struct CellImages {
    Mat3 h, hInv;
    Vec3 shift[imageCodes], shiftVelocity[imageCodes];
    Mat3 sinceRebuild;
    explicit CellImages(const PeriodicCell& c, double dt = 0)
        : h(c.h), hInv(c.h.inverse()), sinceRebuild(cellAfterStep(c, dt) * c.hAtRebuild.inverse()) {
        const Mat3 lh = c.velGrad * c.h;
        for (int k = 0; k < imageCodes; ++k) {
            shift[k] = h * imageOfCode(k);
            shiftVelocity[k] = lh * imageOfCode(k);
        }
    }
};

// Nearest integer of a small value, without a library call (the default x86-64 target has no
// rounding instruction); halves round away from zero.
inline double roundToInteger(double q) {
    return double(int64_t(q + std::copysign(0.5, q)));
}

// The image index c of the image of a point at x_i + d nearest to x_i.
inline Vec3 nearestImage(const CellImages& f, const Vec3& d) {
    const Vec3 s = f.hInv * d;
    return Vec3(roundToInteger(s.x()), roundToInteger(s.y()), roundToInteger(s.z()));
}

// Distance between the opposite faces of the cell along each of its axes: 1 / |row a of h^-1|.
inline Vec3 cellHeights(const Mat3& h) {
    const Mat3 inv = h.inverse();
    return Vec3(1 / inv.row(0).norm(), 1 / inv.row(1).norm(), 1 / inv.row(2).norm());
}

// The neighbour search needs at least this many grid cells across the cell along every axis (so
// that the 27 cells around any cell, wrapped around, are distinct).
constexpr int minGridCellsAcross = 3;

// How many grid cells of the given size fit across the cell along each axis.
inline Vec3 gridCellsAcross(const Mat3& h, double cellSize) {
    const Vec3 height = cellHeights(h);
    return Vec3(std::floor(height.x() / cellSize), std::floor(height.y() / cellSize),
                std::floor(height.z() / cellSize));
}

} // namespace dem
