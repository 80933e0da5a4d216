#include "core/Contacts.hpp"

namespace dem {

void SpherePairs::resize(size_t n) {
    i.resize(n);
    j.resize(n);
    shear.resize(n);
    touching.resize(n);
    force.resize(n);
    nxf.resize(n);
    halfOverlap.resize(n);
    dissipated.resize(n);
    elastic.resize(n);
}

void ObstacleContacts::resize(size_t n) {
    target.resize(n);
    shear.resize(n);
    touching.resize(n);
    force.resize(n);
    point.resize(n);
    dissipated.resize(n);
    elastic.resize(n);
}

} // namespace dem
