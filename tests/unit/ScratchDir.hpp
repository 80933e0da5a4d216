#pragma once
// A scratch directory for a test, under the system's temporary directory.
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <unistd.h>
#include <utility>

namespace demtest {

// A fresh scratch directory per test under the system's temporary directory, removed with
// everything in it when the test ends (kept when DEM_TEST_KEEP is set, to look at a failure).
// It is the directory's path; hold it as `const auto dir = scratchDir(...)`: a copy into a plain
// path would outlive the directory.
class ScratchDir : public std::filesystem::path {
public:
    explicit ScratchDir(const std::string& name)
        : path(std::filesystem::temp_directory_path() /
               ("dem-test-" + name + "-" + std::to_string(::getpid()))) {
        std::filesystem::remove_all(*this);
        std::filesystem::create_directories(*this);
    }
    ScratchDir(ScratchDir&& o) noexcept : path(std::move(o)) { o.clear(); }
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;
    ScratchDir& operator=(ScratchDir&&) = delete;
    ~ScratchDir() {
        std::error_code ec;
        if (!empty() && !std::getenv("DEM_TEST_KEEP"))
            std::filesystem::remove_all(*this, ec);
    }
};

inline ScratchDir scratchDir(const std::string& name) {
    return ScratchDir(name);
}

} // namespace demtest
