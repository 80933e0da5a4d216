#include "geometry/Packing.hpp"
#include "io/WholeFile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numbers>
#include <random>
#include <string_view>

namespace dem {

namespace {

// ---------------------------------------------------------------------------------------------
// Random numbers

// Uniform doubles in [0, 1) from the top 53 bits of mt19937_64. std::uniform_real_distribution
// is not used because its output differs between standard library versions, and packings must
// be the same everywhere for a given seed.
class Random {
public:
    explicit Random(uint64_t seed) : gen_(seed) {}
    double uniform() { return double(gen_() >> 11) * 0x1.0p-53; }

private:
    std::mt19937_64 gen_;
};

double sphereVolume(double r) {
    return 4.0 / 3.0 * std::numbers::pi * r * r * r;
}

// ---------------------------------------------------------------------------------------------
// Sizes

// Inverse of the cumulative table at u in [0, 1). The fractions are taken as fractions by
// NUMBER of spheres (not by mass): sampling them directly gives each sphere its size, which keeps
// the generator simple and predictable. Between table points the diameter is interpolated
// linearly; the fraction below the first point gets the first diameter, and a table whose last
// fraction is below 1 is rescaled so that it ends at 1.
double tableDiameter(const SizeDistribution& s, double u) {
    const size_t n = std::min(s.diameters.size(), s.cumulativeFractions.size());
    const double* F = s.cumulativeFractions.data();
    const double* d = s.diameters.data();
    const double v = u * F[n - 1];
    if (v <= F[0])
        return d[0];
    const size_t i = size_t(std::upper_bound(F, F + n, v) - F); // first point with F > v
    if (i >= n)
        return d[n - 1];
    const double t = (v - F[i - 1]) / (F[i] - F[i - 1]);
    return d[i - 1] + t * (d[i] - d[i - 1]);
}

double sampleRadius(const SizeDistribution& s, Random& rng) {
    if (!s.diameters.empty() && !s.cumulativeFractions.empty())
        return 0.5 * tableDiameter(s, rng.uniform());
    return s.meanRadius * (1 + s.spread * (2 * rng.uniform() - 1));
}

// Region volume from the cell centres of a fixed 64^3 grid over its bounds: deterministic, and
// exact for boxes.
double regionVolume(const Region& region, const Vec3& lo, const Vec3& hi) {
    constexpr int n = 64;
    const Vec3 cell = (hi - lo) / n;
    int64_t inside = 0;
    for (int k = 0; k < n; ++k)
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i)
                if (contains(region, lo + cell.cwiseProduct(Vec3(i + 0.5, j + 0.5, k + 0.5))))
                    ++inside;
    return double(inside) / (double(n) * n * n) * (hi - lo).prod();
}

// All radii the cloud should contain, largest first: placing big spheres while there is still
// room for them greatly raises the fraction that fits.
std::vector<double> drawRadii(const RandomCloudSpec& spec, double volume, Random& rng) {
    std::vector<double> radii;
    if (spec.count >= 0) {
        radii.reserve(size_t(spec.count));
        for (int64_t n = 0; n < spec.count; ++n)
            radii.push_back(sampleRadius(spec.sizes, rng));
    } else if (spec.porosity > 0 && spec.porosity < 1) {
        // Stop at the sphere that brings the solid volume nearest the target.
        const double target = (1 - spec.porosity) * volume;
        double solid = 0;
        for (;;) {
            const double r = sampleRadius(spec.sizes, rng);
            const double v = sphereVolume(r);
            if (!(r > 0) || solid + 0.5 * v >= target)
                break;
            radii.push_back(r);
            solid += v;
        }
    }
    std::sort(radii.begin(), radii.end(), std::greater<double>());
    return radii;
}

// ---------------------------------------------------------------------------------------------
// Overlap search

// Spheres binned by the grid cell of their centre. Cells are twice the largest radius stored,
// so the query for a sphere no larger than that looks at the 3x3x3 cells around it. The grid is
// a dense array over the region's bounds; cell indices are clamped to it, which keeps the search
// exact for centres outside the bounds (clamping keeps a centre inside the clamped query range).
class SphereGrid {
public:
    // `maxRadius` is the largest radius that will be stored. Cells are made wider when needed to
    // keep their number under 4 per expected sphere: a huge sparse region must not exhaust
    // memory, and wider cells only cost more distance checks where spheres are sparse anyway.
    SphereGrid(const Vec3& lo, const Vec3& hi, double maxRadius, size_t expectedSpheres)
        : origin_(lo), reach_(maxRadius), cell_(std::max(2 * maxRadius, 1e-300)) {
        const double maxCells = std::max(64.0, 4.0 * double(expectedSpheres));
        const Vec3 extent = (hi - lo).cwiseMax(0.0);
        for (;;) {
            const Vec3 n = (extent / cell_).array().ceil().max(1.0);
            if (n.prod() <= maxCells) {
                for (int a = 0; a < 3; ++a)
                    dims_[a] = int64_t(n[a]);
                break;
            }
            cell_ *= 1.01 * std::cbrt(n.prod() / maxCells);
        }
        heads_.assign(size_t(dims_[0] * dims_[1] * dims_[2]), none);
        entries_.reserve(expectedSpheres);
    }

    void insert(const SphereSpec& s) {
        uint32_t& head = heads_[cellIndex(cellOf(s.center.x(), 0), cellOf(s.center.y(), 1),
                                          cellOf(s.center.z(), 2))];
        entries_.push_back({s, head});
        head = uint32_t(entries_.size() - 1);
    }

    // True when a sphere at p of radius r would overlap a stored sphere (touching is allowed).
    bool overlaps(const Vec3& p, double r) const {
        int64_t lo[3], hi[3];
        for (int a = 0; a < 3; ++a) {
            lo[a] = cellOf(p[a] - r - reach_, a);
            hi[a] = cellOf(p[a] + r + reach_, a);
        }
        for (int64_t k = lo[2]; k <= hi[2]; ++k)
            for (int64_t j = lo[1]; j <= hi[1]; ++j)
                for (int64_t i = lo[0]; i <= hi[0]; ++i)
                    for (uint32_t e = heads_[cellIndex(i, j, k)]; e != none; e = entries_[e].next)
                        if (intersects(entries_[e].sphere, p, r))
                            return true;
        return false;
    }

private:
    static constexpr uint32_t none = UINT32_MAX;
    struct Entry {
        SphereSpec sphere;
        uint32_t next; // next sphere in the same cell
    };

    static bool intersects(const SphereSpec& s, const Vec3& p, double r) {
        const double reach = s.radius + r;
        return (s.center - p).squaredNorm() < reach * reach;
    }

    int64_t cellOf(double x, int axis) const {
        const double c = std::floor((x - origin_[axis]) / cell_);
        return int64_t(std::clamp(c, 0.0, double(dims_[axis] - 1)));
    }
    size_t cellIndex(int64_t i, int64_t j, int64_t k) const {
        return size_t((k * dims_[1] + j) * dims_[0] + i);
    }

    Vec3 origin_;
    double reach_, cell_;
    int64_t dims_[3];
    std::vector<Entry> entries_;
    std::vector<uint32_t> heads_; // first entry of each cell's list
};

// Everything a new sphere must not overlap. Existing spheres larger than the new ones get a
// coarser grid of their own, so that a few big ones do not make the cells of the fine grid big.
class Obstacles {
public:
    Obstacles(const Vec3& lo, const Vec3& hi, double newMaxRadius, size_t newCount,
              const std::vector<SphereSpec>& existing)
        : fine_(lo, hi, newMaxRadius, newCount + existing.size()),
          coarse_(lo, hi, largestRadius(existing), existing.size()) {
        // Only existing spheres that can reach into the region's bounds matter.
        const Vec3 reachLo = lo.array() - newMaxRadius, reachHi = hi.array() + newMaxRadius;
        for (const SphereSpec& s : existing) {
            const bool near = (s.center.array() + s.radius >= reachLo.array()).all() &&
                              (s.center.array() - s.radius <= reachHi.array()).all();
            if (!near)
                continue;
            if (s.radius <= newMaxRadius)
                fine_.insert(s);
            else
                coarse_.insert(s);
        }
    }

    void add(const SphereSpec& s) { fine_.insert(s); }
    bool overlaps(const Vec3& p, double r) const {
        return fine_.overlaps(p, r) || coarse_.overlaps(p, r);
    }

private:
    static double largestRadius(const std::vector<SphereSpec>& spheres) {
        double r = 0;
        for (const SphereSpec& s : spheres)
            r = std::max(r, s.radius);
        return r;
    }

    SphereGrid fine_, coarse_;
};

// ---------------------------------------------------------------------------------------------
// Placement

struct Placement {
    const Region& region;
    Vec3 lo, hi; // region bounds
    int64_t maxAttempts;
};

// One random position for a sphere of radius r inside the region, or false.
bool findPosition(const Placement& pl, const Obstacles& obstacles, double r, Random& rng,
                  Vec3& out) {
    const Vec3 lo = pl.lo.array() + r, hi = pl.hi.array() - r;
    if (!(r > 0) || (lo.array() > hi.array()).any())
        return false;
    for (int64_t attempt = 0; attempt < pl.maxAttempts; ++attempt) {
        const Vec3 p(lo.x() + rng.uniform() * (hi.x() - lo.x()),
                     lo.y() + rng.uniform() * (hi.y() - lo.y()),
                     lo.z() + rng.uniform() * (hi.z() - lo.z()));
        if (containsSphere(pl.region, p, r) && !obstacles.overlaps(p, r)) {
            out = p;
            return true;
        }
    }
    return false;
}

std::vector<SphereSpec> placeAll(const Placement& pl, const std::vector<double>& radii,
                                 const std::vector<SphereSpec>& existing, Random& rng,
                                 int64_t& shortfall) {
    std::vector<SphereSpec> placed;
    if (radii.empty())
        return placed;
    Obstacles obstacles(pl.lo, pl.hi, radii.front(), radii.size(), existing);

    // After this many failures in a row, further spheres of a size that already failed are
    // given up without trying: free space only shrinks, so they would almost surely fail too,
    // and a too-large count would otherwise cost maxAttempts for every missing sphere.
    constexpr int giveUpStreak = 16;
    int failStreak = 0;
    double failedRadius = INFINITY;
    placed.reserve(radii.size());
    for (double r : radii) {
        Vec3 p;
        const bool hopeless = failStreak >= giveUpStreak && r >= failedRadius;
        if (!hopeless && findPosition(pl, obstacles, r, rng, p)) {
            placed.push_back({p, r});
            obstacles.add(placed.back());
            failStreak = 0;
        } else {
            ++shortfall;
            ++failStreak;
            failedRadius = std::min(failedRadius, r);
        }
    }
    return placed;
}

// ---------------------------------------------------------------------------------------------
// Lattices

int64_t positiveMod(int64_t a, int64_t m) {
    return ((a % m) + m) % m;
}

// Visits lattice indices covering the region's bounds, k outermost, and keeps the spheres that
// lie inside the region. `step` is the lattice period along each axis.
template <class PositionFn>
std::vector<SphereSpec> clipLattice(const Region& region, double radius, const Vec3& step,
                                    const Vec3& origin, PositionFn position) {
    std::vector<SphereSpec> out;
    Vec3 lo, hi;
    if (!(radius > 0) || !(step.array() > 0).all() || !bounds(region, lo, hi) || !isFinite(lo) ||
        !isFinite(hi))
        return out;
    // Two extra cells each side cover the row and layer offsets of the hexagonal lattice.
    int64_t first[3], last[3];
    for (int a = 0; a < 3; ++a) {
        first[a] = int64_t(std::floor((lo[a] - origin[a]) / step[a])) - 2;
        last[a] = int64_t(std::ceil((hi[a] - origin[a]) / step[a])) + 2;
    }
    // A lattice that exactly fits a box would lose its outer layers to rounding in the
    // positions; letting spheres poke out by a billionth of their radius keeps them.
    const double rTest = radius * (1 - 1e-9);
    const Vec3 inLo = lo.array() + rTest, inHi = hi.array() - rTest;
    for (int64_t k = first[2]; k <= last[2]; ++k)
        for (int64_t j = first[1]; j <= last[1]; ++j)
            for (int64_t i = first[0]; i <= last[0]; ++i) {
                const Vec3 p = position(i, j, k);
                if ((p.array() < inLo.array()).any() || (p.array() > inHi.array()).any())
                    continue;
                if (containsSphere(region, p, rTest))
                    out.push_back({p, radius});
            }
    return out;
}

// ---------------------------------------------------------------------------------------------
// Sphere files

// Whitespace-separated words of a line, without a '#' comment.
std::vector<std::string_view> words(std::string_view line) {
    line = line.substr(0, line.find('#'));
    std::vector<std::string_view> out;
    size_t i = 0;
    while (true) {
        i = line.find_first_not_of(" \t\r\f\v", i);
        if (i == std::string_view::npos)
            break;
        const size_t end = std::min(line.find_first_of(" \t\r\f\v", i), line.size());
        out.push_back(line.substr(i, end - i));
        i = end;
    }
    return out;
}

// A finite number spelled out entirely by `word` (a leading '+' is allowed).
bool parseNumber(std::string_view word, double& value) {
    if (word.size() > 1 && word[0] == '+' && word[1] != '-')
        word.remove_prefix(1);
    const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
    return ec == std::errc() && end == word.data() + word.size() && std::isfinite(value);
}

// Parses one "x y z r" line; false with `problem` set (without the line prefix) when it is bad.
bool parseSphereLine(const std::vector<std::string_view>& w, SphereSpec& s, std::string& problem) {
    if (w.size() != 4) {
        problem = fmt::format("expected 4 numbers 'x y z r', got {}", w.size());
        return false;
    }
    double v[4];
    for (int n = 0; n < 4; ++n)
        if (!parseNumber(w[n], v[n])) {
            // fmt rather than string +: GCC 12 gives a false -Wrestrict warning on the latter.
            problem = fmt::format("'{}' is not a finite number", w[n]);
            return false;
        }
    if (!(v[3] > 0)) {
        problem = fmt::format("radius must be positive, got {}", w[3]);
        return false;
    }
    s = {Vec3(v[0], v[1], v[2]), v[3]};
    return true;
}

} // namespace

std::vector<SphereSpec> randomCloud(const RandomCloudSpec& spec,
                                    const std::vector<SphereSpec>& existing, int64_t& shortfall) {
    shortfall = 0;
    Random rng(spec.seed);
    Vec3 lo, hi;
    if (!bounds(spec.region, lo, hi) || !isFinite(lo) || !isFinite(hi)) {
        shortfall = std::max<int64_t>(spec.count, 0);
        return {};
    }
    const double volume = spec.count >= 0 ? 0.0 : regionVolume(spec.region, lo, hi);
    const std::vector<double> radii = drawRadii(spec, volume, rng);
    const Placement placement{spec.region, lo, hi, spec.maxAttempts > 0 ? spec.maxAttempts : 1000};
    return placeAll(placement, radii, existing, rng, shortfall);
}

std::vector<SphereSpec> hexagonalLattice(const Region& region, double radius, double gap,
                                         const Vec3& origin) {
    // Face-centred cubic stacking of close-packed layers (ABC): in a layer, rows are dy apart and
    // every other row is shifted by half a spacing; each layer is shifted by (s/2, dy/3) from the
    // one below, which puts its spheres over the hollows. Every sphere has 12 neighbours at s.
    const double s = 2 * radius + gap;
    const double dy = s * std::sqrt(3.0) / 2, dz = s * std::sqrt(2.0 / 3.0);
    return clipLattice(
        region, radius, Vec3(s, dy, dz), origin, [&](int64_t i, int64_t j, int64_t k) {
            const double layer = double(positiveMod(k, 3)), row = double(positiveMod(j, 2));
            return Vec3(origin.x() + (double(i) + 0.5 * row + 0.5 * layer) * s,
                        origin.y() + (double(j) + layer / 3) * dy, origin.z() + double(k) * dz);
        });
}

std::vector<SphereSpec> cubicLattice(const Region& region, double radius, double gap,
                                     const Vec3& origin) {
    const double s = 2 * radius + gap;
    return clipLattice(region, radius, Vec3::Constant(s), origin,
                       [&](int64_t i, int64_t j, int64_t k) {
                           return Vec3(origin + s * Vec3(double(i), double(j), double(k)));
                       });
}

bool readSphereFile(const std::string& path, std::vector<SphereSpec>& out, std::string& error) {
    std::string text;
    if (!readWholeFile(path, text, error))
        return false;
    std::vector<SphereSpec> spheres; // `out` is only replaced when the whole file is good
    std::string_view rest = text;
    for (int lineNo = 1; !rest.empty(); ++lineNo) {
        const size_t end = std::min(rest.find('\n'), rest.size());
        const std::vector<std::string_view> w = words(rest.substr(0, end));
        rest.remove_prefix(std::min(end + 1, rest.size()));
        if (w.empty())
            continue;
        SphereSpec s;
        std::string problem;
        if (!parseSphereLine(w, s, problem)) {
            error = "line " + std::to_string(lineNo) + ": " + problem;
            return false;
        }
        spheres.push_back(s);
    }
    out = std::move(spheres);
    return true;
}

} // namespace dem
