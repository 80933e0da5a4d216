// Checkpoint directories: listing newest first and the atomic `latest` pointer.
#include "io/AtomicFile.hpp"
#include "io/Checkpoint.hpp"
#include "io/CheckpointFormat.hpp"
#include "io/DirectoryNames.hpp"
#include "io/FileDescriptor.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <new>
#include <system_error>

namespace dem {

namespace {

std::string joinPath(const std::string& dir, const std::string& name) {
    if (dir.empty())
        return name;
    return dir.back() == '/' ? dir + name : dir + "/" + name;
}

bool validPointerTarget(const std::string& name) {
    return !name.empty() && name != "." && name != ".." &&
           name.find_first_of("/\n\r") == std::string::npos && name.find('\0') == std::string::npos;
}

} // namespace

bool listCheckpoints(const std::string& dir, std::vector<CheckpointEntry>& entries,
                     std::string& error) {
    entries.clear();
    try {
        std::error_code ec;
        std::vector<std::string> names;
        if (!directoryNames(dir, names, ec)) {
            error = ckpt::quoted(dir) + ": cannot list (" + ec.message() + ")";
            return false;
        }
        for (const std::string& name : names) {
            if (!isCheckpointPath(name))
                continue;
            CheckpointEntry e;
            e.path = joinPath(dir, name);
            struct stat st {};
            if (::stat(e.path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
                continue;
            e.mtimeNs = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
            ckpt::LoadedFile file;
            std::string ignored;
            ckpt::loadFile(e.path, true, file, ignored);
            e.headerOk = file.headerOk;
            e.fileBytes = file.fileBytes;
            if (file.headerOk) {
                e.step = file.header.step;
                e.time = file.header.time;
            }
            entries.push_back(std::move(e));
        }
        std::sort(entries.begin(), entries.end(),
                  [](const CheckpointEntry& a, const CheckpointEntry& b) {
                      if (a.headerOk != b.headerOk)
                          return a.headerOk;
                      if (a.step != b.step)
                          return a.step > b.step;
                      if (a.mtimeNs != b.mtimeNs)
                          return a.mtimeNs > b.mtimeNs;
                      return a.path > b.path;
                  });
        return true;
    } catch (const std::bad_alloc&) {
        throw; // not the directory's fault (Checkpoint.hpp)
    } catch (const std::exception& e) {
        error = ckpt::quoted(dir) + ": cannot list (" + e.what() + ")";
        return false;
    }
}

bool writeLatestPointer(const std::string& dir, const std::string& fileName, std::string& error) {
    const std::string path = joinPath(dir, latestPointerName);
    if (!validPointerTarget(fileName)) {
        error = ckpt::quoted(path) + ": '" + fileName +
                "' is not a file name in the checkpoint directory";
        return false;
    }
    try {
        return writeTextAtomically(path, fileName + "\n", Durability::Synced, error);
    } catch (const std::exception& e) {
        error = ckpt::quoted(path) + ": cannot write (" + ckpt::exceptionText(e) + ")";
        return false;
    }
}

bool readLatestPointer(const std::string& dir, std::string& path, std::string& error) {
    const std::string pointer = joinPath(dir, latestPointerName);
    try {
        std::ifstream in(pointer, std::ios::binary);
        if (!in) {
            const int e = errno; // before making the message, which may change it
            error = ckpt::quoted(pointer) + ": cannot open (" + errnoText(e) + ")";
            return false;
        }
        std::string text(4097, '\0');
        in.read(text.data(), std::streamsize(text.size()));
        text.resize(size_t(in.gcount()));
        if (!text.empty() && text.back() == '\n')
            text.pop_back();
        if (text.size() > 4096 || !validPointerTarget(text)) {
            error = ckpt::quoted(pointer) + ": malformed (expected one checkpoint file name)";
            return false;
        }
        path = joinPath(dir, text);
        return true;
    } catch (const std::bad_alloc&) {
        throw; // not the file's fault (Checkpoint.hpp)
    } catch (const std::exception& e) {
        error = ckpt::quoted(pointer) + ": cannot read (" + e.what() + ")";
        return false;
    }
}

} // namespace dem
