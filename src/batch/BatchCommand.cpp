#include "batch/BatchCommand.hpp"

#include "app/ExitCodes.hpp"

#include <iostream>

namespace dem {

std::function<int()> addBatchCommand(CLI::App& app) {
    CLI::App* batch = app.add_subcommand(
        "batch", "Run a parameter table over a deck (not available in this version)");
    batch->allow_extras();
    return [] {
        std::cerr << "dem: error: 'dem batch' is not available in this version yet\n";
        return int(ExitBadInput);
    };
}

} // namespace dem
