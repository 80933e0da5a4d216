#pragma once
// `dem batch`: parameter tables over decks, run as separate `dem run` processes.
#include <CLI/CLI.hpp>
#include <functional>

namespace dem {

// Registers the `batch` subcommand on `app`; the returned function runs it once parsed and returns
// the exit code.
std::function<int()> addBatchCommand(CLI::App& app);

} // namespace dem
