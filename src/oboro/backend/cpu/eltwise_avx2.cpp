// AVX2 element-wise kernels: 4 lanes of 64 bits. AVX2 has no 64-bit multiply, no unsigned 64-bit
// compare and no 64-bit min, so products come from vpmuludq (32x32 -> 64 bits) and conditional
// subtractions select on the sign bit of the difference.
#include "oboro/backend/cpu/eltwise.hpp"

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>

// Every header with inline code comes before the target (util/simd_target.hpp).
#include "oboro/backend/cpu/word_barrett.hpp"

#include "oboro/util/simd_target.hpp"

OBORO_SIMD_TARGET_BEGIN("avx2")

#include "oboro/backend/cpu/eltwise_simd.hpp"

namespace oboro::backend::cpu {
namespace {

struct Avx2Ops {
    using reg = __m256i;
    using count = __m128i;
    static constexpr size_t lanes = 4;

    static reg load(const uint64_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
    static void store(uint64_t* p, reg v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
    static void stream(uint64_t* p, reg v) { _mm256_stream_si256(reinterpret_cast<__m256i*>(p), v); }
    static void store_fence() { _mm_sfence(); }
    static reg set1(uint64_t v) { return _mm256_set1_epi64x(static_cast<long long>(v)); }
    static reg zero() { return _mm256_setzero_si256(); }
    static reg add(reg a, reg b) { return _mm256_add_epi64(a, b); }
    static reg sub(reg a, reg b) { return _mm256_sub_epi64(a, b); }
    static reg and_(reg a, reg b) { return _mm256_and_si256(a, b); }
    static reg or_(reg a, reg b) { return _mm256_or_si256(a, b); }
    static reg srli32(reg a) { return _mm256_srli_epi64(a, 32); }
    static reg slli32(reg a) { return _mm256_slli_epi64(a, 32); }
    static count shift_count(int s) { return _mm_cvtsi32_si128(s); }
    static reg sll(reg a, count c) { return _mm256_sll_epi64(a, c); }
    static reg srl(reg a, count c) { return _mm256_srl_epi64(a, c); }
    static reg mul32(reg a, reg b) { return _mm256_mul_epu32(a, b); }

    // low word of a*b = ll + ((lh + hl) << 32): three 32-bit products
    static reg mullo(reg a, reg b) {
        const reg cross = add(mul32(a, srli32(b)), mul32(srli32(a), b));
        return add(mul32(a, b), slli32(cross));
    }

    // Picks a where the sign bit of mask is set, else b.
    static reg select_neg(reg mask, reg a, reg b) {
        return _mm256_castpd_si256(
            _mm256_blendv_pd(_mm256_castsi256_pd(b), _mm256_castsi256_pd(a), _mm256_castsi256_pd(mask)));
    }

    // x >= m ? x - m : x. When |x - m| < 2^63 the sign bit of x - m tells which (every caller's
    // values are below 4q < 2^64 with q < 2^62, so their differences with q or 2q are).
    static reg cond_sub(reg x, reg m) {
        const reg d = sub(x, m);
        return select_neg(d, x, d);
    }

    // x - y, plus q where it went negative (|x - y| < q < 2^63)
    static reg sub_mod(reg x, reg y, reg q) {
        const reg d = sub(x, y);
        return select_neg(d, add(d, q), d);
    }

    static reg neg_mod(reg x, reg q) { return _mm256_andnot_si256(_mm256_cmpeq_epi64(x, zero()), sub(q, x)); }

    // (hi, lo) += v: the sum wrapped iff the new lo is below v (unsigned compare via the sign flip)
    static void add_carry(reg& hi, reg& lo, reg v) {
        lo = add(lo, v);
        const reg sign = set1(uint64_t(1) << 63);
        const reg carry = _mm256_cmpgt_epi64(_mm256_xor_si256(v, sign), _mm256_xor_si256(lo, sign));
        hi = sub(hi, carry);  // carry is all ones (-1) where the sum wrapped
    }
};

constexpr EltwiseKernels kTable = simd::Kernels<Avx2Ops>::table("avx2");

}  // namespace
}  // namespace oboro::backend::cpu

OBORO_SIMD_TARGET_END

namespace oboro::backend::cpu {
const EltwiseKernels* avx2_kernels() {
    // The key-switching inner product stays scalar on AVX2: there the 128-bit accumulation is
    // one mulx and an add-with-carry per product, while AVX2 needs four vpmuludq and about
    // fifteen other instructions per four products; bench_kernels measured the scalar one ahead
    // (9.5 against 10.9 ns per element and term, Xeon, docs/benchmarks/kernels.md).
    static const EltwiseKernels table = [] {
        EltwiseKernels t = kTable;
        t.dot2 = scalar_kernels().dot2;
        return t;
    }();
    return &table;
}
}  // namespace oboro::backend::cpu

#else

namespace oboro::backend::cpu {
const EltwiseKernels* avx2_kernels() { return nullptr; }
}  // namespace oboro::backend::cpu

#endif
