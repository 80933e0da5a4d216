#pragma once
// The outputs an earlier run left in a run directory, which a fresh run there replaces: with
// outputs its deck does not ask for left in place, `dem plot` would draw the old run's figures and
// history.tsv would go on past the new summary's steps. Only the files dem writes are removed, by
// their names; anything else in the directory, also in plots/ and vtk/, is the user's and stays.
#include <filesystem>

namespace dem {

// Removes from `dir`: history.tsv; plots/*.gp with the images drawn from them (<name>.png, .svg,
// .pdf); the files of the VTK series in vtk/; snapshot-<step>.png pictures (dem snapshot). plots/
// and vtk/ go too when that leaves them empty. Checkpoints are clearCheckpoints'
// (Checkpointer.hpp); deck.toml, resolved.toml, log.txt and summary.json are written afresh by the
// run.
void removeEarlierOutputs(const std::filesystem::path& dir);

} // namespace dem
