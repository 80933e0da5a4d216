# Yade 2023 version of the dense scene (decks/bench/dense-box.toml): the packing dem settled, in a box of six walls.
#
# Spheres and settings come from dense_export.py CHECKPOINT PREFIX (PREFIX.json: positions, radii,
# velocities, angular velocities of the spheres when dem's settle stage ended; the six walls; E, nu,
# friction, the damping ratio of dem's Hertz contacts; dt, Verlet skin, gravity, numerical damping).
# Physically the same as dem: FrictMat + Hertz-Mindlin (Ip2_FrictMat_FrictMat_MindlinPhys with
# betan = betas = dem's damping ratio, so c = 2 beta sqrt(m k) as in dem), six utils.wall, dem's dt,
# gravity and Cundall damping (NewtonIntegrator.damping: dem's timed stage keeps the settle stage's
# 0.4). The contacts start without their tangential springs (dem's friction history is not exported).
#
# usage: yade -n -x -j THREADS yade_dense.py PREFIX.json [WARM] [STEPS]
#   WARM   steps run first, not timed (default 1: the first step finds every contact from scratch,
#          which LIGGGHTS does in its setup, outside its "Loop time")
#   STEPS  timed steps (default 1000)
# Prints the lines of yade_scene.py: PARAMS, STATE_BEFORE_TIMED, STATE_AFTER_TIMED and RESULT.
import json, math, os, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[0])))
import yade_packing

pos = [a for a in sys.argv[1:] if '=' not in a]
scene = json.load(open(pos[0]))
nWarm = int(pos[1]) if len(pos) > 1 else 1
nIter = int(pos[2]) if len(pos) > 2 else 1000

t0 = time.time()
m = scene['material']
mat = O.materials.append(FrictMat(density=m['density'], young=m['young'], poisson=m['poisson'], frictionAngle=math.atan(m['mu'])))
O.dt = scene['dt']
ids = yade_packing.add_spheres(O, utils, Vector3, scene['spheres'], mat)
N = len(ids)
for w in scene['walls']:
	O.bodies.append(utils.wall(w['position'], axis=w['axis'], sense=w['sense'], material=mat))
# dem lists pairs within a gap of skin; Yade's bounds grow by verletDist on each side.
O.engines = [
        ForceResetter(),
        InsertionSortCollider([Bo1_Sphere_Aabb(), Bo1_Wall_Aabb()], verletDist=0.5 * scene['skin']),
        InteractionLoop([Ig2_Sphere_Sphere_ScGeom(), Ig2_Wall_Sphere_ScGeom()],
                        [Ip2_FrictMat_FrictMat_MindlinPhys(betan=m['beta'], betas=m['beta'])], [Law2_ScGeom_MindlinPhys_Mindlin()]),
        NewtonIntegrator(damping=scene['damping'], gravity=Vector3(*scene['gravity']))
]
tSetup = time.time() - t0


def stats():
	ke = 0.
	zsum = 0.
	for i in ids:
		s = O.bodies[i].state
		ke += 0.5 * s.mass * s.vel.squaredNorm()
		zsum += s.pos[2]
	nss = 0
	nsw = 0
	for I in O.interactions:
		if not I.isReal:
			continue
		if I.id1 < N and I.id2 < N:
			nss += 1
		else:
			nsw += 1
	return ke, zsum / N, 2.0 * nss / N, nsw


print('PARAMS law=hertz scene=dense from_step=%d E=%.6g nu=%g mu=%.6f beta=%.6f dt=%.9g skin=%.6g damping=%g' %
      (scene['step'], m['young'], m['poisson'], m['mu'], m['beta'], O.dt, scene['skin'], scene['damping']))


def state(label):
	ke, z, c, walls = stats()
	print('%s step=%d KEtrans=%.6g meanZ=%.6g contacts_per_particle=%.4f wall_contacts=%d' % (label, O.iter, ke, z, c, walls))


yade_packing.run_timed(O, 'dense', N, tSetup, nWarm, nIter, state)
