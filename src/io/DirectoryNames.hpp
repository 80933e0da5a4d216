#pragma once
// The names in a directory, read with opendir/readdir. std::filesystem::directory_iterator is not
// used where memory may run short: libstdc++ 12 ends the process (std::terminate) when its
// constructor cannot allocate, instead of throwing std::bad_alloc.
#include <string>
#include <system_error>
#include <vector>

namespace dem {

// The names in `dir` (without "." and ".."), in the directory's own order. False with the cause
// in `ec` when the directory cannot be opened or read; throws std::bad_alloc.
bool directoryNames(const std::string& dir, std::vector<std::string>& names, std::error_code& ec);

} // namespace dem
