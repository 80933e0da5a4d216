#include "core/CellGrid.hpp"
#include "core/CountingSort.hpp"
#include "core/Parallel.hpp"

#include <algorithm>
#include <cmath>

namespace dem {

namespace {
constexpr double maxDenseCellsPerPoint = 8;
constexpr int64_t periodicTileRows = 8;
} // namespace

bool CellGrid::inRange(const Vec3& x, double size) {
    // floor(q) >= k exactly when q >= k, and floor(q) < k when q < k, for an integer k; NaN fails.
    for (int a = 0; a < 3; ++a) {
        const double q = x[a] / size;
        if (!(q >= double(-bias + 2) && q < double(bias - 2)))
            return false;
    }
    return true;
}

uint64_t CellGrid::pack(int64_t cx, int64_t cy, int64_t cz) {
    return (uint64_t(cx + bias) << 42) | (uint64_t(cy + bias) << 21) | uint64_t(cz + bias);
}

void CellGrid::unpack(uint64_t key, int64_t c[3]) {
    constexpr uint64_t mask = (uint64_t(1) << 21) - 1;
    c[0] = int64_t(key >> 42) - bias;
    c[1] = int64_t((key >> 21) & mask) - bias;
    c[2] = int64_t(key & mask) - bias;
}

uint64_t CellGrid::keyOf(const Vec3& x) const {
    int64_t c[3];
    coords(x, c);
    return pack(c[0], c[1], c[2]);
}

void CellGrid::build(const std::vector<Vec3>& points, double size,
                     std::vector<uint32_t>& countScratch) {
    cellSize = size;
    const size_t n = points.size();
    std::vector<uint64_t>& key = keyScratch;
    key.resize(n);
    // The cell coordinates (three divisions per point) in parallel; min and max are exact, so the
    // bounds do not depend on the thread count.
    int64_t mn[3] = {bias, bias, bias}, mx[3] = {-bias, -bias, -bias};
    // clang-format off
#pragma omp parallel for schedule(static) reduction(min : mn[:3]) reduction(max : mx[:3]) \
    if (n > parallelThreshold)
    // clang-format on
    for (size_t p = 0; p < n; ++p) {
        int64_t c[3];
        coords(points[p], c);
        for (int a = 0; a < 3; ++a) {
            mn[a] = std::min(mn[a], c[a]);
            mx[a] = std::max(mx[a], c[a]);
        }
        key[p] = pack(c[0], c[1], c[2]);
    }
    const double cells =
        n ? double(mx[0] - mn[0] + 1) * double(mx[1] - mn[1] + 1) * double(mx[2] - mn[2] + 1) : 0;
    dense = n > 0 && cells <= maxDenseCellsPerPoint * double(n) + 64;
    if (dense) {
        const int64_t extent[3] = {mx[0] - mn[0] + 1, mx[1] - mn[1] + 1, mx[2] - mn[2] + 1};
        sortDense(n, mn, extent, extent[1], countScratch);
        return;
    }
    // Sparse: sort (key, index) pairs, a unique thread-independent order, and hash the cells.
    order.resize(n);
    std::vector<std::pair<uint64_t, uint32_t>> entries(n);
    for (size_t p = 0; p < n; ++p)
        entries[p] = {key[p], uint32_t(p)};
    std::sort(entries.begin(), entries.end());
    cellKeys.clear();
    cellStart.clear();
    for (size_t e = 0; e < n; ++e) {
        order[e] = entries[e].second;
        if (e == 0 || entries[e].first != entries[e - 1].first) {
            cellKeys.push_back(entries[e].first);
            cellStart.push_back(uint32_t(e));
        }
    }
    cellStart.push_back(uint32_t(n));
    cellIndex.reset(cellKeys.size());
    for (size_t c = 0; c < cellKeys.size(); ++c)
        cellIndex.insert(cellKeys[c], uint32_t(c));
}

void CellGrid::buildPeriodic(size_t n, const int64_t extent[3],
                             std::vector<uint32_t>& countScratch) {
    cellSize = 1;
    dense = true;
    const int64_t origin[3] = {0, 0, 0};
    sortDense(n, origin, extent, std::min<int64_t>(periodicTileRows, extent[1]), countScratch);
}

void CellGrid::sortDense(size_t n, const int64_t first[3], const int64_t extent[3], int64_t rows,
                         std::vector<uint32_t>& countScratch) {
    // Counting sort into every cell of the box: O(n), order within a cell by index.
    std::vector<uint64_t>& key = keyScratch;
    for (int a = 0; a < 3; ++a)
        lo[a] = first[a];
    nx = extent[0], ny = extent[1], nz = extent[2];
    tileRows = rows;
    if (tileRows < ny) {
        // Tiles of tileRows columns along y, one after the other; within a tile the columns go
        // x-major, so the columns at x +- 1 are a tile's height away, not a whole row.
        columnRank.resize(size_t(nx * ny));
        for (int64_t x = 0; x < nx; ++x)
            for (int64_t y = 0; y < ny; ++y) {
                const int64_t tile = y / tileRows * tileRows;
                columnRank[size_t(y + ny * x)] =
                    uint32_t(tile * nx + x * std::min(tileRows, ny - tile) + (y - tile));
            }
    }
#pragma omp parallel for schedule(static) if (n > parallelThreshold)
    for (size_t p = 0; p < n; ++p) {
        int64_t c[3];
        unpack(key[p], c);
        key[p] = uint64_t((c[2] - lo[2]) + nz * column(c[0] - lo[0], c[1] - lo[1]));
    }
    countingSort(
        n, size_t(nx * ny * nz), [&](size_t p) { return key[p]; }, cellStart, order, countScratch);
}

int64_t CellGrid::find(int64_t cx, int64_t cy, int64_t cz) const {
    if (dense) {
        const int64_t x = cx - lo[0], y = cy - lo[1], z = cz - lo[2];
        if (x < 0 || y < 0 || z < 0 || x >= nx || y >= ny || z >= nz)
            return -1;
        return z + nz * column(x, y);
    }
    return cellIndex.find(pack(cx, cy, cz), [this](uint32_t c) { return cellKeys[c]; });
}

void CellGrid::sparseRow(int64_t cx, int64_t cy, int64_t z0, int64_t z1, uint32_t& begin,
                         uint32_t& end) const {
    begin = end = 0;
    // The occupied cells of a row are consecutive in key order: the first and last one found
    // bound the range.
    int64_t first = -1, last = -1;
    for (int64_t z = z0; z <= z1; ++z) {
        const int64_t c = find(cx, cy, z);
        if (c < 0)
            continue;
        if (first < 0)
            first = c;
        last = c;
    }
    if (first >= 0) {
        begin = cellStart[first];
        end = cellStart[last + 1];
    }
}

} // namespace dem
