// Overwrites memory that held secret material with zeros in a way the compiler cannot remove
// as a dead store (the memory is about to be freed or go out of scope, which is exactly when an
// ordinary memset may be dropped).
#pragma once

#include <cstddef>
#include <cstring>

namespace oboro {

inline void wipe(void* data, size_t bytes) {
    if (bytes == 0) return;
#if defined(__GNUC__) || defined(__clang__)
    // memset at memset's speed (the secret key is megabytes), then a barrier that tells the
    // compiler the zeros may be read through `data`: the stores cannot be proven dead.
    std::memset(data, 0, bytes);
    __asm__ __volatile__("" : : "r"(data) : "memory");
#else
    volatile unsigned char* p = static_cast<volatile unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) p[i] = 0;
#endif
}

}  // namespace oboro
