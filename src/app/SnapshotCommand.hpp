#pragma once
// `dem snapshot`: a PNG picture of the spheres of a run (from one of its checkpoints) or of a
// checkpoint file, drawn by gnuplot, for a look at a packing on a machine without ParaView.
#include <CLI/CLI.hpp>
#include <functional>

namespace dem {

// Registers the `snapshot` subcommand on `app`; the returned function runs it once parsed and
// returns the exit code.
std::function<int()> addSnapshotCommand(CLI::App& app);

} // namespace dem
