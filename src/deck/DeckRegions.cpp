// Regions: box, sphere, cylinder and their unions, intersections and differences.
#include "deck/DeckBuild.hpp"

#include <fmt/format.h>

namespace dem {

namespace {

std::optional<Region> readRegionTable(TableReader& r);

std::optional<Region> readBox(TableReader& t) {
    const auto lo = t.vec3("min");
    const auto hi = t.vec3("max");
    if (!lo || !hi)
        return std::nullopt;
    if (!(lo->array() < hi->array()).all()) {
        t.error("max", "region box: max must exceed min in every component");
        return std::nullopt;
    }
    return Region{RegionBox{*lo, *hi}};
}

std::optional<Region> readSphere(TableReader& t) {
    const auto c = t.vec3("center");
    const auto r = t.number("radius");
    if (!c || !r)
        return std::nullopt;
    return Region{RegionSphere{*c, *r}};
}

std::optional<Region> readCylinder(TableReader& t) {
    const auto a = t.vec3("a");
    const auto b = t.vec3("b");
    const auto r = t.number("radius");
    if (!a || !b || !r)
        return std::nullopt;
    if (!((*b - *a).norm() > 0)) {
        t.error("b", "region cylinder: a and b must differ (they give the axis)");
        return std::nullopt;
    }
    return Region{RegionCylinder{*a, *b, *r}};
}

// The parts of a union, intersection or difference; nullopt when any part is wrong.
std::optional<std::vector<Region>> readParts(TableReader& t, std::string_view key) {
    std::vector<Region> parts;
    bool ok = true;
    t.tables(key, [&](TableReader& part, size_t) {
        auto region = readRegionTable(part);
        if (region)
            parts.push_back(std::move(*region));
        else
            ok = false;
    });
    if (!ok)
        return std::nullopt;
    if (parts.empty()) {
        t.error(key, fmt::format("region {}: expected at least one region", key));
        return std::nullopt;
    }
    return parts;
}

std::optional<Region> readRegionTable(TableReader& r) {
    if (r.failed())
        return std::nullopt; // no shape, or several: reported by the key rules
    std::optional<Region> region;
    const auto shape = [&](std::string_view key, auto read) {
        r.table(key, [&](TableReader& t) { region = read(t); });
    };
    if (r.has("box"))
        shape("box", readBox);
    if (r.has("sphere"))
        shape("sphere", readSphere);
    if (r.has("cylinder"))
        shape("cylinder", readCylinder);
    if (r.has("union")) {
        if (auto parts = readParts(r, "union"))
            region = Region{RegionUnion{std::move(*parts)}};
    }
    if (r.has("intersection")) {
        if (auto parts = readParts(r, "intersection"))
            region = Region{RegionIntersection{std::move(*parts)}};
    }
    if (r.has("difference")) {
        if (auto parts = readParts(r, "difference"))
            region = Region{RegionDifference{std::move(*parts)}};
    }
    return region;
}

} // namespace

std::optional<Region> readRegion(TableReader& t, std::string_view key) {
    std::optional<Region> region;
    t.table(key, [&](TableReader& r) { region = readRegionTable(r); });
    return region;
}

} // namespace dem
