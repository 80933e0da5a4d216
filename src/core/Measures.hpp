#pragma once
// Measured quantities, addressed by name in decks (stop criteria, history columns, summary).
//
// Grammar:  NAME                      global scalar: step, time, dt, kinetic_energy,
//                                     kinetic_energy_translational, kinetic_energy_rotational,
//                                     elastic_energy, potential_energy, total_energy,
//                                     dissipated_damping, dissipated_contacts, unbalanced_force,
//                                     coordination_number, contacts, particles; in a periodic
//                                     cell also stress_RC (R, C each x, y or z), pressure,
//                                     cell_RC (the cell's edge matrix h), cell_volume, porosity,
//                                     kinetic_energy_fluctuation (relative to the mean flow)
//           object:NAME.QUANTITY[.C]  rigid object: position, displacement, velocity, force, torque
//           body:ID.QUANTITY[.C]      sphere by body id: position, displacement, velocity,
//                                     angular_velocity, force
//           group:NAME.QUANTITY[.C]   sphere group: position (centre of mass), displacement and
//                                     velocity (mass-weighted means), force (sum)
//  C is x, y or z; without it a vector quantity gives its magnitude.
#include "core/Simulation.hpp"

#include <string>

namespace dem {

// Parses a measure name against the simulation's objects and groups; false with `error` set when
// the name is malformed or refers to something undefined.
bool parseMeasure(const std::string& name, const Simulation& sim, MeasureRef& out,
                  std::string& error);

// Whether the measure reads the spheres' start positions (a sphere's or a group's displacement;
// a rigid object keeps its own start), which are kept only when read (Particles::keepOptional).
bool readsSphereStart(const MeasureRef& m);

// The measure's value now; NaN when there is none (a body id no longer present, a sphere or group
// displacement while the spheres keep no start position: Particles::keepOptional).
double evaluate(const Simulation& sim, const MeasureRef& m);

double kineticEnergyTranslational(const Simulation& sim);
double kineticEnergyRotational(const Simulation& sim);
double kineticEnergyFluctuation(const Simulation& sim); // periodic cell: relative to the flow
double elasticEnergy(const Simulation& sim);
double potentialEnergy(const Simulation& sim);
double unbalancedForce(const Simulation& sim);
size_t contactCount(const Simulation& sim); // touching sphere–sphere and sphere–obstacle pairs
// Love-Weber stress of a periodic cell (physics.md §12.2): sigma = -(1/V) sum f (x) d over the
// touching pairs, f the force on the second sphere and d the branch from the first to it, V the
// cell's volume; compression negative.
Mat3 cellStress(const Simulation& sim);

} // namespace dem
