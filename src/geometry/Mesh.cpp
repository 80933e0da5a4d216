#include "geometry/Mesh.hpp"
#include "io/WholeFile.hpp"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <string_view>
#include <unordered_map>

namespace dem {

namespace {

// ---------------------------------------------------------------------------------------------
// Text helpers shared by the readers

using Words = std::vector<std::string_view>;

// Walks a text line by line, yielding the whitespace-separated words of each non-blank line and
// remembering its 1-based number for error messages.
class LineCursor {
public:
    LineCursor(std::string_view text, bool hashComments) : rest_(text), comments_(hashComments) {}

    bool next(Words& words) {
        while (!rest_.empty()) {
            const size_t end = std::min(rest_.find('\n'), rest_.size());
            std::string_view line = rest_.substr(0, end);
            rest_.remove_prefix(std::min(end + 1, rest_.size()));
            ++line_;
            if (comments_)
                line = line.substr(0, line.find('#'));
            split(line, words);
            if (!words.empty())
                return true;
        }
        return false;
    }
    int line() const { return line_; }

private:
    static void split(std::string_view line, Words& words) {
        words.clear();
        size_t i = 0;
        while ((i = line.find_first_not_of(" \t\r\f\v", i)) != std::string_view::npos) {
            const size_t end = std::min(line.find_first_of(" \t\r\f\v", i), line.size());
            words.push_back(line.substr(i, end - i));
            i = end;
        }
    }

    std::string_view rest_;
    bool comments_;
    int line_ = 0;
};

bool lineError(std::string& error, int line, const std::string& what) {
    error = "line " + std::to_string(line) + ": " + what;
    return false;
}

// A finite number spelled out entirely by `word` (a leading '+' is allowed).
bool parseNumber(std::string_view word, double& value) {
    if (word.size() > 1 && word[0] == '+' && word[1] != '-')
        word.remove_prefix(1);
    const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
    return ec == std::errc() && end == word.data() + word.size() && std::isfinite(value);
}

bool parseCount(std::string_view word, uint64_t& value) {
    const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
    return ec == std::errc() && end == word.data() + word.size();
}

bool parseVec3(const Words& w, size_t first, Vec3& v) {
    return w.size() >= first + 3 && parseNumber(w[first], v.x()) &&
           parseNumber(w[first + 1], v.y()) && parseNumber(w[first + 2], v.z());
}

bool sameWord(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower((unsigned char)x) == std::tolower((unsigned char)y);
           });
}

// True when the line is exactly the given keywords (any case), followed by three numbers stored
// in *v when v is not null.
bool keywordLine(const Words& w, std::initializer_list<std::string_view> keys, Vec3* v) {
    const size_t n = keys.size();
    if (w.size() != n + (v ? 3 : 0))
        return false;
    size_t i = 0;
    for (std::string_view key : keys)
        if (!sameWord(w[i++], key))
            return false;
    return !v || parseVec3(w, n, *v);
}

// ---------------------------------------------------------------------------------------------
// Mesh building

// Adds a triangle with its own three vertices. The file's normal only decides the winding: when
// it disagrees with the vertex order the order is reversed (a zero normal says nothing).
void addSoupTriangle(TriangleMesh& mesh, Vec3 v0, Vec3 v1, Vec3 v2, const Vec3& fileNormal) {
    if (fileNormal.dot((v1 - v0).cross(v2 - v0)) < 0)
        std::swap(v1, v2);
    const auto base = uint32_t(mesh.vertices.size());
    mesh.vertices.insert(mesh.vertices.end(), {v0, v1, v2});
    mesh.triangles.push_back({base, base + 1, base + 2});
}

// Removes vertices no triangle uses, keeping the others in order.
void dropUnusedVertices(TriangleMesh& mesh) {
    constexpr uint32_t unused = UINT32_MAX;
    std::vector<uint32_t> newIndex(mesh.vertices.size(), unused);
    for (const auto& t : mesh.triangles)
        for (uint32_t v : t)
            newIndex[v] = 0;
    uint32_t next = 0;
    for (size_t v = 0; v < mesh.vertices.size(); ++v)
        if (newIndex[v] != unused) {
            newIndex[v] = next;
            mesh.vertices[next++] = mesh.vertices[v];
        }
    mesh.vertices.resize(next);
    for (auto& t : mesh.triangles)
        for (uint32_t& v : t)
            v = newIndex[v];
}

// ---------------------------------------------------------------------------------------------
// STL

constexpr size_t stlHeaderBytes = 84, stlTriangleBytes = 50;

uint32_t readU32(const std::string& data, size_t at) {
    uint32_t v = 0;
    for (int b = 3; b >= 0; --b)
        v = (v << 8) | uint8_t(data[at + size_t(b)]);
    return v; // STL is little-endian whatever the machine
}

float readF32(const std::string& data, size_t at) {
    return std::bit_cast<float>(readU32(data, at));
}

Vec3 readVec3(const std::string& data, size_t at) {
    return Vec3(readF32(data, at), readF32(data, at + 4), readF32(data, at + 8));
}

// Binary when the size matches the triangle count in the header exactly: the header itself may
// begin with "solid", so the size is the only reliable sign.
bool isBinaryStl(const std::string& data) {
    return data.size() >= stlHeaderBytes &&
           data.size() == stlHeaderBytes + stlTriangleBytes * uint64_t(readU32(data, 80));
}

bool startsWithSolid(const std::string& data) {
    const size_t i = data.find_first_not_of(" \t\r\n");
    return i != std::string::npos && data.compare(i, 5, "solid") == 0;
}

// Why the file is not a binary STL, from its size.
std::string binarySizeProblem(const std::string& data) {
    if (data.size() < stlHeaderBytes)
        return "binary STL needs at least 84 bytes, but the file has " +
               std::to_string(data.size());
    const uint64_t n = readU32(data, 80);
    return "binary STL with the " + std::to_string(n) + " triangles its header declares needs " +
           "84 + 50*" + std::to_string(n) + " = " +
           std::to_string(stlHeaderBytes + stlTriangleBytes * n) + " bytes, but the file has " +
           std::to_string(data.size());
}

bool parseBinaryStl(const std::string& data, TriangleMesh& mesh, std::string& error) {
    const size_t n = readU32(data, 80);
    mesh.vertices.reserve(3 * n);
    mesh.triangles.reserve(n);
    for (size_t t = 0; t < n; ++t) {
        const size_t at = stlHeaderBytes + stlTriangleBytes * t;
        Vec3 normal = readVec3(data, at);
        const Vec3 v0 = readVec3(data, at + 12), v1 = readVec3(data, at + 24),
                   v2 = readVec3(data, at + 36);
        if (!isFinite(v0) || !isFinite(v1) || !isFinite(v2)) {
            error = "triangle " + std::to_string(t + 1) + " (at byte " + std::to_string(at) +
                    "): vertex coordinate is not a finite number";
            return false;
        }
        if (!isFinite(normal))
            normal.setZero();
        addSoupTriangle(mesh, v0, v1, v2, normal);
    }
    return true;
}

// Reads the next line and checks that it is `keys` (then three numbers into *v when v is not
// null); `what` spells the expected line for the error message.
bool expectLine(LineCursor& c, Words& w, std::initializer_list<std::string_view> keys, Vec3* v,
                const char* what, std::string& error) {
    if (!c.next(w))
        return lineError(error, c.line(),
                         std::string("expected '") + what + "', found the end of the file");
    if (!keywordLine(w, keys, v))
        return lineError(error, c.line(), std::string("expected '") + what + "'");
    return true;
}

bool parseAsciiStl(const std::string& text, TriangleMesh& mesh, std::string& error) {
    LineCursor c(text, false);
    Words w;
    c.next(w); // "solid [name]", checked by the caller
    bool inSolid = true;
    while (c.next(w)) {
        // Some files hold several solids one after the other.
        if (!inSolid) {
            if (!sameWord(w[0], "solid"))
                return lineError(error, c.line(), "expected 'solid' or the end of the file");
            inSolid = true;
            continue;
        }
        if (sameWord(w[0], "endsolid")) {
            inSolid = false;
            continue;
        }
        Vec3 normal, v[3];
        if (!keywordLine(w, {"facet", "normal"}, &normal))
            return lineError(error, c.line(), "expected 'facet normal nx ny nz' or 'endsolid'");
        if (!expectLine(c, w, {"outer", "loop"}, nullptr, "outer loop", error))
            return false;
        for (Vec3& vertex : v)
            if (!expectLine(c, w, {"vertex"}, &vertex, "vertex x y z", error))
                return false;
        if (!expectLine(c, w, {"endloop"}, nullptr, "endloop", error) ||
            !expectLine(c, w, {"endfacet"}, nullptr, "endfacet", error))
            return false;
        addSoupTriangle(mesh, v[0], v[1], v[2], normal);
    }
    return true;
}

// ---------------------------------------------------------------------------------------------
// OFF

bool parseOffCounts(LineCursor& c, Words& w, uint64_t& nv, uint64_t& nf, std::string& error) {
    if (!c.next(w) || !sameWord(w[0], "OFF"))
        return lineError(error, std::max(c.line(), 1), "expected the 'OFF' header");
    // The counts usually have their own line, but may follow the header on the same line.
    Words counts(w.begin() + 1, w.end());
    if (counts.empty() && c.next(w))
        counts = w;
    uint64_t ne = 0;
    const bool ok = (counts.size() == 2 || counts.size() == 3) && parseCount(counts[0], nv) &&
                    parseCount(counts[1], nf) && (counts.size() == 2 || parseCount(counts[2], ne));
    if (!ok)
        return lineError(error, c.line(), "expected the counts 'vertices faces edges'");
    if (nv >= UINT32_MAX)
        return lineError(error, c.line(), "too many vertices");
    return true;
}

// One face "n i0 i1 ... i(n-1)", triangulated as a fan around i0 (exact for convex polygons).
// Words after the indices (a colour) are ignored.
bool parseOffFace(const Words& w, int line, size_t nv, TriangleMesh& mesh, std::string& error) {
    uint64_t n = 0;
    if (!parseCount(w[0], n) || n < 3)
        return lineError(error, line, "expected a face 'n i0 i1 ...' with n >= 3");
    if (w.size() < n + 1)
        return lineError(error, line,
                         "face has " + std::to_string(w.size() - 1) + " vertex indices, expected " +
                             std::to_string(n));
    std::vector<uint32_t> ids(n);
    for (size_t k = 0; k < n; ++k) {
        uint64_t id = 0;
        if (!parseCount(w[k + 1], id))
            return lineError(error, line,
                             "vertex index '" + std::string(w[k + 1]) +
                                 "' is not a non-negative integer");
        if (id >= nv)
            return lineError(error, line,
                             "vertex index " + std::to_string(id) + " out of range (the file has " +
                                 std::to_string(nv) + " vertices, numbered from 0)");
        ids[k] = uint32_t(id);
    }
    for (size_t k = 1; k + 1 < n; ++k)
        mesh.triangles.push_back({ids[0], ids[k], ids[k + 1]});
    return true;
}

bool parseOff(const std::string& text, TriangleMesh& mesh, std::string& error) {
    LineCursor c(text, true);
    Words w;
    uint64_t nv = 0, nf = 0;
    if (!parseOffCounts(c, w, nv, nf, error))
        return false;
    mesh.vertices.reserve(std::min<uint64_t>(nv, 1u << 24));
    for (uint64_t k = 0; k < nv; ++k) {
        Vec3 v;
        if (!c.next(w))
            return lineError(error, c.line(),
                             "the file ends after " + std::to_string(k) + " of " +
                                 std::to_string(nv) + " vertices");
        if (!parseVec3(w, 0, v))
            return lineError(error, c.line(), "expected a vertex 'x y z'");
        mesh.vertices.push_back(v);
    }
    for (uint64_t k = 0; k < nf; ++k) {
        if (!c.next(w))
            return lineError(error, c.line(),
                             "the file ends after " + std::to_string(k) + " of " +
                                 std::to_string(nf) + " faces");
        if (!parseOffFace(w, c.line(), nv, mesh, error))
            return false;
    }
    return true;
}

// ---------------------------------------------------------------------------------------------
// Welding

struct CellKey {
    int64_t i, j, k;
    bool operator==(const CellKey&) const = default;
};
struct CellHash {
    size_t operator()(const CellKey& c) const {
        uint64_t h = uint64_t(c.i) * 0x9E3779B97F4A7C15ull;
        h ^= uint64_t(c.j) * 0xC2B2AE3D27D4EB4Full + (h >> 29);
        h ^= uint64_t(c.k) * 0x165667B19E3779F9ull + (h >> 32);
        return size_t(h);
    }
};

// For each vertex, the index of an earlier kept vertex within `tol` of it, or its own index when
// there is none (it is then kept). Kept vertices are binned in cells at least `tol` wide, so only
// the 27 cells around a vertex need searching: linear time instead of comparing all pairs.
std::vector<uint32_t> clusterVertices(const std::vector<Vec3>& vertices, const Vec3& origin,
                                      double cell, double tol) {
    std::unordered_map<CellKey, std::vector<uint32_t>, CellHash> cells;
    cells.reserve(vertices.size());
    std::vector<uint32_t> rep(vertices.size());
    for (size_t v = 0; v < vertices.size(); ++v) {
        const Vec3 q = ((vertices[v] - origin) / cell).array().floor();
        const CellKey key{int64_t(q.x()), int64_t(q.y()), int64_t(q.z())};
        rep[v] = uint32_t(v);
        for (int64_t dk = -1; dk <= 1 && rep[v] == v; ++dk)
            for (int64_t dj = -1; dj <= 1 && rep[v] == v; ++dj)
                for (int64_t di = -1; di <= 1 && rep[v] == v; ++di) {
                    const auto it = cells.find({key.i + di, key.j + dj, key.k + dk});
                    if (it == cells.end())
                        continue;
                    for (uint32_t other : it->second)
                        if ((vertices[other] - vertices[v]).norm() <= tol) {
                            rep[v] = other;
                            break;
                        }
                }
        if (rep[v] == v)
            cells[key].push_back(uint32_t(v));
    }
    return rep;
}

// Zero area after welding: a repeated vertex, or sides so nearly parallel that the area is
// rounding noise compared with the squared longest side.
bool degenerate(const TriangleMesh& mesh, const std::array<uint32_t, 3>& t) {
    if (t[0] == t[1] || t[1] == t[2] || t[0] == t[2])
        return true;
    const Vec3 &a = mesh.vertices[t[0]], &b = mesh.vertices[t[1]], &c = mesh.vertices[t[2]];
    const double longest =
        std::max({(b - a).squaredNorm(), (c - b).squaredNorm(), (a - c).squaredNorm()});
    return (b - a).cross(c - a).norm() <= 1e-14 * longest;
}

} // namespace

TriangleMesh boxMesh(const Vec3& min, const Vec3& max, const std::vector<std::string>& open) {
    TriangleMesh mesh;
    // Corner c has bit a set when it sits at max along axis a.
    for (uint32_t c = 0; c < 8; ++c)
        mesh.vertices.emplace_back((c & 1) ? max.x() : min.x(), (c & 2) ? max.y() : min.y(),
                                   (c & 4) ? max.z() : min.z());
    // Unknown names in `open` are ignored: the deck loader reports them.
    static const char* const names[3][2] = {{"x-", "x+"}, {"y-", "y+"}, {"z-", "z+"}};
    for (int a = 0; a < 3; ++a) {
        // With (a, b, c) cyclic, the quad corners in (b, c) order 00, 10, 11, 01 wind around +e_a.
        const uint32_t bBit = 1u << ((a + 1) % 3), cBit = 1u << ((a + 2) % 3);
        for (int side = 0; side < 2; ++side) {
            if (std::find(open.begin(), open.end(), names[a][side]) != open.end())
                continue;
            const uint32_t s = side ? (1u << a) : 0;
            std::array<uint32_t, 4> q{s, s | bBit, s | bBit | cBit, s | cBit};
            // Inwards is +e_a on the min side and -e_a on the max side.
            if (side)
                std::reverse(q.begin(), q.end());
            mesh.triangles.push_back({q[0], q[1], q[2]});
            mesh.triangles.push_back({q[0], q[2], q[3]});
        }
    }
    dropUnusedVertices(mesh);
    return mesh;
}

TriangleMesh rectangleMesh(const Vec3& center, const Vec3& u, const Vec3& v) {
    TriangleMesh mesh;
    const Vec3 hu = 0.5 * u, hv = 0.5 * v;
    mesh.vertices = {center - hu - hv, center + hu - hv, center + hu + hv, center - hu + hv};
    mesh.triangles = {{0, 1, 2}, {0, 2, 3}}; // (v1 - v0) x (v2 - v0) = u x (u + v) = u x v
    return mesh;
}

bool loadStl(const std::string& path, TriangleMesh& mesh, std::string& error) {
    std::string data;
    if (!readWholeFile(path, data, error))
        return false;
    TriangleMesh out;
    if (isBinaryStl(data)) {
        if (!parseBinaryStl(data, out, error))
            return false;
    } else if (startsWithSolid(data) && data.find('\0') == std::string::npos) {
        if (!parseAsciiStl(data, out, error))
            return false;
    } else if (startsWithSolid(data)) {
        // Text never holds NUL bytes: this is a binary file whose header begins with "solid", as
        // many exporters write, and whose size does not match its triangle count.
        error = "damaged binary STL (it starts with 'solid' but holds NUL bytes): " +
                binarySizeProblem(data);
        return false;
    } else {
        error = "not an STL file: ASCII STL starts with 'solid', and " + binarySizeProblem(data);
        return false;
    }
    if (out.triangles.empty()) {
        error = "the file holds no triangles";
        return false;
    }
    mesh = std::move(out);
    return true;
}

bool loadOff(const std::string& path, TriangleMesh& mesh, std::string& error) {
    std::string text;
    if (!readWholeFile(path, text, error))
        return false;
    TriangleMesh out;
    if (!parseOff(text, out, error))
        return false;
    if (out.triangles.empty()) {
        error = "the file holds no faces";
        return false;
    }
    mesh = std::move(out);
    return true;
}

void weldVertices(TriangleMesh& mesh, double relativeTolerance) {
    if (mesh.vertices.empty())
        return;
    Vec3 lo = mesh.vertices[0], hi = lo;
    for (const Vec3& v : mesh.vertices) {
        lo = lo.cwiseMin(v);
        hi = hi.cwiseMax(v);
    }
    const double diagonal = (hi - lo).norm();
    const double tol = std::max(relativeTolerance, 0.0) * diagonal;
    // Cells no narrower than tol; the floor keeps cell indices far from overflow when the
    // tolerance is tiny or zero (a zero tolerance merges exact duplicates only).
    const double cell = std::max({tol, diagonal * 1e-12, 1e-300});
    const std::vector<uint32_t> rep = clusterVertices(mesh.vertices, lo, cell, tol);

    std::vector<std::array<uint32_t, 3>> kept;
    kept.reserve(mesh.triangles.size());
    for (auto t : mesh.triangles) {
        for (uint32_t& v : t)
            v = rep[v];
        if (!degenerate(mesh, t))
            kept.push_back(t);
    }
    mesh.triangles = std::move(kept);
    dropUnusedVertices(mesh);
}

void transformMesh(TriangleMesh& mesh, double scale, const Mat3& rotation,
                   const Vec3& translation) {
    for (Vec3& v : mesh.vertices)
        v = rotation * (scale * v) + translation;
}

} // namespace dem
