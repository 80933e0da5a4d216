# Yade 2023 version of the shear scene (decks/bench/shear-cell.toml): the periodic packing dem sheared to steady
# state, sheared further at the same rate.
#
# Spheres and settings come from shear_export.py CHECKPOINT PREFIX (PREFIX.json: positions relative to the cell's
# corner, radii, velocities and angular velocities of the spheres when dem's "shear" stage ended; the cell's edge
# vectors h and the velocity gradient L; E, nu, friction, the damping ratio of dem's Hertz contacts; dt, Verlet skin,
# numerical damping). Physically the same as dem:
#   - O.periodic with O.cell.hSize = h (Matrix3 takes rows; h's columns are the edge vectors in both codes) and
#     velGrad = L: the cell deforms as dh/dt = L h, and NewtonIntegrator (homoDeform = 2, Yade's default) adds the
#     convective term L v to each acceleration, as dem does (man/dem-deck.5, PERIODIC CELL).
#   - velocities are absolute in both codes (the mean flow L x included). Yade would add (L - prevVelGrad) x to every
#     velocity at the first step, as it does when velGrad changes: NewtonIntegrator.prevVelGrad = L says the flow is
#     already in them, and velGrad is set directly (updateAttrs) rather than through the deferred setter, so that the
#     first step already moves the cell and gives the images across the cell faces the flow's velocity.
#   - Yade moves the cell at the start of a step, dem at its end: the cell is given as it was one step earlier,
#     h - dt L h ((I + dt L)^-1 h, exact for simple shear), so that both compute the forces of a step with the same h.
#   - FrictMat + Hertz-Mindlin (Ip2_FrictMat_FrictMat_MindlinPhys with betan = betas = dem's damping ratio, so
#     c = 2 beta sqrt(m k) as in dem), dem's dt and Cundall damping (NewtonIntegrator.damping, which Yade applies to
#     the velocity relative to the flow in a periodic cell, as dem does; the deck's stages keep the compression's 0.2),
#     InsertionSortCollider with verletDist half dem's skin (bounds grow on both sides).
# The contacts start without their tangential springs (dem's friction history is not exported).
#
# usage: yade -n -x -j THREADS yade_shear.py PREFIX.json [WARM] [STEPS]
#   WARM   steps run first, not timed (default 1: the first step finds every contact from scratch)
#   STEPS  timed steps (default 1000)
# Prints the lines of yade_dense.py: PARAMS, STATE_BEFORE_TIMED, STATE_AFTER_TIMED (with the kinetic energy relative
# to the flow, sum 1/2 m |v - L x|^2, and from utils.getStress(), the Love-Weber stress of the contacts, the mean
# stress -tr/3, positive in compression, and the shear stress (sigma_xy + sigma_yx)/2, as shear_export.py --state
# prints them for dem) and RESULT.
import json, math, os, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[0])))
import yade_packing

pos = [a for a in sys.argv[1:] if '=' not in a]
scene = json.load(open(pos[0]))
nWarm = int(pos[1]) if len(pos) > 1 else 1
nIter = int(pos[2]) if len(pos) > 2 else 1000

t0 = time.time()
m = scene['material']
O.dt = scene['dt']
h = Matrix3(*[x for row in scene['cell']['h'] for x in row])
L = Matrix3(*[x for row in scene['cell']['vel_grad'] for x in row])
O.periodic = True
O.cell.hSize = (Matrix3.Identity + O.dt * L).inverse() * h
O.cell.updateAttrs({'velGrad': L})
mat = O.materials.append(FrictMat(density=m['density'], young=m['young'], poisson=m['poisson'], frictionAngle=math.atan(m['mu'])))
ids = yade_packing.add_spheres(O, utils, Vector3, scene['spheres'], mat)
N = len(ids)
# dem lists pairs within a gap of skin; Yade's bounds grow by verletDist on each side.
O.engines = [
        ForceResetter(),
        InsertionSortCollider([Bo1_Sphere_Aabb()], verletDist=0.5 * scene['skin']),
        InteractionLoop([Ig2_Sphere_Sphere_ScGeom()], [Ip2_FrictMat_FrictMat_MindlinPhys(betan=m['beta'], betas=m['beta'])],
                        [Law2_ScGeom_MindlinPhys_Mindlin()]),
        NewtonIntegrator(damping=scene['damping'], gravity=Vector3(*scene['gravity']), prevVelGrad=L)
]
tSetup = time.time() - t0


def stats():
	ke = 0.
	for i in ids:
		s = O.bodies[i].state
		ke += 0.5 * s.mass * (s.vel - L * s.pos).squaredNorm()
	nss = sum(1 for I in O.interactions if I.isReal)
	s = utils.getStress()
	return ke, 2.0 * nss / N, -s.trace() / 3, (s[0, 1] + s[1, 0]) / 2, O.cell.hSize[0, 1] / O.cell.hSize[1, 1]


print('PARAMS law=hertz scene=shear from_step=%d E=%.6g nu=%g mu=%.6f beta=%.6f dt=%.9g skin=%.6g damping=%g L01=%g' %
      (scene['step'], m['young'], m['poisson'], m['mu'], m['beta'], O.dt, scene['skin'], scene['damping'], L[0, 1]))


def state(label):
	ke, c, p, tau, g = stats()
	print('%s step=%d KEfluct=%.6g contacts_per_particle=%.4f mean_stress=%.6g shear_stress=%.6g shear_strain=%.6g' % (label, O.iter, ke, c, p, tau, g))


yade_packing.run_timed(O, 'shear', N, tSetup, nWarm, nIter, state)
