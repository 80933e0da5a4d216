#pragma once
// Internal to the deck loader: the state of one load, shared by the section readers, and the
// readers themselves (one file per section).
#include "deck/Deck.hpp"
#include "deck/TableReader.hpp"
#include "geometry/Region.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dem {

struct DeckBuild {
    DeckBuild(DeckContext& c, Simulation& s, OutputSpec& o, std::map<std::string, double>& p)
        : ctx(c), sim(s), output(o), params(p) {}

    DeckContext& ctx;
    Simulation& sim;
    OutputSpec& output;
    std::map<std::string, double>& params;
    std::vector<std::string> paramOrder; // as written in the deck

    // [simulation] values that are only used once the spheres exist.
    std::optional<double> dt;
    double dtFactor = 0.3;

    // [periodic]: whether the deck has the table (even a wrong one), and where it and its size
    // are, for the checks made once the obstacles, spheres and stages are known.
    bool periodic = false;
    toml::source_region periodicWhere, periodicSizeWhere;

    // Where named things were defined, for "duplicate" and "law mismatch" messages.
    std::vector<toml::source_region> materialWhere; // the material's law, or its table
    std::vector<toml::source_region> objectWhere;
};

// Sections, in the order the loader reads them.
void readParams(TableReader& root, const ParamOverrides& overrides, DeckBuild& b);
void readSimulation(TableReader& root, DeckBuild& b);
void readPeriodic(TableReader& root, DeckBuild& b);
void readMaterials(TableReader& root, DeckBuild& b);
void readObstacles(TableReader& root, DeckBuild& b);
void readSpheres(TableReader& root, DeckBuild& b);
void readGroups(TableReader& root, DeckBuild& b);
// What a periodic deck may not have (a domain, obstacles), and the cell's size against the spheres.
void checkPeriodic(TableReader& root, DeckBuild& b);
void readStages(TableReader& root, DeckBuild& b);
void readOutput(TableReader& root, DeckBuild& b);
void chooseTimeStep(TableReader& root, DeckBuild& b);
// After the time step: no stage's velocity_gradient may deform the periodic cell too much in one
// step (DeckSimulation.cpp).
void checkCellStrainPerStep(TableReader& root, DeckBuild& b);

// Cross references, reported at the key naming them. -1 when absent or undefined.
int readMaterialRef(TableReader& t, std::string_view key, DeckBuild& b);
int readGroupRef(TableReader& t, std::string_view key, DeckBuild& b);
// The groups named by the optional `group` and `groups` keys, created on first use.
uint32_t readGroupMask(TableReader& t, DeckBuild& b);
// Index of a group, created when new; -1 (reported at `key`) when there are too many.
int addGroup(TableReader& t, std::string_view key, const std::string& name, DeckBuild& b);

// A region under `key` (Region key), or nullopt when absent or wrong (reported).
std::optional<Region> readRegion(TableReader& t, std::string_view key);

// A vector normalised to unit length; reports an error at `key` when it is zero.
std::optional<Vec3> readDirection(TableReader& t, std::string_view key);
// A [deck directory]-relative path made absolute, so that resolved.toml works from anywhere.
std::string resolvePath(TableReader& t, const std::string& file);
// Why `path`, which is not a regular file, cannot serve as an input file: "not found", "is a
// directory" or "is not a regular file".
std::string notAFile(const std::string& path);

} // namespace dem
