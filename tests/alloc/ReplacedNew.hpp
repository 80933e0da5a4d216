#pragma once
// Replaces every global operator new and delete of the executable that includes this header (in
// one source file only) with calls to testAllocate, which that file defines. The test executables
// under alloc/ watch the heap this way; they are executables of their own because the replacement
// holds for the whole program. The library builds the nothrow forms of aligned new on these.
#include <cstddef>
#include <cstdlib>
#include <new>

// n bytes aligned to `align` (0: the default alignment); throws std::bad_alloc on failure.
void* testAllocate(std::size_t n, std::size_t align);

namespace demtest {
inline void* heapAllocate(std::size_t n, std::size_t align) {
    void* p =
        align ? std::aligned_alloc(align, (n + align - 1) / align * align) : std::malloc(n ? n : 1);
    if (!p)
        throw std::bad_alloc();
    return p;
}
} // namespace demtest

void* operator new(std::size_t n) {
    return testAllocate(n, 0);
}
void* operator new[](std::size_t n) {
    return testAllocate(n, 0);
}
void* operator new(std::size_t n, std::align_val_t a) {
    return testAllocate(n, std::size_t(a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
    return testAllocate(n, std::size_t(a));
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    try {
        return testAllocate(n, 0);
    } catch (const std::bad_alloc&) {
        return nullptr;
    }
}
void* operator new[](std::size_t n, const std::nothrow_t& tag) noexcept {
    return operator new(n, tag);
}
// GCC, inlining a delete of this file into a caller that got the memory from operator new, sees
// free() called on memory from new and warns (-Wmismatched-new-delete): here new is malloc.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept {
    std::free(p);
}
void operator delete[](void* p) noexcept {
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
    std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
    std::free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
    std::free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
    std::free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
    std::free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
    std::free(p);
}
#pragma GCC diagnostic pop
