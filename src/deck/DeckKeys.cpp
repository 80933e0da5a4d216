#include "deck/DeckKeys.hpp"

#include <fmt/format.h>

// The tables below use designated initializers and rely on default member initializers for the
// keys they leave out; GCC 12 warns about that (-Wextra) although it is well defined.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace dem {

const char* keyTypeName(KeyType type) {
    switch (type) {
    case KeyType::Number:
        return "number";
    case KeyType::Integer:
        return "integer";
    case KeyType::String:
        return "string";
    case KeyType::Bool:
        return "boolean";
    case KeyType::Vec3:
        return "vec3";
    case KeyType::Mat3:
        return "3x3 matrix";
    case KeyType::NumberList:
        return "number list";
    case KeyType::Vec3List:
        return "vec3 list";
    case KeyType::StringList:
        return "string list";
    case KeyType::Table:
        return "table";
    case KeyType::TableList:
        return "array of tables";
    case KeyType::Region:
        return "region";
    case KeyType::RegionList:
        return "region list";
    case KeyType::Params:
        return "table of numbers";
    }
    return "?";
}

bool Range::contains(double x) const {
    if (low.kind == Bound::Open && !(x > low.value))
        return false;
    if (low.kind == Bound::Closed && !(x >= low.value))
        return false;
    if (high.kind == Bound::Open && !(x < high.value))
        return false;
    if (high.kind == Bound::Closed && !(x <= high.value))
        return false;
    return true;
}

std::string Range::text() const {
    if (low.kind != Bound::None && high.kind != Bound::None)
        return fmt::format("in {}{}, {}{}", low.kind == Bound::Open ? '(' : '[', low.value,
                           high.value, high.kind == Bound::Open ? ')' : ']');
    if (low.kind != Bound::None)
        return fmt::format("{} {}", low.kind == Bound::Open ? ">" : ">=", low.value);
    if (high.kind != Bound::None)
        return fmt::format("{} {}", high.kind == Bound::Open ? "<" : "<=", high.value);
    return "any value";
}

Range greaterThan(double x) {
    return Range{{Bound::Open, x}, {}};
}
Range atLeast(double x) {
    return Range{{Bound::Closed, x}, {}};
}
Range interval(Bound::Kind lowKind, double low, double high, Bound::Kind highKind) {
    return Range{{lowKind, low}, {highKind, high}};
}

const KeySpec* SectionSpec::find(std::string_view name) const {
    for (const KeySpec& k : keys)
        if (k.name == name)
            return &k;
    return nullptr;
}

std::vector<std::string_view> SectionSpec::names() const {
    std::vector<std::string_view> out;
    for (const KeySpec& k : keys)
        out.push_back(k.name);
    return out;
}

std::vector<std::string_view> splitBar(std::string_view text) {
    std::vector<std::string_view> out;
    while (!text.empty()) {
        const size_t bar = text.find('|');
        out.push_back(text.substr(0, bar));
        if (bar == std::string_view::npos)
            break;
        text.remove_prefix(bar + 1);
    }
    return out;
}

bool barContains(std::string_view bars, std::string_view value) {
    for (std::string_view part : splitBar(bars))
        if (part == value)
            return true;
    return false;
}

// ------------------------------------------------------------------------------------------------
// The tables. Each section is a function-local constant so that sections can point at each other
// without depending on the order in which globals are initialised.

namespace {

constexpr Bound::Kind Open = Bound::Open;
constexpr Bound::Kind Closed = Bound::Closed;

constexpr Range positive{{Open, 0}, {}};
constexpr Range nonNegative{{Closed, 0}, {}};
constexpr Range fraction{{Open, 0}, {Closed, 1}};       // restitution coefficients
constexpr Range frictionRange{{Closed, 0}, {Open, 90}}; // degrees
constexpr Range countRange{{Closed, 1}, {Closed, double(maxGeneratedSpheres)}};

// The friction coefficients a [[pair]] and a stage's friction table set, as one set of keys.
const KeySpec frictionAngleKey{.name = "friction_angle",
                               .type = KeyType::Number,
                               .description = "Friction angle.",
                               .unit = "deg",
                               .range = frictionRange};
const KeySpec rollingFrictionKey{.name = "rolling_friction",
                                 .type = KeyType::Number,
                                 .description = "Rolling friction coefficient mu_r.",
                                 .range = nonNegative};
const KeySpec twistingFrictionKey{.name = "twisting_friction",
                                  .type = KeyType::Number,
                                  .description = "Twisting friction coefficient mu_t.",
                                  .range = nonNegative};

// Optional names of groups shared by bodies and boundaries.
KeySpec groupKey(std::string_view what) {
    return {.name = "group", .type = KeyType::String, .description = what};
}
KeySpec groupsKey() {
    return {.name = "groups",
            .type = KeyType::StringList,
            .description = "Further groups to put these bodies in (created on first use)."};
}

const SectionSpec& domainSpec() {
    static const SectionSpec s{
        .title = "domain",
        .description = "Axis-aligned box outside which spheres are not allowed. With or "
                       "without one, a run fails when a sphere gets farther from the origin "
                       "than the neighbour grid reaches: 2^20 cells along each axis, a cell "
                       "being the largest diameter plus the skin.",
        .keys = {
            {.name = "min",
             .type = KeyType::Vec3,
             .description = "Lower corner.",
             .unit = "m",
             .required = true},
            {.name = "max",
             .type = KeyType::Vec3,
             .description = "Upper corner.",
             .unit = "m",
             .required = true},
            {.name = "out_of_domain",
             .type = KeyType::String,
             .description = "What happens to a sphere that leaves the domain: the run fails "
                            "(error) or the sphere is deleted (remove).",
             .defaultValue = "\"error\"",
             .choices = "error|remove"},
        }};
    return s;
}

const SectionSpec& periodicSpec() {
    static const SectionSpec s{
        .title = "[periodic]",
        .description =
            "Periodic boundaries: space is tiled by copies of a cell, at first the axis-aligned "
            "box from min to min + size, and each sphere interacts with the nearest image of "
            "every other. Sphere centres are wrapped into the cell when the neighbour lists are "
            "rebuilt. The cell deforms with the stages' velocity_gradient. A periodic deck has no "
            "[simulation] domain and no walls, facets or boxes (not supported yet).",
        .keys = {
            {.name = "size",
             .type = KeyType::Vec3,
             .description = "Edge lengths of the initial cell, each at least 3 (2 r_max + skin): "
                            "r_max the largest sphere radius, skin the [simulation] skin (when 0, "
                            "half the smallest radius).",
             .unit = "m",
             .range = positive,
             .required = true},
            {.name = "min",
             .type = KeyType::Vec3,
             .description = "Lower corner of the initial cell.",
             .unit = "m",
             .defaultValue = "[0.0, 0.0, 0.0]"},
        }};
    return s;
}

const SectionSpec& simulationSpec() {
    static const SectionSpec s{
        .title = "[simulation]",
        .description = "Time step, neighbour search and global settings. Every key is optional.",
        .keys =
            {
                {.name = "dt",
                 .type = KeyType::Number,
                 .description = "Fixed time step. It may not exceed the critical step of the "
                                "contact laws in use: sqrt(2 m/(E R)) (linear; divided by "
                                "sqrt(3.5 k_t/k_n) when stiffness_ratio exceeds 2/7), the "
                                "Rayleigh time pi R sqrt(rho/G)/(0.1631 nu + 0.8766) "
                                "(hertz_mindlin), "
                                "2 t_c/sqrt(pi^2 + ln^2 e_n) (viscoelastic), smallest sphere; "
                                "divided by 1.8 when a pair resists rolling or twisting (from any "
                                "stage on).",
                 .unit = "s",
                 .range = positive},
                {.name = "dt_factor",
                 .type = KeyType::Number,
                 .description = "When dt is not given, the time step is this factor times the "
                                "critical step. The critical step follows one contact's normal "
                                "oscillation (the linear law's faster tangential one above "
                                "stiffness_ratio 2/7); Hertz-Mindlin's tangential mode with "
                                "rotation is faster, and spheres have several contacts: at 0.2, "
                                "dense damped Hertz-Mindlin packings with friction can spin up "
                                "on their own, which 0.1 avoids. Lower it for stiff or strongly "
                                "confined packings; check that kinetic energy decays when "
                                "nothing drives the packing.",
                 .defaultValue = "0.1",
                 .range = interval(Open, 0, 1, Closed)},
                {.name = "skin",
                 .type = KeyType::Number,
                 .description = "Verlet skin of the neighbour lists; 0 lets the engine choose half "
                                "the smallest radius.",
                 .unit = "m",
                 .defaultValue = "0.0",
                 .range = nonNegative},
                {.name = "track_energy",
                 .type = KeyType::Bool,
                 .description = "Account for energy: the elastic energy of contacts and the energy "
                                "dissipated by damping and contacts. The measures elastic_energy, "
                                "total_energy, dissipated_damping and dissipated_contacts need "
                                "it; off, the contact loop is faster and keeps less per pair.",
                 .defaultValue = "true"},
                {.name = "domain",
                 .type = KeyType::Table,
                 .description = "Box outside which spheres are not allowed (none by default; not "
                                "with [periodic]).",
                 .table = &domainSpec()},
            },
        .rules = {{.kind = KeyRule::AtMostOne, .keys = "dt|dt_factor"}}};
    return s;
}

const SectionSpec& materialSpec() {
    static const SectionSpec s{
        .title = "[[material]]",
        .description = "A named material. Spheres and boundaries refer to it by name. All the "
                       "materials of a deck must use the same contact law.",
        .discriminator = "law",
        .keys = {
            {.name = "name",
             .type = KeyType::String,
             .description = "Unique name.",
             .required = true},
            {.name = "law",
             .type = KeyType::String,
             .description = "Contact law: linear spring-dashpot (Cundall-Strack), Hertz-Mindlin, "
                            "or viscoelastic from contact time and restitution.",
             .defaultValue = "\"hertz_mindlin\"",
             .choices = "linear|hertz_mindlin|viscoelastic"},
            {.name = "density",
             .type = KeyType::Number,
             .description = "Mass density.",
             .unit = "kg/m^3",
             .range = positive,
             .required = true},
            {.name = "young",
             .type = KeyType::Number,
             .description = "Young's modulus.",
             .unit = "Pa",
             .range = positive,
             .required = true,
             .only = "linear|hertz_mindlin"},
            {.name = "poisson",
             .type = KeyType::Number,
             .description = "Poisson's ratio.",
             .defaultValue = "0.25",
             .range = interval(Open, -1, 0.5, Open),
             .only = "hertz_mindlin",
             .misplacedIn = "linear",
             .misplaced = "the linear law takes k_t/k_n from stiffness_ratio, which Yade's "
                          "FrictMat reads from poisson"},
            {.name = "stiffness_ratio",
             .type = KeyType::Number,
             .description = "Ratio k_t/k_n of the tangential to the normal stiffness (Yade's "
                            "FrictMat takes it from poisson). Above 2/7 the tangential "
                            "oscillation of a contact, which also turns the spheres, is faster "
                            "than the normal one, and the critical step is divided by "
                            "sqrt(3.5 k_t/k_n).",
             .defaultValue = "0.25",
             .range = positive,
             .only = "linear"},
            {.name = "friction_angle",
             .type = KeyType::Number,
             .description = "Inter-particle friction angle; a pair uses the smaller of its two "
                            "materials' angles.",
             .unit = "deg",
             .defaultValue = "0.0",
             .range = frictionRange},
            {.name = "restitution",
             .type = KeyType::Number,
             .description = "Normal coefficient of restitution (1 = no contact damping); a pair "
                            "uses the smaller of its two materials' values.",
             .defaultValue = "1.0",
             .range = fraction,
             .only = "linear|hertz_mindlin"},
            {.name = "contact_time",
             .type = KeyType::Number,
             .description = "Contact time t_c of the spring-dashpot pair it sets: the duration "
                            "of a collision for restitution_normal = 1, shorter below (0.86 t_c "
                            "for 0.5; see CONTACT LAWS).",
             .unit = "s",
             .range = positive,
             .required = true,
             .only = "viscoelastic"},
            {.name = "restitution_normal",
             .type = KeyType::Number,
             .description = "Normal coefficient of restitution e_n of the spring-dashpot pair "
                            "it sets (as Yade's ViscElPhys does). The normal force is never "
                            "attractive, so a contact ends before the overlap closes and "
                            "rebounds a little faster: 0.253 for e_n = 0.1, 0.550 for 0.5, 0.902 "
                            "for 0.9.",
             .defaultValue = "1.0",
             .range = fraction,
             .only = "viscoelastic"},
            {.name = "restitution_tangential",
             .type = KeyType::Number,
             .description = "Tangential coefficient of restitution.",
             .defaultValue = "1.0",
             .range = fraction,
             .only = "viscoelastic"},
            {.name = "rolling_friction",
             .type = KeyType::Number,
             .description = "Rolling friction coefficient mu_r: the rolling resistance moment "
                            "of a contact is at most mu_r R* F_n (R* the effective radius, "
                            "the sphere's radius against a wall or facet). A sphere rests on a "
                            "slope up to tan(angle) = mu_r and rolls on a flat with a "
                            "deceleration of (5/7) mu_r g. A pair uses the smaller of its two "
                            "materials' values; 0 = none (see CONTACT LAWS).",
             .defaultValue = "0.0",
             .range = nonNegative},
            {.name = "twisting_friction",
             .type = KeyType::Number,
             .description = "Twisting friction coefficient mu_t: the moment resisting "
                            "rotation about the contact normal is at most mu_t R* F_n. A pair "
                            "uses the smaller of its two materials' values; 0 = none.",
             .defaultValue = "0.0",
             .range = nonNegative},
        }};
    return s;
}

const SectionSpec& pairSpec() {
    static const SectionSpec s{
        .title = "[[pair]]",
        .description = "Friction, restitution and rolling and twisting friction for contacts "
                       "between two given materials, replacing what the materials would give.",
        .keys =
            {
                {.name = "materials",
                 .type = KeyType::StringList,
                 .description = "The two materials (may be the same one twice).",
                 .required = true},
                frictionAngleKey,
                {.name = "restitution",
                 .type = KeyType::Number,
                 .description = "Normal coefficient of restitution.",
                 .range = fraction},
                rollingFrictionKey,
                twistingFrictionKey,
            },
        .rules = {{.kind = KeyRule::AtLeastOne,
                   .keys = "friction_angle|restitution|rolling_friction|twisting_friction"}}};
    return s;
}

const SectionSpec& wallSpec() {
    static const SectionSpec s{
        .title = "[[wall]]",
        .description = "Infinite plane, one-sided: spheres on the side the normal points to are "
                       "pushed away from it. It is a rigid object that stages can move.",
        .keys = {
            {.name = "name",
             .type = KeyType::String,
             .description =
                 "Unique object name, without '.' (default wall<k>, k counting walls from 0)."},
            {.name = "point",
             .type = KeyType::Vec3,
             .description = "A point of the plane.",
             .unit = "m",
             .required = true},
            {.name = "normal",
             .type = KeyType::Vec3,
             .description = "Normal (normalised by the loader), pointing to the spheres' side.",
             .required = true},
            {.name = "material",
             .type = KeyType::String,
             .description = "Material name.",
             .required = true},
            groupKey("Group to put the wall in (created on first use)."),
            groupsKey(),
        }};
    return s;
}

const SectionSpec& rotationSpec() {
    static const SectionSpec s{.title = "rotation",
                               .description =
                                   "Rotation by an angle about an axis through the origin.",
                               .keys = {
                                   {.name = "axis",
                                    .type = KeyType::Vec3,
                                    .description = "Rotation axis (normalised).",
                                    .required = true},
                                   {.name = "angle",
                                    .type = KeyType::Number,
                                    .description = "Rotation angle.",
                                    .unit = "deg",
                                    .required = true},
                               }};
    return s;
}

const SectionSpec& boxSpec() {
    static const SectionSpec s{
        .title = "[[box]]",
        .description = "Solid cuboid obstacle, given by centre and half-sizes or by two corners.",
        .keys =
            {
                {.name = "name",
                 .type = KeyType::String,
                 .description = "Unique object name, without '.' (default box<k>)."},
                {.name = "center",
                 .type = KeyType::Vec3,
                 .description = "Centre.",
                 .unit = "m",
                 .with = "half_size"},
                {.name = "half_size",
                 .type = KeyType::Vec3,
                 .description = "Half of the edge lengths, along the box's own axes.",
                 .unit = "m",
                 .range = positive,
                 .with = "center"},
                {.name = "min",
                 .type = KeyType::Vec3,
                 .description = "Lower corner (before rotation).",
                 .unit = "m",
                 .with = "max"},
                {.name = "max",
                 .type = KeyType::Vec3,
                 .description = "Upper corner (before rotation).",
                 .unit = "m",
                 .with = "min"},
                {.name = "rotation",
                 .type = KeyType::Table,
                 .description = "Orientation of the box about its centre.",
                 .table = &rotationSpec()},
                {.name = "material",
                 .type = KeyType::String,
                 .description = "Material name.",
                 .required = true},
                groupKey("Group to put the box in (created on first use)."),
                groupsKey(),
            },
        .rules = {{.kind = KeyRule::ExactlyOne, .keys = "center|min"}}};
    return s;
}

const SectionSpec& facetBoxSpec() {
    static const SectionSpec s{.title = "facets box",
                               .description = "Box made of 12 triangles, normals pointing inwards.",
                               .keys = {
                                   {.name = "min",
                                    .type = KeyType::Vec3,
                                    .description = "Lower corner.",
                                    .unit = "m",
                                    .required = true},
                                   {.name = "max",
                                    .type = KeyType::Vec3,
                                    .description = "Upper corner.",
                                    .unit = "m",
                                    .required = true},
                                   {.name = "open",
                                    .type = KeyType::StringList,
                                    .description = "Sides left out.",
                                    .defaultValue = "[]",
                                    .choices = "x-|x+|y-|y+|z-|z+"},
                               }};
    return s;
}

const SectionSpec& rectangleSpec() {
    static const SectionSpec s{.title = "facets rectangle",
                               .description = "Rectangle of two triangles with normal u x v.",
                               .keys = {
                                   {.name = "center",
                                    .type = KeyType::Vec3,
                                    .description = "Centre.",
                                    .unit = "m",
                                    .required = true},
                                   {.name = "u",
                                    .type = KeyType::Vec3,
                                    .description = "First edge vector.",
                                    .unit = "m",
                                    .required = true},
                                   {.name = "v",
                                    .type = KeyType::Vec3,
                                    .description = "Second edge vector.",
                                    .unit = "m",
                                    .required = true},
                               }};
    return s;
}

const SectionSpec& facetsSpec() {
    static const SectionSpec s{
        .title = "[[facets]]",
        .description = "A triangulated surface (one rigid object): a box, a rectangle or a mesh "
                       "file, optionally scaled, rotated and translated (in that order).",
        .keys =
            {
                {.name = "name",
                 .type = KeyType::String,
                 .description = "Unique object name, without '.' (default facets<k>)."},
                {.name = "material",
                 .type = KeyType::String,
                 .description = "Material name.",
                 .required = true},
                {.name = "box",
                 .type = KeyType::Table,
                 .description = "Box of facets.",
                 .table = &facetBoxSpec()},
                {.name = "rectangle",
                 .type = KeyType::Table,
                 .description = "Rectangle of facets.",
                 .table = &rectangleSpec()},
                {.name = "file",
                 .type = KeyType::String,
                 .description = "Mesh file, .stl (ASCII or binary) or .off, relative to the deck's "
                                "directory."},
                {.name = "scale",
                 .type = KeyType::Number,
                 .description = "Scale factor.",
                 .defaultValue = "1.0",
                 .range = positive},
                {.name = "rotate",
                 .type = KeyType::Table,
                 .description = "Rotation about the origin.",
                 .table = &rotationSpec()},
                {.name = "translate",
                 .type = KeyType::Vec3,
                 .description = "Translation.",
                 .unit = "m",
                 .defaultValue = "[0.0, 0.0, 0.0]"},
                groupKey("Group to put the surface in (created on first use)."),
                groupsKey(),
            },
        .rules = {{.kind = KeyRule::ExactlyOne, .keys = "box|rectangle|file"}}};
    return s;
}

const SectionSpec& distributionSpec() {
    static const SectionSpec s{
        .title = "distribution",
        .description = "Particle size distribution: diameters and the cumulative mass fraction "
                       "of particles smaller than each.",
        .keys = {
            {.name = "diameters",
             .type = KeyType::NumberList,
             .description = "Increasing diameters.",
             .unit = "m",
             .range = positive,
             .required = true},
            {.name = "cumulative",
             .type = KeyType::NumberList,
             .description = "Increasing cumulative fractions in [0, 1], the last one 1.",
             .range = interval(Closed, 0, 1, Closed),
             .required = true},
        }};
    return s;
}

const SectionSpec& spheresSpec() {
    static const SectionSpec s{
        .title = "[[spheres]]",
        .description = "A set of spheres: an explicit list, a file, a random cloud or a lattice. "
                       "Spheres get body ids 0, 1, ... in deck order.",
        .discriminator = "kind",
        .keys =
            {
                {.name = "kind",
                 .type = KeyType::String,
                 .description = "How the spheres are made.",
                 .choices = "list|file|random|hexagonal|cubic",
                 .required = true},
                {.name = "material",
                 .type = KeyType::String,
                 .description = "Material name.",
                 .required = true},
                groupKey("Group to put the spheres in (created on first use)."),
                groupsKey(),
                {.name = "centers",
                 .type = KeyType::Vec3List,
                 .description = "Sphere centres.",
                 .unit = "m",
                 .required = true,
                 .only = "list"},
                {.name = "radius",
                 .type = KeyType::Number,
                 .description = "Radius (random: mean radius).",
                 .unit = "m",
                 .range = positive,
                 .only = "list|random|hexagonal|cubic"},
                {.name = "radii",
                 .type = KeyType::NumberList,
                 .description = "One radius per centre.",
                 .unit = "m",
                 .range = positive,
                 .only = "list"},
                {.name = "file",
                 .type = KeyType::String,
                 .description = "Text file of \"x y z r\" lines, relative to the deck's directory.",
                 .required = true,
                 .only = "file"},
                {.name = "region",
                 .type = KeyType::Region,
                 .description = "Region to fill; spheres lie entirely inside it.",
                 .required = true,
                 .only = "random|hexagonal|cubic"},
                {.name = "spread",
                 .type = KeyType::Number,
                 .description = "Relative spread of radii: uniform in radius*(1 +- spread).",
                 .defaultValue = "0.0",
                 .range = interval(Closed, 0, 1, Open),
                 .only = "random",
                 .with = "radius"},
                {.name = "distribution",
                 .type = KeyType::Table,
                 .description = "Size distribution, instead of radius and spread.",
                 .only = "random",
                 .table = &distributionSpec()},
                {.name = "count",
                 .type = KeyType::Integer,
                 .description = "Number of spheres.",
                 .range = countRange,
                 .only = "random"},
                {.name = "porosity",
                 .type = KeyType::Number,
                 .description = "Target porosity of the region, instead of count.",
                 .range = interval(Open, 0, 1, Open),
                 .only = "random"},
                {.name = "seed",
                 .type = KeyType::Integer,
                 .description = "Random seed.",
                 .defaultValue = "1",
                 .range = interval(Closed, 0, 9007199254740992.0, Closed),
                 .only = "random"},
                {.name = "gap",
                 .type = KeyType::Number,
                 .description = "Gap between neighbouring spheres.",
                 .unit = "m",
                 .defaultValue = "0.0",
                 .range = nonNegative,
                 .only = "hexagonal|cubic"},
                {.name = "origin",
                 .type = KeyType::Vec3,
                 .description = "A lattice site, which fixes the lattice's position.",
                 .unit = "m",
                 .defaultValue = "[0.0, 0.0, 0.0]",
                 .only = "hexagonal|cubic"},
                {.name = "velocity",
                 .type = KeyType::Vec3,
                 .description = "Initial velocity.",
                 .unit = "m/s",
                 .defaultValue = "[0.0, 0.0, 0.0]"},
                {.name = "fixed",
                 .type = KeyType::Bool,
                 .description = "Block every degree of freedom (the spheres do not move).",
                 .defaultValue = "false"},
                {.name = "blocked",
                 .type = KeyType::String,
                 .description = "Degrees of freedom to block, any of \"xyzXYZ\" (lower case: "
                                "translations, upper case: rotations).",
                 .defaultValue = "\"\""},
            },
        .rules = {
            {.kind = KeyRule::ExactlyOne, .keys = "radius|radii", .only = "list"},
            {.kind = KeyRule::ExactlyOne, .keys = "radius|distribution", .only = "random"},
            {.kind = KeyRule::ExactlyOne, .keys = "count|porosity", .only = "random"},
            {.kind = KeyRule::AtLeastOne, .keys = "radius", .only = "hexagonal|cubic"},
            {.kind = KeyRule::AtMostOne, .keys = "fixed|blocked"},
        }};
    return s;
}

const SectionSpec& groupSpec() {
    static const SectionSpec s{
        .title = "[[group]]",
        .description = "Adds to a group every sphere whose centre lies in a region (applied "
                       "after all spheres are made).",
        .keys = {
            {.name = "name",
             .type = KeyType::String,
             .description = "Group name, without '.'.",
             .required = true},
            {.name = "region",
             .type = KeyType::Region,
             .description = "Selecting region.",
             .required = true},
        }};
    return s;
}

const SectionSpec& motionSpec() {
    static const SectionSpec s{
        .title = "motion",
        .description = "Imposed motion of a rigid object or of a group of spheres (whose degrees "
                       "of freedom are then all blocked, until a stage stops the motion): a "
                       "translation, a rotation, a harmonic oscillation, or (objects only) a "
                       "servo that moves the object until the spheres push on it with a "
                       "target force.",
        .keys =
            {
                {.name = "object",
                 .type = KeyType::String,
                 .description = "Name of a wall, box or facets object."},
                {.name = "group",
                 .type = KeyType::String,
                 .description = "Name of a sphere group."},
                {.name = "velocity",
                 .type = KeyType::Vec3,
                 .description = "Translation velocity. With servo_force, a sliding velocity "
                                "across `direction` added to the servo's (a shear box's lid "
                                "under a constant normal load); it may not have a part along "
                                "`direction`.",
                 .unit = "m/s"},
                {.name = "angular_velocity",
                 .type = KeyType::Number,
                 .description = "Rotation rate about the axis.",
                 .unit = "rad/s"},
                {.name = "axis",
                 .type = KeyType::Vec3,
                 .description = "Rotation axis (normalised).",
                 .defaultValue = "[0.0, 0.0, 1.0]",
                 .with = "angular_velocity"},
                {.name = "center",
                 .type = KeyType::Vec3,
                 .description = "A point of the rotation axis (default: the object's centre "
                                "where it is when the stage begins, so that it turns in place; "
                                "required for groups). An object keeps its own centre, its "
                                "position, which goes round the axis when the axis does not "
                                "pass through it.",
                 .unit = "m",
                 .with = "angular_velocity"},
                {.name = "amplitude",
                 .type = KeyType::Vec3,
                 .description =
                     "Amplitude A of a harmonic oscillation. As in Yade, the velocity is "
                     "imposed: A w cos(w t + phase), w = 2 pi frequency, t the time since the "
                     "start of the stage that sets the motion (it goes on in the stages it "
                     "carries over to), taken at the middle of each step. From where the "
                     "motion starts, x0, the object or the spheres thus move as "
                     "x0 + A (sin(w t + phase) - sin(phase)), to within a relative "
                     "(w dt)^2/24: they oscillate about x0 - A sin(phase).",
                 .unit = "m",
                 .with = "frequency"},
                {.name = "frequency",
                 .type = KeyType::Number,
                 .description = "Oscillation frequency.",
                 .unit = "Hz",
                 .range = positive,
                 .with = "amplitude"},
                {.name = "phase",
                 .type = KeyType::Number,
                 .description =
                     "Oscillation phase (90: the oscillation starts at x0 = its centre + A).",
                 .unit = "deg",
                 .defaultValue = "0.0",
                 .with = "amplitude"},
                {.name = "servo_force",
                 .type = KeyType::Number,
                 .description =
                     "Target F* of a servo-controlled object (Yade's stress controller for "
                     "walls): the object translates along `direction` at "
                     "gain (F* - F) (plus the integral term of integral_time), at most "
                     "max_speed either way, F the push of the spheres "
                     "on it against `direction` in the step before. It presses on until the "
                     "spheres push back with F*, and backs off when they push harder. For a "
                     "stress s on a plate of area A, F* = s A.",
                 .unit = "N",
                 .range = positive,
                 .with = "direction|max_speed"},
                {.name = "direction",
                 .type = KeyType::Vec3,
                 .description = "The way the servo moves the object to press harder on the "
                                "spheres (normalised).",
                 .with = "servo_force"},
                {.name = "max_speed",
                 .type = KeyType::Number,
                 .description = "The servo's largest speed, forward or back: how fast the object "
                                "approaches while nothing touches it.",
                 .unit = "m/s",
                 .range = positive,
                 .with = "servo_force"},
                {.name = "gain",
                 .type = KeyType::Number,
                 .description =
                     "The servo's speed per newton of force error (default max_speed / "
                     "servo_force: full speed with nothing pushing, slowing in proportion "
                     "to the force still missing). Near the target the force error decays "
                     "with the time constant 1 / (gain K), K the stiffness of what the object "
                     "presses on; a larger gain than the default risks overshoot. While the "
                     "spheres give way at a speed v, the force settles about v / gain short "
                     "of the target, unless integral_time is given.",
                 .unit = "m/(s N)",
                 .range = positive,
                 .with = "servo_force"},
                {.name = "integral_time",
                 .type = KeyType::Number,
                 .description =
                     "Adds an integral term (a PI controller, as Yade's ServoPIDController's "
                     "kI): the speed is gain (e + (1 / integral_time) times the integral of e "
                     "over time), e = F* - F, at most max_speed either way. It removes the "
                     "force that a proportional servo leaves missing while the spheres give "
                     "way; with about 4 / (gain K) the force follows them without oscillating, "
                     "shorter times oscillate. The term grows only as far as the speed stays "
                     "within max_speed, so an approach at full speed does not wind it up, but "
                     "what it gathers while the error decays after the approach must be given "
                     "back: the push overshoots F*, by about 20% with 4 / (gain K) and 6% with "
                     "20 / (gain K) for a Hertz sphere. Add the term in a stage where the object "
                     "already presses. Default: none (proportional).",
                 .unit = "s",
                 .range = positive,
                 .with = "servo_force"},
            },
        .rules = {
            {.kind = KeyRule::ExactlyOne, .keys = "object|group"},
            // One kind of motion, but a servo may slide its object sideways (a shear box under a
            // constant normal load).
            {.kind = KeyRule::AtLeastOne,
             .keys = "velocity|angular_velocity|amplitude|servo_force",
             .message = "the motion has no kind: give velocity, angular_velocity, amplitude or "
                        "servo_force"},
            {.kind = KeyRule::AtMostOne, .keys = "velocity|angular_velocity|amplitude"},
            {.kind = KeyRule::AtMostOne, .keys = "angular_velocity|amplitude|servo_force"},
        }};
    return s;
}

const SectionSpec& forceSpec() {
    static const SectionSpec s{.title = "force",
                               .description = "Constant force added to every sphere of a group.",
                               .keys = {
                                   {.name = "group",
                                    .type = KeyType::String,
                                    .description = "Sphere group.",
                                    .required = true},
                                   {.name = "force",
                                    .type = KeyType::Vec3,
                                    .description = "Force on each sphere.",
                                    .unit = "N",
                                    .required = true},
                               }};
    return s;
}

const SectionSpec& frictionSpec() {
    static const SectionSpec s{
        .title = "friction",
        .description = "New friction coefficients of a material from this stage on: the pairs "
                       "it takes part in mix them again as [[material]] and [[pair]] say "
                       "([[pair]] values stay). A later stage that turns rolling or twisting "
                       "resistance on divides the default step from the start, as if the "
                       "material had it (see CONTACT LAWS).",
        .keys =
            {
                {.name = "material",
                 .type = KeyType::String,
                 .description = "Material name.",
                 .required = true},
                frictionAngleKey,
                rollingFrictionKey,
                twistingFrictionKey,
            },
        .rules = {
            {.kind = KeyRule::AtLeastOne,
             .keys = "friction_angle|rolling_friction|twisting_friction",
             .message = "the friction change changes nothing: give friction_angle, "
                        "rolling_friction or twisting_friction"},
        }};
    return s;
}

const SectionSpec& stressControlSpec() {
    static const SectionSpec s{
        .title = "stress_control",
        .description =
            "A servo on the normal stresses of the [periodic] cell (Yade's PeriTriaxController): "
            "along each axis given a target stress s*, the cell stretches at "
            "L_aa = gain (s* - s_aa) (plus the integral term of integral_time), at most "
            "max_strain_rate either way, s the cell's stress "
            "(the measure stress_aa, compression negative) at the start of the step. The other "
            "entries of L are the stage's velocity_gradient (whose controlled diagonal entries "
            "must then be 0) or the one it carries over. It carries over to the next stages until "
            "one sets stress_control or velocity_gradient. Computing the stress each step costs "
            "a pass over the listed pairs.",
        .keys =
            {
                {.name = "xx",
                 .type = KeyType::Number,
                 .description = "Target stress along x (negative: compression).",
                 .unit = "Pa"},
                {.name = "yy",
                 .type = KeyType::Number,
                 .description = "Target stress along y.",
                 .unit = "Pa"},
                {.name = "zz",
                 .type = KeyType::Number,
                 .description = "Target stress along z.",
                 .unit = "Pa"},
                {.name = "max_strain_rate",
                 .type = KeyType::Number,
                 .description = "Largest |L_aa| of a controlled axis: how fast the cell shrinks "
                                "while nothing resists.",
                 .unit = "1/s",
                 .range = positive,
                 .required = true},
                {.name = "gain",
                 .type = KeyType::Number,
                 .description =
                     "Strain rate per pascal of stress error (default max_strain_rate / the "
                     "largest |target|: full rate with no stress, slowing in proportion to the "
                     "stress still missing). Near the target the error decays with the time "
                     "constant 1 / (gain M), M the packing's stiffness modulus. While the "
                     "packing is strained otherwise (a triaxial test), the stress settles "
                     "about L_aa / gain off its target, unless integral_time is given: "
                     "choose max_strain_rate well above the rates the stage imposes.",
                 .unit = "1/(s Pa)",
                 .range = positive},
                {.name = "integral_time",
                 .type = KeyType::Number,
                 .description =
                     "Adds an integral term (a PI controller): L_aa = gain (e + (1 / "
                     "integral_time) times the integral of e over time), e = s* - s_aa, at "
                     "most max_strain_rate either way. It removes the lag of a proportional "
                     "servo while the packing is strained otherwise; with about 4 / (gain M) "
                     "the stress follows without oscillating, shorter times oscillate. The "
                     "term grows only as far as |L_aa| stays within max_strain_rate, but after "
                     "an approach at that rate the stress overshoots its target as a servo "
                     "object's force does (integral_time of motion): add the term in a stage "
                     "that starts at the target. Default: none (proportional).",
                 .unit = "s",
                 .range = positive},
            },
        .rules = {
            {.kind = KeyRule::AtLeastOne,
             .keys = "xx|yy|zz",
             .message = "stress_control controls no axis: give a target stress xx, yy or zz"},
        }};
    return s;
}

const SectionSpec& stopSpec() {
    static const SectionSpec s{
        .title = "stop",
        .description = "When the stage ends: the first criterion met ends it. Steps and times "
                       "count from the start of the stage.",
        .keys =
            {
                {.name = "steps",
                 .type = KeyType::Integer,
                 .description = "Number of steps.",
                 .range = atLeast(1)},
                {.name = "time",
                 .type = KeyType::Number,
                 .description =
                     "Simulated time. The stage ends at the step nearest to it, after "
                     "round(time/dt) steps, which may be up to half a step before it; the run's "
                     "stop_reason then says \"time ~ <time>\".",
                 .unit = "s",
                 .range = positive},
                {.name = "wall_time",
                 .type = KeyType::Number,
                 .description = "Elapsed real time.",
                 .unit = "s",
                 .range = positive},
                {.name = "unbalanced_force",
                 .type = KeyType::Number,
                 .description = "Stop when the unbalanced force ratio falls below this value.",
                 .range = positive},
                {.name = "kinetic_energy",
                 .type = KeyType::Number,
                 .description = "Stop when the kinetic energy falls below this value.",
                 .unit = "J",
                 .range = positive},
                {.name = "measure",
                 .type = KeyType::String,
                 .description =
                     "A measured quantity (e.g. \"object:plate.force.z\"), compared with "
                     "above or below."},
                {.name = "above",
                 .type = KeyType::Number,
                 .description = "Stop when the measure exceeds this value.",
                 .with = "measure"},
                {.name = "below",
                 .type = KeyType::Number,
                 .description = "Stop when the measure falls below this value.",
                 .with = "measure"},
                {.name = "check_every",
                 .type = KeyType::Integer,
                 .description = "Evaluate the measured criteria (unbalanced_force, "
                                "kinetic_energy, measure) every this many steps; steps, time "
                                "and wall_time are checked at every step.",
                 .defaultValue = "1",
                 .range = atLeast(1)},
                {.name = "min_steps",
                 .type = KeyType::Integer,
                 .description = "Do not evaluate the measured criteria before this many steps "
                                "of the stage (steps, time and wall_time are not held back).",
                 .defaultValue = "0",
                 .range = atLeast(0)},
                {.name = "servo_tolerance",
                 .type = KeyType::Number,
                 .description =
                     "Evaluate the measured criteria only while every servo is within this "
                     "fraction of its target: the push on each servo-controlled object within "
                     "servo_tolerance x servo_force, and the stress along each axis of "
                     "stress_control within servo_tolerance x the largest |target| (Yade's "
                     "triaxial tests wait for "
                     "the stress and for rest together): "
                     "servo_tolerance = 0.01 with unbalanced_force = 0.01 ends the stage "
                     "when both hold. The criteria's labels say so. Steps, time and wall_time "
                     "are not held back.",
                 .range = positive},
            },
        .rules = {
            {.kind = KeyRule::AtLeastOne,
             .keys = "steps|time|wall_time|unbalanced_force|kinetic_energy|measure",
             .message = "the stage has no stop criterion (a run must end): give at least one "
                        "of steps, time, wall_time, unbalanced_force, kinetic_energy, measure"},
            {.kind = KeyRule::ExactlyOne, .keys = "above|below", .when = "measure"},
        }};
    return s;
}

const SectionSpec& stageSpec() {
    static const SectionSpec s{
        .title = "[[stage]]",
        .description = "A stage of the run. Stages run in deck order; what a stage does not set "
                       "(gravity, damping, motions, velocity gradient) carries over from the "
                       "previous one.",
        .keys =
            {
                {.name = "name",
                 .type = KeyType::String,
                 .description = "Stage name (default stage<k>)."},
                {.name = "gravity",
                 .type = KeyType::Vec3,
                 .description = "Gravity acceleration.",
                 .unit = "m/s^2"},
                {.name = "damping",
                 .type = KeyType::Number,
                 .description = "Cundall's numerical damping coefficient.",
                 .range = interval(Closed, 0, 1, Open)},
                {.name = "velocity_gradient",
                 .type = KeyType::Mat3,
                 .description =
                     "Velocity gradient L of the [periodic] cell, three rows: row r, column c is "
                     "dv_r/dx_c (simple shear at rate g: [[0, g, 0], [0, 0, 0], [0, 0, 0]]). The "
                     "cell deforms as dh/dt = L h and the spheres follow the mean flow v = L (x - "
                     "min), zero at the cell's corner. "
                     "Only with [periodic]; before the first stage that sets it, L = 0. The "
                     "norm of L dt must stay below 0.1 (a tenth of the cell per step).",
                 .unit = "1/s"},
                {.name = "motion",
                 .type = KeyType::TableList,
                 .description = "Imposed motions; they replace the previous stage's, which "
                                "stop as with stop_motion.",
                 .table = &motionSpec()},
                {.name = "stop_motion",
                 .type = KeyType::Bool,
                 .description =
                     "Stop every imposed motion at the start of this stage: moved walls, boxes "
                     "and meshes stand still; the spheres of moved groups are released at rest "
                     "(zero velocity and angular velocity), free but for the degrees of freedom "
                     "their [[spheres]] entry blocks (fixed, blocked).",
                 .defaultValue = "false"},
                {.name = "force",
                 .type = KeyType::TableList,
                 .description = "Constant forces on groups.",
                 .table = &forceSpec()},
                {.name = "friction",
                 .type = KeyType::TableList,
                 .description = "Friction angle changes.",
                 .table = &frictionSpec()},
                {.name = "stress_control",
                 .type = KeyType::Table,
                 .description = "Servo on the periodic cell's normal stresses.",
                 .table = &stressControlSpec()},
                {.name = "stop",
                 .type = KeyType::Table,
                 .description = "Stop criteria (required: a run must end).",
                 .table = &stopSpec()},
            },
        .rules = {
            {.kind = KeyRule::AtMostOne, .keys = "motion|stop_motion"},
            {.kind = KeyRule::AtLeastOne,
             .keys = "stop",
             .message = "the stage has no stop criterion (a run must end): add a stop table, "
                        "e.g. stop = { time = 1.0 }"},
        }};
    return s;
}

const SectionSpec& historySpec() {
    static const SectionSpec s{
        .title = "history",
        .description = "Table of measured quantities written to history.tsv; step and time are "
                       "always the first columns.",
        .keys = {
            {.name = "every",
             .type = KeyType::Integer,
             .description = "Steps between rows.",
             .defaultValue = "100",
             .range = atLeast(1)},
            {.name = "columns",
             .type = KeyType::StringList,
             .description = "Measure names, e.g. \"kinetic_energy\", \"object:plate.force.z\", "
                            "\"body:0.position.z\", \"group:top.velocity\".",
             .defaultValue = "[]"},
        }};
    return s;
}

const SectionSpec& vtkSpec() {
    static const SectionSpec s{
        .title = "vtk",
        .description = "VTK XML files for ParaView in <run>/vtk/, one series per kind with a .pvd "
                       "collection giving each file's simulated time.",
        .keys = {
            {.name = "every",
             .type = KeyType::Integer,
             .description = "Steps between files (the first and last steps are always written).",
             .defaultValue = "1000",
             .range = atLeast(1)},
            {.name = "kinds",
             .type = KeyType::StringList,
             .description = "Which series: \"all\", or any of \"spheres\" (.vtu), \"contacts\" "
                            "(.vtp, force chains), \"obstacles\" (.vtu: walls, facets, boxes "
                            "with their forces; \"walls\", \"mesh\" and \"boxes\" name it too).",
             .defaultValue = "[\"spheres\", \"contacts\", \"obstacles\"]"},
            {.name = "fields",
             .type = KeyType::StringList,
             .description = "Sphere fields: \"all\" or any of radius, velocity, angular_velocity, "
                            "displacement, force, torque, contacts, material, groups, id, "
                            "orientation. The order of the spheres in the files can change "
                            "between outputs (the engine keeps them sorted in space); id names "
                            "a sphere. Orientations, and the start positions that displacement "
                            "(here or in a measure) needs, are kept only when read, which saves "
                            "memory and time. Yade's names are accepted too: radii, linVelVec, "
                            "angVelVec, forceVec, torqueVec, coordNumber, materialId, mask.",
             .defaultValue = "[\"all\"]"},
        }};
    return s;
}

const SectionSpec& plotSpec() {
    static const SectionSpec s{
        .title = "plot",
        .description = "A gnuplot figure of history columns: plots/<name>.gp, rendered to "
                       "plots/<name>.png at the end of the run and by dem plot.",
        .keys = {
            {.name = "name",
             .type = KeyType::String,
             .description = "File name stem of the script and image; unique among the plots.",
             .required = true},
            {.name = "title", .type = KeyType::String, .description = "Figure title."},
            {.name = "x",
             .type = KeyType::String,
             .description = "History column on the x axis.",
             .defaultValue = "\"time\""},
            {.name = "y",
             .type = KeyType::StringList,
             .description = "History columns on the left y axis.",
             .required = true},
            {.name = "y2",
             .type = KeyType::StringList,
             .description = "History columns on the right y axis.",
             .defaultValue = "[]"},
            {.name = "log_x",
             .type = KeyType::Bool,
             .description = "Logarithmic x axis.",
             .defaultValue = "false"},
            {.name = "log_y",
             .type = KeyType::Bool,
             .description = "Logarithmic left y axis.",
             .defaultValue = "false"},
            {.name = "log_y2",
             .type = KeyType::Bool,
             .description = "Logarithmic right y axis.",
             .defaultValue = "false"},
        }};
    return s;
}

const SectionSpec& checkpointSpec() {
    static const SectionSpec s{
        .title = "checkpoint",
        .description = "Compressed checkpoints in <run>/checkpoints/, named by step "
                       "(step-000120000.dem.gz), written atomically; dem run --resume and "
                       "--restart continue from them bit for bit. Without this table the "
                       "defaults below apply; SIGINT and SIGTERM always write one.",
        .keys = {
            {.name = "every",
             .type = KeyType::Integer,
             .description = "Steps between checkpoints (absent: not by step count).",
             .range = atLeast(1)},
            {.name = "every_time",
             .type = KeyType::Number,
             .description = "Simulated time between checkpoints (absent: not by time).",
             .unit = "s",
             .range = greaterThan(0)},
            {.name = "every_wall_minutes",
             .type = KeyType::Number,
             .description = "Wall-clock minutes between checkpoints; 0 turns this off.",
             .unit = "min",
             .defaultValue = "30",
             .range = atLeast(0)},
            {.name = "at_stage_end",
             .type = KeyType::Bool,
             .description = "Write one when a stage ends (named step-N.stageK.dem.gz).",
             .defaultValue = "false"},
            {.name = "at_end",
             .type = KeyType::Bool,
             .description = "Write one at the end of the run (to branch studies from it).",
             .defaultValue = "true"},
            {.name = "keep",
             .type = KeyType::Integer,
             .description = "Keep the newest k checkpoints and delete older ones; 0 keeps all.",
             .defaultValue = "3",
             .range = atLeast(0)},
            {.name = "keep_stage_ends",
             .type = KeyType::Bool,
             .description = "Never delete stage-end checkpoints when rotating.",
             .defaultValue = "true"},
            {.name = "compression",
             .type = KeyType::String,
             .description = "File compression: gzip (.dem.gz), bzip2 (.dem.bz2), xz (.dem.xz), "
                            "zstd (.dem.zst) or none (.dem).",
             .defaultValue = "\"gzip\"",
             .choices = "gzip|bzip2|xz|zstd|none"},
            {.name = "level",
             .type = KeyType::Integer,
             .description = "Compression level, 1 (fast) to 9 (small).",
             .defaultValue = "1",
             .range = interval(Bound::Closed, 1, 9, Bound::Closed)},
        }};
    return s;
}

const SectionSpec& outputSpec() {
    static const SectionSpec s{
        .title = "[output]",
        .description = "What the run records.",
        .keys = {
            {.name = "history",
             .type = KeyType::Table,
             .description = "History table.",
             .table = &historySpec()},
            {.name = "vtk",
             .type = KeyType::Table,
             .description = "VTK output for ParaView.",
             .table = &vtkSpec()},
            {.name = "checkpoint",
             .type = KeyType::Table,
             .description = "Checkpoints for restarts.",
             .table = &checkpointSpec()},
            {.name = "plot",
             .type = KeyType::TableList,
             .description = "gnuplot figures of the history ([[output.plot]]).",
             .table = &plotSpec()},
            {.name = "progress_every",
             .type = KeyType::Integer,
             .description = "Steps between progress reports: a line every this many steps, "
                            "also on a terminal, instead of one every few seconds "
                            "(--progress never and --quiet still silence them).",
             .range = atLeast(1)},
        }};
    return s;
}

const SectionSpec& regionBoxSpec() {
    static const SectionSpec s{.title = "region box",
                               .description = "Axis-aligned box.",
                               .keys = {
                                   {.name = "min",
                                    .type = KeyType::Vec3,
                                    .description = "Lower corner.",
                                    .unit = "m",
                                    .required = true},
                                   {.name = "max",
                                    .type = KeyType::Vec3,
                                    .description = "Upper corner.",
                                    .unit = "m",
                                    .required = true},
                               }};
    return s;
}

const SectionSpec& regionSphereSpec() {
    static const SectionSpec s{.title = "region sphere",
                               .description = "Ball.",
                               .keys = {
                                   {.name = "center",
                                    .type = KeyType::Vec3,
                                    .description = "Centre.",
                                    .unit = "m",
                                    .required = true},
                                   {.name = "radius",
                                    .type = KeyType::Number,
                                    .description = "Radius.",
                                    .unit = "m",
                                    .range = positive,
                                    .required = true},
                               }};
    return s;
}

const SectionSpec& regionCylinderSpec() {
    static const SectionSpec s{.title = "region cylinder",
                               .description = "Capped cylinder with axis from a to b.",
                               .keys = {
                                   {.name = "a",
                                    .type = KeyType::Vec3,
                                    .description = "Centre of one end.",
                                    .unit = "m",
                                    .required = true},
                                   {.name = "b",
                                    .type = KeyType::Vec3,
                                    .description = "Centre of the other end.",
                                    .unit = "m",
                                    .required = true},
                                   {.name = "radius",
                                    .type = KeyType::Number,
                                    .description = "Radius.",
                                    .unit = "m",
                                    .range = positive,
                                    .required = true},
                               }};
    return s;
}

} // namespace

const SectionSpec& regionSpec() {
    static const SectionSpec s{
        .title = "region",
        .description = "A region of space: exactly one of the keys below. Combinations nest.",
        .keys =
            {
                {.name = "box",
                 .type = KeyType::Table,
                 .description = "Axis-aligned box.",
                 .table = &regionBoxSpec()},
                {.name = "sphere",
                 .type = KeyType::Table,
                 .description = "Ball.",
                 .table = &regionSphereSpec()},
                {.name = "cylinder",
                 .type = KeyType::Table,
                 .description = "Capped cylinder.",
                 .table = &regionCylinderSpec()},
                {.name = "union",
                 .type = KeyType::RegionList,
                 .description = "Points in any of the regions."},
                {.name = "intersection",
                 .type = KeyType::RegionList,
                 .description = "Points in all of the regions."},
                {.name = "difference",
                 .type = KeyType::RegionList,
                 .description = "Points in the first region and in none of the others."},
            },
        .rules = {{.kind = KeyRule::ExactlyOne,
                   .keys = "box|sphere|cylinder|union|intersection|difference"}}};
    return s;
}

const SectionSpec& deckSpec() {
    static const SectionSpec s{
        .title = "deck",
        .description = "A dem simulation deck.",
        .keys =
            {
                {.name = "simulation",
                 .type = KeyType::Table,
                 .description = "Global settings.",
                 .table = &simulationSpec()},
                {.name = "params",
                 .type = KeyType::Params,
                 .description = "Named numbers or expressions over earlier parameters; --set "
                                "NAME=VALUE overrides one."},
                {.name = "periodic",
                 .type = KeyType::Table,
                 .description = "Periodic cell, instead of a domain box and walls.",
                 .table = &periodicSpec()},
                {.name = "material",
                 .type = KeyType::TableList,
                 .description = "Materials.",
                 .table = &materialSpec()},
                {.name = "pair",
                 .type = KeyType::TableList,
                 .description = "Material-pair overrides.",
                 .table = &pairSpec()},
                {.name = "wall",
                 .type = KeyType::TableList,
                 .description = "Infinite walls.",
                 .table = &wallSpec()},
                {.name = "box",
                 .type = KeyType::TableList,
                 .description = "Box obstacles.",
                 .table = &boxSpec()},
                {.name = "facets",
                 .type = KeyType::TableList,
                 .description = "Triangle surfaces.",
                 .table = &facetsSpec()},
                {.name = "spheres",
                 .type = KeyType::TableList,
                 .description = "Sphere sets.",
                 .table = &spheresSpec()},
                {.name = "group",
                 .type = KeyType::TableList,
                 .description = "Sphere groups selected by region.",
                 .table = &groupSpec()},
                {.name = "stage",
                 .type = KeyType::TableList,
                 .description = "Stages, run in order; at least one.",
                 .table = &stageSpec()},
                {.name = "output",
                 .type = KeyType::Table,
                 .description = "Recorded output.",
                 .table = &outputSpec()},
            },
        .rules = {{.kind = KeyRule::AtLeastOne,
                   .keys = "stage",
                   .message = "the deck has no [[stage]]: a run needs at least one stage with a "
                              "stop criterion"}}};
    return s;
}

} // namespace dem
