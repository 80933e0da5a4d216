# What yade_dense.py and yade_shear.py share: the spheres of an exported packing, and the warm-up,
# timed run and RESULT line. Those scripts run under `yade -x`, which gives them Yade's names (O,
# utils, Vector3) as globals; this module gets them as arguments.
import time


def add_spheres(O, utils, Vector3, spheres, mat):
	"""Spheres [x, y, z, r, vx, vy, vz, wx, wy, wz] of the export, in one append; their ids."""
	bodies = []
	for x, y, z, r, vx, vy, vz, wx, wy, wz in spheres:
		b = utils.sphere((x, y, z), r, material=mat)
		b.state.vel = Vector3(vx, vy, vz)
		b.state.angVel = Vector3(wx, wy, wz)
		bodies.append(b)
	return O.bodies.append(bodies)


# The engines by phase, as tools/bench names dem's: the collider finds the neighbours, the
# interaction loop computes the contacts; the rest (ForceResetter, NewtonIntegrator) integrates.
PHASE_OF = {'InsertionSortCollider': 'neighbours', 'InteractionLoop': 'contacts'}


def engine_times(O):
	"""The nanoseconds each engine has run so far (Yade counts them while O.timingEnabled)."""
	return [e.execTime for e in O.engines]


def print_phases(O, before, N, steps):
	"""The PHASES line tools/bench reads: each phase's nanoseconds per particle-step over the
	`steps` since engine_times gave `before`."""
	ns = {'neighbours': 0., 'contacts': 0., 'integration': 0.}
	for e, t0 in zip(O.engines, before):
		ns[PHASE_OF.get(e.__class__.__name__, 'integration')] += e.execTime - t0
	print('PHASES ' + ' '.join('%s_ns=%.4g' % (k, v / (N * steps)) for k, v in ns.items()))


def run_timed(O, scene, N, tSetup, nWarm, nIter, state):
	"""nWarm untimed steps, then nIter timed ones; state(label) prints a STATE_* line before and
	after the timed steps; then the RESULT line tools/bench reads."""
	wWarm = 0.
	if nWarm > 0:
		t = time.time()
		O.run(nWarm, True)
		wWarm = time.time() - t
	state('STATE_BEFORE_TIMED')
	O.timingEnabled = True
	before = engine_times(O)
	t = time.time()
	O.run(nIter, True)
	w = time.time() - t
	print_phases(O, before, N, nIter)
	state('STATE_AFTER_TIMED')
	print('RESULT code=yade law=hertz scene=%s N=%d threads=%d setup_s=%.3f warm_steps=%d warm_s=%.3f steps=%d loop_s=%.3f iter_per_s=%.2f particle_steps_per_s=%.4e' %
	      (scene, N, O.numThreads, tSetup, nWarm, wWarm, nIter, w, nIter / w, N * nIter / w))
