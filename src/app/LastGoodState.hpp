#pragma once
// The state before a failed step. A step that produces a non-finite value has already overwritten
// part of the state, so the last good state is recomputed: from the newest earlier state of this
// run (one of its checkpoints, the checkpoint it was restarted from, or the deck's initial state)
// the steps are replayed with the recorded stage ends. Runs are deterministic, so the replay ends
// in the same bits the run had before the failing step.
#include "deck/Deck.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace dem {

struct ReplaySources {
    std::string checkpointDir; // this run's checkpoints (none of them beyond the failure)
    std::string restartFile;   // the checkpoint the run continued from; empty for a fresh run
    uint64_t restartStep = 0;  // earlier checkpoints predate a possible change of parameters
    const std::vector<Stage>* stages = nullptr; // the run's stages (changed on restart or not)
    std::vector<uint64_t> stageEnds;            // end step of each finished stage, in order
};

// Rebuilds the state after step `target` into `sim`; `from` names where the replay started.
bool replayToStep(const Deck& deck, const ReplaySources& sources, uint64_t target, Simulation& sim,
                  std::string& from, std::string& error);

} // namespace dem
