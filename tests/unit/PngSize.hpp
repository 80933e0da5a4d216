#pragma once
// Width and height of a PNG file, from its IHDR chunk (big-endian, bytes 16 to 23); {-1, -1} when
// the file is not a PNG.
#include <filesystem>
#include <fstream>
#include <utility>

namespace demtest {

inline std::pair<int, int> pngSize(const std::filesystem::path& file) {
    std::ifstream f(file, std::ios::binary);
    unsigned char b[24] = {};
    f.read(reinterpret_cast<char*>(b), 24);
    if (f.gcount() != 24 || b[1] != 'P' || b[2] != 'N' || b[3] != 'G')
        return {-1, -1};
    auto be = [&](int o) {
        return int(b[o]) << 24 | int(b[o + 1]) << 16 | int(b[o + 2]) << 8 | int(b[o + 3]);
    };
    return {be(16), be(20)};
}

} // namespace demtest
