// Shoup's product in base 2^52 with AVX-512 IFMA, for primes below 2^kIfmaModulusBits (the NTT of
// ntt_ifma.cpp and the (x - y) * w kernel of eltwise_avx512ifma.cpp). Include it only after an
// OBORO_SIMD_TARGET_BEGIN that enables avx512ifma (util/simd_target.hpp); internal linkage.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace oboro::backend::cpu {
namespace {

// w' = floor(w * 2^52 / q) is the table's 64-bit companion floor(w * 2^64 / q) shifted right by 12
// (the floor of a floor divided by 2^12 is the floor of the quotient); qhat = floor(a * w' / 2^52)
// and a * w - qhat * q is in [0, 2q) for any a < 2^52 (HEXL's IFMA NTT does the same). It is
// computed modulo 2^52 (the low halves of the products) and masked: the exact value is below
// 2q < 2^51. With q < 2^50 every lazy input (below 4q) fits the 52 bits that IFMA reads.
struct Shoup52 {
    __m512i neg_q, mask;
    explicit Shoup52(uint64_t q)
        : neg_q(_mm512_set1_epi64(int64_t((uint64_t(1) << 52) - q))), mask(_mm512_set1_epi64((int64_t(1) << 52) - 1)) {}
    // The 52-bit companion of the 64-bit Shoup companion w_shoup.
    __m512i companion(__m512i w_shoup) const { return _mm512_srli_epi64(w_shoup, 12); }
    // a * w mod q in [0, 2q), for a < 2^52 and w52 = companion(w_shoup)
    __m512i mul_lazy(__m512i a, __m512i w, __m512i w52) const {
        const __m512i zero = _mm512_setzero_si512();
        const __m512i qhat = _mm512_madd52hi_epu64(zero, a, w52);
        const __m512i r = _mm512_madd52lo_epu64(_mm512_madd52lo_epu64(zero, a, w), qhat, neg_q);
        return _mm512_and_si512(r, mask);
    }
};

}  // namespace
}  // namespace oboro::backend::cpu
