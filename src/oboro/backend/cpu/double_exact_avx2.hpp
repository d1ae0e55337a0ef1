// Exact modular arithmetic in double precision on AVX2 with FMA, for moduli between 2^20 and 2^50
// (ntt_simd.hpp: kDoubleModulusBits): the AVX2 NTT's DoubleExact butterflies (ntt_avx2.cpp) and
// the AVX2 table's products of residues (eltwise_avx2.cpp). AVX2 has no 64-bit multiply, so an
// integer product of 64-bit words takes several 32 x 32-bit vpmuludq; in doubles a product is
// the rounded value h and its exact error l = fma(a, b, -h), a handful of instructions.
//
// Include inside an OBORO_SIMD_TARGET region with "avx2,fma" (util/simd_target.hpp): everything
// here has internal linkage.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace oboro::backend::cpu {
namespace {
namespace double_exact {

inline constexpr uint64_t kMagicBits = 0x4330000000000000;  // the double 2^52
inline constexpr double kMagic = 0x1p52;

// A word below 2^52 as the double of the same value, and back (the word of a double integer in
// [0, 2^52)): 2^52 + x has x in its mantissa.
inline __m256d to_double(__m256i x) {
    return _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(x, _mm256_set1_epi64x(int64_t(kMagicBits)))),
                         _mm256_set1_pd(kMagic));
}
inline __m256i to_word(__m256d x) {
    return _mm256_xor_si256(_mm256_castpd_si256(_mm256_add_pd(x, _mm256_set1_pd(kMagic))),
                            _mm256_set1_epi64x(int64_t(kMagicBits)));
}
inline __m256d round_even(__m256d x) { return _mm256_round_pd(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }

// x - round(x / q) q for an integer |x| < 2^52 (q_inv = fl(1/q)): x q_inv is within 2^-51 |x| / q
// of x / q, below 2^-19 for q > 2^20, so the result is exact (an integer below 2^53 that fma
// computes without rounding) and within q/2 + 1 of zero: in (-q, q).
inline __m256d reduce(__m256d x, __m256d q, __m256d q_inv) {
    return _mm256_fnmadd_pd(round_even(_mm256_mul_pd(x, q_inv)), q, x);
}

// The canonical residue of an integer |x| < 2^52: reduce(), then q added where negative.
inline __m256d canonical(__m256d x, __m256d q, __m256d q_inv) {
    const __m256d r = reduce(x, q, q_inv);
    return _mm256_add_pd(r, _mm256_and_pd(_mm256_cmp_pd(r, _mm256_setzero_pd(), _CMP_LT_OQ), q));
}

// a b - t q for t = round(fl(a b / q)), a b mod q up to a multiple of q, exact and for residues
// a, b < q at most q in magnitude (the argument of mul_mod below; |a b / q - t| <= 1 when
// a b < q^2): sums of such terms stay exact while below 2^53.
inline __m256d mul_mod_lazy(__m256d a, __m256d b, __m256d q, __m256d q_inv) {
    const __m256d h = _mm256_mul_pd(a, b);
    const __m256d l = _mm256_fmsub_pd(a, b, h);
    const __m256d t = round_even(_mm256_mul_pd(h, q_inv));
    return _mm256_add_pd(_mm256_fnmadd_pd(t, q, h), l);
}

// a b mod q in [0, q) for integers 0 <= a, b < 2q, q < 2^50 odd, q_inv = fl(1/q).
// a b = h + l exactly (h = fl(a b), l = fma(a, b, -h)). a b < 4 q^2 < 2^(2 bits(q) + 2), so
// |l| <= ulp(h) / 2 <= 2^(2 bits(q) - 52) and |l| / q <= 1/2. t = round(fl(h q_inv)): fl(h q_inv)
// is within 2^-52 h / q < 1 of h / q (h / q < 4 q < 2^52), so |a b / q - t| < 2.5 and h - t q,
// an integer below 2.5 q + |l| < 2^53 in magnitude, is what fma(-t, q, h) returns (no rounding);
// adding l is exact too: a b - t q, below 2.5 q in magnitude. reduce() takes it to
// [-(q + 1) / 2, (q + 1) / 2] and q is added where it is negative.
inline __m256d mul_mod(__m256d a, __m256d b, __m256d q, __m256d q_inv) {
    return canonical(mul_mod_lazy(a, b, q, q_inv), q, q_inv);
}

}  // namespace double_exact
}  // namespace
}  // namespace oboro::backend::cpu
