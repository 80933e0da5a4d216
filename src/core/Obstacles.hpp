#pragma once
// Boundaries: infinite walls, triangular facets and boxes, grouped into rigid objects that move
// kinematically (imposed velocity and angular velocity) and on which contact forces are measured.
#include "core/Types.hpp"

#include <string>
#include <vector>

namespace dem {

enum class ObstacleKind : uint8_t { Wall, Facet, Box };

// One-sided infinite plane: spheres on the side the normal points to are pushed along it.
struct Wall {
    Vec3 point, normal;
    uint32_t object;
};

// Triangle with its mesh topology: vertex ids are shared by the facets of one welded mesh, so a
// contact through an edge or vertex can be recognised as the same feature seen from two facets.
struct Facet {
    Vec3 v[3];
    Vec3 normal;
    uint32_t vid[3];
    uint32_t object;
};

// Oriented cuboid obstacle: centre, half-sizes along its own axes, rotation to global.
struct Box {
    Vec3 center, half;
    Quat ori;
    uint32_t object;
};

// A rigid boundary object (one wall, one box, or one facet mesh).
struct RigidObject {
    std::string name;
    ObstacleKind kind = ObstacleKind::Wall;
    int material = 0;
    uint32_t groups = 0;
    Vec3 center = Vec3::Zero();                       // rotation centre and reported position
    Vec3 center0 = Vec3::Zero();                      // initial centre (displacement measure)
    Vec3 vel = Vec3::Zero(), angVel = Vec3::Zero();   // imposed motion
    Vec3 force = Vec3::Zero(), torque = Vec3::Zero(); // from contacts, last step (on the object)
    double extent = 0; // max distance of its geometry from center (for rotation)
    double travel = 0; // distance moved since the last neighbour rebuild
};

struct Obstacles {
    std::vector<RigidObject> objects;
    std::vector<Wall> walls;
    std::vector<Facet> facets;
    std::vector<Box> boxes;
    uint32_t nextVertexId = 0;
    int findObject(const std::string& name) const;
};

} // namespace dem
