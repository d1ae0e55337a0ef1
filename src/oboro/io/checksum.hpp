// XXH64 (Yann Collet's xxHash, 64-bit variant), implemented from its published specification.
// Serialized records carry it as an integrity check: it detects accidental corruption (bit
// flips, truncation, mixed-up files) at several GB/s. It is NOT a cryptographic MAC: an attacker
// who can change the data can recompute it, so the loader validates every field on its own.
#pragma once

#include <cstddef>
#include <cstdint>

namespace oboro::io {

uint64_t xxh64(const void* data, size_t len, uint64_t seed = 0);

}  // namespace oboro::io
