// AVX-512 element-wise kernels: 8 lanes of 64 bits (the vector operations are in
// eltwise_avx512_ops.hpp).
#include "oboro/backend/cpu/eltwise.hpp"

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>

// Every header with inline code comes before the target (util/simd_target.hpp).
#include "oboro/backend/cpu/word_barrett.hpp"

#include "oboro/util/simd_target.hpp"

OBORO_SIMD_TARGET_BEGIN("avx512f,avx512dq")

#include "oboro/backend/cpu/eltwise_avx512_ops.hpp"
#include "oboro/backend/cpu/eltwise_simd.hpp"

namespace oboro::backend::cpu {
namespace {

// AVX-512DQ converts 64-bit integers to doubles and back (AVX2 cannot), so the centred overflow
// counts run 8 coefficients at a time: the same conversions, products and sums, in the same
// order, as math::conversion_overflow. The products and sums take explicit rounding, which the
// compiler does not contract into fused multiply-adds (as it would plain _mm512_mul_pd and
// _mm512_add_pd: AVX-512F brings FMA, and GCC contracts by default).
void overflow_counts(uint8_t* v, const uint64_t* y, size_t stride, size_t terms, const double* inv, size_t n) {
    constexpr size_t L = Avx512Ops::lanes;
    constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
    size_t c = 0;
    for (; c + L <= n; c += L) {
        __m512d sum = _mm512_set1_pd(0.5);
        for (size_t i = 0; i < terms; ++i) {
            const __m512d yi = _mm512_cvtepu64_pd(_mm512_loadu_si512(y + i * stride + c));
            sum = _mm512_add_round_pd(sum, _mm512_mul_round_pd(yi, _mm512_set1_pd(inv[i]), kNearest), kNearest);
        }
        _mm_storel_epi64(reinterpret_cast<__m128i*>(v + c), _mm512_cvtepi64_epi8(_mm512_cvttpd_epu64(sum)));
    }
    if (c < n) overflow_counts_portable(v + c, y + c, stride, terms, inv, n - c);
}

// Group g of 8 output slots reads the aligned group perm[8g] & ~7 (eltwise.hpp): one load, and
// vpermq, which reads only the low 3 bits of each index, puts its words in order.
void permute_automorphism(uint64_t* d, const uint64_t* x, const uint32_t* perm, size_t n) {
    size_t k = 0;
    for (; k + 8 <= n; k += 8) {
        const __m512i index = _mm512_cvtepu32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(perm + k)));
        const __m512i group = _mm512_loadu_si512(x + (perm[k] & ~uint32_t(7)));
        _mm512_storeu_si512(d + k, _mm512_permutexvar_epi64(index, group));
    }
    if (k < n) permute_automorphism_portable(d + k, x, perm + k, n - k);
}

// 8 words per vector: the low halves widened from 32 bits, the high parts from 8 or 16 bits,
// shifted and or-ed (the portable loop, which a baseline x86-64 build vectorizes 2 words wide).
void unpack_key_words(uint64_t* d, const uint8_t* limb, size_t n, uint32_t width, size_t begin, size_t count) {
    if (width == 8) {
        unpack_key_words_portable(d, limb, n, width, begin, count);
        return;
    }
    const uint32_t* lo = reinterpret_cast<const uint32_t*>(limb) + begin;
    const uint8_t* hi = limb + 4 * n + (width == 5 ? begin : 2 * begin);
    size_t k = 0;
    for (; k + 8 <= count; k += 8) {
        const __m512i l = _mm512_cvtepu32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(lo + k)));
        const __m512i h = width == 5
                              ? _mm512_cvtepu8_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(hi + k)))
                              : _mm512_cvtepu16_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i*>(hi + 2 * k)));
        _mm512_storeu_si512(d + k, _mm512_or_si512(l, _mm512_slli_epi64(h, 32)));
    }
    if (k < count) unpack_key_words_portable(d + k, limb, n, width, begin + k, count - k);
}

constexpr EltwiseKernels kTable = [] {
    EltwiseKernels t = simd::Kernels<Avx512Ops>::table("avx512");
    t.overflow_counts = overflow_counts;
    t.permute_automorphism = permute_automorphism;
    t.unpack_key_words = unpack_key_words;
    return t;
}();

}  // namespace
}  // namespace oboro::backend::cpu

OBORO_SIMD_TARGET_END

namespace oboro::backend::cpu {
const EltwiseKernels* avx512_kernels() { return &kTable; }
}  // namespace oboro::backend::cpu

#else

namespace oboro::backend::cpu {
const EltwiseKernels* avx512_kernels() { return nullptr; }
}  // namespace oboro::backend::cpu

#endif
