#include "core/CellGrid.hpp"
#include "core/CountingSort.hpp"
#include "core/Parallel.hpp"
#include "core/Scratch.hpp"

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

void CellGrid::build(const std::vector<Vec3>& points, double size, std::vector<uint32_t>& cellOf,
                     std::vector<uint32_t>& countScratch) {
    cellSize = size;
    const size_t n = points.size();
    // The bounding box of the points: floor(x / size) does not decrease with x, so its corners'
    // cells bound every point's. Min and max are exact: the bounds do not depend on the thread
    // count.
    double mn[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL}, mx[3] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
    // clang-format off
#pragma omp parallel for schedule(static) reduction(min : mn[:3]) reduction(max : mx[:3]) \
    if (n > parallelThreshold)
    // clang-format on
    for (size_t p = 0; p < n; ++p)
        for (int a = 0; a < 3; ++a) {
            mn[a] = std::min(mn[a], points[p][a]);
            mx[a] = std::max(mx[a], points[p][a]);
        }
    int64_t first[3] = {0, 0, 0}, last[3] = {0, 0, 0};
    if (n > 0) {
        coords(Vec3(mn[0], mn[1], mn[2]), first);
        coords(Vec3(mx[0], mx[1], mx[2]), last);
    }
    const int64_t extent[3] = {last[0] - first[0] + 1, last[1] - first[1] + 1,
                               last[2] - first[2] + 1};
    const double cells = n ? double(extent[0]) * double(extent[1]) * double(extent[2]) : 0;
    dense = n > 0 && cells <= maxDenseCellsPerPoint * double(n) + 64 && cells < double(UINT32_MAX);
    if (dense) {
        layOutDense(first, extent, extent[1]);
        resizeForOverwrite(cellOf, n);
#pragma omp parallel for schedule(static) if (n > parallelThreshold)
        for (size_t p = 0; p < n; ++p) {
            int64_t c[3];
            coords(points[p], c);
            cellOf[p] = uint32_t(find(c[0], c[1], c[2]));
        }
        sortPoints(cellOf, countScratch);
        return;
    }
    // Sparse: sort (key, index) pairs, a unique thread-independent order, and hash the cells.
    order.resize(n);
    std::vector<std::pair<uint64_t, uint32_t>> entries(n);
    for (size_t p = 0; p < n; ++p)
        entries[p] = {keyOf(points[p]), uint32_t(p)};
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

void CellGrid::layOutPeriodic(const int64_t extent[3]) {
    cellSize = 1;
    dense = true;
    const int64_t origin[3] = {0, 0, 0};
    layOutDense(origin, extent, std::min<int64_t>(periodicTileRows, extent[1]));
}

void CellGrid::layOutDense(const int64_t first[3], const int64_t extent[3], int64_t rows) {
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
}

void CellGrid::sortPoints(const std::vector<uint32_t>& cellOf,
                          std::vector<uint32_t>& countScratch) {
    // Counting sort into every cell of the box: O(n), order within a cell by index.
    countingSort(
        cellOf.size(), size_t(nx * ny * nz), [&](size_t p) { return cellOf[p]; }, cellStart, order,
        countScratch);
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
