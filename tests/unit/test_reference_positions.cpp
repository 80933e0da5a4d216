// The positions at the last rebuild, kept in single precision (core/ReferencePositions.hpp): each
// stays within the error bound the rebuild check adds, a bound that follows the spheres' extent,
// not their distance from the origin, and checkpoints of format version 4, which stored doubles,
// load as a rebuild would have rounded them.
#include "core/ReferencePositions.hpp"
#include "io/CheckpointSerialize.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>

using namespace dem;

namespace {

// 5000 points in a 1 m cube far from the origin, where a float's spacing is 2^-10 m.
std::vector<Vec3> farCloud() {
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> u(-0.5, 0.5);
    std::vector<Vec3> pos;
    for (int p = 0; p < 5000; ++p)
        pos.push_back(Vec3(1e4, -3e3, 700) + Vec3(u(rng), u(rng), u(rng)));
    return pos;
}

} // namespace

TEST_CASE("Reference positions stay within their error bound, set by the spheres' extent",
          "[neighbours]") {
    const std::vector<Vec3> pos = farCloud();
    ReferencePositions ref;
    ref.assign(pos);
    REQUIRE(ref.size() == pos.size());
    // Relative to the centre of the bounding box every component is at most 0.5 m: rounded with
    // an error of at most 2^-24 x 0.5 m, bounded by 2^-23 of the largest float plus the double
    // roundings (2^-52 x 1e4 m).
    CHECK(ref.error <= std::ldexp(0.5, -23) + std::ldexp(2e4, -52));
    double worst = 0;
    for (size_t p = 0; p < pos.size(); ++p)
        worst = std::max(worst, (ref[p] - pos[p]).cwiseAbs().maxCoeff());
    CHECK(worst <= ref.error);
    CHECK(worst > ref.error / 8); // the bound is not loose: the error is real
}

TEST_CASE("Version 4 checkpoints' reference positions load rounded as a rebuild rounds them",
          "[checkpoint][neighbours]") {
    std::vector<Vec3> pos = farCloud();
    std::string bytes;
    ckpt::Writer w([&](const char* p, size_t k) { bytes.append(p, k); });
    w.version = 4;
    ckpt::io(w, pos); // version 4 stored the doubles
    w.flush();
    ckpt::Reader r(bytes.data(), bytes.size(), 4);
    ReferencePositions loaded;
    ckpt::io(r, loaded);
    ReferencePositions rebuilt;
    rebuilt.assign(pos);
    CHECK(loaded == rebuilt);

    SECTION("and version 5 stores them as they are") {
        std::string now;
        ckpt::Writer w5([&](const char* p, size_t k) { now.append(p, k); });
        ckpt::io(w5, rebuilt);
        w5.flush();
        CHECK(now.size() == 3 * 8 + 8 + 12 * pos.size()); // origin, count, three floats each
        ckpt::Reader r5(now.data(), now.size());
        ReferencePositions back;
        ckpt::io(r5, back);
        CHECK(back == rebuilt);
    }
}
