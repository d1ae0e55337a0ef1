// Where the integer coefficients of an encoded vector go (host and device code): a vector of
// `slots` values is encoded in the subring Z[X^gap], gap = N / (2 slots), its real parts at
// X^(i gap) and its imaginary parts at X^(N/2 + i gap) (ckks/encoder.hpp). The encoder hands over the
// 2 slots scaled, rounded coefficients (real parts, then imaginary parts); the CPU encoding
// (cpu/encode.hpp) places them with subring_position, the CUDA encode kernel (one thread per
// polynomial coefficient) reads them back with subring_coefficient.
#pragma once

#include <cstdint>

#include "oboro/math/modarith.hpp"

namespace oboro::backend {

// The polynomial coefficient that subring coefficient s (< 2 slots) becomes.
OBORO_HD uint64_t subring_position(uint64_t s, uint64_t slots, uint64_t n) {
    const uint64_t half_n = n / 2, gap = half_n / slots;
    return s < slots ? s * gap : half_n + (s - slots) * gap;
}

// Coefficient k (< n) of the polynomial whose subring coefficients are `coefficients`.
OBORO_HD double subring_coefficient(const double* coefficients, uint64_t slots, uint64_t n, uint64_t k) {
    const uint64_t half_n = n / 2, gap = half_n / slots;
    if (k % gap) return 0.0;
    return k < half_n ? coefficients[k / gap] : coefficients[slots + (k - half_n) / gap];
}

}  // namespace oboro::backend
