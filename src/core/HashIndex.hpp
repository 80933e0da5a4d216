#pragma once
// Open-addressing hash index from 64-bit keys to positions in the caller's array (linear probing,
// at most half full). It stores positions only: the caller's array holds the keys, and find()
// reads them through `keyAt`. Used for the occupied cells of a sparse CellGrid and for the cells
// that binned facets reach.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace dem {

struct HashIndex {
    std::vector<uint32_t> slots; // position + 1; 0 = empty
    uint64_t mask = 0;

    static uint64_t hash(uint64_t k) { // splitmix64 finaliser: spreads neighbouring keys
        k ^= k >> 30;
        k *= 0xbf58476d1ce4e5b9ULL;
        k ^= k >> 27;
        k *= 0x94d049bb133111ebULL;
        return k ^ (k >> 31);
    }

    // Empties the index and sizes it for `count` keys.
    void reset(size_t count) {
        size_t cap = 16;
        while (cap < 2 * count)
            cap *= 2;
        slots.assign(cap, 0);
        mask = cap - 1;
    }

    // Adds a key that is not in the index yet.
    void insert(uint64_t key, uint32_t position) {
        uint64_t h = hash(key) & mask;
        while (slots[h])
            h = (h + 1) & mask;
        slots[h] = position + 1;
    }

    // The position stored for `key`, or -1; keyAt(position) is the key at a position.
    template <class KeyAt> int64_t find(uint64_t key, KeyAt&& keyAt) const {
        for (uint64_t h = hash(key) & mask; slots[h]; h = (h + 1) & mask)
            if (keyAt(slots[h] - 1) == key)
                return int64_t(slots[h] - 1);
        return -1;
    }
};

} // namespace dem
