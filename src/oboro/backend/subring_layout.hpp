// Where the integer coefficients of an encoded vector go (host and device code): a vector of
// `slots` values is encoded in the subring Z[X^gap], gap = N / (2 slots), its real parts at
// X^(i gap) and its imaginary parts at X^(N/2 + i gap) (ckks/encoder.hpp). The encoder hands over the
// 2 slots scaled, rounded coefficients (real parts, then imaginary parts); the CPU encoding
// (cpu/encode.hpp) and the CUDA encode kernel place them with this one function.
#pragma once

#include <cstdint>

#include "oboro/math/modarith.hpp"

namespace oboro::backend {

// Coefficient k (< n) of the polynomial whose subring coefficients are `coefficients`.
OBORO_HD double subring_coefficient(const double* coefficients, uint64_t slots, uint64_t n, uint64_t k) {
    const uint64_t half_n = n / 2, gap = half_n / slots;
    if (k % gap) return 0.0;
    return k < half_n ? coefficients[k / gap] : coefficients[slots + (k - half_n) / gap];
}

}  // namespace oboro::backend
