#pragma once
// Exit codes of every subcommand (documented in dem(1) and --help).
namespace dem {
enum ExitCode : int {
    ExitOk = 0,          // the run reached a stop criterion (or the command succeeded)
    ExitFailed = 1,      // the run failed: non-finite state, I/O error, out of memory
    ExitBadInput = 2,    // bad usage, deck, table or checkpoint: nothing was run
    ExitInterrupted = 3, // stopped by SIGINT/SIGTERM after writing what it could
};
} // namespace dem
