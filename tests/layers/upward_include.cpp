// Compiled against the backend layer's include root by the test layers_upward_include_fails
// (tests/cpp/CMakeLists.txt): it must NOT compile, because a backend source cannot see ckks.
#include "oboro/ckks/context.hpp"
