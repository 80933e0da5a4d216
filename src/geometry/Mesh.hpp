#pragma once
// Triangle meshes for facet boundaries: generators and file readers (STL ASCII/binary, OFF).
#include "core/Types.hpp"

#include <array>
#include <string>
#include <vector>

namespace dem {

struct TriangleMesh {
    std::vector<Vec3> vertices;
    std::vector<std::array<uint32_t, 3>> triangles; // counter-clockwise seen from the normal side
};

// Closed box of 12 triangles, normals pointing inwards (spheres live inside). `open` names sides
// to leave out, any of "x-", "x+", "y-", "y+", "z-", "z+".
TriangleMesh boxMesh(const Vec3& min, const Vec3& max, const std::vector<std::string>& open);

// Rectangle (two triangles) with the given centre, edge vectors u and v; normal = u x v.
TriangleMesh rectangleMesh(const Vec3& center, const Vec3& u, const Vec3& v);

bool loadStl(const std::string& path, TriangleMesh& mesh, std::string& error); // ASCII or binary
bool loadOff(const std::string& path, TriangleMesh& mesh, std::string& error);

// Merges vertices closer than tol (relative to the mesh size) so facets share vertex ids.
void weldVertices(TriangleMesh& mesh, double relativeTolerance = 1e-9);
// x <- rotation * (scale * x) + translation
void transformMesh(TriangleMesh& mesh, double scale, const Mat3& rotation, const Vec3& translation);

} // namespace dem
