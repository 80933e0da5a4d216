#include "core/Lanes.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace dem {

int pairLaneWidth() {
    // A property of the processor, found once.
    static const int width = [] {
        int widest = 2;
#if defined(__x86_64__)
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx512f"))
            widest = 8;
        else if (__builtin_cpu_supports("avx2"))
            widest = 4;
#endif
        const char* asked = std::getenv("DEM_LANES");
        if (!asked)
            return widest;
        const std::string w(asked);
        if ((w == "2" || w == "4" || w == "8") && std::stoi(w) <= widest)
            return std::stoi(w);
        std::fprintf(stderr,
                     "dem: warning: DEM_LANES=%s ignored (2, 4 or 8, at most %d on this "
                     "processor); using %d lanes\n",
                     asked, widest, widest);
        return widest;
    }();
    return width;
}

} // namespace dem
