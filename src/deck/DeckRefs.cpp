// Helpers shared by the section readers: references to materials and groups by name,
// directions and file paths.
#include "deck/DeckBuild.hpp"

#include <fmt/format.h>

namespace dem {

namespace {

std::vector<std::string_view> materialNames(const Simulation& sim) {
    std::vector<std::string_view> names;
    for (const Material& m : sim.materials)
        names.push_back(m.name);
    return names;
}

} // namespace

int readMaterialRef(TableReader& t, std::string_view key, DeckBuild& b) {
    const std::optional<std::string> name = t.string(key);
    if (!name)
        return -1;
    for (size_t k = 0; k < b.sim.materials.size(); ++k)
        if (b.sim.materials[k].name == *name)
            return int(k);
    const auto names = materialNames(b.sim);
    t.error(key, fmt::format("undefined material '{}' (defined: {}){}", *name, joinNames(names),
                             didYouMean(*name, names)));
    return -1;
}

int readGroupRef(TableReader& t, std::string_view key, DeckBuild& b) {
    const std::optional<std::string> name = t.string(key);
    if (!name)
        return -1;
    const int g = b.sim.groupIndex(*name);
    if (g >= 0)
        return g;
    const auto& names = b.sim.groupNames;
    t.error(key, fmt::format(
                     "undefined group '{}' (defined: {}){}", *name, joinNames(names),
                     didYouMean(*name, std::vector<std::string_view>(names.begin(), names.end()))));
    return -1;
}

int addGroup(TableReader& t, std::string_view key, const std::string& name, DeckBuild& b) {
    if (name.empty()) {
        t.error(key, "a group name may not be empty");
        return -1;
    }
    if (name.find('.') != std::string::npos) { // measures read group:NAME up to the first '.'
        t.error(key, fmt::format("group name '{}' may not contain '.' (measures name it as "
                                 "group:NAME.QUANTITY)",
                                 name));
        return -1;
    }
    const int g = b.sim.groupIndex(name);
    if (g >= 0)
        return g;
    if (b.sim.groupNames.size() >= 32) {
        t.error(key, fmt::format("too many groups: '{}' would be the 33rd (at most 32)", name));
        return -1;
    }
    b.sim.groupNames.push_back(name);
    return int(b.sim.groupNames.size() - 1);
}

uint32_t readGroupMask(TableReader& t, DeckBuild& b) {
    uint32_t mask = 0;
    if (const auto name = t.string("group")) {
        const int g = addGroup(t, "group", *name, b);
        if (g >= 0)
            mask |= 1u << g;
    }
    if (const auto names = t.strings("groups")) {
        for (const std::string& name : *names) {
            const int g = addGroup(t, "groups", name, b);
            if (g >= 0)
                mask |= 1u << g;
        }
    }
    return mask;
}

std::optional<Vec3> readDirection(TableReader& t, std::string_view key) {
    const std::optional<Vec3> v = t.vec3(key);
    if (!v)
        return std::nullopt;
    const double length = v->norm();
    if (!(length > 0) || !std::isfinite(length)) {
        t.error(key, fmt::format("{} = [{}, {}, {}] has no direction (zero or non-finite length)",
                                 key, v->x(), v->y(), v->z()));
        return std::nullopt;
    }
    const Vec3 unit = *v / length;
    t.putVec3(key, unit);
    return unit;
}

std::string resolvePath(TableReader& t, const std::string& file) {
    std::filesystem::path p(file);
    if (p.is_relative())
        p = t.context().deckDir / p;
    return std::filesystem::absolute(p).lexically_normal().string();
}

std::string notAFile(const std::string& path) {
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (!std::filesystem::exists(status))
        return "not found";
    return std::filesystem::is_directory(status) ? "is a directory" : "is not a regular file";
}

} // namespace dem
