// [[spheres]] (lists, files, random clouds, lattices) and [[group]] (spheres selected by region).
// Spheres are numbered 0..N-1 in deck order.
#include "deck/DeckBuild.hpp"
#include "geometry/Packing.hpp"

#include <fmt/format.h>
#include <numbers>

namespace dem {

namespace {

constexpr double maxDiametersAcross = 1e7; // keeps packing generators' grids bounded

double ballVolume(double r) {
    return 4.0 / 3.0 * std::numbers::pi * r * r * r;
}

// The region's bounding box, when it is bounded and not empty.
std::optional<std::pair<Vec3, Vec3>> regionBounds(TableReader& t, const Region& region) {
    Vec3 lo, hi;
    if (!bounds(region, lo, hi) || !isFinite(lo) || !isFinite(hi) ||
        !(lo.array() < hi.array()).all()) {
        t.error("region", "the region is empty or unbounded");
        return std::nullopt;
    }
    return std::pair(lo, hi);
}

// Refuses packings whose size cannot be bounded before generating them: they would exhaust
// time or memory rather than fail.
bool checkSpan(TableReader& t, const Vec3& size, double spacing) {
    if ((size / spacing).maxCoeff() > maxDiametersAcross) {
        t.error("region", fmt::format("the region spans more than {:g} sphere diameters; use "
                                      "larger spheres or a smaller region",
                                      maxDiametersAcross));
        return false;
    }
    return true;
}

std::vector<SphereSpec> readList(TableReader& t) {
    const auto centers = t.vec3s("centers");
    const auto radius = t.number("radius");
    const auto radii = t.numbers("radii");
    if (!centers || (!radius && !radii))
        return {};
    if (radii && radii->size() != centers->size()) {
        t.error("radii", fmt::format("radii has {} values but centers has {}", radii->size(),
                                     centers->size()));
        return {};
    }
    std::vector<SphereSpec> out;
    for (size_t k = 0; k < centers->size(); ++k)
        out.push_back({(*centers)[k], radii ? (*radii)[k] : *radius});
    return out;
}

std::vector<SphereSpec> readFile(TableReader& t) {
    const auto file = t.string("file");
    if (!file)
        return {};
    const std::string path = resolvePath(t, *file);
    t.put("file", path);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
        t.error("file", fmt::format("sphere file '{}' {}", path, notAFile(path)));
        return {};
    }
    std::vector<SphereSpec> out;
    std::string why;
    if (!readSphereFile(path, out, why)) {
        t.error("file", fmt::format("sphere file '{}': {}", path, why));
        return {};
    }
    for (size_t k = 0; k < out.size(); ++k) {
        if (!isFinite(out[k].center) || !(out[k].radius > 0) || !std::isfinite(out[k].radius)) {
            t.error("file", fmt::format("sphere file '{}': sphere {} has radius {} or a non-finite "
                                        "centre",
                                        path, k + 1, out[k].radius));
            return {};
        }
    }
    if (int64_t(out.size()) > maxGeneratedSpheres) {
        t.error("file",
                fmt::format("sphere file '{}' has too many spheres ({})", path, out.size()));
        return {};
    }
    return out;
}

std::optional<SizeDistribution> readSizes(TableReader& t, double& rMin, double& rMean) {
    SizeDistribution sizes;
    if (t.has("radius")) {
        const auto r = t.number("radius");
        const auto spread = t.number("spread");
        if (!r || !spread)
            return std::nullopt;
        sizes.meanRadius = *r;
        sizes.spread = *spread;
        rMin = *r * (1 - *spread);
        rMean = *r;
        return sizes;
    }
    bool ok = false;
    t.table("distribution", [&](TableReader& d) {
        const auto diameters = d.numbers("diameters");
        const auto cumulative = d.numbers("cumulative");
        if (!diameters || !cumulative)
            return;
        if (diameters->empty() || diameters->size() != cumulative->size()) {
            d.error("cumulative", fmt::format("cumulative has {} values but diameters has {} (need "
                                              "the same number, at least one)",
                                              cumulative->size(), diameters->size()));
            return;
        }
        for (size_t k = 1; k < diameters->size(); ++k) {
            if (!((*diameters)[k] > (*diameters)[k - 1]))
                return d.error("diameters", "diameters must increase");
            if (!((*cumulative)[k] >= (*cumulative)[k - 1]))
                return d.error("cumulative", "cumulative fractions must not decrease");
        }
        if (cumulative->back() != 1.0)
            return d.error("cumulative", "the last cumulative fraction must be 1");
        sizes.diameters = *diameters;
        sizes.cumulativeFractions = *cumulative;
        rMin = diameters->front() / 2;
        rMean = 0.5 * (diameters->front() + diameters->back()) / 2;
        ok = true;
    });
    if (!ok)
        return std::nullopt;
    return sizes;
}

std::vector<SphereSpec> readRandom(TableReader& t, const std::vector<SphereSpec>& existing) {
    RandomCloudSpec spec;
    const auto region = readRegion(t, "region");
    double rMin = 0, rMean = 0;
    const auto sizes = readSizes(t, rMin, rMean);
    const auto count = t.integer("count");
    const auto porosity = t.number("porosity");
    const auto seed = t.integer("seed");
    if (!region || !sizes || !seed || (!count && !porosity) || t.failed())
        return {};
    const auto box = regionBounds(t, *region);
    if (!box)
        return {};
    const Vec3 size = box->second - box->first;
    const double volume = size.prod();
    if (!checkSpan(t, size, 2 * rMin))
        return {};
    if (count && double(*count) * ballVolume(rMin) > 0.74 * volume) {
        t.error("count", fmt::format("count = {} spheres cannot fit in the region (denser than a "
                                     "close packing)",
                                     *count));
        return {};
    }
    if (porosity && (1 - *porosity) * volume / ballVolume(rMean) > double(maxGeneratedSpheres)) {
        t.error("porosity", fmt::format("porosity = {} would need more than {} spheres in this "
                                        "region: too many",
                                        *porosity, maxGeneratedSpheres));
        return {};
    }
    spec.region = *region;
    spec.sizes = *sizes;
    spec.count = count.value_or(-1);
    spec.porosity = porosity.value_or(-1);
    spec.seed = uint64_t(*seed);
    int64_t shortfall = 0;
    std::vector<SphereSpec> out = randomCloud(spec, existing, shortfall);
    if (shortfall > 0) {
        t.error(count ? "count" : "porosity",
                fmt::format("only {} of {} spheres fit in the region at random; use a larger "
                            "region or fewer spheres",
                            out.size(), out.size() + size_t(shortfall)));
        return {};
    }
    return out;
}

std::vector<SphereSpec> readLattice(TableReader& t, bool hexagonal) {
    const auto region = readRegion(t, "region");
    const auto radius = t.number("radius");
    const auto gap = t.number("gap");
    const auto origin = t.vec3("origin");
    if (!region || !radius || !gap || !origin || t.failed())
        return {};
    const auto box = regionBounds(t, *region);
    if (!box)
        return {};
    const Vec3 size = box->second - box->first;
    const double spacing = 2 * *radius + *gap;
    if (!checkSpan(t, size, 2 * *radius))
        return {};
    // Close packing holds sqrt(2) times as many spheres as the cubic lattice.
    const double estimate = (size / spacing).array().floor().cwiseMax(0.0).matrix().prod() *
                            (hexagonal ? std::sqrt(2.0) : 1.0);
    if (estimate > double(maxGeneratedSpheres)) {
        t.error("radius", fmt::format("the region would hold about {:.3g} spheres of radius {}: "
                                      "count too large (at most {})",
                                      estimate, *radius, maxGeneratedSpheres));
        return {};
    }
    return hexagonal ? hexagonalLattice(*region, *radius, *gap, *origin)
                     : cubicLattice(*region, *radius, *gap, *origin);
}

uint8_t readBlocked(TableReader& t) {
    // Only the key given is read (and resolved), since the two exclude each other.
    if (t.has("fixed"))
        return t.boolean("fixed").value_or(false) ? BlockAll : 0;
    const auto text = t.string("blocked");
    uint8_t mask = 0;
    for (char c : text.value_or("")) {
        const std::string_view dofs = "xyzXYZ";
        const size_t k = dofs.find(c);
        if (k == std::string_view::npos) {
            t.error("blocked",
                    fmt::format("blocked = \"{}\": '{}' is not one of x, y, z, X, Y, Z", *text, c));
            return 0;
        }
        mask |= uint8_t(1u << k);
    }
    return mask;
}

// A block that makes no sphere is a mistake (a region smaller than one sphere, a porosity that
// rounds the count to zero, an empty file), not something to run without.
void reportNoSpheres(TableReader& t, const std::string& kind) {
    if (kind == "file")
        t.error("file",
                fmt::format("sphere file '{}' holds no spheres", t.string("file").value_or("")));
    else if (kind == "random")
        t.error("porosity", fmt::format("porosity = {} leaves not one sphere in the region",
                                        t.number("porosity").value_or(0)));
    else if (kind == "list")
        t.error("centers", "no centres given");
    else
        t.error("radius", fmt::format("the region holds not one sphere of radius {} with gap {}",
                                      t.number("radius").value_or(0), t.number("gap").value_or(0)));
}

void readSphereSet(TableReader& t, DeckBuild& b, std::vector<SphereSpec>& all) {
    const int material = readMaterialRef(t, "material", b);
    const uint32_t groups = readGroupMask(t, b);
    const Vec3 velocity = t.vec3("velocity").value_or(Vec3::Zero());
    const uint8_t blocked = readBlocked(t);
    const std::string& kind = t.variant();
    std::vector<SphereSpec> made;
    if (kind == "list")
        made = readList(t);
    if (kind == "file")
        made = readFile(t);
    if (kind == "random")
        made = readRandom(t, all);
    if (kind == "hexagonal" || kind == "cubic")
        made = readLattice(t, kind == "hexagonal");
    if (int64_t(all.size() + made.size()) > maxGeneratedSpheres) {
        t.error(fmt::format("the deck makes more than {} spheres: count too large",
                            maxGeneratedSpheres));
        return;
    }
    if (t.failed() || material < 0)
        return;
    if (made.empty()) {
        reportNoSpheres(t, kind);
        return;
    }
    Particles& p = b.sim.particles;
    const double density = b.sim.materials[size_t(material)].density;
    for (const SphereSpec& s : made) {
        p.add(uint32_t(p.size()), s.center, s.radius, density, material, groups);
        p.vel.back() = velocity;
        p.setBlocked(p.size() - 1, blocked);
        all.push_back(s);
    }
}

} // namespace

void readSpheres(TableReader& root, DeckBuild& b) {
    std::vector<SphereSpec> all; // every sphere so far: random clouds avoid them
    root.tables("spheres", [&](TableReader& t, size_t) { readSphereSet(t, b, all); });
}

void readGroups(TableReader& root, DeckBuild& b) {
    root.tables("group", [&](TableReader& t, size_t) {
        const auto name = t.string("name");
        const auto region = readRegion(t, "region");
        if (!name || !region)
            return;
        const int g = addGroup(t, "name", *name, b);
        if (g < 0)
            return;
        Particles& p = b.sim.particles;
        for (size_t k = 0; k < p.size(); ++k)
            if (contains(*region, p.pos[k]))
                p.joinGroups(k, 1u << g);
    });
}

} // namespace dem
