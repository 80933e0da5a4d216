#pragma once
// Files written whole or not at all. The content goes to "<path>.tmp-<pid>" in the same directory,
// which is renamed over `path` once complete: rename(2) replaces a file in one step, so no reader,
// and no run killed part way, ever finds a part-written file under the final name. On any failure,
// or an exception (running out of memory) before the rename, the temporary file is removed and a
// file already at `path` is left as it was. A killed writer may leave its temporary file behind.
//
// Synced: the file is also fsynced before the rename and the directory after it, so that the new
// file survives a crash of the machine: checkpoints, the `latest` pointer, run and batch summaries.
// Renamed: no fsync, for outputs written every few steps (VTK frames), which a sync each would
// slow down by a disk's latency; a machine crash may lose the last of them, which a restart from
// the checkpoint before writes again.
//
// Two threads of one process must not write the same path at once: they would share the
// temporary file.
#include <functional>
#include <string>
#include <string_view>

namespace dem {

enum class Durability { Renamed, Synced };

// Messages start with the quoted path: "'PATH': write failed (REASON)" when `fill` fails, "'PATH':
// cannot create the temporary file ...", "... fsync failed ...", "... cannot rename the temporary
// file into place ...", "'PATH': written, but the directory could not be synced (REASON)".
//
// `fill` writes the content to the open descriptor of the temporary file and returns false, with
// the reason in `why`, on failure.
bool writeFileAtomically(const std::string& path,
                         const std::function<bool(int fd, std::string& why)>& fill,
                         Durability durability, std::string& error);

// The same with `text` as the content.
bool writeTextAtomically(const std::string& path, std::string_view text, Durability durability,
                         std::string& error);

// Whether a file name is that of a temporary file these writes use ("<name>.tmp-<digits>").
bool isAtomicWriteTemporary(std::string_view name);

// Removes the temporary files that writers killed part way left in `dir` (not its
// subdirectories). Errors are ignored: such a file is never read.
void removeAtomicWriteTemporaries(const std::string& dir);

} // namespace dem
