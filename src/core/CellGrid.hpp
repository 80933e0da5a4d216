#pragma once
// Sorted cell grid: spheres are binned by integer cell coordinates, the bins are sorted by key and
// found through a small open-addressing table, so memory follows the number of spheres, not the
// volume of the domain.
#include "core/Types.hpp"

#include <vector>

namespace dem {

struct CellGrid {
    static constexpr int64_t bias = int64_t(1) << 20; // cell coordinates in [-2^20, 2^20)
    double cellSize = 1;
    std::vector<uint64_t> keys;      // per sorted entry
    std::vector<uint32_t> order;     // sphere index per sorted entry
    std::vector<uint64_t> cellKeys;  // one per occupied cell
    std::vector<uint32_t> cellStart; // entries of cell c: [cellStart[c], cellStart[c+1])
    std::vector<uint32_t> table;     // open addressing: cell index + 1, 0 = empty
    uint64_t mask = 0;

    static bool inRange(const Vec3& x, double cellSize);
    uint64_t keyOf(const Vec3& x) const;
    static uint64_t pack(int64_t cx, int64_t cy, int64_t cz);
    // Builds the grid over the given points (all must satisfy inRange).
    void build(const std::vector<Vec3>& points, double size);
    // Index of the cell with this key, or -1.
    int64_t find(uint64_t key) const;
};

} // namespace dem
