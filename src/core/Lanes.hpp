#pragma once
// Arithmetic written once for one double or for a SIMD pack of doubles ("lanes", GCC vector
// extensions, as wide as the target's vector registers: 2 with SSE2, 4 with AVX, 8 with AVX-512).
// The contact laws (ContactLaws.hpp) are templates over the value type R, double or Lanes, with
// the helpers below for what C++ spells differently for the two: choosing (select), negating a
// condition (none), square roots (root) and 3-vectors (Vec3Of). Lane e of every operation is
// the IEEE operation on the doubles of lane e, so a law gives the same bits in a lane as alone.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace dem {

#if defined(__AVX512F__)
inline constexpr int laneCount = 8;
#elif defined(__AVX__)
inline constexpr int laneCount = 4;
#else
inline constexpr int laneCount = 2;
#endif

typedef double Lanes __attribute__((vector_size(laneCount * sizeof(double))));
typedef int64_t LaneMask __attribute__((vector_size(laneCount * sizeof(double))));

// Lanes from laneCount consecutive doubles, and back.
inline Lanes loadLanes(const double* p) {
    Lanes v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
inline void storeLanes(double* p, Lanes v) {
    std::memcpy(p, &v, sizeof v);
}

// c ? a : b, lane by lane for lanes.
inline double select(bool c, double a, double b) {
    return c ? a : b;
}
inline Lanes select(LaneMask c, Lanes a, Lanes b) {
    return c ? a : b;
}

// Not c (~ on a lane mask, ! on a bool).
inline bool none(bool c) {
    return !c;
}
inline LaneMask none(LaneMask c) {
    return ~c;
}

// Square root, lane by lane for lanes (sqrtpd: the same rounding as sqrtsd).
inline double root(double x) {
    return std::sqrt(x);
}
inline Lanes root(Lanes x) {
    Lanes r;
    for (int e = 0; e < laneCount; ++e)
        r[e] = __builtin_sqrt(x[e]);
    return r;
}

// A value of R with every lane equal to x.
template <class R> R splat(double x) {
    if constexpr (std::is_same_v<R, double>)
        return x;
    else
        return R{} + x;
}

// A condition that holds in every lane.
template <class R> auto everyLane() {
    if constexpr (std::is_same_v<R, double>)
        return true;
    else
        return LaneMask{} == LaneMask{};
}

// A 3-vector of R. Sums of products add x and y first, then z, like Eigen's dot and squaredNorm,
// so that Vec3Of<double> gives the bits Eigen's Vector3d gives.
template <class R> struct Vec3Of {
    R x, y, z;

    R dot(const Vec3Of& o) const { return (x * o.x + y * o.y) + z * o.z; }
    R squaredNorm() const { return (x * x + y * y) + z * z; }
    Vec3Of cross(const Vec3Of& o) const {
        return {y * o.z - z * o.y, z * o.x - x * o.z, x * o.y - y * o.x};
    }
    Vec3Of operator+(const Vec3Of& o) const { return {x + o.x, y + o.y, z + o.z}; }
    Vec3Of operator-(const Vec3Of& o) const { return {x - o.x, y - o.y, z - o.z}; }
    Vec3Of& operator+=(const Vec3Of& o) { return *this = *this + o; }
    Vec3Of& operator-=(const Vec3Of& o) { return *this = *this - o; }
    template <class S> Vec3Of operator*(S s) const { return {x * s, y * s, z * s}; }
    template <class S> friend Vec3Of operator*(S s, const Vec3Of& v) {
        return {s * v.x, s * v.y, s * v.z};
    }
};

template <class M, class R> Vec3Of<R> select(M c, const Vec3Of<R>& a, const Vec3Of<R>& b) {
    return {select(c, a.x, b.x), select(c, a.y, b.y), select(c, a.z, b.z)};
}

} // namespace dem
