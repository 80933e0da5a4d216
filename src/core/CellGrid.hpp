#pragma once
// Cell grid over the spheres: cells of the given size, spheres sorted by cell. Cells are ordered
// by (x, y, z) with z fastest, the order of pack(), so the cells of a row along z are neighbours in
// that order and their spheres form one contiguous range. A periodic cell's grid orders its
// columns (x, y) in tiles of a few columns along y instead, x-major within a tile: the spheres
// at x + 1 are then a tile's height of columns away in memory, not a whole plane of cells, which
// at a million spheres is more than the L2 cache holds (their pair results are read back a plane
// later). Its pair listing visits the 27 cells one by one, so any column order serves it. When the
// spheres' bounding box holds at most a few cells per sphere the cells are indexed directly;
// otherwise (sparse or far-flung spheres) occupied cells are found through a hash table. Either way
// memory follows the number of spheres, not the volume of the domain.
#include "core/HashIndex.hpp"
#include "core/Types.hpp"

#include <algorithm>
#include <vector>

namespace dem {

struct CellGrid {
    static constexpr int64_t bias = int64_t(1) << 20; // cell coordinates in [-2^20, 2^20)
    double cellSize = 1;
    std::vector<uint32_t> order;     // sphere indices sorted by cell (then by index)
    std::vector<uint32_t> cellStart; // entries of cell c: [cellStart[c], cellStart[c+1])
    // Dense mode: cell c = z + nz column(x, y) relative to `lo`, all cells present.
    bool dense = false;
    int64_t lo[3] = {0, 0, 0}, nx = 0, ny = 0, nz = 0;
    int64_t tileRows = 0; // columns in tiles of this many along y (ny: column = y + ny x)
    std::vector<uint32_t> columnRank; // tiled: column(x, y) at y + ny x
    // Hash mode: occupied cells only, sorted by key.
    std::vector<uint64_t> cellKeys;
    HashIndex cellIndex; // key -> index into cellKeys

    static bool inRange(const Vec3& x, double cellSize);
    // Every point with all |x[a]| below this is inRange: a test without inRange's three divisions
    // (which took half the time of a rebuild's domain check, 105k falling ball). (bias - 3)
    // cellSize is rounded at most an ulp up, x / cellSize likewise: the quotient stays below
    // bias - 2.
    static double safeReach(double cellSize) { return double(bias - 3) * cellSize; }
    static uint64_t pack(int64_t cx, int64_t cy, int64_t cz);
    static void unpack(uint64_t key, int64_t c[3]); // the inverse of pack
    void coords(const Vec3& x, int64_t c[3]) const {
        // floor(q) without a library call (the default x86-64 target has no rounding
        // instruction); exact for the coordinates inRange() admits.
        for (int a = 0; a < 3; ++a) {
            const double q = x[a] / cellSize;
            const int64_t t = int64_t(q); // rounds towards zero
            c[a] = t - int64_t(q < double(t));
        }
    }
    uint64_t keyOf(const Vec3& x) const;
    // Builds the grid over the given points (all must satisfy inRange). `cellOf` (each point's
    // cell) and `countScratch` (the counting sort's, CountingSort.hpp): memory kept by the caller,
    // overwritten.
    void build(const std::vector<Vec3>& points, double size, std::vector<uint32_t>& cellOf,
               std::vector<uint32_t>& countScratch);
    // The dense grid of a periodic cell, extent[a] cells along each axis whatever the points
    // occupy (its rows wrap around), in two calls: layOutPeriodic, then, with cellOf[p] =
    // find(x, y, z) for each point's cell (each coordinate in [0, extent[a])), sortPoints.
    void layOutPeriodic(const int64_t extent[3]);
    void sortPoints(const std::vector<uint32_t>& cellOf, std::vector<uint32_t>& countScratch);
    // Dense mode: the rank of column (x, y) (relative to `lo`).
    int64_t column(int64_t x, int64_t y) const {
        return tileRows >= ny ? y + ny * x : columnRank[size_t(y + ny * x)];
    }
    // Index of the cell at integer coordinates, or -1 when empty/absent.
    int64_t find(int64_t cx, int64_t cy, int64_t cz) const;
    // Entries [begin, end) of `order` in cells (cx, cy, z0..z1), z0 <= z1 <= z0 + 2. Inline: the
    // pair listing asks for five rows per sphere.
    void row(int64_t cx, int64_t cy, int64_t z0, int64_t z1, uint32_t& begin, uint32_t& end) const {
        if (!dense) {
            sparseRow(cx, cy, z0, z1, begin, end);
            return;
        }
        begin = end = 0;
        const int64_t x = cx - lo[0], y = cy - lo[1];
        const int64_t a = std::max<int64_t>(z0 - lo[2], 0), b = std::min(z1 - lo[2], nz - 1);
        if (x < 0 || y < 0 || x >= nx || y >= ny || a > b)
            return;
        const int64_t base = nz * column(x, y);
        begin = cellStart[base + a];
        end = cellStart[base + b + 1];
    }

private:
    void sparseRow(int64_t cx, int64_t cy, int64_t z0, int64_t z1, uint32_t& begin,
                   uint32_t& end) const;
    // Dense mode over the cells first[a] + [0, extent[a]), columns in tiles of `rows` along y.
    void layOutDense(const int64_t first[3], const int64_t extent[3], int64_t rows);
};

} // namespace dem
