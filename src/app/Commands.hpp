#pragma once
// The command line: `dem SUBCOMMAND ...`, also reached as dem-run and dem-batch.
namespace dem {
// argv[0]'s basename selects an implied subcommand (dem-run -> run, dem-batch -> batch).
int runCommandLine(int argc, char** argv);
} // namespace dem
