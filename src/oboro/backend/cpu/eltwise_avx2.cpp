// AVX2 element-wise kernels: 4 lanes of 64 bits. AVX2 has no 64-bit multiply, no unsigned 64-bit
// compare and no 64-bit min, so products come from vpmuludq (32x32 -> 64 bits) and conditional
// subtractions select on the sign bit of the difference. Products of two residues modulo a prime
// below 2^50 (the 40-bit ciphertext primes of every preset) are computed in double precision with
// FMA instead (double_exact_avx2.hpp): mul, mul_add, tensor and dot2. The table runs where
// avx2_available() (AVX2 and FMA).
#include "oboro/backend/cpu/eltwise.hpp"

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>

#include <cstring>

// Every header with inline code comes before the target (util/simd_target.hpp).
#include "oboro/backend/cpu/ntt_simd.hpp"
#include "oboro/backend/cpu/word_barrett.hpp"

#include "oboro/util/simd_target.hpp"

OBORO_SIMD_TARGET_BEGIN("avx2,fma")

#include "oboro/backend/cpu/double_exact_avx2.hpp"
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

// ---- products of residues in double precision, primes below 2^50 ------------------------------

constexpr size_t L = Avx2Ops::lanes;

// between 2^20 (double_exact::reduce) and 2^50: every NTT prime of the 40-bit ciphertext limbs
bool fits_double(const math::Modulus& m) { return (m.value >> kDoubleModulusBits) == 0 && (m.value >> 20) != 0; }

// double_exact's products modulo one prime: a b mod q for residues below 2q, canonical, as doubles
// or as words; the lazy product a b - t q and the canonical residue of a sum of them (dot2).
struct DoubleProduct {
    __m256d q, q_inv;
    explicit DoubleProduct(uint64_t modulus)
        : q(_mm256_set1_pd(double(modulus))), q_inv(_mm256_set1_pd(1.0 / double(modulus))) {}
    __m256d mul(__m256d a, __m256d b) const { return double_exact::mul_mod(a, b, q, q_inv); }
    __m256d mul_lazy(__m256d a, __m256d b) const { return double_exact::mul_mod_lazy(a, b, q, q_inv); }
    __m256i canonical_word(__m256d x) const { return double_exact::to_word(double_exact::canonical(x, q, q_inv)); }
    __m256i mul(__m256i a, __m256i b) const {
        return double_exact::to_word(mul(double_exact::to_double(a), double_exact::to_double(b)));
    }
};

template <bool Stream> void mul_to(uint64_t* d, const uint64_t* x, const uint64_t* y, const math::Modulus& m, size_t n) {
    if (!fits_double(m)) return (Stream ? kTable.mul_stream : kTable.mul)(d, x, y, m, n);
    if (Stream && !simd::stream_aligned<Avx2Ops>(d)) return mul_to<false>(d, x, y, m, n);
    const DoubleProduct p(m.value);
    size_t k = 0;
    for (; k + L <= n; k += L) simd::put<Stream, Avx2Ops>(d + k, p.mul(Avx2Ops::load(x + k), Avx2Ops::load(y + k)));
    if (Stream) Avx2Ops::store_fence();
    if (k < n) scalar_kernels().mul(d + k, x + k, y + k, m, n - k);
}

// acc (below 2q) + x y: the canonical product plus acc, below 3q, less q at most twice.
void mul_add(uint64_t* acc, const uint64_t* x, const uint64_t* y, const math::Modulus& m, size_t n) {
    if (!fits_double(m)) return kTable.mul_add(acc, x, y, m, n);
    const DoubleProduct p(m.value);
    const __m256i vq = Avx2Ops::set1(m.value);
    size_t k = 0;
    for (; k + L <= n; k += L) {
        const __m256i sum = Avx2Ops::add(Avx2Ops::load(acc + k), p.mul(Avx2Ops::load(x + k), Avx2Ops::load(y + k)));
        Avx2Ops::store(acc + k, Avx2Ops::cond_sub(Avx2Ops::cond_sub(sum, vq), vq));
    }
    if (k < n) scalar_kernels().mul_add(acc + k, x + k, y + k, m, n - k);
}

// d1 = a0 b1 + a1 b0 as two products (the operands converted to doubles once), below 2q as a sum.
template <bool Stream>
void tensor_to(uint64_t* d0, uint64_t* d1, uint64_t* d2, const uint64_t* x0, const uint64_t* x1, const uint64_t* y0,
               const uint64_t* y1, const math::Modulus& m, size_t n) {
    if (!fits_double(m)) return (Stream ? kTable.tensor_stream : kTable.tensor)(d0, d1, d2, x0, x1, y0, y1, m, n);
    const auto aligned = [](const uint64_t* d) { return simd::stream_aligned<Avx2Ops>(d); };
    if (Stream && !(aligned(d0) && aligned(d1) && aligned(d2))) return tensor_to<false>(d0, d1, d2, x0, x1, y0, y1, m, n);
    const DoubleProduct p(m.value);
    const __m256i vq = Avx2Ops::set1(m.value);
    size_t k = 0;
    for (; k + L <= n; k += L) {
        using double_exact::to_double, double_exact::to_word;
        const __m256d a0 = to_double(Avx2Ops::load(x0 + k)), a1 = to_double(Avx2Ops::load(x1 + k));
        const __m256d b0 = to_double(Avx2Ops::load(y0 + k)), b1 = to_double(Avx2Ops::load(y1 + k));
        const __m256i cross = to_word(_mm256_add_pd(p.mul(a0, b1), p.mul(a1, b0)));
        simd::put<Stream, Avx2Ops>(d0 + k, to_word(p.mul(a0, b0)));
        simd::put<Stream, Avx2Ops>(d1 + k, Avx2Ops::cond_sub(cross, vq));
        simd::put<Stream, Avx2Ops>(d2 + k, to_word(p.mul(a1, b1)));
    }
    if (Stream) Avx2Ops::store_fence();
    if (k < n) scalar_kernels().tensor(d0 + k, d1 + k, d2 + k, x0 + k, x1 + k, y0 + k, y1 + k, m, n - k);
}

// The key-switching inner product on a prime below 2^50: each product a b - t q (at most q in
// magnitude, exact: double_exact::mul_mod_lazy) summed in a double, exactly while the count + 1
// terms (the old outputs included) stay below 2^52, and reduced once per output.
void dot2(uint64_t* o0, uint64_t* o1, const DotTerm* terms, size_t count, bool accumulate, const math::Modulus& m,
          size_t n) {
    if (!fits_double(m) || (count + 1) * m.value >= (uint64_t(1) << 52))
        return kTable.dot2(o0, o1, terms, count, accumulate, m, n);
    using double_exact::to_double;
    const DoubleProduct p(m.value);
    size_t k = 0;
    for (; k + L <= n; k += L) {
        __m256d s0 = accumulate ? to_double(Avx2Ops::load(o0 + k)) : _mm256_setzero_pd();
        __m256d s1 = accumulate ? to_double(Avx2Ops::load(o1 + k)) : _mm256_setzero_pd();
        for (size_t j = 0; j < count; ++j) {
            const DotTerm& t = terms[j];
            const __m256d x = to_double(Avx2Ops::load(t.x + k));
            s0 = _mm256_add_pd(s0, p.mul_lazy(x, to_double(Avx2Ops::load(t.y0 + k))));
            s1 = _mm256_add_pd(s1, p.mul_lazy(x, to_double(Avx2Ops::load(t.y1 + k))));
        }
        Avx2Ops::store(o0 + k, p.canonical_word(s0));
        Avx2Ops::store(o1 + k, p.canonical_word(s1));
    }
    simd::Kernels<Avx2Ops>::dot2_tail(o0, o1, terms, count, accumulate, m, n, k);
}

// The centred overflow counts 4 coefficients at a time, with the same roundings in the same order
// as math::conversion_overflow (eltwise.hpp: every table gives the same counts). AVX2 has no
// conversion of 64-bit integers to doubles: a word below 2^62 is its high and low 32 bits as exact
// doubles, and hi 2^32 + lo is one rounding, the same as the conversion's. The empty asm keeps
// the compiler from fusing the product and the sum into a fused multiply-add (this file is
// compiled with FMA, and GCC contracts vector arithmetic by default), which rounds once instead
// of twice.
void overflow_counts(uint8_t* v, const uint64_t* y, size_t stride, size_t terms, const double* inv, size_t n) {
    using double_exact::to_double;
    const __m256i low32 = Avx2Ops::set1(0xffffffffu);
    const __m256d two32 = _mm256_set1_pd(0x1p32);
    size_t c = 0;
    for (; c + L <= n; c += L) {
        __m256d sum = _mm256_set1_pd(0.5);
        for (size_t i = 0; i < terms; ++i) {
            const __m256i w = Avx2Ops::load(y + i * stride + c);
            const __m256d yi = _mm256_add_pd(_mm256_mul_pd(to_double(_mm256_srli_epi64(w, 32)), two32),
                                             to_double(_mm256_and_si256(w, low32)));
            __m256d product = _mm256_mul_pd(yi, _mm256_set1_pd(inv[i]));
            asm("" : "+x"(product));
            sum = _mm256_add_pd(sum, product);
        }
        // sum in [0.5, terms + 0.5), terms <= 64: truncated to 32 bits, then packed to bytes
        const __m128i counts = _mm256_cvttpd_epi32(sum);
        const __m128i halves = _mm_packus_epi32(counts, counts);
        const int32_t bytes = _mm_cvtsi128_si32(_mm_packus_epi16(halves, halves));
        std::memcpy(v + c, &bytes, sizeof bytes);
    }
    if (c < n) overflow_counts_portable(v + c, y + c, stride, terms, inv, n - c);
}

// Group g of 8 output slots reads the aligned group perm[8g] & ~7 (eltwise.hpp): its two halves
// are loaded once, vpermd picks each output word from both (word i is the 32-bit lanes 2i and
// 2i + 1) and bit 2 of its index selects the half. About twice the portable loop's speed.
void permute_automorphism(uint64_t* d, const uint64_t* x, const uint32_t* perm, size_t n) {
    const __m256i three = Avx2Ops::set1(3), next_lane = Avx2Ops::set1(uint64_t(1) << 32);
    size_t k = 0;
    for (; k + 8 <= n; k += 8) {
        const uint64_t* group = x + (perm[k] & ~uint32_t(7));
        const __m256i low = Avx2Ops::load(group), high = Avx2Ops::load(group + 4);
        for (size_t half = 0; half < 8; half += 4) {
            const __m256i index =
                _mm256_cvtepu32_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i*>(perm + k + half)));
            const __m256i lane = _mm256_slli_epi64(_mm256_and_si256(index, three), 1);  // 2 (index mod 4)
            const __m256i lanes = _mm256_or_si256(lane, _mm256_add_epi64(_mm256_slli_epi64(lane, 32), next_lane));
            Avx2Ops::store(d + k + half, Avx2Ops::select_neg(_mm256_slli_epi64(index, 61),
                                                             _mm256_permutevar8x32_epi32(high, lanes),
                                                             _mm256_permutevar8x32_epi32(low, lanes)));
        }
    }
    if (k < n) permute_automorphism_portable(d + k, x, perm + k, n - k);
}

// 4 words per vector: the low halves widened from 32 bits, the high parts from 8 or 16 bits,
// shifted and or-ed (backend/key_switch_key.hpp's layout, as the AVX-512 kernel).
void unpack_key_words(uint64_t* d, const uint8_t* limb, size_t n, uint32_t width, size_t begin, size_t count) {
    if (width == 8) {
        unpack_key_words_portable(d, limb, n, width, begin, count);
        return;
    }
    const uint8_t* lo = limb + 4 * begin;
    const uint8_t* hi = limb + 4 * n + (width == 5 ? begin : 2 * begin);
    size_t k = 0;
    for (; k + 4 <= count; k += 4) {
        const __m256i l = _mm256_cvtepu32_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i*>(lo + 4 * k)));
        __m256i h;
        if (width == 5) {
            int32_t bytes;
            std::memcpy(&bytes, hi + k, sizeof bytes);
            h = _mm256_cvtepu8_epi64(_mm_cvtsi32_si128(bytes));
        } else {
            h = _mm256_cvtepu16_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(hi + 2 * k)));
        }
        Avx2Ops::store(d + k, _mm256_or_si256(l, _mm256_slli_epi64(h, 32)));
    }
    if (k < count) unpack_key_words_portable(d + k, limb, n, width, begin + k, count - k);
}

}  // namespace
}  // namespace oboro::backend::cpu

OBORO_SIMD_TARGET_END

namespace oboro::backend::cpu {
// The table runs on CPUs with AVX2 and without AVX-512 (AMD before Zen 4, Intel client cores),
// its inner product dot2 included (in double precision below 2^50, above in 30-bit halves): on an
// AMD EPYC (Zen 3) the 30-bit halves take less than half
// the scalar 128-bit sums' time (6.6 against 14.7 ns per element for 3 terms on a 61-bit prime,
// docs/benchmarks/kernels_avx2.md). On a Xeon, where the AVX-512 table runs, the scalar form had
// measured slightly ahead of this one (9.5 against 10.9 ns per element and term,
// docs/benchmarks/kernels.md).
const EltwiseKernels* avx2_kernels() {
    static const EltwiseKernels table = [] {
        EltwiseKernels t = kTable;
        t.permute_automorphism = permute_automorphism;
        t.unpack_key_words = unpack_key_words;
        t.overflow_counts = overflow_counts;
        t.mul = mul_to<false>;
        t.mul_stream = mul_to<true>;
        t.mul_add = mul_add;
        t.tensor = tensor_to<false>;
        t.tensor_stream = tensor_to<true>;
        t.dot2 = dot2;
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
