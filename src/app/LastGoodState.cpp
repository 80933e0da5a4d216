#include "app/LastGoodState.hpp"

#include "core/Workspace.hpp"
#include "io/Checkpoint.hpp"

#include <fmt/format.h>

namespace dem {

namespace {

// The newest state of the run at or before `target` that replays under the run's stages.
bool startingState(const Deck& deck, const ReplaySources& src, uint64_t target, Simulation& sim,
                   std::string& from, std::string& error) {
    std::vector<CheckpointEntry> entries;
    CheckpointMeta meta;
    if (listCheckpoints(src.checkpointDir, entries, error))
        for (const CheckpointEntry& e : entries)
            if (e.headerOk && e.step >= src.restartStep && e.step <= target &&
                readCheckpoint(e.path, sim, meta, error)) {
                from = e.path;
                return true;
            }
    if (!src.restartFile.empty()) {
        from = src.restartFile;
        return readCheckpoint(src.restartFile, sim, meta, error);
    }
    // A fresh run: the deck's initial state, set up as the runner does before its first step.
    std::vector<DeckError> errors;
    ParamOverrides params;
    for (const auto& [name, value] : deck.params)
        params.emplace_back(name, fmt::format("{}", value)); // shortest exact form
    Deck fresh;
    if (!loadDeckText(deck.path, deck.text, params, fresh, errors)) {
        error = errors.empty() ? "the deck no longer loads" : formatError(errors.front());
        return false;
    }
    sim = std::move(fresh.sim);
    beginStage(sim);
    Workspace ws;
    if (!rebuildNeighbours(sim, ws)) {
        error = ws.error;
        return false;
    }
    from = "the initial state";
    return true;
}

} // namespace

bool replayToStep(const Deck& deck, const ReplaySources& src, uint64_t target, Simulation& sim,
                  std::string& from, std::string& error) {
    if (!startingState(deck, src, target, sim, from, error))
        return false;
    if (src.stages)
        sim.stages = *src.stages;
    const auto& ends = src.stageEnds;
    // A checkpoint from the end of a run that was then given more stages.
    while (!sim.stageStarted && sim.stage < ends.size() && ends[sim.stage] <= sim.step &&
           sim.stage + 1 < sim.stages.size())
        ++sim.stage;
    Workspace ws;
    while (sim.step < target) {
        if (!sim.stageStarted)
            beginStage(sim);
        if (!advance(sim, ws)) {
            error = "the replay failed: " + ws.error;
            return false;
        }
        if (sim.stage < ends.size() && sim.step == ends[sim.stage]) {
            sim.stageStarted = false;
            if (sim.stage + 1 < sim.stages.size())
                ++sim.stage;
        }
    }
    return true;
}

} // namespace dem
