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
#include <cstddef>
#include <vector>

namespace dem {

template <class T, class Kept, class From, class Keep, class Make>
void gatherInPlace(std::vector<T>& items, size_t count, From&& from, Keep&& keep,
                   std::vector<Kept>& side, Make&& make) {
    size_t up = 0;
    for (size_t r = 1; r <= count; ++r)
        up += from(r) < r;
    const bool downwards = 2 * up >= count;
    auto against = [&](size_t r) { return downwards ? from(r) > r : from(r) < r; };
    side.clear();
    for (size_t r = 1; r <= count; ++r)
        if (against(r))
            side.push_back(keep(items[from(r)]));
    if (downwards) {
        size_t k = side.size();
        for (size_t r = count; r >= 1; --r)
            items[r] = make(r, against(r) ? side[--k] : keep(items[from(r)]));
    } else {
        size_t k = 0;
        for (size_t r = 1; r <= count; ++r)
            items[r] = make(r, against(r) ? side[k++] : keep(items[from(r)]));
    }
}

} // namespace dem
