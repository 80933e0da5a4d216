#include "io/VtkWriter.hpp"

#include "core/SphereLoad.hpp"
#include "io/AtomicFile.hpp"
#include "io/DirectoryNames.hpp"
#include "io/WholeFile.hpp"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <memory>
#include <new>
#include <omp.h>
#include <stdexcept>
#include <zlib.h>

namespace dem {

namespace fs = std::filesystem;

namespace {

static_assert(sizeof(Vec3) == 3 * sizeof(double), "Vec3 arrays are written as packed doubles");

// Uncompressed size of one zlib block; VTK's own writer uses 32 KiB, any size reads back.
constexpr size_t kBlockSize = size_t(1) << 16;

// ---------------------------------------------------------------------------------------------
// zlib

// zlib's memory (its own default is malloc). Outside parallel regions it comes from operator new,
// as the rest of the program's, so that the tests that fail allocations reach it (FailingNew.hpp);
// inside them from malloc, as dem's new-handler ends the process there (OutOfMemory.cpp). Running
// out is Z_MEM_ERROR either way. `fromMalloc` (zlib's opaque pointer) keeps a stream's frees with
// its allocations.
voidpf zlibAllocate(voidpf fromMalloc, uInt items, uInt size) {
    const size_t bytes = size_t(items) * size;
    return fromMalloc ? std::malloc(bytes) : ::operator new(bytes, std::nothrow);
}
void zlibFree(voidpf fromMalloc, voidpf p) {
    if (fromMalloc)
        std::free(p);
    else
        ::operator delete(p);
}

// A zlib stream kept for many blocks: set up once at one level (deflateInit's defaults, zlib's
// memory from zlibAllocate), reset for each block. Setting a stream up costs more than deflating a
// block that is stored (level 0): it takes about 270 KB, which the allocator hands back to the
// system and gets again, page by page, when a stream per block is made and ended. A reset
// allocates nothing, so the blocks can be compressed inside a parallel region. (The level is not
// changed on a reset stream: deflateParams would flush into the previous block's output with zlib
// before 1.2.12.)
class Deflater {
public:
    // Throws std::bad_alloc when zlib runs out of memory.
    explicit Deflater(int level) {
        z_.zalloc = zlibAllocate;
        z_.zfree = zlibFree;
        z_.opaque = omp_get_level() > 0 ? &z_ : nullptr; // any pointer but null: from malloc
        if (const int r = deflateInit(&z_, level); r != Z_OK) {
            if (r == Z_MEM_ERROR)
                throw std::bad_alloc();
            throw std::runtime_error(fmt::format("zlib: deflateInit failed ({})", r));
        }
    }
    ~Deflater() { deflateEnd(&z_); }
    Deflater(const Deflater&) = delete;
    Deflater& operator=(const Deflater&) = delete;

    // As compress2 at the stream's level: one whole zlib stream of `in` into `out`, whose
    // capacity is *outBytes on entry and the stream's size on return. The callers' blocks are at
    // most kBlockSize, well within zlib's 32-bit counts.
    int compress(uint8_t* out, uLongf* outBytes, const uint8_t* in, uLong inBytes) {
        if (const int r = deflateReset(&z_); r != Z_OK)
            return r;
        z_.next_in = const_cast<Bytef*>(in);
        z_.avail_in = uInt(inBytes);
        z_.next_out = out;
        z_.avail_out = uInt(*outBytes);
        const int r = deflate(&z_, Z_FINISH);
        *outBytes = z_.total_out;
        return r == Z_STREAM_END ? Z_OK : r == Z_OK ? Z_BUF_ERROR : r;
    }

private:
    z_stream z_{};
};

// ---------------------------------------------------------------------------------------------
// base64 (RFC 4648, with padding)

constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void appendBase64(std::string& out, const uint8_t* p, size_t n) {
    const size_t old = out.size();
    out.resize(old + 4 * ((n + 2) / 3));
    char* o = out.data() + old;
    size_t i = 0;
    for (; i + 3 <= n; i += 3, o += 4) {
        const uint32_t v = (uint32_t(p[i]) << 16) | (uint32_t(p[i + 1]) << 8) | uint32_t(p[i + 2]);
        o[0] = kBase64[v >> 18];
        o[1] = kBase64[(v >> 12) & 63];
        o[2] = kBase64[(v >> 6) & 63];
        o[3] = kBase64[v & 63];
    }
    if (i < n) {
        const bool two = i + 1 < n;
        const uint32_t v = (uint32_t(p[i]) << 16) | (two ? uint32_t(p[i + 1]) << 8 : 0u);
        o[0] = kBase64[v >> 18];
        o[1] = kBase64[(v >> 12) & 63];
        o[2] = two ? kBase64[(v >> 6) & 63] : '=';
        o[3] = '=';
    }
}

// ---------------------------------------------------------------------------------------------
// Compression

// Whether deflating a block is worth its time. Floating-point fields with noisy mantissas
// (positions, forces) shrink by a few per cent only, and deflate is slow on them; such blocks are
// stored (zlib level 0: still a valid zlib stream, at memcpy speed). The test deflates a 4 KiB
// sample with `sampler` (level 1) and asks for at least 15 % saving.
bool worthCompressing(Deflater& sampler, const uint8_t* data, size_t len) {
    constexpr size_t kSample = 4096;
    if (len <= 2 * kSample)
        return true;
    uint8_t buffer[kSample + kSample / 8 + 64];
    uLongf cap = sizeof(buffer);
    const uint8_t* sample = data + (len - kSample) / 2;
    if (sampler.compress(buffer, &cap, sample, kSample) != Z_OK)
        return true;
    return double(cap) < 0.85 * double(kSample);
}

// ---------------------------------------------------------------------------------------------
// Data arrays

template <class T> constexpr const char* vtkTypeName();
template <> constexpr const char* vtkTypeName<double>() {
    return "Float64";
}
template <> constexpr const char* vtkTypeName<int32_t>() {
    return "Int32";
}
template <> constexpr const char* vtkTypeName<uint32_t>() {
    return "UInt32";
}
template <> constexpr const char* vtkTypeName<int64_t>() {
    return "Int64";
}
template <> constexpr const char* vtkTypeName<uint8_t>() {
    return "UInt8";
}

template <class T> void asciiValues(std::string& out, const void* data, size_t count) {
    const T* v = static_cast<const T*>(data);
    auto it = std::back_inserter(out);
    for (size_t k = 0; k < count; ++k) {
        if (k)
            out += ' ';
        if constexpr (std::is_floating_point_v<T>)
            fmt::format_to(it, "{}", v[k]);
        else
            fmt::format_to(it, "{}", int64_t(v[k]));
    }
}

// A typed view of contiguous values, `components` per tuple.
struct ArrayRef {
    const char* type;
    std::string name;
    int components;
    size_t tuples;
    const void* data;
    size_t elementSize;
    void (*ascii)(std::string&, const void*, size_t);
    bool isString = false; // VTK String array: `data` holds NUL-terminated strings back to back
    size_t bytes() const { return tuples * size_t(components) * elementSize; } // not strings
};

template <class T>
ArrayRef array(std::string name, const T* data, size_t tuples, int components = 1) {
    return {vtkTypeName<T>(), std::move(name), components, tuples, data,
            sizeof(T),        &asciiValues<T>};
}

ArrayRef vec3Array(std::string name, const std::vector<Vec3>& v) {
    return array(std::move(name), reinterpret_cast<const double*>(v.data()), v.size(), 3);
}

// Names back to back, each ended by a NUL, as a VTK String array holds them.
std::string joinedNames(const std::vector<std::string_view>& names) {
    std::string joined;
    for (std::string_view name : names) {
        joined += name;
        joined += '\0';
    }
    return joined;
}

// A String array of `count` names joined by joinedNames (field data: one tuple per name).
ArrayRef stringArray(std::string name, const std::string& joined, size_t count) {
    ArrayRef a{"String", std::move(name), 1, count, joined.data(), 1, nullptr};
    a.isString = true;
    return a;
}

// Accumulates one XML file in memory.
class VtkXml {
public:
    // `rawBytes`: about how much binary data will be written, to size the buffer once.
    VtkXml(const VtkFormat& f, size_t rawBytes) : format_(f) {
        s.reserve(binary() ? rawBytes * 4 / 3 + 4096 : rawBytes * 3 + 4096);
    }

    void header(const char* type) {
        s += "<?xml version=\"1.0\"?>\n";
        s += fmt::format("<VTKFile type=\"{}\" version=\"1.0\" byte_order=\"{}\" "
                         "header_type=\"UInt64\"",
                         type,
                         std::endian::native == std::endian::little ? "LittleEndian" : "BigEndian");
        if (binary())
            s += " compressor=\"vtkZLibDataCompressor\"";
        s += ">\n";
    }

    // Writes one <DataArray>; false only if zlib fails.
    bool write(const ArrayRef& a, int indent, bool withTuples = false) {
        s.append(size_t(indent), ' ');
        s += fmt::format("<DataArray type=\"{}\" Name=\"{}\"", a.type, escape(a.name));
        if (!a.isString)
            s += fmt::format(" NumberOfComponents=\"{}\"", a.components);
        if (withTuples || a.isString)
            s += fmt::format(" NumberOfTuples=\"{}\"", a.tuples);
        s += fmt::format(" format=\"{}\">\n", binary() ? "binary" : "ascii");
        s.append(size_t(indent + 2), ' ');
        const size_t bytes = a.isString ? stringBytes(a) : a.bytes();
        if (binary()) {
            if (!compressed(static_cast<const uint8_t*>(a.data), bytes))
                return false;
        } else if (a.isString) {
            asciiValues<uint8_t>(s, a.data, bytes);
        } else {
            a.ascii(s, a.data, a.tuples * size_t(a.components));
        }
        s += '\n';
        s.append(size_t(indent), ' ');
        s += "</DataArray>\n";
        return true;
    }

    // TimeValue and step, the field data ParaView looks for in a single file.
    bool timeFields(const Simulation& sim, int indent) {
        const double t = sim.time;
        const int64_t step = int64_t(sim.step);
        return write(array("TimeValue", &t, 1), indent, true) &&
               write(array("step", &step, 1), indent, true);
    }

    static std::string escape(const std::string& in) {
        std::string out;
        out.reserve(in.size());
        for (char c : in) {
            switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\'':
                out += "&apos;";
                break;
            default:
                out += c;
            }
        }
        return out;
    }

    std::string s;

private:
    bool binary() const { return format_.encoding == VtkEncoding::Base64Zlib; }

    static size_t stringBytes(const ArrayRef& a) {
        const char* p = static_cast<const char*>(a.data);
        size_t bytes = 0;
        for (size_t k = 0; k < a.tuples; ++k)
            bytes += std::strlen(p + bytes) + 1;
        return bytes;
    }

    // Header [blocks, block size, size of the last partial block (0 if full), compressed sizes]
    // as UInt64, base64-encoded on its own, then the compressed blocks, base64-encoded together.
    bool compressed(const uint8_t* data, size_t bytes) {
        const size_t nb = (bytes + kBlockSize - 1) / kBlockSize;
        auto blockBytes = [&](size_t b) { return std::min(kBlockSize, bytes - b * kBlockSize); };
        // One or two blocks (most arrays of a small scene) in this thread: waking the others
        // would cost more.
        const size_t threads = nb > 2 ? size_t(omp_get_max_threads()) : 1;
        // The streams and the blocks' memory are had here, before the parallel loop: running out
        // of it inside one ends the process (OutOfMemory.cpp), here it is std::bad_alloc. The
        // file's arrays share them: a block's buffer only grows.
        const int level = std::clamp(format_.compressionLevel, 1, 9);
        while (deflaters_.size() < threads) {
            deflaters_.push_back(std::make_unique<Deflater>(level));
            storers_.push_back(std::make_unique<Deflater>(0));
            samplers_.push_back(std::make_unique<Deflater>(1));
        }
        if (blocks_.size() < nb)
            blocks_.resize(nb);
        for (size_t b = 0; b < nb; ++b)
            if (blocks_[b].size() < compressBound(uLong(kBlockSize)))
                blocks_[b].resize(compressBound(uLong(kBlockSize)));
        std::vector<uLongf> used(nb); // each block's zlib stream, in bytes
        // Block b into blocks_[b] with this thread's streams: zlib's status.
        auto compress = [&](size_t b, size_t thread) noexcept {
            const size_t begin = b * kBlockSize;
            const size_t len = blockBytes(b);
            used[b] = uLongf(blocks_[b].size());
            Deflater& z = worthCompressing(*samplers_[thread], data + begin, len)
                              ? *deflaters_[thread]
                              : *storers_[thread];
            return z.compress(blocks_[b].data(), &used[b], data + begin, uLong(len));
        };
        std::vector<int> status(nb); // zlib's, per block
        if (threads > 1) {
#pragma omp parallel for schedule(dynamic)
            for (long b = 0; b < long(nb); ++b)
                status[size_t(b)] = compress(size_t(b), size_t(omp_get_thread_num()));
        } else {
            for (size_t b = 0; b < nb; ++b)
                status[b] = compress(b, 0);
        }
        if (std::any_of(status.begin(), status.end(), [](int z) { return z != Z_OK; }))
            return false;
        std::vector<uint64_t> head{nb, kBlockSize, bytes % kBlockSize};
        size_t total = 0;
        for (size_t b = 0; b < nb; ++b) {
            head.push_back(used[b]);
            total += used[b];
        }
        appendBase64(s, reinterpret_cast<const uint8_t*>(head.data()), head.size() * 8);
        std::vector<uint8_t> joined;
        joined.reserve(total);
        for (size_t b = 0; b < nb; ++b)
            joined.insert(joined.end(), blocks_[b].begin(), blocks_[b].begin() + long(used[b]));
        appendBase64(s, joined.data(), joined.size());
        return true;
    }

    VtkFormat format_;
    // Per thread, streams for the blocks deflated (the format's level) and stored (level 0), and
    // for the samples of worthCompressing (level 1).
    std::vector<std::unique_ptr<Deflater>> deflaters_, storers_, samplers_;
    std::vector<std::vector<uint8_t>> blocks_; // each block's compressed bytes
};

bool writeVtkFile(const std::string& path, const std::string& text, std::string& error) {
    std::error_code ec;
    const fs::path p(path);
    if (p.has_parent_path()) {
        fs::create_directories(p.parent_path(), ec);
        if (ec) {
            error = fmt::format("cannot create directory {}: {}", p.parent_path().string(),
                                ec.message());
            return false;
        }
    }
    return writeTextAtomically(path, text, Durability::Renamed, error);
}

bool compressionFailed(const std::string& path, std::string& error) {
    error = fmt::format("cannot write {}: zlib compression failed", path);
    return false;
}

bool particlesConsistent(const Particles& P, std::string& error) {
    const size_t n = P.size();
    const bool ok = P.mismatchedLength() == n;
    if (!ok)
        error = "inconsistent particle arrays (sizes differ)";
    return ok;
}

// Touching contacts per sphere: sphere–sphere pairs (both ends) and sphere–obstacle entries.
std::vector<int32_t> contactsPerSphere(const Simulation& sim) {
    const size_t n = sim.particles.size();
    std::vector<int32_t> count(n, 0);
    const SpherePairs& S = sim.pairs;
    if (S.start.size() == n + 1)
        S.forEachPair([&](size_t k, uint32_t i, uint32_t j) {
            if (S.touching(k) && j < n) {
                ++count[i];
                ++count[j];
            }
        });
    const ObstacleContacts& O = sim.obstacleContacts;
    if (O.start.size() == n + 1)
        for (size_t p = 0; p < n; ++p) {
            const size_t end = std::min<size_t>(O.start[p + 1], O.touching.size());
            for (size_t e = O.start[p]; e < end; ++e)
                count[p] += O.touching[e] ? 1 : 0;
        }
    return count;
}

} // namespace

// ---------------------------------------------------------------------------------------------
// Field selection

VtkFieldSelection VtkFieldSelection::none() {
    VtkFieldSelection s;
    s.radius = s.velocity = s.angularVelocity = s.displacement = s.force = s.torque = false;
    s.contacts = s.material = s.groups = s.id = s.orientation = false;
    return s;
}

const std::vector<std::string>& vtkFieldNames() {
    static const std::vector<std::string> names{
        "radius",   "velocity", "angular_velocity", "displacement", "force",      "torque",
        "contacts", "material", "groups",           "id",           "orientation"};
    return names;
}

bool parseVtkFields(const std::vector<std::string>& names, VtkFieldSelection& out,
                    std::string& error) {
    VtkFieldSelection s = VtkFieldSelection::none();
    for (const std::string& name : names) {
        if (name == "all")
            s = VtkFieldSelection{};
        else if (name == "radius" || name == "radii")
            s.radius = true;
        else if (name == "velocity" || name == "linVelVec")
            s.velocity = true;
        else if (name == "angular_velocity" || name == "angVelVec")
            s.angularVelocity = true;
        else if (name == "displacement")
            s.displacement = true;
        else if (name == "force" || name == "forceVec")
            s.force = true;
        else if (name == "torque" || name == "torqueVec")
            s.torque = true;
        else if (name == "contacts" || name == "coordNumber")
            s.contacts = true;
        else if (name == "material" || name == "materialId")
            s.material = true;
        else if (name == "groups" || name == "mask")
            s.groups = true;
        else if (name == "id")
            s.id = true;
        else if (name == "orientation")
            s.orientation = true;
        else {
            std::string known;
            for (const auto& k : vtkFieldNames())
                known += (known.empty() ? "" : ", ") + k;
            error = fmt::format("unknown VTK field \"{}\" (known: {}, all)", name, known);
            return false;
        }
    }
    out = s;
    return true;
}

bool parseVtkKinds(const std::vector<std::string>& names, VtkKinds& out, std::string& error) {
    VtkKinds k{false, false, false};
    for (const std::string& name : names) {
        if (name == "all")
            k = VtkKinds{};
        else if (name == "spheres")
            k.spheres = true;
        else if (name == "contacts")
            k.contacts = true;
        else if (name == "obstacles" || name == "walls" || name == "mesh" || name == "boxes")
            k.obstacles = true;
        else {
            error = fmt::format("unknown VTK kind \"{}\" (known: spheres, contacts, obstacles, "
                                "all)",
                                name);
            return false;
        }
    }
    out = k;
    return true;
}

// ---------------------------------------------------------------------------------------------
// Spheres

bool writeParticlesVtu(const std::string& path, const Simulation& sim,
                       const VtkFieldSelection& fields, std::string& error,
                       const VtkFormat& format) {
    const Particles& P = sim.particles;
    if (!particlesConsistent(P, error))
        return false;
    const size_t n = P.size();
    std::vector<std::string_view> materialNames,
        groupNames(sim.groupNames.begin(), sim.groupNames.end());
    for (const Material& m : sim.materials)
        materialNames.push_back(m.name);
    const std::string materials = joinedNames(materialNames), groups = joinedNames(groupNames);
    VtkXml x(format, n * 230 + materials.size() + groups.size());
    x.header("UnstructuredGrid");
    x.s += "<UnstructuredGrid>\n<FieldData>\n";
    // The names the material indices and group bits stand for.
    if (!x.timeFields(sim, 2) ||
        (fields.material && !materialNames.empty() &&
         !x.write(stringArray("material_names", materials, materialNames.size()), 2)) ||
        (fields.groups && !groupNames.empty() &&
         !x.write(stringArray("group_names", groups, groupNames.size()), 2)))
        return compressionFailed(path, error);
    x.s += "</FieldData>\n";
    x.s += fmt::format("<Piece NumberOfPoints=\"{}\" NumberOfCells=\"{}\">\n", n, n);

    std::vector<ArrayRef> point;
    if (fields.radius)
        point.push_back(array("radius", P.radius.data(), n));
    if (fields.velocity)
        point.push_back(vec3Array("velocity", P.vel));
    if (fields.angularVelocity)
        point.push_back(vec3Array("angular_velocity", P.angVel));
    std::vector<Vec3> disp;
    if (fields.displacement && P.keepsStart) {
        disp.resize(n);
        for (size_t p = 0; p < n; ++p)
            disp[p] = P.pos[p] - P.pos0[p];
        point.push_back(vec3Array("displacement", disp));
    }
    std::vector<Vec3> force, torque;
    if (fields.force || fields.torque)
        sphereLoads(sim, force, torque);
    if (fields.force)
        point.push_back(vec3Array("force", force));
    if (fields.torque)
        point.push_back(vec3Array("torque", torque));
    std::vector<int32_t> contacts;
    if (fields.contacts) {
        contacts = contactsPerSphere(sim);
        point.push_back(array("contacts", contacts.data(), n));
    }
    std::vector<int32_t> material;
    if (fields.material) {
        material.assign(P.material.begin(), P.material.end());
        point.push_back(array("material", material.data(), n));
    }
    std::vector<uint32_t> noGroups; // zeros, when no sphere is in a group (Particles.hpp)
    if (fields.groups) {
        if (P.groupBits.empty())
            noGroups.assign(n, 0);
        point.push_back(
            array("groups", P.groupBits.empty() ? noGroups.data() : P.groupBits.data(), n));
    }
    if (fields.id)
        point.push_back(array("id", P.id.data(), n));
    std::vector<double> quat;
    if (fields.orientation && P.keepsOrientation) {
        quat.resize(4 * n);
        for (size_t p = 0; p < n; ++p) {
            const Quat& q = P.ori[p];
            quat[4 * p] = q.w();
            quat[4 * p + 1] = q.x();
            quat[4 * p + 2] = q.y();
            quat[4 * p + 3] = q.z();
        }
        point.push_back(array("orientation", quat.data(), n, 4));
    }

    x.s += "<PointData";
    if (fields.radius)
        x.s += " Scalars=\"radius\"";
    if (fields.velocity)
        x.s += " Vectors=\"velocity\"";
    x.s += ">\n";
    for (const ArrayRef& a : point)
        if (!x.write(a, 2))
            return compressionFailed(path, error);
    x.s += "</PointData>\n<Points>\n";
    if (!x.write(vec3Array("position", P.pos), 2))
        return compressionFailed(path, error);
    x.s += "</Points>\n<Cells>\n";
    std::vector<int64_t> conn(n), offsets(n);
    for (size_t p = 0; p < n; ++p) {
        conn[p] = int64_t(p);
        offsets[p] = int64_t(p + 1);
    }
    const std::vector<uint8_t> types(n, uint8_t(1)); // VTK_VERTEX
    if (!x.write(array("connectivity", conn.data(), n), 2) ||
        !x.write(array("offsets", offsets.data(), n), 2) ||
        !x.write(array("types", types.data(), n), 2))
        return compressionFailed(path, error);
    x.s += "</Cells>\n</Piece>\n</UnstructuredGrid>\n</VTKFile>\n";
    return writeVtkFile(path, x.s, error);
}

// ---------------------------------------------------------------------------------------------
// Contact network

bool writeContactsVtp(const std::string& path, const Simulation& sim, std::string& error,
                      const VtkFormat& format) {
    const Particles& P = sim.particles;
    const SpherePairs& S = sim.pairs;
    const size_t n = P.size();
    if (P.id.size() != n || P.material.size() != n ||
        (S.size() > 0 && (S.start.size() != n + 1 || S.contact.size() != S.size()))) {
        error = "inconsistent particle or pair arrays (sizes differ)";
        return false;
    }
    const PairTable& T = sim.pairTable;
    const bool hasMu = T.count > 0 && T.params.size() >= size_t(T.count) * size_t(T.count);

    std::vector<Vec3> points, fnVec, ftVec, moment;
    std::vector<double> fn, overlap;
    std::vector<uint8_t> sliding;
    std::vector<uint32_t> ids;
    const CellImages images(sim.cell);
    S.forEachPair([&](size_t k, uint32_t i, uint32_t j) {
        if (!S.touching(k) || j >= n)
            return;
        // In a periodic cell the line goes to the image of j the pair is listed with.
        Vec3 d = P.pos[j] - P.pos[i];
        if (sim.cell.enabled && S.image.size() == S.size())
            d -= images.shift[S.image[k]];
        points.push_back(P.pos[i]);
        points.push_back(P.pos[i] + d);
        const PairContact& res = S.record(k);
        const Vec3& f = res.force;
        const double len = d.norm();
        const Vec3 nrm = len > 0        ? Vec3(d / len)
                         : f.norm() > 0 ? Vec3(f.normalized())
                                        : Vec3::Zero();
        const double fN = f.dot(nrm);
        fn.push_back(fN);
        fnVec.push_back(fN * nrm);
        ftVec.push_back(f - fN * nrm);
        overlap.push_back(2 * res.halfOverlap);
        if (S.hasRolling())
            moment.push_back(S.rollingOf(k).couple);
        if (hasMu) {
            const int a = P.material[i], b = P.material[j];
            uint8_t slip = 0;
            if (a < T.count && b < T.count) {
                const double mu = T(a, b).mu;
                const double s = res.shear.norm();
                slip = s >= mu * (f - res.shear).norm() * (1 - 1e-9) ? 1 : 0;
            }
            sliding.push_back(slip);
        }
        ids.push_back(P.id[i]);
        ids.push_back(P.id[j]);
    });
    const size_t m = fn.size();

    VtkXml x(format, m * 130);
    x.header("PolyData");
    x.s += "<PolyData>\n<FieldData>\n";
    if (!x.timeFields(sim, 2))
        return compressionFailed(path, error);
    x.s += "</FieldData>\n";
    x.s += fmt::format("<Piece NumberOfPoints=\"{}\" NumberOfVerts=\"0\" NumberOfLines=\"{}\" "
                       "NumberOfStrips=\"0\" NumberOfPolys=\"0\">\n",
                       2 * m, m);
    x.s += "<CellData Scalars=\"normal_force\" Vectors=\"normal_force_vector\">\n";
    std::vector<ArrayRef> cell{
        array("normal_force", fn.data(), m), vec3Array("normal_force_vector", fnVec),
        vec3Array("shear_force", ftVec), array("overlap", overlap.data(), m)};
    if (hasMu)
        cell.push_back(array("sliding", sliding.data(), m));
    if (S.hasRolling())
        cell.push_back(vec3Array("rolling_moment", moment));
    cell.push_back(array("ids", ids.data(), m, 2));
    for (const ArrayRef& a : cell)
        if (!x.write(a, 2))
            return compressionFailed(path, error);
    x.s += "</CellData>\n<Points>\n";
    if (!x.write(vec3Array("position", points), 2))
        return compressionFailed(path, error);
    x.s += "</Points>\n<Lines>\n";
    std::vector<int64_t> conn(2 * m), offsets(m);
    for (size_t c = 0; c < 2 * m; ++c)
        conn[c] = int64_t(c);
    for (size_t c = 0; c < m; ++c)
        offsets[c] = int64_t(2 * c + 2);
    if (!x.write(array("connectivity", conn.data(), 2 * m), 2) ||
        !x.write(array("offsets", offsets.data(), m), 2))
        return compressionFailed(path, error);
    x.s += "</Lines>\n</Piece>\n</PolyData>\n</VTKFile>\n";
    return writeVtkFile(path, x.s, error);
}

// ---------------------------------------------------------------------------------------------
// Obstacles

bool writeObstaclesVtu(const std::string& path, const Simulation& sim, std::string& error,
                       const VtkFormat& format) {
    const Obstacles& B = sim.obstacles;
    const Particles& P = sim.particles;

    // Size and centre of the wall patches: the spheres' bounding box, else the domain, else 1 m.
    Vec3 centre = Vec3::Zero();
    double side = 0;
    if (P.size() > 0) {
        Vec3 lo = P.pos[0], hi = P.pos[0];
        double rmax = 0;
        for (size_t p = 0; p < P.size(); ++p) {
            centre += P.pos[p];
            lo = lo.cwiseMin(P.pos[p]);
            hi = hi.cwiseMax(P.pos[p]);
            if (p < P.radius.size())
                rmax = std::max(rmax, P.radius[p]);
        }
        centre /= double(P.size());
        side = std::max((hi - lo).norm(), 4 * rmax);
    } else if (sim.hasDomain) {
        centre = 0.5 * (sim.domainMin + sim.domainMax);
        side = (sim.domainMax - sim.domainMin).norm();
    }
    const bool haveCentre = P.size() > 0 || sim.hasDomain;
    if (!(side > 0) || !std::isfinite(side))
        side = 1;

    std::vector<Vec3> pts;
    std::vector<int64_t> conn, offsets;
    std::vector<uint8_t> types, kind;
    std::vector<int32_t> object;
    auto cell = [&](uint8_t vtkType, uint8_t k, uint32_t o, size_t corners) {
        for (size_t c = 0; c < corners; ++c)
            conn.push_back(int64_t(pts.size() - corners + c));
        offsets.push_back(int64_t(conn.size()));
        types.push_back(vtkType);
        kind.push_back(k);
        object.push_back(o < B.objects.size() ? int32_t(o) : -1);
    };
    for (const Wall& w : B.walls) {
        const Vec3 nrm = w.normal.norm() > 0 ? Vec3(w.normal.normalized()) : Vec3::UnitZ();
        const Vec3 c = haveCentre ? Vec3(centre - (centre - w.point).dot(nrm) * nrm) : w.point;
        const Vec3 t1 = nrm.unitOrthogonal(), t2 = nrm.cross(t1);
        const double h = 0.5 * side;
        pts.push_back(c - h * t1 - h * t2);
        pts.push_back(c + h * t1 - h * t2);
        pts.push_back(c + h * t1 + h * t2);
        pts.push_back(c - h * t1 + h * t2);
        cell(9, 0, w.object, 4); // VTK_QUAD
    }
    for (const Facet& f : B.facets) {
        for (const Vec3& v : f.v)
            pts.push_back(v);
        cell(5, 1, f.object, 3); // VTK_TRIANGLE
    }
    for (const Box& b : B.boxes) {
        // VTK_HEXAHEDRON order: the bottom face counter-clockwise, then the top face.
        static const int sign[8][3] = {{-1, -1, -1}, {1, -1, -1}, {1, 1, -1}, {-1, 1, -1},
                                       {-1, -1, 1},  {1, -1, 1},  {1, 1, 1},  {-1, 1, 1}};
        for (const auto& s : sign)
            pts.push_back(b.center +
                          b.ori * Vec3(s[0] * b.half.x(), s[1] * b.half.y(), s[2] * b.half.z()));
        cell(12, 2, b.object, 8);
    }
    const size_t nc = types.size();
    std::vector<Vec3> force(nc, Vec3::Zero()), torque(nc, Vec3::Zero()), vel(nc, Vec3::Zero()),
        disp(nc, Vec3::Zero());
    for (size_t c = 0; c < nc; ++c)
        if (object[c] >= 0) {
            const RigidObject& o = B.objects[size_t(object[c])];
            force[c] = o.force;
            torque[c] = o.torque;
            vel[c] = o.vel;
            disp[c] = o.center - o.center0;
        }
    std::vector<std::string_view> objectNames;
    for (const RigidObject& o : B.objects)
        objectNames.push_back(o.name);
    const std::string names = joinedNames(objectNames);

    VtkXml x(format, pts.size() * 32 + nc * 120 + names.size());
    x.header("UnstructuredGrid");
    x.s += "<UnstructuredGrid>\n<FieldData>\n";
    if (!x.timeFields(sim, 2) ||
        (!B.objects.empty() && !x.write(stringArray("object_names", names, B.objects.size()), 2)))
        return compressionFailed(path, error);
    x.s += "</FieldData>\n";
    x.s += fmt::format("<Piece NumberOfPoints=\"{}\" NumberOfCells=\"{}\">\n", pts.size(), nc);
    x.s += "<CellData Scalars=\"object\" Vectors=\"force\">\n";
    for (const ArrayRef& a : {array("object", object.data(), nc), array("kind", kind.data(), nc),
                              vec3Array("force", force), vec3Array("torque", torque),
                              vec3Array("velocity", vel), vec3Array("displacement", disp)})
        if (!x.write(a, 2))
            return compressionFailed(path, error);
    x.s += "</CellData>\n<Points>\n";
    if (!x.write(vec3Array("position", pts), 2))
        return compressionFailed(path, error);
    x.s += "</Points>\n<Cells>\n";
    if (!x.write(array("connectivity", conn.data(), conn.size()), 2) ||
        !x.write(array("offsets", offsets.data(), nc), 2) ||
        !x.write(array("types", types.data(), nc), 2))
        return compressionFailed(path, error);
    x.s += "</Cells>\n</Piece>\n</UnstructuredGrid>\n</VTKFile>\n";
    return writeVtkFile(path, x.s, error);
}

// ---------------------------------------------------------------------------------------------
// .pvd collections

namespace {

std::string attribute(const std::string& tag, const std::string& name) {
    size_t pos = 0;
    while ((pos = tag.find(name, pos)) != std::string::npos) {
        const bool startOk = pos > 0 && std::isspace(static_cast<unsigned char>(tag[pos - 1]));
        size_t q = pos + name.size();
        while (q < tag.size() && std::isspace(static_cast<unsigned char>(tag[q])))
            ++q;
        if (startOk && q < tag.size() && tag[q] == '=') {
            ++q;
            while (q < tag.size() && std::isspace(static_cast<unsigned char>(tag[q])))
                ++q;
            if (q < tag.size() && (tag[q] == '"' || tag[q] == '\'')) {
                const size_t end = tag.find(tag[q], q + 1);
                if (end == std::string::npos)
                    return {};
                std::string v = tag.substr(q + 1, end - q - 1), out;
                for (size_t k = 0; k < v.size(); ++k) {
                    static const std::pair<const char*, char> ents[] = {{"&amp;", '&'},
                                                                        {"&lt;", '<'},
                                                                        {"&gt;", '>'},
                                                                        {"&quot;", '"'},
                                                                        {"&apos;", '\''}};
                    bool done = false;
                    for (const auto& [e, c] : ents)
                        if (v.compare(k, std::strlen(e), e) == 0) {
                            out += c;
                            k += std::strlen(e) - 1;
                            done = true;
                            break;
                        }
                    if (!done)
                        out += v[k];
                }
                return out;
            }
        }
        pos += name.size();
    }
    return {};
}

} // namespace

bool PvdCollection::open(const std::string& path, std::string& error) {
    path_ = path;
    entries_.clear();
    return save(error);
}

bool PvdCollection::load(const std::string& path, double uptoTime, std::string& error) {
    path_ = path;
    entries_.clear();
    std::string text;
    if (const FileRead r = readWholeFile(path, text); r.opened) {
        if (!r) {
            error = r.message(path);
            return false;
        }
        if (text.find("<Collection") == std::string::npos) {
            error = fmt::format("{} is not a ParaView collection (no <Collection> element)", path);
            return false;
        }
        size_t pos = 0;
        while ((pos = text.find("<DataSet", pos)) != std::string::npos) {
            const size_t end = text.find('>', pos);
            if (end == std::string::npos) {
                error = fmt::format("{}: unterminated <DataSet> element", path);
                return false;
            }
            const std::string tag = text.substr(pos, end - pos);
            pos = end;
            const std::string t = attribute(tag, "timestep"), file = attribute(tag, "file");
            char* stop = nullptr;
            const double time = std::strtod(t.c_str(), &stop);
            if (t.empty() || *stop != '\0' || file.empty()) {
                error = fmt::format("{}: <DataSet> without a valid timestep and file", path);
                return false;
            }
            if (time <= uptoTime)
                entries_.push_back({time, file});
        }
    }
    return save(error);
}

bool PvdCollection::add(double time, const std::string& relativeFile, std::string& error) {
    if (path_.empty()) {
        error = "PvdCollection::add before open";
        return false;
    }
    // Writing the same file again (a restart at an output step) replaces its entry.
    if (!entries_.empty() && entries_.back().file == relativeFile)
        entries_.back().time = time;
    else
        entries_.push_back({time, relativeFile});
    return save(error);
}

bool PvdCollection::save(std::string& error) const {
    std::string s = "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\" "
                    "byte_order=\"LittleEndian\">\n  <Collection>\n";
    for (const Entry& e : entries_)
        s += fmt::format("    <DataSet timestep=\"{}\" group=\"\" part=\"0\" file=\"{}\"/>\n",
                         e.time, VtkXml::escape(e.file));
    s += "  </Collection>\n</VTKFile>\n";
    return writeVtkFile(path_, s, error);
}

std::string vtkStepFileName(const std::string& kind, uint64_t step, const std::string& ext) {
    return fmt::format("{}.{:08}.{}", kind, step, ext);
}

// ---------------------------------------------------------------------------------------------
// Recorder

namespace {

constexpr const char* seriesKinds[] = {"spheres", "contacts", "obstacles"};

bool writesKind(const VtkKinds& kinds, int k) {
    return k == 0 ? kinds.spheres : k == 1 ? kinds.contacts : kinds.obstacles;
}

// Whether `name` is a file of a series an earlier run left that must go: for a fresh run, any
// (files of that run would linger beside the new ones; the .pvd files are rewritten anyway); for a
// continued one, the numbered files of the kinds it writes beyond its step (vtkStepFileName).
bool staleSeriesFile(const std::string& name, const VtkKinds& kinds,
                     const std::optional<VtkContinuation>& from) {
    const std::string ext = fs::path(name).extension().string();
    for (int k = 0; k < 3; ++k) {
        const std::string prefix = std::string(seriesKinds[k]) + ".";
        if (!name.starts_with(prefix))
            continue;
        if (!from)
            return ext == ".vtu" || ext == ".vtp" || ext == ".pvd";
        const std::string digits =
            name.substr(prefix.size(), name.size() - prefix.size() - ext.size());
        return writesKind(kinds, k) && (ext == ".vtu" || ext == ".vtp") && !digits.empty() &&
               digits.size() < 20 && std::all_of(digits.begin(), digits.end(), ::isdigit) &&
               std::stoull(digits) > from->step;
    }
    return false;
}

} // namespace

bool isVtkSeriesFileName(const std::string& name) {
    return staleSeriesFile(name, VtkKinds{}, std::nullopt); // all of them are, for a fresh run
}

bool VtkRecorder::open(const std::string& dir, const VtkKinds& kinds,
                       const VtkFieldSelection& fields, const VtkFormat& format,
                       const std::optional<VtkContinuation>& from, std::string& error) {
    dir_ = dir;
    kinds_ = kinds;
    fields_ = fields;
    format_ = format;
    lastStep_ = UINT64_MAX;
    count_ = 0;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) {
        error = fmt::format("cannot create directory {}: {}", dir, ec.message());
        return false;
    }
    from_ = from;
    started_ = {false, false, false};
    removeAtomicWriteTemporaries(dir); // of writes a killed run left unfinished
    std::vector<std::string> names;
    directoryNames(dir, names, ec);
    for (const std::string& name : names) {
        std::error_code ignored;
        if (staleSeriesFile(name, kinds, from))
            fs::remove(fs::path(dir) / name, ignored);
    }
    // The collections of a continued run at once list only the files left.
    PvdCollection* collections[] = {&spheres_, &contacts_, &obstacles_};
    for (int k = 0; k < 3 && from; ++k) {
        const fs::path pvd = fs::path(dir) / (std::string(seriesKinds[k]) + ".pvd");
        if (writesKind(kinds, k) && fs::exists(pvd, ec)) {
            if (!collections[k]->load(pvd.string(), from->time, error))
                return false;
            started_[k] = true;
        }
    }
    return true;
}

bool VtkRecorder::write(const Simulation& sim, std::string& error) {
    if (dir_.empty()) {
        error = "VtkRecorder::write before open";
        return false;
    }
    if (sim.step == lastStep_)
        return true;
    // A collection is started when its first file is written, so that a run without obstacles
    // leaves no empty obstacles.pvd behind.
    auto one = [&](PvdCollection& c, bool& started, const char* kind, const char* ext,
                   auto&& writer) {
        const std::string name = vtkStepFileName(kind, sim.step, ext);
        if (!writer((fs::path(dir_) / name).string()))
            return false;
        if (!started) {
            const std::string p = (fs::path(dir_) / (std::string(kind) + ".pvd")).string();
            if (!(from_ ? c.load(p, from_->time, error) : c.open(p, error)))
                return false;
            started = true;
        }
        return c.add(sim.time, name, error);
    };
    if (kinds_.spheres && !one(spheres_, started_[0], "spheres", "vtu", [&](const std::string& p) {
            return writeParticlesVtu(p, sim, fields_, error, format_);
        }))
        return false;
    if (kinds_.contacts &&
        !one(contacts_, started_[1], "contacts", "vtp",
             [&](const std::string& p) { return writeContactsVtp(p, sim, error, format_); }))
        return false;
    const Obstacles& B = sim.obstacles;
    const bool anyObstacle = !B.walls.empty() || !B.facets.empty() || !B.boxes.empty();
    if (kinds_.obstacles && anyObstacle &&
        !one(obstacles_, started_[2], "obstacles", "vtu",
             [&](const std::string& p) { return writeObstaclesVtu(p, sim, error, format_); }))
        return false;
    lastStep_ = sim.step;
    ++count_;
    return true;
}

} // namespace dem
