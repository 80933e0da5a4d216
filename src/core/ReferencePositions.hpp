#pragma once
// The positions of the spheres at the last neighbour rebuild, which only the rebuild check reads
// (the displacements since). Kept in single precision relative to the centre of the spheres'
// bounding box, 12 bytes per sphere rather than 24, which the step also reads 12 bytes less of for
// every sphere; `error` bounds what the rounding moved each component by, and the check adds it to
// the displacements it finds (Step.cpp, rebuildDue). It is about 6e-8 of the spheres' extent, and
// what the check adds (2 sqrt(3) of it) stays under a thousandth of the skin while the extent is
// under some five thousand skins. Spheres spread much wider (far-apart clusters) use that share
// of the skin up at every rebuild, and rebuild that much sooner: every step beyond about five
// million skins (over a kilometre for millimetre spheres).
//
// The floats are packed into the memory of a vector of Vec3 (two spheres per element), through
// memcpy: a rebuild, which sets them afresh at its end, lends that memory to its scratch before
// then (the reordering's ring of old values, Particles::permute; the inverse of the reordering,
// markCarriedPairs; carryPairRecords' side histories of doubles, a std::vector<Vec3>).
#include "core/Types.hpp"

#include <cstring>
#include <vector>

namespace dem {

struct ReferencePositions {
    std::vector<Vec3> packed; // the floats of sphere p at bytes [12 p, 12 p + 12)
    size_t count = 0;
    Vec3 origin = Vec3::Zero(); // the floats hold x - origin
    double error = 0;           // largest error of a component of operator[]

    size_t size() const { return count; }
    Vec3 operator[](size_t p) const {
        float f[3];
        std::memcpy(f, reinterpret_cast<const char*>(packed.data()) + 12 * p, sizeof f);
        return origin + Vec3(double(f[0]), double(f[1]), double(f[2]));
    }
    // The floats themselves, for checkpoints and comparisons.
    void getFloats(size_t p, float f[3]) const {
        std::memcpy(f, reinterpret_cast<const char*>(packed.data()) + 12 * p, 3 * sizeof(float));
    }
    void setFloats(size_t p, const float f[3]) {
        std::memcpy(reinterpret_cast<char*>(packed.data()) + 12 * p, f, 3 * sizeof(float));
    }
    void resize(size_t n) {
        count = n;
        packed.resize((n + 1) / 2);
    }
    void clear() { resize(0); }
    // Sets them to `pos` (origin: the centre of their bounding box) rounded to single precision,
    // with the error that makes.
    void assign(const std::vector<Vec3>& pos);
    // Sets `error` from the floats as they are (loaded from a checkpoint), as assign() does.
    void boundError();
};

bool operator==(const ReferencePositions& a, const ReferencePositions& b);

} // namespace dem
