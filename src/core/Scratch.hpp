#pragma once
// Sizing the scratch arrays that the step loop and the rebuilds reuse. A vector that grows copies
// its contents into new memory, so for a moment both are resident: a scratch array whose contents
// are about to be overwritten is instead emptied first, and given an eighth more room than asked
// for, so that it seldom needs to grow again.
#include <cstddef>
#include <span>
#include <vector>

namespace dem {

// Sizes v to n elements, keeping its contents only when it need not grow; the caller overwrites
// them all.
template <class T> void resizeForOverwrite(std::vector<T>& v, size_t n) {
    if (v.capacity() < n) {
        v.clear();
        v.reserve(n + n / 8);
    }
    v.resize(n);
}

// Empties v and frees its memory. `v = {}` would keep the memory: it assigns an empty
// initializer list, which keeps the capacity.
template <class T> void freeMemory(std::vector<T>& v) {
    std::vector<T>().swap(v);
}

// Empties v and gives it room for about n elements.
template <class T> void clearWithRoom(std::vector<T>& v, size_t n) {
    v.clear();
    if (v.capacity() < n)
        v.reserve(n + n / 8);
}

// Memory for `bytes` of scratch: `lent` (the idle memory of another array) when it is large enough,
// else `own`, which only grows. Both are aligned as memory from new is (`lent` by its lender); the
// caller creates its objects there (std::construct_at).
inline std::byte* lentOrOwn(std::span<std::byte> lent, size_t bytes, std::vector<std::byte>& own) {
    if (lent.size() >= bytes)
        return lent.data();
    if (own.size() < bytes)
        resizeForOverwrite(own, bytes);
    return own.data();
}

} // namespace dem
