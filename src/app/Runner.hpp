#pragma once
// `dem run`: runs a loaded deck into its run directory and writes the summary.
#include "deck/Deck.hpp"
#include "io/Checkpoint.hpp"

#include <string>

namespace dem {

struct RunOptions {
    std::string out;               // run directory; empty = runs/<deck stem>
    int threads = 0;               // 0 = OpenMP's default (OMP_NUM_THREADS or all cores)
    std::string progress = "auto"; // auto | always | never
    bool quiet = false;
    bool json = false;  // print summary.json on stdout at the end
    bool force = false; // overwrite a finished run
    bool resume = false;
};

// A checkpoint to continue from (dem run --restart FILE, or found by --resume).
struct RestartPoint {
    std::string file;
    Simulation sim;
    CheckpointMeta meta;
    std::vector<std::string> changes;       // "NAME=VALUE" overrides applied on restart
    std::vector<std::string> withoutEffect; // those of `changes` that cannot take effect
};

// Runs `deck` (from its initial state, or from `restart`, whose simulation replaces deck.sim)
// into the run directory. Returns the process exit code (ExitCodes.hpp).
int runDeck(Deck& deck, const RunOptions& options, RestartPoint* restart = nullptr);

// Whether the run state a checkpoint carries (CheckpointMeta::runState, written by runDeck) says
// the run had completed: the checkpoint at its end.
bool runStateCompleted(const std::string& runState);

} // namespace dem
