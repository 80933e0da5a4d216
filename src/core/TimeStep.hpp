#pragma once
// Time-step estimates. The P-wave estimate is Yade's conservative rule; the critical estimate is
// the largest stable step of the contact law, used to reject decks and to pick a default step.
#include "core/Simulation.hpp"

namespace dem {

// min R sqrt(rho/E) over spheres with an elastic material (physics.md §10.2); inf when none.
double pWaveTimeStep(const Simulation& sim);

// Largest stable step by law, minimum over the materials in use:
//   linear:        sqrt(2) sqrt(m/K_N), K_N = E R (two equal spheres in opposition, physics.md
//   §10.1) Hertz–Mindlin: Rayleigh time pi R sqrt(rho/G) / (0.1631 nu + 0.8766) (the usual Hertzian
//   bound) viscoelastic:  2/omega_0 with omega_0 = sqrt(pi^2 + ln^2 e_n)/t_c (undamped oscillator)
// divided by rollingStepDivisor when some pair resists rolling or twisting, now or from a later
// stage on.
double criticalTimeStep(const Simulation& sim);
bool resistsRollingInSomeStage(const Simulation& sim);
// Rolling resistance adds a mode faster than the normal one: against a wall, the rolling moment's
// stiffness k_n R a on the moment of inertia (2/5) m R^2 oscillates at about sqrt(2.5) times the
// normal frequency, about 1.8 times coupled with the tangential spring (a linear-law sphere resting
// on a slope with rolling friction swung up from 0.8 of the undivided step on).
constexpr double rollingStepDivisor = 1.8;

// Fraction of the critical step used when a deck gives no dt. The estimates above follow one
// contact's normal oscillation; a contact's tangential mode with the spheres' rotation is about
// 1.7 times faster (effective mass (2/7) m*), is damped more by the Hertz–Mindlin shear dashpot,
// and a sphere has several contacts: at 0.2, dense Hertz–Mindlin packings with restitution 0.3
// and friction were measured to spin up on their own (antisymmetric stress, energy from nothing);
// at 0.1 they come to rest. 0.1 also gives about 16 steps per linear or viscoelastic collision.
constexpr double defaultTimeStepFactor = 0.1;

} // namespace dem
