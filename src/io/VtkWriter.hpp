#pragma once
// VTK XML output for ParaView: spheres (.vtu), the sphere–sphere contact network (.vtp), the
// obstacles (.vtu) and .pvd collections that index a time series of them.
//
// Data arrays are written inline as format="binary": base64 of zlib-compressed blocks with UInt64
// headers (vtkZLibDataCompressor), little-endian. Floating-point fields are Float64, so positions,
// radii and velocities read back exactly. Every file is written whole or not at all
// (AtomicFile.hpp: renamed into place, not synced); missing parent directories are created.
#include "core/Simulation.hpp"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace dem {

enum class VtkEncoding : uint8_t {
    Base64Zlib, // format="binary", zlib blocks (the default; what ParaView writes itself)
    Ascii       // format="ascii", numbers in shortest round-trip form (for debugging)
};

struct VtkFormat {
    VtkEncoding encoding = VtkEncoding::Base64Zlib;
    int compressionLevel = 1; // zlib level 1..9; 1 is fast and still shrinks the files well
};

// Point-data fields of the sphere file. Positions and the vertex cells are always written.
struct VtkFieldSelection {
    bool radius = true;
    bool velocity = true;
    bool angularVelocity = true; // "angular_velocity"
    bool displacement = true;    // pos - pos0
    bool force = true;
    bool torque = true;
    bool contacts = true; // touching sphere–sphere and sphere–obstacle contacts of the sphere
    bool material = true; // Int32 material index
    bool groups = true;   // UInt32 group bitmask
    bool id = true;       // UInt32 body id
    bool orientation = true; // quaternion, 4 components w, x, y, z

    static VtkFieldSelection none();
};

// Field names accepted by parseVtkFields, in file order: radius, velocity, angular_velocity,
// displacement, force, torque, contacts, material, groups, id, orientation.
const std::vector<std::string>& vtkFieldNames();

// Builds a selection from deck names ("all" selects everything). Yade's recorder names are
// accepted as aliases: radii, linVelVec, angVelVec, forceVec, torqueVec, coordNumber, materialId,
// mask. False with `error` set on an unknown name.
bool parseVtkFields(const std::vector<std::string>& names, VtkFieldSelection& out,
                    std::string& error);

// UnstructuredGrid with one VTK_VERTEX cell per sphere and the selected point-data arrays, but
// displacement and orientation only while the spheres keep that state (Particles::keepOptional; a
// run keeps what its own VTK fields select). Field data: TimeValue (simulation time, which
// ParaView shows) and step.
bool writeParticlesVtu(const std::string& path, const Simulation& sim,
                       const VtkFieldSelection& fields, std::string& error,
                       const VtkFormat& format = {});

// PolyData with one line (two points: the two centres) per touching sphere–sphere pair. Cell
// data, with n the unit vector from the centre of sphere i to the centre of sphere j:
//   normal_force        f . n, f being the contact force on j (positive = compression)
//   normal_force_vector (f . n) n
//   shear_force         f - (f . n) n
//   overlap             2 x halfOverlap of the pair
//   sliding             UInt8, 1 when the tangential spring sits on the Coulomb limit:
//                       |shear| >= mu |f - shear| (1 - 1e-9), mu from the pair table; the array
//                       is left out when the simulation has no pair table
//   ids                 UInt32 x 2: the body ids of spheres i and j
bool writeContactsVtp(const std::string& path, const Simulation& sim, std::string& error,
                      const VtkFormat& format = {});

// UnstructuredGrid of the obstacles: each wall as a square patch (VTK_QUAD) of side the diagonal
// of the spheres' bounding box (1 m without spheres), centred on the spheres' centroid projected
// onto the plane; facets as VTK_TRIANGLE; boxes as VTK_HEXAHEDRON. Cell data: object (Int32
// index into sim.obstacles.objects), kind (UInt8: 0 wall, 1 facet, 2 box), and from the cell's
// rigid object: force, torque, velocity, displacement (center - center0). Field data:
// object_names (String array, one per rigid object, indexed by "object"), TimeValue, step.
bool writeObstaclesVtu(const std::string& path, const Simulation& sim, std::string& error,
                       const VtkFormat& format = {});

// A ParaView collection (.pvd): <DataSet timestep="t" file="..."/> entries in the order added.
// The file is rewritten after every change through a temporary file and a rename, so ParaView can
// open it while the run goes on.
class PvdCollection {
public:
    struct Entry {
        double time;
        std::string file; // as written: relative to the .pvd's directory
    };

    // Starts an empty collection at `path` and writes it (replacing an existing file).
    bool open(const std::string& path, std::string& error);
    // For restarts: reads the existing collection at `path`, keeps the entries with
    // time <= uptoTime and rewrites the file. A missing file gives an empty collection.
    bool load(const std::string& path, double uptoTime, std::string& error);
    // Appends an entry; adding the file of the last entry again replaces that entry (a restart
    // from a checkpoint taken at an output step writes that step once more).
    bool add(double time, const std::string& relativeFile, std::string& error);

    const std::vector<Entry>& entries() const { return entries_; }
    const std::string& path() const { return path_; }

private:
    bool save(std::string& error) const;
    std::string path_;
    std::vector<Entry> entries_;
};

// File name of one output of a series: "<kind>.<step, 8 digits at least>.<ext>", e.g.
// vtkStepFileName("spheres", 1200, "vtu") == "spheres.00001200.vtu".
std::string vtkStepFileName(const std::string& kind, uint64_t step, const std::string& ext);

// Whether `name` is that of a file of the VTK series a VtkRecorder writes: a .vtu, .vtp or .pvd
// file named after the series, "spheres.", "contacts." or "obstacles." first. A new series
// removes them all (VtkRecorder::open).
bool isVtkSeriesFileName(const std::string& name);

// What a VtkRecorder writes at each call.
struct VtkKinds {
    bool spheres = true;   // spheres.NNNNNNNN.vtu, indexed by spheres.pvd
    bool contacts = true;  // contacts.NNNNNNNN.vtp, indexed by contacts.pvd
    bool obstacles = true; // obstacles.NNNNNNNN.vtu, indexed by obstacles.pvd (if any obstacle)
};

// Parses deck kind names: spheres, contacts, obstacles ("walls", "mesh", "boxes" are aliases for
// obstacles), "all".
bool parseVtkKinds(const std::vector<std::string>& names, VtkKinds& out, std::string& error);

// Where a continued run's series go on from: the state at `step`, simulated time `time`.
struct VtkContinuation {
    double time = 0;
    uint64_t step = 0;
};

// The VTK output of a run: one directory holding the numbered files and one .pvd per kind.
class VtkRecorder {
public:
    // Creates `dir`. Without `from`, starts new series: the series files already there are
    // removed, and each .pvd is (re)written when the first file of its kind is. From a
    // continuation, the series of the kinds written keep their files up to its step and their
    // existing collections the entries up to its time; the files beyond, of a future being
    // rewritten, are removed.
    bool open(const std::string& dir, const VtkKinds& kinds, const VtkFieldSelection& fields,
              const VtkFormat& format, const std::optional<VtkContinuation>& from,
              std::string& error);
    // Writes the files of the current step and adds them to the collections. A second call at
    // the same step does nothing.
    bool write(const Simulation& sim, std::string& error);
    size_t count() const { return count_; } // frames written since open

private:
    std::string dir_;
    VtkKinds kinds_;
    VtkFieldSelection fields_;
    VtkFormat format_;
    PvdCollection spheres_, contacts_, obstacles_;
    std::optional<VtkContinuation> from_;
    std::array<bool, 3> started_{false, false, false}; // spheres, contacts, obstacles
    uint64_t lastStep_ = UINT64_MAX;
    size_t count_ = 0;
};

} // namespace dem
