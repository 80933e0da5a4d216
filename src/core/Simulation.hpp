#pragma once
// A simulation is a plain value: the model, its state and its engines. It can be copied,
// saved, loaded and compared; nothing about it lives in global variables.
#include "core/Contacts.hpp"
#include "core/Material.hpp"
#include "core/Obstacles.hpp"
#include "core/Particles.hpp"
#include "core/PeriodicCell.hpp"
#include "core/ReferencePositions.hpp"
#include "core/Stage.hpp"

#include <string>
#include <vector>

namespace dem {

// What happens to a sphere that leaves the domain box.
enum class OutOfDomain : uint8_t { Error, Remove };

struct NeighbourSettings {
    double skin = 0;           // Verlet skin [m]; 0 = 0.5 x smallest radius at start
    ReferencePositions refPos; // positions at the last rebuild, set by it at its end
    double cellSize = 0;
    uint64_t rebuilds = 0;
    bool needRebuild = true;
};

// Energies accumulated over the run (Yade's energy tracker, physics.md §12.8).
struct Energies {
    double dampingDissipated = 0; // Cundall's numerical damping
    double contactDissipated = 0; // viscous damping and friction in contacts
    double gravityWork = 0;       // work done by gravity (positive when it accelerates)
};

struct Simulation {
    // --- model -----------------------------------------------------------------------------
    std::vector<Material> materials;
    std::vector<PairOverride> overrides;
    PairTable pairTable;
    std::vector<std::string> groupNames; // group g has bit (1 << g)
    Particles particles;
    Obstacles obstacles;
    bool hasDomain = false;
    Vec3 domainMin = Vec3::Zero(), domainMax = Vec3::Zero();
    OutOfDomain outOfDomain = OutOfDomain::Error;
    PeriodicCell cell; // periodic boundaries (no domain box, no obstacles)
    bool trackEnergy = true;

    // --- contacts and neighbour search -----------------------------------------------------
    SpherePairs pairs;
    ObstacleContacts obstacleContacts;
    NeighbourSettings neighbours;

    // --- time ------------------------------------------------------------------------------
    double dt = 0;
    double time = 0;
    uint64_t step = 0;

    // --- engines of the current stage ------------------------------------------------------
    Vec3 gravity = Vec3::Zero();
    double damping = 0;
    std::vector<Motion> motions;
    std::vector<ConstantForce> forces;
    StressControl stressControl; // of the periodic cell (axes 0: none)

    // --- stages ----------------------------------------------------------------------------
    std::vector<Stage> stages;
    size_t stage = 0; // index of the running stage
    uint64_t stageStartStep = 0;
    double stageStartTime = 0;
    bool stageStarted = false; // its engines have been applied

    Energies energy;

    int groupIndex(const std::string& name) const;
};

double pWaveTimeStep(const Simulation& sim); // defined in TimeStep.cpp, with the other estimates

// What a servo controls: the push of the spheres on its object against its direction, from the
// object's force of the step before.
inline double servoPush(const Simulation& sim, const Motion& m) {
    return 0.0 - m.direction.dot(sim.obstacles.objects[size_t(m.object)].force); // +0, not -0
}

} // namespace dem
