#pragma once
// Runs the dem executable for end-to-end tests: in a shell, capturing exit code, stdout and
// stderr (runDem), or started directly without waiting (spawnDem).
#include "ScratchDir.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

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

// `program args` run under a limit on its address space (ulimit -v, in kB), with the OpenMP
// threads' stacks, reserved in that space, of a fixed size (OMP_STACKSIZE, else the shell's stack
// limit). AddressSanitizer reserves terabytes of address space at start, which no such limit
// allows: tests using this skip under it (underAddressSanitizer).
inline CommandResult runUnderMemoryLimit(const std::string& program, const std::string& args,
                                         int64_t kilobytes, const std::filesystem::path& dir) {
    return runDem("-c 'ulimit -v " + std::to_string(kilobytes) +
                      " && export OMP_STACKSIZE=8M && exec \"$0\" " + args + "' '" + program + "'",
                  dir, "/bin/sh");
}

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool underAddressSanitizer = true;
#else
inline constexpr bool underAddressSanitizer = false;
#endif

// Starts `program args...` in `dir` without waiting and without a shell (a signal reaches the
// program itself: it is the direct child), its stdout and stderr appended to `out` and `err`, in
// the environment `env` (null-terminated; null: this process's).
inline pid_t spawnProgram(const char* program, const std::vector<std::string>& args,
                          const std::filesystem::path& dir, const std::filesystem::path& out,
                          const std::filesystem::path& err, char* const* env = nullptr) {
    std::vector<char*> argv{const_cast<char*>(program)};
    for (const std::string& a : args)
        argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const pid_t pid = fork();
    if (pid == 0) { // only async-signal-safe calls from here on
        const int o = open(out.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (chdir(dir.c_str()) != 0 || o < 0 || e < 0)
            _exit(127);
        dup2(o, 1);
        dup2(e, 2);
        execve(program, argv.data(), env ? env : environ);
        _exit(127);
    }
    return pid;
}

// `dem ARGS...` started so, stdout and stderr both to `log`.
inline pid_t spawnDem(const std::vector<std::string>& args, const std::filesystem::path& dir,
                      const std::filesystem::path& log) {
    return spawnProgram(DEM_BINARY, args, dir, log, log);
}

inline int waitExitCode(pid_t pid) {
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

inline void writeText(const std::filesystem::path& p, const std::string& text) {
    std::ofstream f(p);
    f << text;
}

// Whether `text` contains `part`.
inline bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// The names in a directory, sorted.
inline std::vector<std::string> namesIn(const std::filesystem::path& dir) {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir))
        names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

inline int countLines(const std::string& s) {
    int n = 0;
    for (char c : s)
        n += c == '\n';
    return n;
}

} // namespace demtest
