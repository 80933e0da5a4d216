#pragma once
// A picture of the current state without ParaView: gnuplot draws the spheres as discs of their
// true radius in a side view (x to the right, z up, looking along +y; nearer spheres drawn over
// farther ones), coloured by a per-sphere value, with the outlines of walls, facets and boxes.
#include "core/Simulation.hpp"

#include <string>

namespace dem {

// colourBy: "velocity" (|v|), "z" (height), "material" (index), "radius". Writes a PNG of
// width x height pixels (pngcairo when gnuplot has it, else png). False with `error` set when
// there are no spheres, colourBy is unknown, gnuplot is missing ("gnuplot not found: install
// gnuplot-nox") or fails. Temporary files go to a fresh directory under /tmp, removed afterwards.
bool renderSnapshot(const Simulation& sim, const std::string& pngPath, const std::string& colourBy,
                    int width, int height, std::string& error);

} // namespace dem
