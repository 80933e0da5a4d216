// toml++'s implementation, compiled here instead of linking Debian's libtomlplusplus.so, so that
// it reads floating-point numbers with std::from_chars (TOML_FLOAT_CHARCONV, src/CMakeLists.txt).
// The library as Debian builds it reads them through a string stream, which swallows a failed
// allocation and reports the number as malformed: a deck read with too little memory was then
// called bad (status 2) instead of ending with "out of memory" (status 1).
#define TOML_IMPLEMENTATION
#include <toml++/toml.h>
