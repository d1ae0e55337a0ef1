// Overwrites memory that held secret material with zeros in a way the compiler cannot remove
// as a dead store (the memory is about to be freed or go out of scope, which is exactly when an
// ordinary memset may be dropped).
#pragma once

#include <cstddef>

namespace oboro {

inline void wipe(void* data, size_t bytes) {
    volatile unsigned char* p = static_cast<volatile unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) p[i] = 0;
}

}  // namespace oboro
