// SIMD versions of the negacyclic NTT (same tables and the same lazy Harvey butterflies as
// math/ntt.cpp, so the output is bit-for-bit identical), chosen at run time for the CPU.
#pragma once

#include "oboro/math/ntt.hpp"

namespace oboro::backend::cpu {

// Which implementation ntt_forward/ntt_inverse use on this CPU: "avx512+ifma" (IFMA for primes
// below 2^50, the 64-bit AVX-512 kernels for the others), "avx512", "avx2" or "scalar". Defined
// beside the dispatch it names (poly_ops.cpp).
const char* ntt_implementation();

// Forced choice, for tests and benchmarks: false = always scalar (the NTT and the element-wise
// kernels of eltwise.hpp).
void set_simd_enabled(bool enabled);
// True when SIMD is requested and the AVX-512 NTT can run on this CPU (the AVX2 one runs where
// it cannot and AVX2 can: ntt_implementation).
bool simd_enabled();
// The switch alone, whatever the CPU has (the element-wise kernels also have an AVX2 table).
bool simd_requested();

// AVX-512 kernels; callers must check simd_available() first.
bool simd_available();
void ntt_forward_avx512(uint64_t* a, const math::NttTables& t);
void ntt_inverse_avx512(uint64_t* a, const math::NttTables& t);

// AVX2 kernels (ntt_avx2.cpp), for CPUs without AVX-512 (and with AVX2 and FMA); callers must
// check avx2_available() first. Primes below 2^kDoubleModulusBits are transformed in double
// precision, the others with 64-bit Shoup products.
inline constexpr int kDoubleModulusBits = 50;
bool avx2_available();
void ntt_forward_avx2(uint64_t* a, const math::NttTables& t);
void ntt_inverse_avx2(uint64_t* a, const math::NttTables& t);

// AVX-512 IFMA kernels (ntt_ifma.cpp), for primes below 2^kIfmaModulusBits only; callers must
// check ifma_available() first.
inline constexpr int kIfmaModulusBits = 50;
bool ifma_available();
void ntt_forward_ifma(uint64_t* a, const math::NttTables& t);
void ntt_inverse_ifma(uint64_t* a, const math::NttTables& t);

}  // namespace oboro::backend::cpu
