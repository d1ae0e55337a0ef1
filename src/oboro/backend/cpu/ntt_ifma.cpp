// The AVX-512 NTT with 52-bit multiplies (AVX-512 IFMA: vpmadd52luq / vpmadd52huq) for primes
// below 2^50, the 40-bit ciphertext primes of every preset. A Shoup product then takes three
// IFMA instructions instead of the four vpmuludq, seven adds and shifts and two vpmullq that
// emulate a 64-bit high multiply (ntt_simd.cpp).
#include "oboro/backend/cpu/ntt_simd.hpp"
#include "oboro/math/modarith.hpp"
#include "oboro/math/ntt.hpp"

#include "oboro/backend/cpu/simd_target.hpp"

OBORO_SIMD_TARGET_BEGIN("avx512f,avx512dq,avx512ifma")

#include "oboro/backend/cpu/ntt_avx512_stages.hpp"

namespace oboro::backend::cpu {
namespace {

// Shoup's product with base 2^52 (HEXL's IFMA NTT does the same): w' = floor(w * 2^52 / q),
// which is the table's 64-bit companion floor(w * 2^64 / q) shifted right by 12 (floor of a floor
// divided by 2^12 is the floor of the quotient), qhat = floor(a * w' / 2^52), and
// a * w - qhat * q in [0, 2q) for any a < 2^52. It is computed modulo 2^52 (the low halves of
// the products) and masked: the exact value is below 2q < 2^51. With q < 2^50 every lazy input
// (below 4q) fits the 52 bits that IFMA reads.
struct Shoup52 {
    __m512i neg_q, mask;
    explicit Shoup52(uint64_t q)
        : neg_q(_mm512_set1_epi64(int64_t((uint64_t(1) << 52) - q))), mask(_mm512_set1_epi64((int64_t(1) << 52) - 1)) {}
    __m512i companion(__m512i w_shoup) const { return _mm512_srli_epi64(w_shoup, 12); }
    __m512i mul_lazy(__m512i a, __m512i w, __m512i w52) const {
        const __m512i zero = _mm512_setzero_si512();
        const __m512i qhat = _mm512_madd52hi_epu64(zero, a, w52);
        const __m512i r = _mm512_madd52lo_epu64(_mm512_madd52lo_epu64(zero, a, w), qhat, neg_q);
        return _mm512_and_si512(r, mask);
    }
};

}  // namespace

void ntt_forward_ifma(uint64_t* a, const math::NttTables& t) { ntt_forward_stages<Shoup52>(a, t); }
void ntt_inverse_ifma(uint64_t* a, const math::NttTables& t) { ntt_inverse_stages<Shoup52>(a, t); }

}  // namespace oboro::backend::cpu

OBORO_SIMD_TARGET_END
