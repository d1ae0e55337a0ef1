// The AVX2 negacyclic NTT: 4 lanes of 64 bits, for CPUs without AVX-512 (AMD before Zen 4, Intel
// client cores). The same lazy Harvey butterflies and bounds as math/ntt.cpp, so the canonical
// outputs are bit-for-bit those of the scalar transform.
//
// AVX2 has no 64-bit multiply, so a Shoup product takes nine vpmuludq (32 x 32 -> 64 bits): three
// for the quotient's high word (low by at most 2, as the AVX-512 kernel's, ntt_simd.cpp) and three
// each for the low words of a * w and quotient * q, whose difference is all the Shoup product
// needs. AVX2 has no unsigned 64-bit compare either: a conditional subtraction selects on the sign
// of the difference, exact because every difference here is below 2q < 2^63 in magnitude.
//
// The stage order is the AVX-512 transform's (ntt_avx512_stages.hpp): the stages over the whole
// array two at a time, the others block by block in the first-level cache, the last two stages
// (distances 2 and 1, inside a vector) in registers.
#include "oboro/backend/cpu/ntt_simd.hpp"

#include "oboro/math/modarith.hpp"
#include "oboro/math/ntt.hpp"

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>

#include "oboro/util/simd_target.hpp"

namespace oboro::backend::cpu {
bool avx2_available() {
    static const bool ok = __builtin_cpu_supports("avx2");
    return ok;
}
}  // namespace oboro::backend::cpu

OBORO_SIMD_TARGET_BEGIN("avx2")

namespace oboro::backend::cpu {
namespace {

using V = __m256i;

inline V load(const uint64_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
inline void store(uint64_t* p, V v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
inline V set1(uint64_t v) { return _mm256_set1_epi64x(static_cast<long long>(v)); }
inline V add(V a, V b) { return _mm256_add_epi64(a, b); }
inline V sub(V a, V b) { return _mm256_sub_epi64(a, b); }
inline V hi32(V a) { return _mm256_srli_epi64(a, 32); }
inline V mul32(V a, V b) { return _mm256_mul_epu32(a, b); }

// x >= m ? x - m : x, for |x - m| < 2^63: the sign bit of x - m tells which.
inline V reduce_below(V x, V m) {
    const V d = sub(x, m);
    return _mm256_castpd_si256(
        _mm256_blendv_pd(_mm256_castsi256_pd(d), _mm256_castsi256_pd(x), _mm256_castsi256_pd(d)));
}

struct Modulus4 {
    V q, q_hi, two_q;
    explicit Modulus4(uint64_t modulus) : q(set1(modulus)), q_hi(set1(modulus >> 32)), two_q(set1(2 * modulus)) {}
};

// A twiddle w with its Shoup companion, and the high halves of both, in every lane.
struct Twiddle4 {
    V w, w_hi, ws, ws_hi;
    Twiddle4(V w_, V ws_) : w(w_), w_hi(hi32(w_)), ws(ws_), ws_hi(hi32(ws_)) {}
    Twiddle4(uint64_t w_, uint64_t ws_) : Twiddle4(set1(w_), set1(ws_)) {}
};

// a * w mod q in [0, 2q) for any 64-bit a (math::mul_shoup_lazy), q < 2^62. The quotient
// floor(a * ws / 2^64) from three 32-bit products leaves out the carry of the low partial
// products (below 3), so it is low by at most 2 and a * w - quotient * q lies in [0, 4q): one
// conditional subtraction of 2q.
inline V mul_lazy(V a, const Twiddle4& t, const Modulus4& m) {
    const V a_hi = hi32(a);
    const V quotient = add(mul32(a_hi, t.ws_hi), add(hi32(mul32(a, t.ws_hi)), hi32(mul32(a_hi, t.ws))));
    const V quotient_hi = hi32(quotient);
    // the low 64 bits of a * w - quotient * q: low products, and the cross products shifted by 32
    const V low = sub(mul32(a, t.w), mul32(quotient, m.q));
    const V cross = sub(add(mul32(a, t.w_hi), mul32(a_hi, t.w)), add(mul32(quotient, m.q_hi), mul32(quotient_hi, m.q)));
    return reduce_below(add(low, _mm256_slli_epi64(cross, 32)), m.two_q);
}

// math::ntt_forward_butterfly: x, y in [0, 4q) -> x + w y, x - w y in [0, 4q).
inline void forward_butterfly(V& x, V& y, const Twiddle4& t, const Modulus4& m) {
    const V u = reduce_below(x, m.two_q), v = mul_lazy(y, t, m);
    x = add(u, v);
    y = add(sub(u, v), m.two_q);
}

// math::ntt_inverse_butterfly: x, y in [0, 2q) -> x + y, (x - y) w in [0, 2q).
inline void inverse_butterfly(V& x, V& y, const Twiddle4& t, const Modulus4& m) {
    const V u = x, v = y;
    x = reduce_below(add(u, v), m.two_q);
    y = mul_lazy(add(sub(u, v), m.two_q), t, m);
}

// p[0], p[0], p[1], p[1]
inline V load_pairs(const uint64_t* p) {
    return _mm256_permute4x64_epi64(_mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))), 0x50);
}

// The twiddles of the stage of distance 2 for the 8 words at chunk c (its groups 2c and 2c + 1,
// two lanes each), from the table at the stage's offset.
inline Twiddle4 pair_twiddles(const uint64_t* w, const uint64_t* ws, size_t at) {
    return Twiddle4(load_pairs(w + at), load_pairs(ws + at));
}

inline constexpr uint32_t kBlockWords = 2048;  // 16 KiB: the stages inside a block run in the L1 cache

// One stage of distance t >= 4 (m groups, twiddles at w[m + i]), groups i0 .. i1 - 1.
template <typename Butterfly>
void stage(uint64_t* a, const uint64_t* w, const uint64_t* ws, const Modulus4& md, uint32_t m, uint32_t t, uint32_t i0,
           uint32_t i1, const Butterfly& butterfly) {
    for (uint32_t i = i0; i < i1; ++i) {
        const Twiddle4 tw(w[m + i], ws[m + i]);
        uint64_t* x = a + 2 * size_t(i) * t;
        uint64_t* y = x + t;
        for (uint32_t j = 0; j < t; j += 4) {
            V u = load(x + j), v = load(y + j);
            butterfly(u, v, tw, md);
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

}  // namespace

void ntt_forward_avx2(uint64_t* a, const math::NttTables& tb) {
    const Modulus4 md(tb.q);
    const uint32_t n = tb.n, block = n < kBlockWords ? n : kBlockWords;
    const uint64_t *w = tb.psi_rev.data(), *ws = tb.psi_rev_shoup.data();
    // The stages whose groups span more than a block, over the whole array: the stages (m, t)
    // and (2m, t / 2) in one pass where both do (group i's quarters x0 x1 | x2 x3: the first
    // pairs (x0, x2) and (x1, x3), the second (x0, x1) and (x2, x3), its groups 2i and 2i + 1).
    uint32_t m = 1, t = n / 2;
    while (t >= 4 && 2 * t > block) {
        if (t > block) {
            const uint32_t h = t / 2;
            for (uint32_t i = 0; i < m; ++i) {
                const Twiddle4 t1(w[m + i], ws[m + i]);
                const Twiddle4 t2(w[2 * m + 2 * i], ws[2 * m + 2 * i]);
                const Twiddle4 t3(w[2 * m + 2 * i + 1], ws[2 * m + 2 * i + 1]);
                for_quarters(a + 2 * size_t(i) * t, h, [&](V& x0, V& x1, V& x2, V& x3) {
                    forward_butterfly(x0, x2, t1, md);
                    forward_butterfly(x1, x3, t1, md);
                    forward_butterfly(x0, x1, t2, md);
                    forward_butterfly(x2, x3, t3, md);
                });
            }
            m <<= 2, t >>= 2;
        } else {
            stage(a, w, ws, md, m, t, 0, m, forward_butterfly);
            m <<= 1, t >>= 1;
        }
    }
    const V vq = md.q;
    for (uint32_t o = 0; o < n; o += block) {
        for (uint32_t mb = m, tt = t; tt >= 4; mb <<= 1, tt >>= 1)
            stage(a, w, ws, md, mb, tt, o / (2 * tt), (o + block) / (2 * tt), forward_butterfly);
        // The stages of distance 2 and 1, 8 words at a time: x = words 0 1 4 5 and y = 2 3 6 7
        // for the first, then x = 0 2 4 6 and y = 1 3 5 7; the final reduction to [0, q).
        for (uint32_t c = o / 8; c < (o + block) / 8; ++c) {
            uint64_t* p = a + 8 * size_t(c);
            const V a0 = load(p), a1 = load(p + 4);
            V x = _mm256_permute2x128_si256(a0, a1, 0x20), y = _mm256_permute2x128_si256(a0, a1, 0x31);
            forward_butterfly(x, y, pair_twiddles(w, ws, n / 4 + 2 * size_t(c)), md);
            V x1 = _mm256_unpacklo_epi64(x, y), y1 = _mm256_unpackhi_epi64(x, y);
            forward_butterfly(x1, y1, Twiddle4(load(w + n / 2 + 4 * size_t(c)), load(ws + n / 2 + 4 * size_t(c))), md);
            x1 = reduce_below(reduce_below(x1, md.two_q), vq);
            y1 = reduce_below(reduce_below(y1, md.two_q), vq);
            const V lo = _mm256_unpacklo_epi64(x1, y1), hi = _mm256_unpackhi_epi64(x1, y1);
            store(p, _mm256_permute2x128_si256(lo, hi, 0x20));
            store(p + 4, _mm256_permute2x128_si256(lo, hi, 0x31));
        }
    }
}

void ntt_inverse_avx2(uint64_t* a, const math::NttTables& tb) {
    const Modulus4 md(tb.q);
    const uint32_t n = tb.n, block = n < kBlockWords ? n : kBlockWords;
    const uint64_t *w = tb.psi_inv_rev.data(), *ws = tb.psi_inv_rev_shoup.data();
    // Block by block: the stages of distance 1 and 2 in registers (x = words 0 2 4 6 and y =
    // 1 3 5 7, then x = 0 1 4 5 and y = 2 3 6 7), then those of distance t >= 4 whose groups fit
    // in the block, up to the last stage (t = n / 2) exclusive.
    for (uint32_t o = 0; o < n; o += block) {
        for (uint32_t c = o / 8; c < (o + block) / 8; ++c) {
            uint64_t* p = a + 8 * size_t(c);
            const V a0 = load(p), a1 = load(p + 4);
            const V lo = _mm256_permute2x128_si256(a0, a1, 0x20), hi = _mm256_permute2x128_si256(a0, a1, 0x31);
            V x = _mm256_unpacklo_epi64(lo, hi), y = _mm256_unpackhi_epi64(lo, hi);
            inverse_butterfly(x, y, Twiddle4(load(w + n / 2 + 4 * size_t(c)), load(ws + n / 2 + 4 * size_t(c))), md);
            V x2 = _mm256_unpacklo_epi64(x, y), y2 = _mm256_unpackhi_epi64(x, y);
            inverse_butterfly(x2, y2, pair_twiddles(w, ws, n / 4 + 2 * size_t(c)), md);
            store(p, _mm256_permute2x128_si256(x2, y2, 0x20));
            store(p + 4, _mm256_permute2x128_si256(x2, y2, 0x31));
        }
        for (uint32_t tt = 4; 2 * tt <= block && tt < n / 2; tt <<= 1)
            stage(a, w, ws, md, n / (2 * tt), tt, o / (2 * tt), (o + block) / (2 * tt), inverse_butterfly);
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
                const Twiddle4 t1(w[h1 + 2 * i], ws[h1 + 2 * i]);
                const Twiddle4 t2(w[h1 + 2 * i + 1], ws[h1 + 2 * i + 1]);
                const Twiddle4 t3(w[h2 + i], ws[h2 + i]);
                for_quarters(a + 4 * size_t(i) * t, t, [&](V& q0, V& q1, V& q2, V& q3) {
                    inverse_butterfly(q0, q1, t1, md);
                    inverse_butterfly(q2, q3, t2, md);
                    inverse_butterfly(q0, q2, t3, md);
                    inverse_butterfly(q1, q3, t3, md);
                });
            }
            t <<= 2;
        } else {
            stage(a, w, ws, md, n / (2 * t), t, 0, n / (2 * t), inverse_butterfly);
            t <<= 1;
        }
    }
    // The last stage (t = n / 2 >= 8) with n^{-1} folded in, reduced to [0, q).
    uint64_t* x = a;
    uint64_t* y = a + t;
    const Twiddle4 ni(tb.n_inv, tb.n_inv_shoup), li(tb.last_inv, tb.last_inv_shoup);
    for (uint32_t j = 0; j < t; j += 4) {
        const V u = load(x + j), v = load(y + j);
        store(x + j, reduce_below(mul_lazy(add(u, v), ni, md), md.q));
        store(y + j, reduce_below(mul_lazy(add(sub(u, v), md.two_q), li, md), md.q));
    }
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
