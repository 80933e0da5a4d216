#include "core/Simulation.hpp"

namespace dem {

int Simulation::groupIndex(const std::string& name) const {
    for (size_t g = 0; g < groupNames.size(); ++g)
        if (groupNames[g] == name)
            return int(g);
    return -1;
}

} // namespace dem
