#pragma once
// Below this many items a loop runs on one thread: starting a parallel region costs more than it
// saves on small scenes. The results are the same either way (see Step.cpp).
#include <cstddef>

namespace dem {
constexpr std::size_t parallelThreshold = 2048;
} // namespace dem
