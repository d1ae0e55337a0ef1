// The AVX-512 NTT with 52-bit multiplies (AVX-512 IFMA: vpmadd52luq / vpmadd52huq) for primes
// below 2^50, the 40-bit ciphertext primes of every preset. A Shoup product then takes three
// IFMA instructions instead of the four vpmuludq, seven adds and shifts and two vpmullq that
// emulate a 64-bit high multiply (ntt_simd.cpp).
#include "oboro/backend/cpu/ntt_simd.hpp"
#include "oboro/math/modarith.hpp"
#include "oboro/math/ntt.hpp"

#include "oboro/util/simd_target.hpp"

OBORO_SIMD_TARGET_BEGIN("avx512f,avx512dq,avx512ifma")

#include "oboro/backend/cpu/ifma_shoup.hpp"
#include "oboro/backend/cpu/ntt_avx512_stages.hpp"

namespace oboro::backend::cpu {

void ntt_forward_ifma(uint64_t* a, const math::NttTables& t) { ntt_forward_stages<Shoup52>(a, t); }
void ntt_inverse_ifma(uint64_t* a, const math::NttTables& t) { ntt_inverse_stages<Shoup52>(a, t); }

}  // namespace oboro::backend::cpu

OBORO_SIMD_TARGET_END
