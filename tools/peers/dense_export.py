#!/usr/bin/env python3
"""Exports a settled packing from a dem checkpoint for the peers of the dense scene.

usage: python3 dense_export.py CHECKPOINT PREFIX
  CHECKPOINT  a checkpoint of decks/bench/dense-box.toml written at the end of its settle stage
              (tools/bench: <run>/checkpoints/step-N.stage1.dem.gz)
  PREFIX      writes PREFIX.data (LIGGGHTS read_data: atoms with diameter, density, position, and
              their velocities and angular velocities), PREFIX.vars (the -var values of in.dense)
              and PREFIX.json (everything yade_dense.py needs: spheres, walls, material, dt, ...)

The checkpoint is read as man/dem-checkpoint.5 describes it (format version 2 to 10, native byte
order): the header, then sections of a 4-character tag and a u64 length. Only these sections are
decoded: MODL (materials and the pair table: E, nu, friction, the Hertz damping ratio dem uses),
PART (one array per sphere quantity), OBST (the walls), NBRS (the Verlet skin), TIME (dt), ENGN
(gravity and numerical damping in force) and, from version 3, CELL (the periodic cell, which
shear_export.py uses; a periodic checkpoint is refused here); the others are skipped by their
length. pair_contacts() decodes the touching pairs of CONT (for shear_export.py --state).
Velocities in a checkpoint are the leapfrog mid-step values v(t - dt/2); they are exported as
they are.

Contact damping: dem (and Yade's Mindlin law) take c = 2 beta sqrt(m k) with beta the damping
ratio of the checkpoint's pair table (dem solves it from the restitution by integrating the
impact). LIGGGHTS's hertz model takes c = 2 sqrt(5/6) beta_L sqrt(m k) with
beta_L = -ln e / sqrt(ln^2 e + pi^2); the exported coefficientRestitution is the e that gives the
same c (it is not the deck's restitution). The tangential springs (friction history) of the
contacts are not exported: the peers start the timed steps with them at zero.
"""
import gzip, json, math, struct, sys

SECTIONS = ("META", "MODL", "PART", "OBST", "CONT", "NBRS", "TIME", "ENGN", "STGS", "ENRG")


class Reader:
    def __init__(self, data, pos=0):
        self.d, self.p = data, pos

    def take(self, n):
        b = self.d[self.p:self.p + n]
        if len(b) != n:
            raise ValueError("checkpoint ends early")
        self.p += n
        return b

    def u8(self):
        return self.take(1)[0]

    def u16(self):
        return struct.unpack("=H", self.take(2))[0]

    def i32(self):
        return struct.unpack("=i", self.take(4))[0]

    def u32(self):
        return struct.unpack("=I", self.take(4))[0]

    def u64(self):
        return struct.unpack("=Q", self.take(8))[0]

    def f64(self):
        return struct.unpack("=d", self.take(8))[0]

    def vec3(self):
        return struct.unpack("=3d", self.take(24))

    def mat3(self):
        """A 3x3 matrix stored column by column, returned as its rows."""
        c = struct.unpack("=9d", self.take(72))
        return [[c[3 * col + row] for col in range(3)] for row in range(3)]

    def string(self):
        return self.take(self.u64()).decode()

    def optional(self, read):
        return read() if self.u8() else None

    def bulk(self, fmt, width):
        """A vector of numbers or vectors: u64 count, then the elements as one block."""
        n = self.u64()
        flat = struct.unpack(f"={n * width}{fmt}", self.take(n * width * struct.calcsize(fmt)))
        return [flat[k * width:(k + 1) * width] for k in range(n)] if width > 1 else list(flat)

    def vector(self, read):
        return [read() for _ in range(self.u64())]


def sections(path):
    raw = open(path, "rb").read()
    data = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
    if data[:8] != b"DEMCKPT\0":
        sys.exit(f"dense_export.py: '{path}' is not a dem checkpoint (or not gzip/uncompressed)")
    version, bom, header = struct.unpack("=III", data[8:20])
    if version not in range(2, 11) or bom != 0x01020304 or header != 64:
        sys.exit(f"dense_export.py: '{path}': format version {version} (this reader knows 2 to 10)")
    out, p = {"version": version}, header
    for tag in SECTIONS + (("CELL",) if version >= 3 else ()):
        found, length = struct.unpack("=4sQ", data[p:p + 12])
        if found.decode(errors="replace") != tag:
            sys.exit(f"dense_export.py: '{path}': expected section {tag}, found {found!r}")
        out[tag] = Reader(data, p + 12)
        p += 12 + length
    return out


def read_checkpoint(path):
    s = sections(path)
    r = s["MODL"]  # materials, overrides, pair table (the rest of MODL is not needed)
    materials = []
    for _ in range(r.u64()):
        m = {"name": r.string(), "law": r.u8()}
        for key in ("density", "young", "poisson", "friction_angle", "restitution",
                    "contact_time", "restitution_n", "restitution_t"):
            m[key] = r.f64()
        if s["version"] >= 7:
            m["rolling_friction"], m["twisting_friction"] = r.f64(), r.f64()
        materials.append(m)
    for _ in range(r.u64()):  # pair overrides
        r.i32(), r.i32(), r.optional(r.f64), r.optional(r.f64)
        if s["version"] >= 7:
            r.optional(r.f64), r.optional(r.f64)  # rolling and twisting friction
    count = r.i32()
    pairs = []
    for _ in range(r.u64()):
        p = {"law": r.u8()}
        for key in ("mu", "young_a", "young_b", "poisson_a", "poisson_b", "e_star", "g_star",
                    "beta", "contact_time", "ln_en", "ln_et"):
            p[key] = r.f64()
        if s["version"] >= 7:
            p["mu_roll"], p["mu_twist"] = r.f64(), r.f64()
        pairs.append(p)
    r = s["PART"]
    part = {"id": r.bulk("I", 1), "pos": r.bulk("d", 3), "vel": r.bulk("d", 3),
            "ang_vel": r.bulk("d", 3)}
    r.bulk("d", 4)  # ori
    if s["version"] < 4:
        r.bulk("d", 3), r.bulk("d", 3)  # the last step's force and torque
    r.bulk("d", 3)  # pos0
    part["radius"] = r.bulk("d", 1)
    if s["version"] < 4:
        part["mass"] = r.bulk("d", 1)
        r.bulk("d", 1)  # inertia
    part["material"] = r.bulk("H", 1)
    part["blocked"] = r.bulk("B", 1)
    if s["version"] >= 4:  # the mass follows from the radius: a factor per material, m / r^3
        r.bulk("I", 1)  # groups
        factor = r.bulk("d", 1)
        part["mass"] = [factor[m] * r * r * r for m, r in zip(part["material"], part["radius"])]
    r = s["OBST"]
    objects = []
    for _ in range(r.u64()):
        o = {"name": r.string(), "kind": r.u8(), "material": r.i32()}
        r.u32()  # groups
        for key in ("center", "center0", "vel", "ang_vel", "force", "torque"):
            o[key] = r.vec3()
        o["extent"], o["travel"] = r.f64(), r.f64()
        objects.append(o)
    walls = [{"point": r.vec3(), "normal": r.vec3(), "object": r.u32()} for _ in range(r.u64())]
    if r.u64():  # facets (the boxes follow them)
        sys.exit("dense_export.py: the checkpoint has facets; only walls are exported")
    if r.u64():
        sys.exit("dense_export.py: the checkpoint has boxes; only walls are exported")
    skin = s["NBRS"].f64()
    r = s["TIME"]
    dt, time, step = r.f64(), r.f64(), r.u64()
    r = s["ENGN"]
    gravity, damping = r.vec3(), r.f64()
    cell = None
    if "CELL" in s:
        r = s["CELL"]
        enabled, origin = r.u8(), r.vec3()
        h, vel_grad, h_rebuild = r.mat3(), r.mat3(), r.mat3()
        if enabled:
            cell = {"origin": origin, "h": h, "vel_grad": vel_grad, "h_at_rebuild": h_rebuild}
    return {"materials": materials, "pair_count": count, "pairs": pairs, "particles": part,
            "objects": objects, "walls": walls, "skin": skin, "dt": dt, "time": time,
            "step": step, "gravity": gravity, "damping": damping, "cell": cell}


def pair_contacts(path):
    """The touching sphere pairs of the checkpoint's CONT section: a list of (i, j, force on j),
    i and j indices into the PART arrays (format version 2 and later)."""
    r = sections(path)["CONT"]
    start, j, touching = r.bulk("I", 1), r.bulk("I", 1), r.bulk("B", 1)
    n_touching = sum(touching)
    r.take(24 * n_touching)  # tangential springs
    force = struct.unpack(f"={3 * n_touching}d", r.take(24 * n_touching))
    out, t = [], 0
    for i in range(len(start) - 1):
        for k in range(start[i], start[i + 1]):
            if touching[k]:
                out.append((i, j[k], force[3 * t:3 * t + 3]))
                t += 1
    return out


def liggghts_restitution(beta):
    """The e for which LIGGGHTS's sqrt(5/6) beta_L(e) equals dem's damping ratio beta."""
    b = beta / math.sqrt(5.0 / 6.0)
    if b <= 0:
        return 1.0
    if b >= 1:
        sys.exit(f"dense_export.py: damping ratio {beta} is beyond what LIGGGHTS's hertz model takes")
    return math.exp(-math.pi * b / math.sqrt(1 - b * b))


def box_walls(walls):
    """The six walls as (axis, sense, position): an axis-aligned closed box is required."""
    out = []
    for w in walls:
        n = w["normal"]
        axis = max(range(3), key=lambda k: abs(n[k]))
        if abs(abs(n[axis]) - 1) > 1e-12:
            sys.exit("dense_export.py: a wall is not axis-aligned")
        out.append((axis, 1 if n[axis] > 0 else -1, w["point"][axis]))
    if sorted((a, s) for a, s, _ in out) != [(a, s) for a in range(3) for s in (-1, 1)]:
        sys.exit("dense_export.py: the walls are not the six sides of a box")
    return out


def export(ckpt, prefix):
    c = read_checkpoint(ckpt)
    if c["cell"]:
        sys.exit("dense_export.py: the checkpoint has a periodic cell (use shear_export.py)")
    P = c["particles"]
    n = len(P["pos"])
    if len(c["materials"]) != 1 or c["materials"][0]["law"] != 1:
        sys.exit("dense_export.py: one Hertz-Mindlin material expected")
    if any(P["blocked"]):
        sys.exit("dense_export.py: blocked spheres are not exported")
    mat, pair = c["materials"][0], c["pairs"][0]
    if pair.get("mu_roll", 0) > 0 or pair.get("mu_twist", 0) > 0:
        sys.exit("dense_export.py: rolling or twisting resistance is not exported to the peers")
    walls = box_walls(c["walls"])
    lo = [min(p for a, s, p in walls if a == k) for k in range(3)]
    hi = [max(p for a, s, p in walls if a == k) for k in range(3)]
    rmax = max(P["radius"])
    e_liggghts = liggghts_restitution(pair["beta"])
    # Spheres in body-id order, so that every export of one checkpoint is the same file.
    order = sorted(range(n), key=lambda k: P["id"][k])
    with open(prefix + ".data", "w") as f:
        f.write(f"LIGGGHTS data file: dem checkpoint {ckpt} (step {c['step']})\n\n"
                f"{n} atoms\n1 atom types\n\n")
        for k, a in enumerate("xyz"):  # a margin around the walls: no sphere leaves the box
            f.write(f"{lo[k] - 2 * rmax:.17g} {hi[k] + 2 * rmax:.17g} {a}lo {a}hi\n")
        f.write("\nAtoms\n\n")
        for i, k in enumerate(order):
            x = P["pos"][k]
            f.write(f"{i + 1} 1 {2 * P['radius'][k]:.17g} {mat['density']:.17g} "
                    f"{x[0]:.17g} {x[1]:.17g} {x[2]:.17g}\n")
        f.write("\nVelocities\n\n")
        for i, k in enumerate(order):
            v, w = P["vel"][k], P["ang_vel"][k]
            f.write(f"{i + 1} {v[0]:.17g} {v[1]:.17g} {v[2]:.17g} {w[0]:.17g} {w[1]:.17g} {w[2]:.17g}\n")
    g = c["gravity"]
    gnorm = math.sqrt(sum(x * x for x in g))
    with open(prefix + ".vars", "w") as f:
        f.write(f"-var data {prefix}.data -var E {mat['young']:.17g} -var nu {mat['poisson']:.17g} "
                f"-var e {e_liggghts:.17g} -var mu {pair['mu']:.17g} -var skin {c['skin']:.17g} "
                f"-var dt {c['dt']:.17g} -var g {gnorm:.17g} "
                f"-var gx {g[0] / gnorm:.17g} -var gy {g[1] / gnorm:.17g} -var gz {g[2] / gnorm:.17g} "
                f"-var xlo {lo[0]:.17g} -var xhi {hi[0]:.17g} -var ylo {lo[1]:.17g} "
                f"-var yhi {hi[1]:.17g} -var zlo {lo[2]:.17g} -var zhi {hi[2]:.17g}\n")
    with open(prefix + ".json", "w") as f:
        json.dump({"checkpoint": ckpt, "step": c["step"], "time": c["time"], "dt": c["dt"],
                   "skin": c["skin"], "gravity": g, "damping": c["damping"],
                   "material": {"density": mat["density"], "young": mat["young"],
                                "poisson": mat["poisson"], "mu": pair["mu"],
                                "restitution": mat["restitution"], "beta": pair["beta"]},
                   "walls": [{"axis": a, "sense": s, "position": p} for a, s, p in walls],
                   "spheres": [list(P["pos"][k]) + [P["radius"][k]] + list(P["vel"][k])
                               + list(P["ang_vel"][k]) for k in order]}, f)
    print(f"EXPORTED N={n} step={c['step']} dt={c['dt']:.9g} skin={c['skin']:.9g} "
          f"beta={pair['beta']:.6f} e_liggghts={e_liggghts:.6f} damping={c['damping']:g} "
          f"box=({lo[0]:g},{lo[1]:g},{lo[2]:g})-({hi[0]:g},{hi[1]:g},{hi[2]:g})")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    export(sys.argv[1], sys.argv[2])
