// The AVX-512 table with the products done by AVX-512 IFMA (vpmadd52luq / vpmadd52huq: the low
// and high 52 bits of a 52 x 52-bit product, added to a 64-bit lane) for primes below 2^50, the
// 40-bit ciphertext primes of every preset. Plain AVX-512 has no 64-bit high multiply and
// builds one from four 32-bit products (eltwise_simd.hpp); here a product is two instructions
// and its Barrett reduction two more. Kernels on larger primes, and the kernels without
// products of two residues (but the base conversions and (x - y) * w), are the AVX-512 table's.
#include "oboro/backend/cpu/eltwise.hpp"

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>

// Every header with inline code comes before the target (util/simd_target.hpp).
#include "oboro/backend/cpu/ntt_simd.hpp"
#include "oboro/backend/cpu/word_barrett.hpp"

#include "oboro/util/simd_target.hpp"

OBORO_SIMD_TARGET_BEGIN("avx512f,avx512dq,avx512ifma")

#include "oboro/backend/cpu/eltwise_avx512_ops.hpp"
#include "oboro/backend/cpu/eltwise_simd.hpp"
#include "oboro/backend/cpu/ifma_shoup.hpp"

namespace oboro::backend::cpu {
namespace {

// q < 2^kIfmaModulusBits (50): residues, lazy values below 4q and 3q fit the 52 bits IFMA reads
bool fits(uint64_t q) { return (q >> kIfmaModulusBits) == 0; }
bool fits(const math::Modulus& m) { return fits(m.value); }

// Barrett reduction of x = hi * 2^52 + lo (the two IFMA sums) for a b-bit q < 2^50 and any
// x < 2^(b+51):
//     c = floor(x / 2^(b-1)) < 2^52,  mu = floor(2^(b+51) / q) < 2^52,  qhat = floor(c * mu / 2^52)
// c * mu / 2^52 > x/q - x/2^(b+51) - 2^(b-1)/q >= x/q - 2, so qhat is floor(x/q) minus at most 2
// and r = x - qhat * q is in [0, 3q), below 2^52: it is computed modulo 2^52 (low halves only).
// Products of residues (x < q^2 < 2^(2b)) and sums of up to 2^(51-b) of them meet the bound.
struct Barrett52 {
    __m512i q, two_q, neg_q, mu, mask;
    __m128i hi_shift, lo_shift;
    int bits;
    explicit Barrett52(uint64_t modulus) {
        bits = 64 - __builtin_clzll(modulus);
        const uint64_t m = uint64_t((static_cast<unsigned __int128>(1) << (bits + 51)) / modulus);
        q = _mm512_set1_epi64(int64_t(modulus));
        two_q = _mm512_set1_epi64(int64_t(2 * modulus));
        neg_q = _mm512_set1_epi64(int64_t((uint64_t(1) << 52) - modulus));
        mu = _mm512_set1_epi64(int64_t(m));
        mask = _mm512_set1_epi64((int64_t(1) << 52) - 1);
        hi_shift = _mm_cvtsi32_si128(53 - bits);
        lo_shift = _mm_cvtsi32_si128(bits - 1);
    }
    // How many products of residues one reduction can take.
    uint64_t max_terms() const { return uint64_t(1) << (51 - bits); }

    __m512i reduce(__m512i hi, __m512i lo) const {
        const __m512i zero = _mm512_setzero_si512();
        const __m512i c = _mm512_add_epi64(_mm512_sll_epi64(hi, hi_shift), _mm512_srl_epi64(lo, lo_shift));
        const __m512i qhat = _mm512_madd52hi_epu64(zero, c, mu);
        const __m512i r = _mm512_and_si512(_mm512_madd52lo_epu64(lo, qhat, neg_q), mask);
        return Avx512Ops::cond_sub(Avx512Ops::cond_sub(r, two_q), q);
    }
    // a * b mod q for residues a, b
    __m512i mul(__m512i a, __m512i b) const {
        const __m512i zero = _mm512_setzero_si512();
        return reduce(_mm512_madd52hi_epu64(zero, a, b), _mm512_madd52lo_epu64(zero, a, b));
    }
};

constexpr size_t L = Avx512Ops::lanes;

const EltwiseKernels& base() { return *avx512_kernels(); }

template <bool Stream> void mul_to(uint64_t* d, const uint64_t* x, const uint64_t* y, const math::Modulus& m, size_t n) {
    if (!fits(m)) return (Stream ? base().mul_stream : base().mul)(d, x, y, m, n);
    if (Stream && !simd::stream_aligned<Avx512Ops>(d)) return mul_to<false>(d, x, y, m, n);
    const Barrett52 br(m.value);
    size_t k = 0;
    for (; k + L <= n; k += L)
        simd::put<Stream, Avx512Ops>(d + k, br.mul(_mm512_loadu_si512(x + k), _mm512_loadu_si512(y + k)));
    if (Stream) Avx512Ops::store_fence();
    if (k < n) scalar_kernels().mul(d + k, x + k, y + k, m, n - k);
}

// acc + x * y < q^2 + 2q < 2^(2b): one reduction.
void mul_add(uint64_t* acc, const uint64_t* x, const uint64_t* y, const math::Modulus& m, size_t n) {
    if (!fits(m)) return base().mul_add(acc, x, y, m, n);
    const Barrett52 br(m.value);
    const __m512i zero = _mm512_setzero_si512();
    size_t k = 0;
    for (; k + L <= n; k += L) {
        const __m512i a = _mm512_loadu_si512(x + k), b = _mm512_loadu_si512(y + k);
        const __m512i lo = _mm512_madd52lo_epu64(_mm512_loadu_si512(acc + k), a, b);
        _mm512_storeu_si512(acc + k, br.reduce(_mm512_madd52hi_epu64(zero, a, b), lo));
    }
    if (k < n) scalar_kernels().mul_add(acc + k, x + k, y + k, m, n - k);
}

template <bool Stream>
void tensor_to(uint64_t* d0, uint64_t* d1, uint64_t* d2, const uint64_t* x0, const uint64_t* x1, const uint64_t* y0,
               const uint64_t* y1, const math::Modulus& m, size_t n) {
    if (!fits(m)) return (Stream ? base().tensor_stream : base().tensor)(d0, d1, d2, x0, x1, y0, y1, m, n);
    const auto aligned = [](const uint64_t* d) { return simd::stream_aligned<Avx512Ops>(d); };
    if (Stream && !(aligned(d0) && aligned(d1) && aligned(d2))) return tensor_to<false>(d0, d1, d2, x0, x1, y0, y1, m, n);
    const Barrett52 br(m.value);
    size_t k = 0;
    for (; k + L <= n; k += L) {
        const __m512i a0 = _mm512_loadu_si512(x0 + k), a1 = _mm512_loadu_si512(x1 + k);
        const __m512i b0 = _mm512_loadu_si512(y0 + k), b1 = _mm512_loadu_si512(y1 + k);
        const __m512i p00 = br.mul(a0, b0), p11 = br.mul(a1, b1);
        const __m512i cross = br.mul(Avx512Ops::cond_sub(_mm512_add_epi64(a0, a1), br.q),
                                     Avx512Ops::cond_sub(_mm512_add_epi64(b0, b1), br.q));
        simd::put<Stream, Avx512Ops>(d0 + k, p00);
        simd::put<Stream, Avx512Ops>(d1 + k, Avx512Ops::sub_mod(Avx512Ops::sub_mod(cross, p00, br.q), p11, br.q));
        simd::put<Stream, Avx512Ops>(d2 + k, p11);
    }
    if (Stream) Avx512Ops::store_fence();
    if (k < n) scalar_kernels().tensor(d0 + k, d1 + k, d2 + k, x0 + k, x1 + k, y0 + k, y1 + k, m, n - k);
}

// The key-switching inner product: the low and high halves of the products are summed in two
// 64-bit lanes each (a low half is below 2^52 and a high half below 2^48, so 64 terms cannot
// overflow) and reduced once; the old o0 / o1 (canonical) start the low sums.
void dot2(uint64_t* o0, uint64_t* o1, const DotTerm* terms, size_t count, bool accumulate, const math::Modulus& m,
          size_t n) {
    if (!fits(m)) return base().dot2(o0, o1, terms, count, accumulate, m, n);
    const Barrett52 br(m.value);
    if (count + (accumulate ? 1 : 0) > br.max_terms()) return base().dot2(o0, o1, terms, count, accumulate, m, n);
    const __m512i zero = _mm512_setzero_si512();
    size_t k = 0;
    for (; k + L <= n; k += L) {
        __m512i h0 = zero, l0 = accumulate ? _mm512_loadu_si512(o0 + k) : zero;
        __m512i h1 = zero, l1 = accumulate ? _mm512_loadu_si512(o1 + k) : zero;
        for (size_t j = 0; j < count; ++j) {
            const DotTerm& t = terms[j];
            const __m512i v = _mm512_loadu_si512(t.x + k);
            const __m512i k0 = _mm512_loadu_si512(t.y0 + k), k1 = _mm512_loadu_si512(t.y1 + k);
            l0 = _mm512_madd52lo_epu64(l0, v, k0);
            h0 = _mm512_madd52hi_epu64(h0, v, k0);
            l1 = _mm512_madd52lo_epu64(l1, v, k1);
            h1 = _mm512_madd52hi_epu64(h1, v, k1);
        }
        _mm512_storeu_si512(o0 + k, br.reduce(h0, l0));
        _mm512_storeu_si512(o1 + k, br.reduce(h1, l1));
    }
    simd::Kernels<Avx512Ops>::dot2_tail(o0, o1, terms, count, accumulate, m, n, k);
}

// x mod t for x < p < 2^62 and a prime t of m below 2^50: with x = xh * 2^52 + xl, x is congruent
// to xh * (2^52 mod t) + xl < 2^10 * 2^b + 2^52 < 2^(b+51), which Barrett52 reduces. Centred:
// subtract p mod t where x > p/2, selected as in the AVX-512 kernel.
void convert_single(uint64_t* d, const uint64_t* x, uint64_t p, bool centered, const math::Modulus& m, size_t n) {
    if (!fits(m)) return base().convert_single(d, x, p, centered, m, n);
    const Barrett52 br(m.value);
    const __m512i r52 = _mm512_set1_epi64(int64_t(m.barrett.reduce_word(uint64_t(1) << 52)));
    const __m512i half = _mm512_set1_epi64(int64_t(p >> 1)), p_mod_t = _mm512_set1_epi64(int64_t(m.barrett.reduce_word(p)));
    const __m512i zero = _mm512_setzero_si512();
    size_t k = 0;
    for (; k + L <= n; k += L) {
        const __m512i a = _mm512_loadu_si512(x + k);
        const __m512i xh = _mm512_srli_epi64(a, 52), xl = _mm512_and_si512(a, br.mask);
        __m512i r = br.reduce(_mm512_madd52hi_epu64(zero, xh, r52), _mm512_madd52lo_epu64(xl, xh, r52));
        if (centered) {
            const __m512i all_ones_above_half = _mm512_sub_epi64(zero, _mm512_srli_epi64(_mm512_sub_epi64(half, a), 63));
            r = Avx512Ops::sub_mod(r, _mm512_and_si512(all_ones_above_half, p_mod_t), br.q);
        }
        _mm512_storeu_si512(d + k, r);
    }
    if (k < n) scalar_kernels().convert_single(d + k, x + k, p, centered, m, n - k);
}

// d = (x - y) * w with Shoup's product in base 2^52 (ifma_shoup.hpp): x - y + q < 2q < 2^51 fits
// IFMA's 52 bits.
void sub_mul_scalar(uint64_t* d, const uint64_t* x, const uint64_t* y, uint64_t w, uint64_t ws, uint64_t q,
                    size_t n) {
    if (!fits(q)) return base().sub_mul_scalar(d, x, y, w, ws, q, n);
    const Shoup52 shoup(q);
    const __m512i vq = _mm512_set1_epi64(int64_t(q)), vw = _mm512_set1_epi64(int64_t(w));
    const __m512i w52 = shoup.companion(_mm512_set1_epi64(int64_t(ws)));
    size_t k = 0;
    for (; k + L <= n; k += L) {
        const __m512i diff = _mm512_add_epi64(_mm512_sub_epi64(_mm512_loadu_si512(x + k), _mm512_loadu_si512(y + k)), vq);
        _mm512_storeu_si512(d + k, Avx512Ops::cond_sub(shoup.mul_lazy(diff, vw, w52), vq));
    }
    if (k < n) scalar_kernels().sub_mul_scalar(d + k, x + k, y + k, w, ws, q, n - k);
}

// Fast base conversion's sum into a prime t below 2^50 (the 40-bit primes of every preset).
// A residue y_i of a source prime may have up to 62 bits, more than IFMA reads, so it is split
// at bit 31: y_i * w_i = yl * w_i + yh * (2^31 w_i mod t) with yl, yh < 2^31. The count term
// -v * u is added as v * (t - u). All 2 * terms + 1 products (each below 2^(31+b)) are summed in
// IFMA's two 52-bit halves and reduced once by Barrett52 (sums below 2^(b+51): far more terms
// than kMaxDotTerms).
void weighted_sum(uint64_t* d, const uint64_t* y, size_t stride, size_t terms, uint64_t y_bound, const uint64_t* w,
                  const uint8_t* v, uint64_t u, uint64_t u_shoup, const math::Modulus& m, size_t n) {
    if (!fits(m) || terms > kMaxDotTerms)
        return base().weighted_sum(d, y, stride, terms, y_bound, w, v, u, u_shoup, m, n);
    const Barrett52 br(m.value);
    const uint64_t t = m.value, two31 = m.barrett.reduce_word(uint64_t(1) << 31);
    __m512i w_low[kMaxDotTerms], w_high[kMaxDotTerms];
    for (size_t i = 0; i < terms; ++i) {
        w_low[i] = _mm512_set1_epi64(int64_t(w[i]));
        w_high[i] = _mm512_set1_epi64(int64_t(m.barrett.mul(w[i], two31)));
    }
    const __m512i minus_u = _mm512_set1_epi64(int64_t(u == 0 ? 0 : t - u));
    const __m512i low31 = _mm512_set1_epi64((int64_t(1) << 31) - 1);
    size_t k = 0;
    for (; k + L <= n; k += L) {
        __m512i lo = _mm512_setzero_si512(), hi = _mm512_setzero_si512();
        for (size_t i = 0; i < terms; ++i) {
            const __m512i x = _mm512_loadu_si512(y + i * stride + k);
            const __m512i xl = _mm512_and_si512(x, low31), xh = _mm512_srli_epi64(x, 31);
            lo = _mm512_madd52lo_epu64(lo, xl, w_low[i]);
            hi = _mm512_madd52hi_epu64(hi, xl, w_low[i]);
            lo = _mm512_madd52lo_epu64(lo, xh, w_high[i]);
            hi = _mm512_madd52hi_epu64(hi, xh, w_high[i]);
        }
        if (v) {
            const __m512i counts = _mm512_cvtepu8_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(v + k)));
            lo = _mm512_madd52lo_epu64(lo, counts, minus_u);
            hi = _mm512_madd52hi_epu64(hi, counts, minus_u);
        }
        _mm512_storeu_si512(d + k, br.reduce(hi, lo));
    }
    if (k < n)
        scalar_kernels().weighted_sum(d + k, y + k, stride, terms, y_bound, w, v ? v + k : nullptr, u, u_shoup, m,
                                      n - k);
}

EltwiseKernels make_table() {
    EltwiseKernels t = base();
    t.name = "avx512+ifma";
    t.mul = mul_to<false>;
    t.mul_stream = mul_to<true>;
    t.mul_add = mul_add;
    t.tensor = tensor_to<false>;
    t.tensor_stream = tensor_to<true>;
    t.dot2 = dot2;
    t.convert_single = convert_single;
    t.sub_mul_scalar = sub_mul_scalar;
    t.weighted_sum = weighted_sum;
    return t;
}

}  // namespace
}  // namespace oboro::backend::cpu

OBORO_SIMD_TARGET_END

namespace oboro::backend::cpu {
const EltwiseKernels* avx512ifma_kernels() {
    if (!avx512_kernels()) return nullptr;
    static const EltwiseKernels table = make_table();
    return &table;
}
}  // namespace oboro::backend::cpu

#else

namespace oboro::backend::cpu {
const EltwiseKernels* avx512ifma_kernels() { return nullptr; }
}  // namespace oboro::backend::cpu

#endif
