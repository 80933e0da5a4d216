#!/usr/bin/env python3
"""Exports a sheared periodic packing from a dem checkpoint for the peers of the shear scene, and
prints the state of a periodic checkpoint (what tools/bench compares with the peers).

usage: python3 shear_export.py CHECKPOINT PREFIX
       python3 shear_export.py --state CHECKPOINT
  CHECKPOINT  a checkpoint of decks/bench/shear-cell.toml (or any periodic deck of one
              Hertz-Mindlin material without obstacles), e.g. the one written at the end of its
              "shear" stage (tools/bench: <run>/checkpoints/step-N.stage2.dem.gz)
  PREFIX      writes PREFIX.data (LIGGGHTS read_data: a triclinic box, atoms with diameter,
              density, position, and their velocities and angular velocities), PREFIX.vars (the
              -var values of in.shear) and PREFIX.json (everything yade_shear.py needs: spheres,
              cell, velocity gradient, material, dt, skin, damping)
  --state     prints one line "STATE N=... contacts_per_particle=... KEfluct=... mean_stress=...
              shear_stress=... shear_strain=...": the coordination number of the touching pairs,
              the translational kinetic energy of the velocities relative to the mean flow,
              sum 1/2 m |v - L (x - o)|^2 [J], and the stress of the contact forces,
              sigma = -sum_c f_c (x) d_c / V over the touching pairs of the checkpoint's CONT
              section (f_c the force of the last step on the second sphere, d_c the branch vector
              from the first to the nearest image of the second, V = det h): its mean stress
              -tr(sigma)/3 (positive in compression, dem's measure "pressure") and the shear
              stress (sigma_xy + sigma_yx)/2 [Pa], and h(0,1)/h(1,1). The symmetric part: sigma
              is not symmetric here (its skew part is the net contact torque on the spheres, which
              wanders with their collective spin in a periodic cell, differently in each code), so
              dem's "stress_xy" alone does not compare

The checkpoint is read by dense_export.py's reader (man/dem-checkpoint.5, format version 3 to 10:
the CELL section gives the cell's corner o, its edge vectors h (columns) and the velocity gradient
L, L(r,c) = dv_r/dx_c). What is exported:
  - positions relative to the cell's corner (the peers' cells start at 0), wrapped into the cell:
    s = h^-1 (x - o), c = floor(s), x - o - h c. A sphere moved by h c takes the velocity of that
    image, v - L h c, as dem does when it wraps a sphere, so its velocity relative to the mean flow
    L (x - o) is unchanged. (dem wraps at neighbour rebuilds only; a sphere may be slightly out.)
  - velocities as dem has them: absolute (the mean flow included), the leapfrog mid-step values
    v(t - dt/2); angular velocities likewise (they include the flow's spin, -rate/2 about z in
    simple shear). Yade's NewtonIntegrator takes absolute velocities too; LIGGGHTS's fix deform
    with remap v as well (its flow is carried by the velocities, the images' velocities across the
    y faces differ by the box's tilt rate).
  - the cell h as it is at the checkpoint (already sheared: h(0,1) = shear strain x h(1,1)) and L.
  - LIGGGHTS: a triclinic box 0..lx, 0..ly, 0..lz with tilts xy xz yz, which needs h upper
    triangular (edge a along x, b in the x-y plane), and in.shear's fix deform needs L to be the
    simple shear [[0, rate, 0], [0, 0, 0], [0, 0, 0]]; if either does not hold, no PREFIX.vars is
    written and a line "LIGGGHTS_UNSUPPORTED <reason>" is printed. A tilt beyond half the edge
    (which LIGGGHTS refuses) is brought back by a whole edge (the same lattice of images).
  - material, dt, Verlet skin, Cundall damping (dem keeps damping on the velocity relative to the
    flow, as Yade's NewtonIntegrator does in a periodic cell; LIGGGHTS has none), the damping ratio
    beta of dem's Hertz contacts and the LIGGGHTS restitution giving the same dashpot (see
    dense_export.py). The tangential springs of the contacts are not exported.
"""
import json, math, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dense_export import liggghts_restitution, pair_contacts, read_checkpoint  # noqa: E402


def matvec(m, v):
    return [sum(m[r][c] * v[c] for c in range(3)) for r in range(3)]


def matmul(a, b):
    return [[sum(a[r][k] * b[k][c] for k in range(3)) for c in range(3)] for r in range(3)]


def det(m):
    return (m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
            - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]))


def inverse(m):
    d = det(m)
    cof = [[(m[(r + 1) % 3][(c + 1) % 3] * m[(r + 2) % 3][(c + 2) % 3]
             - m[(r + 1) % 3][(c + 2) % 3] * m[(r + 2) % 3][(c + 1) % 3]) for c in range(3)]
           for r in range(3)]
    return [[cof[c][r] / d for c in range(3)] for r in range(3)]


def wrapped(c, h):
    """Positions relative to the corner, wrapped into the cell of edges h, and the velocities of
    those images, in the order of the spheres' ids (so every export of one checkpoint is the same)."""
    P, o, L = c["particles"], c["cell"]["origin"], c["cell"]["vel_grad"]
    hinv, lh = inverse(h), matmul(L, h)
    out = []
    for k in sorted(range(len(P["pos"])), key=lambda k: P["id"][k]):
        rel = [P["pos"][k][a] - o[a] for a in range(3)]
        shift = [math.floor(s) for s in matvec(hinv, rel)]
        hc, lhc = matvec(h, shift), matvec(lh, shift)
        out.append(([rel[a] - hc[a] for a in range(3)], P["radius"][k],
                    [P["vel"][k][a] - lhc[a] for a in range(3)], list(P["ang_vel"][k])))
    return out


def liggghts_cell(h, L):
    """h brought to LIGGGHTS's triclinic form (tilts within half an edge), or a reason why not."""
    if h[1][0] or h[2][0] or h[2][1]:
        return None, "the cell's edges are not a LIGGGHTS triclinic box (h is not upper triangular)"
    if any(L[r][c] for r in range(3) for c in range(3) if (r, c) != (0, 1)):
        return None, "in.shear imposes simple shear only (velocity gradient [[0, rate, 0], 0, 0])"
    h = [row[:] for row in h]
    for col, edge in ((2, 1), (2, 0), (1, 0)):  # yz by b, then xz and xy by a
        n = round(h[edge][col] / h[edge][edge])
        for r in range(3):
            h[r][col] -= n * h[r][edge]
    return h, None


def export(ckpt, prefix):
    c = read_checkpoint(ckpt)
    cell, P = c["cell"], c["particles"]
    if not cell:
        sys.exit("shear_export.py: the checkpoint has no periodic cell (dense_export.py exports boxes)")
    n = len(P["pos"])
    if len(c["materials"]) != 1 or c["materials"][0]["law"] != 1:
        sys.exit("shear_export.py: one Hertz-Mindlin material expected")
    if any(P["blocked"]):
        sys.exit("shear_export.py: blocked spheres are not exported")
    if c["walls"] or c["objects"]:
        sys.exit("shear_export.py: obstacles are not exported")
    mat, pair = c["materials"][0], c["pairs"][0]
    if pair.get("mu_roll", 0) > 0 or pair.get("mu_twist", 0) > 0:
        sys.exit("shear_export.py: rolling or twisting resistance is not exported to the peers")
    h, L = cell["h"], cell["vel_grad"]
    spheres = wrapped(c, h)
    e_liggghts = liggghts_restitution(pair["beta"])
    hl, why = liggghts_cell(h, L)
    if hl:
        with open(prefix + ".data", "w") as f:
            f.write(f"LIGGGHTS data file: dem checkpoint {ckpt} (step {c['step']})\n\n"
                    f"{n} atoms\n1 atom types\n\n"
                    f"0 {hl[0][0]:.17g} xlo xhi\n0 {hl[1][1]:.17g} ylo yhi\n0 {hl[2][2]:.17g} zlo zhi\n"
                    f"{hl[0][1]:.17g} {hl[0][2]:.17g} {hl[1][2]:.17g} xy xz yz\n\nAtoms\n\n")
            atoms = spheres if hl == h else wrapped(c, hl)
            for i, (x, r, v, w) in enumerate(atoms):
                f.write(f"{i + 1} 1 {2 * r:.17g} {mat['density']:.17g} {x[0]:.17g} {x[1]:.17g} {x[2]:.17g}\n")
            f.write("\nVelocities\n\n")
            for i, (x, r, v, w) in enumerate(atoms):
                f.write(f"{i + 1} {v[0]:.17g} {v[1]:.17g} {v[2]:.17g} {w[0]:.17g} {w[1]:.17g} {w[2]:.17g}\n")
        with open(prefix + ".vars", "w") as f:
            f.write(f"-var data {prefix}.data -var E {mat['young']:.17g} -var nu {mat['poisson']:.17g} "
                    f"-var e {e_liggghts:.17g} -var mu {pair['mu']:.17g} -var skin {c['skin']:.17g} "
                    f"-var dt {c['dt']:.17g} -var rate {L[0][1]:.17g}\n")
    else:
        print(f"LIGGGHTS_UNSUPPORTED {why}")
    with open(prefix + ".json", "w") as f:
        json.dump({"checkpoint": ckpt, "step": c["step"], "time": c["time"], "dt": c["dt"],
                   "skin": c["skin"], "damping": c["damping"], "gravity": c["gravity"],
                   "material": {"density": mat["density"], "young": mat["young"],
                                "poisson": mat["poisson"], "mu": pair["mu"],
                                "restitution": mat["restitution"], "beta": pair["beta"]},
                   "cell": {"origin": cell["origin"], "h": h, "vel_grad": L},
                   "spheres": [x + [r] + v + w for x, r, v, w in spheres]}, f)
    print(f"EXPORTED N={n} step={c['step']} dt={c['dt']:.9g} skin={c['skin']:.9g} "
          f"beta={pair['beta']:.6f} e_liggghts={e_liggghts:.6f} damping={c['damping']:g} "
          f"h=({h[0][0]:g},{h[1][1]:g},{h[2][2]:g}) xy={h[0][1]:g} L01={L[0][1]:g}")


def state(ckpt):
    c = read_checkpoint(ckpt)
    cell, P = c["cell"], c["particles"]
    if not cell:
        sys.exit("shear_export.py: the checkpoint has no periodic cell")
    h, L, o = cell["h"], cell["vel_grad"], cell["origin"]
    hinv, n = inverse(h), len(P["pos"])
    ke = 0.0
    for k in range(n):
        u = matvec(L, [P["pos"][k][a] - o[a] for a in range(3)])
        ke += 0.5 * P["mass"][k] * sum((P["vel"][k][a] - u[a]) ** 2 for a in range(3))
    contacts = pair_contacts(ckpt)
    fd = [[0.0] * 3 for _ in range(3)]  # sum of f (x) d
    for i, j, f in contacts:
        d = [P["pos"][j][a] - P["pos"][i][a] for a in range(3)]
        shift = matvec(h, [round(s) for s in matvec(hinv, d)])
        for r in range(3):
            for col in range(3):
                fd[r][col] += f[r] * (d[col] - shift[col])
    volume = det(h)
    print(f"STATE N={n} step={c['step']} contacts_per_particle={2 * len(contacts) / n:.4f} "
          f"KEfluct={ke:.6g} mean_stress={(fd[0][0] + fd[1][1] + fd[2][2]) / (3 * volume):.6g} "
          f"shear_stress={-(fd[0][1] + fd[1][0]) / (2 * volume):.6g} shear_strain={h[0][1] / h[1][1]:.6g}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--state":
        state(sys.argv[2])
    elif len(sys.argv) == 3:
        export(sys.argv[1], sys.argv[2])
    else:
        sys.exit(__doc__)
