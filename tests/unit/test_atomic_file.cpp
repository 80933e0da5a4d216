// Atomic file writes (src/io/AtomicFile.hpp): the content arrives whole under the final name or
// not at all, an existing file is kept on failure, and no temporary file is left behind.
#include "CommandRunner.hpp"
#include "FileSizeLimit.hpp"
#include "io/AtomicFile.hpp"
#include "io/FileDescriptor.hpp"

#include <catch2/catch.hpp>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <new>
#include <string>
#include <vector>

using namespace dem;
using demtest::has;
using demtest::namesIn;
using demtest::ScratchDir;
using demtest::slurp;
namespace fs = std::filesystem;

TEST_CASE("atomic writes put the whole content in place, synced or not", "[io]") {
    const ScratchDir dir("atomic-file");
    const std::string path = (dir / "out.txt").string();
    const Durability durability = GENERATE(Durability::Synced, Durability::Renamed);
    std::string error;
    // Larger than a pipe's or a page's worth, so that the write loop goes round.
    std::string text(300000, 'x');
    for (size_t k = 0; k < text.size(); k += 97)
        text[k] = char('a' + k % 26);
    REQUIRE(writeTextAtomically(path, text, durability, error));
    CHECK(slurp(path) == text);
    REQUIRE(writeTextAtomically(path, "short\n", durability, error)); // replaces, not overwrites
    CHECK(slurp(path) == "short\n");
    REQUIRE(writeTextAtomically(path, "", durability, error));
    CHECK(fs::file_size(path) == 0);
    CHECK(namesIn(dir) == std::vector<std::string>{"out.txt"});
}

TEST_CASE("a failed atomic write keeps the file it would replace and leaves nothing", "[io]") {
    const ScratchDir dir("atomic-file-fail");
    const std::string path = (dir / "out.txt").string();
    std::string error;
    REQUIRE(writeTextAtomically(path, "before\n", Durability::Synced, error));

    SECTION("a missing directory") {
        CHECK_FALSE(writeTextAtomically((dir / "missing/out.txt").string(), "x", Durability::Synced,
                                        error));
        CHECK(has(error, "cannot create the temporary file"));
        CHECK(has(error, "No such file or directory"));
    }
    SECTION("a directory where the file should go") {
        fs::create_directory(dir / "taken");
        CHECK_FALSE(writeTextAtomically((dir / "taken").string(), "x", Durability::Renamed, error));
        CHECK(error.starts_with("'" + (dir / "taken").string() + "': "));
        CHECK(has(error, "cannot rename the temporary file into place (Is a directory)"));
        CHECK(fs::is_directory(dir / "taken"));
        fs::remove(dir / "taken");
    }
    SECTION("the content does not fit (file size limit)") {
        CHECK_FALSE(demtest::withFileSizeLimit(4096, [&] {
            return writeTextAtomically(path, std::string(10000, 'y'), Durability::Synced, error);
        }));
        CHECK(error == "'" + path + "': write failed (File too large)");
    }
    SECTION("the content's writer fails, or throws") {
        CHECK_FALSE(writeFileAtomically(
            path,
            [](int fd, std::string& why) {
                REQUIRE(writeAll(fd, "part", 4) == 0);
                why = "no more data";
                return false;
            },
            Durability::Synced, error));
        CHECK(error == "'" + path + "': write failed (no more data)");
        CHECK_THROWS_AS(writeFileAtomically(
                            path,
                            [](int fd, std::string&) -> bool {
                                REQUIRE(writeAll(fd, "part", 4) == 0);
                                throw std::bad_alloc();
                            },
                            Durability::Renamed, error),
                        std::bad_alloc);
    }
    CHECK(slurp(path) == "before\n");
    CHECK(namesIn(dir) == std::vector<std::string>{"out.txt"});
}

TEST_CASE("the temporary files of atomic writes are told by their names", "[io]") {
    for (const char* name : {"run.dem.gz.tmp-123", "latest.tmp-1", "spheres.00000100.vtu.tmp-99"})
        CHECK(isAtomicWriteTemporary(name));
    for (const char* name : {"run.dem.gz", ".tmp-12", "a.tmp-", "a.tmp-12x", "a.tmp-12.vtu",
                             "spheres.tmp-data.vtu", "summary.json"})
        CHECK_FALSE(isAtomicWriteTemporary(name));
}

TEST_CASE("the temporary files killed writers left are removed, nothing else", "[io]") {
    const ScratchDir dir("atomic-file-leftovers");
    for (const char* name : {"summary.json.tmp-17", "summary.json", "a.tmp-x", "latest.tmp-3"})
        std::ofstream(dir / name) << "x";
    fs::create_directory(dir / "sub");
    std::ofstream(dir / "sub" / "b.tmp-5") << "x";
    removeAtomicWriteTemporaries(dir.string());
    CHECK(namesIn(dir) == std::vector<std::string>{"a.tmp-x", "sub", "summary.json"});
    CHECK(namesIn(dir / "sub") == std::vector<std::string>{"b.tmp-5"});
}
