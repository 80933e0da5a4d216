#include "core/CellGrid.hpp"

#include <algorithm>
#include <cmath>

namespace dem {

namespace {
uint64_t hashKey(uint64_t k) { // splitmix64 finaliser: spreads neighbouring keys over the table
    k ^= k >> 30;
    k *= 0xbf58476d1ce4e5b9ULL;
    k ^= k >> 27;
    k *= 0x94d049bb133111ebULL;
    return k ^ (k >> 31);
}
} // namespace

bool CellGrid::inRange(const Vec3& x, double size) {
    for (int a = 0; a < 3; ++a) {
        const double c = std::floor(x[a] / size);
        if (!(c >= double(-bias + 2) && c < double(bias - 2)))
            return false;
    }
    return true;
}

uint64_t CellGrid::pack(int64_t cx, int64_t cy, int64_t cz) {
    return (uint64_t(cx + bias) << 42) | (uint64_t(cy + bias) << 21) | uint64_t(cz + bias);
}

uint64_t CellGrid::keyOf(const Vec3& x) const {
    return pack(int64_t(std::floor(x.x() / cellSize)), int64_t(std::floor(x.y() / cellSize)),
                int64_t(std::floor(x.z() / cellSize)));
}

void CellGrid::build(const std::vector<Vec3>& points, double size) {
    cellSize = size;
    const size_t n = points.size();
    std::vector<std::pair<uint64_t, uint32_t>> entries(n);
#pragma omp parallel for schedule(static)
    for (size_t p = 0; p < n; ++p)
        entries[p] = {keyOf(points[p]), uint32_t(p)};
    std::sort(entries.begin(), entries.end()); // (key, index): a unique, thread-independent order
    keys.resize(n);
    order.resize(n);
    cellKeys.clear();
    cellStart.clear();
    for (size_t e = 0; e < n; ++e) {
        keys[e] = entries[e].first;
        order[e] = entries[e].second;
        if (e == 0 || keys[e] != keys[e - 1]) {
            cellKeys.push_back(keys[e]);
            cellStart.push_back(uint32_t(e));
        }
    }
    cellStart.push_back(uint32_t(n));
    size_t cap = 16;
    while (cap < 2 * cellKeys.size())
        cap *= 2;
    table.assign(cap, 0);
    mask = cap - 1;
    for (size_t c = 0; c < cellKeys.size(); ++c) {
        uint64_t h = hashKey(cellKeys[c]) & mask;
        while (table[h])
            h = (h + 1) & mask;
        table[h] = uint32_t(c + 1);
    }
}

int64_t CellGrid::find(uint64_t key) const {
    uint64_t h = hashKey(key) & mask;
    while (uint32_t c = table[h]) {
        if (cellKeys[c - 1] == key)
            return int64_t(c - 1);
        h = (h + 1) & mask;
    }
    return -1;
}

} // namespace dem
