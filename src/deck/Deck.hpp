#pragma once
// A deck: the TOML description of a simulation, loaded and validated into a Simulation value.
#include "core/Simulation.hpp"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace dem {

// One problem found in a deck; line/column are 1-based, 0 when unknown.
struct DeckError {
    std::string file;
    int line = 0, column = 0;
    std::string message; // names the offending value and what was expected
};
std::string formatError(const DeckError& e); // "file:line:column: error: message"

// What the run records in history.tsv, and how often.
struct HistorySpec {
    std::vector<MeasureRef> columns; // always starts with step and time
    uint64_t every = 0;              // steps between rows; 0 = no history

    bool operator==(const HistorySpec&) const = default;
};

// VTK series for ParaView, written every `every` steps (0 = none).
struct VtkSpec {
    uint64_t every = 0;
    std::vector<std::string> kinds, fields;

    bool operator==(const VtkSpec&) const = default;
};

// A gnuplot figure of history columns.
struct PlotSpecDeck {
    std::string name, title, x = "time";
    std::vector<std::string> y, y2;
    bool logX = false, logY = false, logY2 = false;

    bool operator==(const PlotSpecDeck&) const = default;
};

// [output.checkpoint]: when checkpoints are written and how many are kept.
struct CheckpointSpec {
    uint64_t every = 0;           // steps; 0 = not by steps
    double everyTime = 0;         // simulated seconds; 0 = not by time
    double everyWallMinutes = 30; // 0 = not by wall-clock time
    bool atStageEnd = false, atEnd = true;
    uint64_t keep = 3;         // newest k kept; 0 = all
    bool keepStageEnds = true; // rotation never deletes stage-end checkpoints
    std::string compression = "gzip";
    int level = 1;

    bool operator==(const CheckpointSpec&) const = default;
};

struct OutputSpec {
    HistorySpec history;
    VtkSpec vtk;
    CheckpointSpec checkpoint;
    std::vector<PlotSpecDeck> plots;
    uint64_t progressEverySteps = 0; // 0 = decided by the runner

    bool operator==(const OutputSpec&) const = default;
};

struct Deck {
    std::string path;                     // as given on the command line
    std::string name;                     // file stem
    std::string text;                     // exact bytes of the file
    std::map<std::string, double> params; // resolved parameter values
    std::string resolvedToml;             // every value after defaults, overrides and expressions
    Simulation sim;                       // ready to run: bodies built, stages set, dt chosen
    OutputSpec output;
};

// The optional sphere state (Particles::keepOptional) that a deck's outputs and stop criteria
// read: orientation for its VTK field, the start position for the VTK displacement field and for
// sphere and group displacement measures. A loaded deck's spheres keep exactly this, and so does
// a run continued from a checkpoint (one written before this state was optional kept all of it).
struct OptionalState {
    bool orientation = false, start = false;
};
OptionalState optionalStateRead(const OutputSpec& output, const Simulation& sim);

// Parameter overrides from --set NAME=VALUE or a batch table (VALUE may be an expression).
using ParamOverrides = std::vector<std::pair<std::string, std::string>>;

// Parses, validates and builds. Returns false when any error was found; all errors are reported,
// not only the first. Never throws on bad input; throws std::bad_alloc when memory runs out.
bool loadDeck(const std::string& path, const ParamOverrides& overrides, Deck& deck,
              std::vector<DeckError>& errors);
// Same from text already in memory (`path` is used in messages only).
bool loadDeckText(const std::string& path, const std::string& text, const ParamOverrides& overrides,
                  Deck& deck, std::vector<DeckError>& errors);

// JSON Schema (draft 2020-12) of the deck, generated from the same key tables the loader uses.
std::string deckSchemaJson();

} // namespace dem
