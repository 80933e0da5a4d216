// [[wall]], [[box]] and [[facets]]: one rigid object each, in that order.
#include "deck/DeckBuild.hpp"
#include "geometry/Mesh.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <numbers>

namespace dem {

namespace {

// Registers a rigid object under a unique name; -1 when the name is taken (reported).
int addObject(TableReader& t, DeckBuild& b, const std::string& defaultName, ObstacleKind kind,
              int material, uint32_t groups) {
    std::string name = defaultName;
    if (const auto given = t.string("name"))
        name = *given;
    t.put("name", name);
    // A measure names it as object:NAME.QUANTITY, read up to the first '.'.
    if (name.find('.') != std::string::npos) {
        t.error("name", fmt::format("object name '{}' may not contain '.' (measures name it as "
                                    "object:NAME.QUANTITY)",
                                    name));
        return -1;
    }
    const int existing = b.sim.obstacles.findObject(name);
    if (existing >= 0) {
        t.error("name", fmt::format("duplicate object name '{}' (first defined at line {})", name,
                                    b.objectWhere[size_t(existing)].begin.line));
        return -1;
    }
    RigidObject o;
    o.name = name;
    o.kind = kind;
    o.material = std::max(material, 0);
    o.groups = groups;
    b.sim.obstacles.objects.push_back(o);
    b.objectWhere.push_back(t.where());
    return int(b.sim.obstacles.objects.size() - 1);
}

void placeObject(DeckBuild& b, int object, const Vec3& center, double extent) {
    RigidObject& o = b.sim.obstacles.objects[size_t(object)];
    o.center = o.center0 = center;
    o.extent = extent;
}

std::optional<Quat> readRotation(TableReader& t, std::string_view key) {
    std::optional<Quat> q;
    t.table(key, [&](TableReader& r) {
        const auto axis = readDirection(r, "axis");
        const auto angle = r.number("angle");
        if (axis && angle)
            q = Quat(Eigen::AngleAxisd(*angle * std::numbers::pi / 180.0, *axis));
    });
    return q;
}

void readWall(TableReader& t, size_t k, DeckBuild& b) {
    const auto point = t.vec3("point");
    const auto normal = readDirection(t, "normal");
    const int material = readMaterialRef(t, "material", b);
    const uint32_t groups = readGroupMask(t, b);
    const int object =
        addObject(t, b, fmt::format("wall{}", k), ObstacleKind::Wall, material, groups);
    if (object < 0 || !point || !normal || t.failed())
        return;
    b.sim.obstacles.walls.push_back(Wall{*point, *normal, uint32_t(object)});
    placeObject(b, object, *point, 0.0);
}

void readBox(TableReader& t, size_t k, DeckBuild& b) {
    Vec3 center = Vec3::Zero(), half = Vec3::Zero();
    if (t.has("center")) {
        const auto c = t.vec3("center");
        const auto h = t.vec3("half_size");
        if (c && h)
            center = *c, half = *h;
    } else if (t.has("min")) {
        const auto lo = t.vec3("min");
        const auto hi = t.vec3("max");
        if (lo && hi)
            center = 0.5 * (*lo + *hi), half = 0.5 * (*hi - *lo);
        if (lo && hi && !(lo->array() < hi->array()).all())
            t.error("max", "box: max must exceed min in every component");
    }
    const Quat ori = readRotation(t, "rotation").value_or(Quat::Identity());
    const int material = readMaterialRef(t, "material", b);
    const uint32_t groups = readGroupMask(t, b);
    const int object =
        addObject(t, b, fmt::format("box{}", k), ObstacleKind::Box, material, groups);
    if (object < 0 || t.failed())
        return;
    b.sim.obstacles.boxes.push_back(Box{center, half, ori, uint32_t(object)});
    placeObject(b, object, center, half.norm());
}

std::optional<TriangleMesh> readFacetBox(TableReader& t) {
    std::optional<TriangleMesh> mesh;
    t.table("box", [&](TableReader& r) {
        const auto lo = r.vec3("min");
        const auto hi = r.vec3("max");
        const auto open = r.strings("open");
        if (!lo || !hi || !open)
            return;
        if (!(lo->array() < hi->array()).all()) {
            r.error("max", "facets box: max must exceed min in every component");
            return;
        }
        mesh = boxMesh(*lo, *hi, *open);
    });
    return mesh;
}

std::optional<TriangleMesh> readRectangle(TableReader& t) {
    std::optional<TriangleMesh> mesh;
    t.table("rectangle", [&](TableReader& r) {
        const auto c = r.vec3("center");
        const auto u = r.vec3("u");
        const auto v = r.vec3("v");
        if (!c || !u || !v)
            return;
        if (!(u->cross(*v).norm() > 0)) {
            r.error("v", "facets rectangle: u and v must be non-zero and not parallel");
            return;
        }
        mesh = rectangleMesh(*c, *u, *v);
    });
    return mesh;
}

std::optional<TriangleMesh> readMeshFile(TableReader& t) {
    const auto file = t.string("file");
    if (!file)
        return std::nullopt;
    const std::string path = resolvePath(t, *file);
    t.put("file", path);
    std::string ext = std::filesystem::path(path).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    if (ext != ".stl" && ext != ".off") {
        t.error("file", fmt::format("mesh file '{}': expected a .stl or .off file", path));
        return std::nullopt;
    }
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
        t.error("file", fmt::format("mesh file '{}' {}", path, notAFile(path)));
        return std::nullopt;
    }
    TriangleMesh mesh;
    std::string why;
    if (!(ext == ".stl" ? loadStl(path, mesh, why) : loadOff(path, mesh, why))) {
        t.error("file", fmt::format("mesh file '{}': {}", path, why));
        return std::nullopt;
    }
    weldVertices(mesh);
    return mesh;
}

// Turns a mesh into facets of one object; false when it has no usable triangle.
bool addFacets(DeckBuild& b, const TriangleMesh& mesh, int object) {
    Obstacles& obs = b.sim.obstacles;
    const uint32_t base = obs.nextVertexId;
    double area = 0;
    Vec3 moment = Vec3::Zero();
    for (const auto& tri : mesh.triangles) {
        if (std::max({tri[0], tri[1], tri[2]}) >= mesh.vertices.size())
            continue;
        Facet f;
        for (int k = 0; k < 3; ++k) {
            f.v[k] = mesh.vertices[tri[size_t(k)]];
            f.vid[k] = base + tri[size_t(k)];
        }
        const Vec3 n = (f.v[1] - f.v[0]).cross(f.v[2] - f.v[0]);
        if (!(n.norm() > 0) || !std::isfinite(n.norm()))
            continue; // degenerate: no normal
        f.normal = n.normalized();
        f.object = uint32_t(object);
        obs.facets.push_back(f);
        area += 0.5 * n.norm();
        moment += 0.5 * n.norm() * (f.v[0] + f.v[1] + f.v[2]) / 3.0;
    }
    obs.nextVertexId = base + uint32_t(mesh.vertices.size());
    if (!(area > 0))
        return false;
    const Vec3 center = moment / area; // area-weighted centroid of the surface
    double extent = 0;
    for (const Vec3& v : mesh.vertices)
        extent = std::max(extent, (v - center).norm());
    placeObject(b, object, center, extent);
    return true;
}

void readFacets(TableReader& t, size_t k, DeckBuild& b) {
    std::optional<TriangleMesh> mesh;
    if (t.has("box"))
        mesh = readFacetBox(t);
    if (t.has("rectangle"))
        mesh = readRectangle(t);
    if (t.has("file"))
        mesh = readMeshFile(t);
    const double scale = t.number("scale").value_or(1.0);
    const auto rotate = readRotation(t, "rotate");
    const Vec3 translate = t.vec3("translate").value_or(Vec3::Zero());
    const int material = readMaterialRef(t, "material", b);
    const uint32_t groups = readGroupMask(t, b);
    const int object =
        addObject(t, b, fmt::format("facets{}", k), ObstacleKind::Facet, material, groups);
    if (object < 0 || !mesh || t.failed())
        return;
    if (scale != 1.0 || rotate || translate != Vec3::Zero())
        transformMesh(*mesh, scale, rotate.value_or(Quat::Identity()).toRotationMatrix(),
                      translate);
    if (!addFacets(b, *mesh, object))
        t.error("the surface has no triangle of non-zero area");
}

} // namespace

void readObstacles(TableReader& root, DeckBuild& b) {
    root.tables("wall", [&](TableReader& t, size_t k) { readWall(t, k, b); });
    root.tables("box", [&](TableReader& t, size_t k) { readBox(t, k, b); });
    root.tables("facets", [&](TableReader& t, size_t k) { readFacets(t, k, b); });
}

} // namespace dem
