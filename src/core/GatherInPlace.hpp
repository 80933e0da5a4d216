#pragma once
// Reorders an array in place: item r (1 <= r <= count) becomes make(r, keep(what item from(r)
// held)), keep() being the part of an item that make() needs, the from(r) distinct and in [1,
// items.size()), items.size() > count. The pair records (Contacts.hpp) are the largest per-contact
// data, and a layout into new memory would hold them twice at the peak.
//
// One sweep over the items: downwards when most sources lie below their destination (a rebuild
// moves most records up, past the contacts that formed before them in pair order), upwards
// otherwise. Each item read then still holds its old value; the few that move against the sweep
// are kept in `side` before anything is written. Both reads and writes go through memory in
// order. Item 0 and the items no r takes are left alone or overwritten.
//
// On several threads each sweeps its own range of destinations, and also keeps aside the items
// it takes from another thread's range (which that thread may overwrite first): the records move
// by about the number of contacts formed since the last layout, so these are few. The side list
// is counted, placed and written by ranges (listByRanges), then each range sweeps. Every item
// gets the same value for any team.
#include "core/Parallel.hpp"

#include <cstddef>
#include <omp.h>
#include <vector>

namespace dem {

template <class T, class Kept, class From, class Keep, class Make>
void gatherInPlace(std::vector<T>& items, size_t count, From&& from, Keep&& keep,
                   std::vector<Kept>& side, Make&& make) {
    const int threads = count > parallelThreshold ? omp_get_max_threads() : 1;
    size_t up = 0;
#pragma omp parallel for schedule(static) reduction(+ : up) num_threads(threads)
    for (size_t r = 1; r <= count; ++r)
        up += from(r) < r;
    const bool downwards = 2 * up >= count;
    // Items r in [a + 1, b + 1) for a thread's range [a, b) of the count: kept aside when their
    // source is against the sweep or in another thread's range (items beyond count are never
    // written).
    auto aside = [&](size_t r, size_t a, size_t b) {
        const size_t f = from(r);
        return downwards ? f > r || f <= a : f < r || (f > b && f <= count);
    };
    listByRanges(
        count,
        [&](size_t a, size_t b) {
            size_t mine = 0;
            for (size_t r = a + 1; r <= b; ++r)
                mine += aside(r, a, b);
            return mine;
        },
        [&](size_t total) { side.resize(total); },
        [&](size_t a, size_t b, size_t begin, size_t) {
            for (size_t r = a + 1, k = begin; r <= b; ++r)
                if (aside(r, a, b))
                    side[k++] = keep(items[from(r)]);
        },
        [&](size_t a, size_t b, size_t begin, size_t end) {
            if (downwards) {
                size_t k = end;
                for (size_t r = b; r > a; --r)
                    items[r] = make(r, aside(r, a, b) ? side[--k] : keep(items[from(r)]));
            } else {
                size_t k = begin;
                for (size_t r = a + 1; r <= b; ++r)
                    items[r] = make(r, aside(r, a, b) ? side[k++] : keep(items[from(r)]));
            }
        });
}

} // namespace dem
