// Compiled against the backend layer's include root by the test layers_own_and_lower_includes: it
// must compile (the control of layers_upward_include_fails: the root itself works).
#include "oboro/backend/ring.hpp"
#include "oboro/math/ntt.hpp"
#include "oboro/util/error.hpp"
