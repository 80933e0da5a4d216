#include "core/Obstacles.hpp"

namespace dem {

int Obstacles::findObject(const std::string& name) const {
    for (size_t k = 0; k < objects.size(); ++k)
        if (objects[k].name == name)
            return int(k);
    return -1;
}

} // namespace dem
