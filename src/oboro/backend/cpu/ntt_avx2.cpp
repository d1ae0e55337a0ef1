// The AVX2 negacyclic NTT: 4 lanes of 64 bits, for CPUs without AVX-512 (AMD before Zen 4, Intel
// client cores). The same butterflies as math/ntt.cpp (Cooley-Tukey forward, Gentleman-Sande
// inverse with n^{-1} folded into the last stage), and canonical outputs bit for bit those of the
// scalar transform: every product is exact modulo q, and a canonical residue is unique.
//
// One stage order (the driver below), the AVX-512 transform's (ntt_avx512_stages.hpp): the stages
// over the whole array two at a time, the others block by block in the first-level cache, the
// last two (distances 2 and 1, inside a vector) in registers. Two ways to multiply by a twiddle:
//  - IntegerShoup, any prime below 2^62: AVX2 has no 64-bit multiply, so a Shoup product takes nine
//    vpmuludq (32 x 32 -> 64 bits): three for the quotient's high word (low by at most 2, as the
//    AVX-512 kernel's, ntt_simd.cpp) and three each for the low words of a * w and quotient * q,
//    whose difference is all the lazy Shoup product needs. Harvey's lazy bounds, [0, 4q) forward
//    and [0, 2q) inverse. With no unsigned 64-bit compare, a conditional subtraction selects on the
//    sign of the difference, exact because every difference is below 2q < 2^63 in magnitude.
//  - DoubleExact, primes below 2^50 (kDoubleModulusBits): the words are doubles during the
//    transform (converted in place before and after), balanced residues in (-2.5q, 2.5q). a * w is
//    the rounded product h and its exact error l = fma(a, w, -h); with t = round(a * (w / q)),
//    a * w - t q = fma(-t, q, h) + l exactly (an integer below 2^53), in (-2q, 2q). Six floating
//    point operations instead of nine vpmuludq and about fifteen integer ones. The conversions and
//    the reduction are double_exact_avx2.hpp's, which the AVX2 table's products share.
#include "oboro/backend/cpu/ntt_simd.hpp"

#include "oboro/math/modarith.hpp"
#include "oboro/math/ntt.hpp"

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>

#include "oboro/util/simd_target.hpp"

namespace oboro::backend::cpu {
bool avx2_available() {
    static const bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return ok;
}
}  // namespace oboro::backend::cpu

OBORO_SIMD_TARGET_BEGIN("avx2,fma")

#include "oboro/backend/cpu/double_exact_avx2.hpp"

namespace oboro::backend::cpu {
namespace {

using V = __m256i;
using D = __m256d;

inline V load(const uint64_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
inline void store(uint64_t* p, V v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
inline V set1(uint64_t v) { return _mm256_set1_epi64x(static_cast<long long>(v)); }
inline V add(V a, V b) { return _mm256_add_epi64(a, b); }
inline V sub(V a, V b) { return _mm256_sub_epi64(a, b); }
inline V hi32(V a) { return _mm256_srli_epi64(a, 32); }
inline V mul32(V a, V b) { return _mm256_mul_epu32(a, b); }
inline D as_double(V v) { return _mm256_castsi256_pd(v); }
inline V as_words(D v) { return _mm256_castpd_si256(v); }

// x >= m ? x - m : x, for |x - m| < 2^63: the sign bit of x - m tells which.
inline V reduce_below(V x, V m) {
    const V d = sub(x, m);
    return as_words(_mm256_blendv_pd(as_double(d), as_double(x), as_double(d)));
}

// ---- IntegerShoup: 64-bit lazy Shoup products, any prime below 2^62 -----------------------------

struct IntegerShoup {
    V q, q_hi, two_q;
    explicit IntegerShoup(uint64_t modulus) : q(set1(modulus)), q_hi(set1(modulus >> 32)), two_q(set1(2 * modulus)) {}

    // A twiddle w with its Shoup companion, and the high halves of both, in every lane.
    struct Twiddle {
        V w, w_hi, ws, ws_hi;
    };
    Twiddle twiddle(V w, V ws) const { return {w, hi32(w), ws, hi32(ws)}; }

    static void prepare(uint64_t*, uint32_t) {}

    // a * w mod q in [0, 2q) for any 64-bit a (math::mul_shoup_lazy). The quotient
    // floor(a * ws / 2^64) from three 32-bit products leaves out the carry of the low partial
    // products (below 3), so it is low by at most 2 and a * w - quotient * q lies in [0, 4q): one
    // conditional subtraction of 2q.
    V mul(V a, const Twiddle& t) const {
        const V a_hi = hi32(a);
        const V quotient = add(mul32(a_hi, t.ws_hi), add(hi32(mul32(a, t.ws_hi)), hi32(mul32(a_hi, t.ws))));
        const V quotient_hi = hi32(quotient);
        // the low 64 bits of a * w - quotient * q: low products, and the cross products shifted by 32
        const V low = sub(mul32(a, t.w), mul32(quotient, q));
        const V cross = sub(add(mul32(a, t.w_hi), mul32(a_hi, t.w)), add(mul32(quotient, q_hi), mul32(quotient_hi, q)));
        return reduce_below(add(low, _mm256_slli_epi64(cross, 32)), two_q);
    }
    // math::ntt_forward_butterfly: x, y in [0, 4q) -> x + w y, x - w y in [0, 4q).
    void forward(V& x, V& y, const Twiddle& t) const {
        const V u = reduce_below(x, two_q), v = mul(y, t);
        x = add(u, v);
        y = add(sub(u, v), two_q);
    }
    // math::ntt_inverse_butterfly: x, y in [0, 2q) -> x + y, (x - y) w in [0, 2q).
    void inverse(V& x, V& y, const Twiddle& t) const {
        const V u = x, v = y;
        x = reduce_below(add(u, v), two_q);
        y = mul(add(sub(u, v), two_q), t);
    }
    // the forward transform's output, [0, 4q) -> the canonical word
    V forward_output(V x) const { return reduce_below(reduce_below(x, two_q), q); }
    // the last inverse stage: (x + y) n^{-1} and (x - y) psi^{-1} n^{-1}, canonical
    void inverse_last(V& x, V& y, const Twiddle& n_inv, const Twiddle& last_inv) const {
        const V u = x, v = y;
        x = reduce_below(mul(add(u, v), n_inv), q);
        y = reduce_below(mul(add(sub(u, v), two_q), last_inv), q);
    }
};

// ---- DoubleExact: exact products in double precision, primes below 2^50 ------------------------

using double_exact::round_even;
using double_exact::to_double;
using double_exact::to_word;

struct DoubleExact {
    D q, q_inv;
    explicit DoubleExact(uint64_t modulus) : q(_mm256_set1_pd(double(modulus))), q_inv(_mm256_set1_pd(1.0 / double(modulus))) {}

    // w and w / q as doubles (the Shoup companion is not needed)
    struct Twiddle {
        D w, w_over_q;
    };
    Twiddle twiddle(V w, V) const {
        const D wd = to_double(w);
        return {wd, _mm256_mul_pd(wd, q_inv)};
    }

    // The words (below 4q < 2^52) as doubles, in place.
    static void prepare(uint64_t* a, uint32_t n) {
        for (uint32_t j = 0; j < n; j += 4) store(a + j, as_words(to_double(load(a + j))));
    }

    // a * w - t q for t = round(a w / q), exactly: |a| < 2^52 and the result an integer below 2^53.
    // w / q is within 2^-52 of its value relative, so t is off by at most 1.5 for |a| < 4q and
    // the result lies in (-2q, 2q).
    D mul(D a, const Twiddle& t) const {
        const D h = _mm256_mul_pd(a, t.w);
        const D l = _mm256_fmsub_pd(a, t.w, h);
        const D quotient = round_even(_mm256_mul_pd(a, t.w_over_q));
        return _mm256_add_pd(_mm256_fnmadd_pd(quotient, q, h), l);
    }
    // x - round(x / q) q, in [-q/2, q/2] up to rounding, for |x| < 2^52.
    D reduce(D x) const { return double_exact::reduce(x, q, q_inv); }
    // (-2.5q, 2.5q) -> [0, q): the balanced residue, plus q where negative.
    V canonical_word(D x) const { return to_word(double_exact::canonical(x, q, q_inv)); }
    // x, y in (-2.5q, 2.5q) -> reduce(x) +- w y, in (-2.5q, 2.5q).
    void forward(V& x, V& y, const Twiddle& t) const {
        const D u = reduce(as_double(x)), v = mul(as_double(y), t);
        x = as_words(_mm256_add_pd(u, v));
        y = as_words(_mm256_sub_pd(u, v));
    }
    // x, y in (-2.5q, 2.5q) -> reduce(x + y), (x - y) w, in (-2q, 2q).
    void inverse(V& x, V& y, const Twiddle& t) const {
        const D u = as_double(x), v = as_double(y);
        x = as_words(reduce(_mm256_add_pd(u, v)));
        y = as_words(mul(_mm256_sub_pd(u, v), t));
    }
    V forward_output(V x) const { return canonical_word(as_double(x)); }
    void inverse_last(V& x, V& y, const Twiddle& n_inv, const Twiddle& last_inv) const {
        const D u = as_double(x), v = as_double(y);
        x = canonical_word(mul(_mm256_add_pd(u, v), n_inv));
        y = canonical_word(mul(_mm256_sub_pd(u, v), last_inv));
    }
};

// ---- the stages, written once over the arithmetic ----------------------------------------------

// p[0], p[0], p[1], p[1]
inline V load_pairs(const uint64_t* p) {
    return _mm256_permute4x64_epi64(_mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))), 0x50);
}

inline constexpr uint32_t kBlockWords = 2048;  // 16 KiB: the stages inside a block run in the L1 cache

// One stage of distance t >= 4 (m groups, twiddles at w[m + i]), groups i0 .. i1 - 1.
template <typename Arith, typename Butterfly>
void stage(uint64_t* a, const uint64_t* w, const uint64_t* ws, const Arith& ar, uint32_t m, uint32_t t, uint32_t i0,
           uint32_t i1, const Butterfly& butterfly) {
    for (uint32_t i = i0; i < i1; ++i) {
        const auto tw = ar.twiddle(set1(w[m + i]), set1(ws[m + i]));
        uint64_t* x = a + 2 * size_t(i) * t;
        uint64_t* y = x + t;
        for (uint32_t j = 0; j < t; j += 4) {
            V u = load(x + j), v = load(y + j);
            butterfly(u, v, tw);
            store(x + j, u);
            store(y + j, v);
        }
    }
}

// The four quarters of a group of 4 * quarter words, 4 columns at a time, through body (the
// butterflies of two stages in one pass).
template <typename Body> inline void for_quarters(uint64_t* p, uint32_t quarter, const Body& body) {
    for (uint32_t j = 0; j < quarter; j += 4) {
        V q0 = load(p + j), q1 = load(p + quarter + j), q2 = load(p + 2 * quarter + j), q3 = load(p + 3 * quarter + j);
        body(q0, q1, q2, q3);
        store(p + j, q0);
        store(p + quarter + j, q1);
        store(p + 2 * quarter + j, q2);
        store(p + 3 * quarter + j, q3);
    }
}

template <typename Arith> void forward_transform(uint64_t* a, const math::NttTables& tb) {
    const Arith ar(tb.q);
    const auto butterfly = [&](V& x, V& y, const typename Arith::Twiddle& t) { ar.forward(x, y, t); };
    const uint32_t n = tb.n, block = n < kBlockWords ? n : kBlockWords;
    const uint64_t *w = tb.psi_rev.data(), *ws = tb.psi_rev_shoup.data();
    Arith::prepare(a, n);
    // The stages whose groups span more than a block, over the whole array: the stages (m, t)
    // and (2m, t / 2) in one pass where both do (group i's quarters x0 x1 | x2 x3: the first
    // pairs (x0, x2) and (x1, x3), the second (x0, x1) and (x2, x3), its groups 2i and 2i + 1).
    uint32_t m = 1, t = n / 2;
    while (t >= 4 && 2 * t > block) {
        if (t > block) {
            const uint32_t h = t / 2;
            for (uint32_t i = 0; i < m; ++i) {
                const auto t1 = ar.twiddle(set1(w[m + i]), set1(ws[m + i]));
                const auto t2 = ar.twiddle(set1(w[2 * m + 2 * i]), set1(ws[2 * m + 2 * i]));
                const auto t3 = ar.twiddle(set1(w[2 * m + 2 * i + 1]), set1(ws[2 * m + 2 * i + 1]));
                for_quarters(a + 2 * size_t(i) * t, h, [&](V& x0, V& x1, V& x2, V& x3) {
                    butterfly(x0, x2, t1);
                    butterfly(x1, x3, t1);
                    butterfly(x0, x1, t2);
                    butterfly(x2, x3, t3);
                });
            }
            m <<= 2, t >>= 2;
        } else {
            stage(a, w, ws, ar, m, t, 0, m, butterfly);
            m <<= 1, t >>= 1;
        }
    }
    for (uint32_t o = 0; o < n; o += block) {
        for (uint32_t mb = m, tt = t; tt >= 4; mb <<= 1, tt >>= 1)
            stage(a, w, ws, ar, mb, tt, o / (2 * tt), (o + block) / (2 * tt), butterfly);
        // The stages of distance 2 and 1, 8 words at a time: x = words 0 1 4 5 and y = 2 3 6 7
        // for the first (the twiddles of its groups 2c and 2c + 1, two lanes each), then x = 0 2
        // 4 6 and y = 1 3 5 7; the output made canonical.
        for (uint32_t c = o / 8; c < (o + block) / 8; ++c) {
            uint64_t* p = a + 8 * size_t(c);
            const V a0 = load(p), a1 = load(p + 4);
            V x = _mm256_permute2x128_si256(a0, a1, 0x20), y = _mm256_permute2x128_si256(a0, a1, 0x31);
            const size_t at2 = n / 4 + 2 * size_t(c), at1 = n / 2 + 4 * size_t(c);
            ar.forward(x, y, ar.twiddle(load_pairs(w + at2), load_pairs(ws + at2)));
            V x1 = _mm256_unpacklo_epi64(x, y), y1 = _mm256_unpackhi_epi64(x, y);
            ar.forward(x1, y1, ar.twiddle(load(w + at1), load(ws + at1)));
            x1 = ar.forward_output(x1);
            y1 = ar.forward_output(y1);
            const V lo = _mm256_unpacklo_epi64(x1, y1), hi = _mm256_unpackhi_epi64(x1, y1);
            store(p, _mm256_permute2x128_si256(lo, hi, 0x20));
            store(p + 4, _mm256_permute2x128_si256(lo, hi, 0x31));
        }
    }
}

template <typename Arith> void inverse_transform(uint64_t* a, const math::NttTables& tb) {
    const Arith ar(tb.q);
    const auto butterfly = [&](V& x, V& y, const typename Arith::Twiddle& t) { ar.inverse(x, y, t); };
    const uint32_t n = tb.n, block = n < kBlockWords ? n : kBlockWords;
    const uint64_t *w = tb.psi_inv_rev.data(), *ws = tb.psi_inv_rev_shoup.data();
    Arith::prepare(a, n);
    // Block by block: the stages of distance 1 and 2 in registers (x = words 0 2 4 6 and y =
    // 1 3 5 7, then x = 0 1 4 5 and y = 2 3 6 7), then those of distance t >= 4 whose groups fit
    // in the block, up to the last stage (t = n / 2) exclusive.
    for (uint32_t o = 0; o < n; o += block) {
        for (uint32_t c = o / 8; c < (o + block) / 8; ++c) {
            uint64_t* p = a + 8 * size_t(c);
            const V a0 = load(p), a1 = load(p + 4);
            const V lo = _mm256_permute2x128_si256(a0, a1, 0x20), hi = _mm256_permute2x128_si256(a0, a1, 0x31);
            V x = _mm256_unpacklo_epi64(lo, hi), y = _mm256_unpackhi_epi64(lo, hi);
            const size_t at1 = n / 2 + 4 * size_t(c), at2 = n / 4 + 2 * size_t(c);
            ar.inverse(x, y, ar.twiddle(load(w + at1), load(ws + at1)));
            V x2 = _mm256_unpacklo_epi64(x, y), y2 = _mm256_unpackhi_epi64(x, y);
            ar.inverse(x2, y2, ar.twiddle(load_pairs(w + at2), load_pairs(ws + at2)));
            store(p, _mm256_permute2x128_si256(x2, y2, 0x20));
            store(p + 4, _mm256_permute2x128_si256(x2, y2, 0x31));
        }
        for (uint32_t tt = 4; 2 * tt <= block && tt < n / 2; tt <<= 1)
            stage(a, w, ws, ar, n / (2 * tt), tt, o / (2 * tt), (o + block) / (2 * tt), butterfly);
    }
    uint32_t t = 4;
    while (2 * t <= block && t < n / 2) t <<= 1;
    // The remaining stages but the last over the whole array, two at a time where both are: the
    // stages t and 2t in one pass, group i of the second holding the quarters q0 q1 | q2 q3 (t
    // words each); the first pairs (q0, q1) and (q2, q3) (its groups 2i and 2i + 1), the second
    // (q0, q2) and (q1, q3).
    while (t < n / 2) {
        if (2 * t < n / 2) {
            const uint32_t h1 = n / (2 * t), h2 = h1 / 2;
            for (uint32_t i = 0; i < h2; ++i) {
                const auto t1 = ar.twiddle(set1(w[h1 + 2 * i]), set1(ws[h1 + 2 * i]));
                const auto t2 = ar.twiddle(set1(w[h1 + 2 * i + 1]), set1(ws[h1 + 2 * i + 1]));
                const auto t3 = ar.twiddle(set1(w[h2 + i]), set1(ws[h2 + i]));
                for_quarters(a + 4 * size_t(i) * t, t, [&](V& q0, V& q1, V& q2, V& q3) {
                    butterfly(q0, q1, t1);
                    butterfly(q2, q3, t2);
                    butterfly(q0, q2, t3);
                    butterfly(q1, q3, t3);
                });
            }
            t <<= 2;
        } else {
            stage(a, w, ws, ar, n / (2 * t), t, 0, n / (2 * t), butterfly);
            t <<= 1;
        }
    }
    // The last stage (t = n / 2 >= 8) with n^{-1} folded in, canonical.
    uint64_t* x = a;
    uint64_t* y = a + t;
    const auto ni = ar.twiddle(set1(tb.n_inv), set1(tb.n_inv_shoup));
    const auto li = ar.twiddle(set1(tb.last_inv), set1(tb.last_inv_shoup));
    for (uint32_t j = 0; j < t; j += 4) {
        V u = load(x + j), v = load(y + j);
        ar.inverse_last(u, v, ni, li);
        store(x + j, u);
        store(y + j, v);
    }
}

}  // namespace

void ntt_forward_avx2(uint64_t* a, const math::NttTables& t) {
    if ((t.q >> kDoubleModulusBits) == 0) return forward_transform<DoubleExact>(a, t);
    forward_transform<IntegerShoup>(a, t);
}

void ntt_inverse_avx2(uint64_t* a, const math::NttTables& t) {
    if ((t.q >> kDoubleModulusBits) == 0) return inverse_transform<DoubleExact>(a, t);
    inverse_transform<IntegerShoup>(a, t);
}

}  // namespace oboro::backend::cpu

OBORO_SIMD_TARGET_END

#else

namespace oboro::backend::cpu {
bool avx2_available() { return false; }
void ntt_forward_avx2(uint64_t* a, const math::NttTables& t) { math::ntt_forward(a, t); }
void ntt_inverse_avx2(uint64_t* a, const math::NttTables& t) { math::ntt_inverse(a, t); }
}  // namespace oboro::backend::cpu

#endif
