#pragma once
// Runs the dem executable in a shell for end-to-end tests, capturing exit code, stdout and stderr.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>

namespace demtest {

struct CommandResult {
    int code = -1;
    std::string out, err;
};

inline std::string slurp(const std::filesystem::path& p) {
    std::ifstream f(p);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

// A fresh scratch directory per test, under the build tree's temporary area.
inline std::filesystem::path scratchDir(const std::string& name) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("dem-test-" + name + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

// `args` is appended to the program path verbatim (quote as in a shell).
inline CommandResult runDem(const std::string& args, const std::filesystem::path& dir,
                            const std::string& program = DEM_BINARY) {
    const auto out = dir / "stdout.txt", err = dir / "stderr.txt";
    const std::string cmd = "cd '" + dir.string() + "' && '" + program + "' " + args + " > '" +
                            out.string() + "' 2> '" + err.string() + "' < /dev/null";
    const int status = std::system(cmd.c_str());
    CommandResult r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
}

inline void writeText(const std::filesystem::path& p, const std::string& text) {
    std::ofstream f(p);
    f << text;
}

inline int countLines(const std::string& s) {
    int n = 0;
    for (char c : s)
        n += c == '\n';
    return n;
}

} // namespace demtest
