#pragma once
// Arithmetic written once for one double or for a SIMD pack of doubles ("lanes", GCC vector
// extensions: Lanes<2> fills an SSE2 register, Lanes<4> an AVX one, Lanes<8> an AVX-512 one).
// The contact laws (ContactLaws.hpp) are templates over the value type R, double or Lanes<W>,
// with the helpers below for what C++ spells differently for the two: choosing (select), negating
// a condition (none), square roots (root) and 3-vectors (Vec3Of). Lane e of every operation is
// the IEEE operation on the doubles of lane e, so a law gives the same bits in a lane as alone.
// Every function a law calls with lanes is always inlined: the AVX2 and AVX-512 pair functions
// (PairBatch.hpp) are compiled for their own target, and a helper left a call (as unoptimised
// builds leave them) is compiled without it and passes wide vectors differently (psABI).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace dem {

// The widest lanes this processor runs (8, 4 or 2), or DEM_LANES when it names a width it runs:
// how many contacts the pair loop computes at once (PairBatch.hpp).
int pairLaneWidth();

template <int W> struct LaneTypes {
    typedef double Values __attribute__((vector_size(W * sizeof(double))));
};
template <int W> using Lanes = typename LaneTypes<W>::Values;

// A lane type (indexable lane by lane, not a plain number): the overloads below that loop over
// lanes.
template <class V>
concept LaneVector = !std::is_arithmetic_v<V> && requires(V v) {
    v[0] + 1.0;
};

template <LaneVector V> constexpr int laneCount = sizeof(V) / sizeof(double);

// Lanes from consecutive doubles, and back.
template <LaneVector V> [[gnu::always_inline]] inline V loadLanes(const double* p) {
    V v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
template <LaneVector V> [[gnu::always_inline]] inline void storeLanes(double* p, V v) {
    std::memcpy(p, &v, sizeof v);
}

// c ? a : b, lane by lane for lanes (c a lane mask, as comparisons of lanes give).
template <class M, class R> [[gnu::always_inline]] inline R select(M c, R a, R b) {
    return c ? a : b;
}

// Not c (! on a bool, ~ on a lane mask).
[[gnu::always_inline]] inline bool none(bool c) {
    return !c;
}
template <LaneVector M> [[gnu::always_inline]] inline M none(M c) {
    return ~c;
}

// Square root, lane by lane for lanes (sqrtpd: the same rounding as sqrtsd).
[[gnu::always_inline]] inline double root(double x) {
    return std::sqrt(x);
}
template <LaneVector V> [[gnu::always_inline]] inline V root(V x) {
    V r;
    for (int e = 0; e < laneCount<V>; ++e)
        r[e] = __builtin_sqrt(x[e]);
    return r;
}

// A value of R with every lane equal to x.
template <class R> [[gnu::always_inline]] inline R splat(double x) {
    if constexpr (std::is_same_v<R, double>)
        return x;
    else
        return R{} + x;
}

// A condition that holds in every lane.
template <class R> [[gnu::always_inline]] inline auto everyLane() {
    return R{} == R{};
}

// A 3-vector of R. Sums of products add x and y first, then z, like Eigen's dot and squaredNorm,
// so that Vec3Of<double> gives the bits Eigen's Vector3d gives.
template <class R> struct Vec3Of {
    R x, y, z;

    [[gnu::always_inline]] R dot(const Vec3Of& o) const { return (x * o.x + y * o.y) + z * o.z; }
    [[gnu::always_inline]] R squaredNorm() const { return (x * x + y * y) + z * z; }
    [[gnu::always_inline]] Vec3Of cross(const Vec3Of& o) const {
        return {y * o.z - z * o.y, z * o.x - x * o.z, x * o.y - y * o.x};
    }
    [[gnu::always_inline]] Vec3Of operator+(const Vec3Of& o) const {
        return {x + o.x, y + o.y, z + o.z};
    }
    [[gnu::always_inline]] Vec3Of operator-(const Vec3Of& o) const {
        return {x - o.x, y - o.y, z - o.z};
    }
    [[gnu::always_inline]] Vec3Of& operator+=(const Vec3Of& o) { return *this = *this + o; }
    [[gnu::always_inline]] Vec3Of& operator-=(const Vec3Of& o) { return *this = *this - o; }
    template <class S> [[gnu::always_inline]] Vec3Of operator*(S s) const {
        return {x * s, y * s, z * s};
    }
    template <class S> [[gnu::always_inline]] friend Vec3Of operator*(S s, const Vec3Of& v) {
        return {s * v.x, s * v.y, s * v.z};
    }
};

template <class M, class R>
[[gnu::always_inline]] inline Vec3Of<R> select(M c, const Vec3Of<R>& a, const Vec3Of<R>& b) {
    return {select(c, a.x, b.x), select(c, a.y, b.y), select(c, a.z, b.z)};
}

} // namespace dem
