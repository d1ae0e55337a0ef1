// The AVX-512 negacyclic NTT, written once for two ways of multiplying by a twiddle (the `Mul`
// policy): 64-bit Shoup products from three vpmuludq (ntt_simd.cpp, any prime below 2^62) and 52-bit Shoup
// products from AVX-512 IFMA (ntt_ifma.cpp, primes below 2^50). Both run the lazy Harvey
// butterflies of math/ntt.cpp with the same bounds, so the canonical outputs are bit-for-bit equal.
//
// Include this header only after an OBORO_SIMD_TARGET_BEGIN that enables AVX-512 (and IFMA for the
// 52-bit policy), and include math/modarith.hpp and math/ntt.hpp before it: their inline
// functions compiled for the wider ISA could otherwise be the copy the linker keeps for the whole
// program. Everything here has internal linkage, so the copies compiled for different targets in
// different files never meet at link time.
//
// A policy `Mul` has:
//   Mul(q)                                   the constants for the prime q
//   __m512i companion(__m512i w_shoup) const   the table's 64-bit Shoup companion, as this policy needs it
//   __m512i mul_lazy(a, w, companion) const    a * w mod q in [0, 2q), for a < 4q
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "oboro/math/modarith.hpp"
#include "oboro/math/ntt.hpp"

namespace oboro::backend::cpu {
namespace {

// x >= m ? x - m : x, as min(x, x - m) (x - m wraps around when x < m)
inline __m512i reduce_below(__m512i x, __m512i m) { return _mm512_min_epu64(x, _mm512_sub_epi64(x, m)); }

// The stages whose butterfly distance t is 4, 2 or 1 pair words inside one vector, so they work
// on two vectors (16 words: 16 / (2t) blocks of t "x" words followed by t "y" words) at once:
// the x and y words are gathered into one vector each, the butterflies run 8 lanes wide, and
// the results are scattered back. Lane k of the gathered vectors belongs to block k / t.
template <uint32_t T> struct SmallStage {
    static_assert(T == 1 || T == 2 || T == 4);
    // word index in the pair (a: 0..7, b: 8..15) of lane k of x (second = false) or y
    static constexpr int64_t gather(int k, bool second) { return (k / T) * 2 * T + (second ? T : 0) + k % T; }
    // lane of x (0..7) or y (8..15) that goes to word p of the pair
    static constexpr int64_t scatter(int p) {
        const int block = p / (2 * T), r = p % (2 * T);
        return r < int(T) ? block * T + r : 8 + block * T + (r - T);
    }
    __m512i gx, gy, sa, sb, tw;
    SmallStage()
        : gx(_mm512_set_epi64(gather(7, false), gather(6, false), gather(5, false), gather(4, false),
                              gather(3, false), gather(2, false), gather(1, false), gather(0, false))),
          gy(_mm512_set_epi64(gather(7, true), gather(6, true), gather(5, true), gather(4, true), gather(3, true),
                              gather(2, true), gather(1, true), gather(0, true))),
          sa(_mm512_set_epi64(scatter(7), scatter(6), scatter(5), scatter(4), scatter(3), scatter(2), scatter(1),
                              scatter(0))),
          sb(_mm512_set_epi64(scatter(15), scatter(14), scatter(13), scatter(12), scatter(11), scatter(10),
                              scatter(9), scatter(8))),
          tw(_mm512_set_epi64(7 / T, 6 / T, 5 / T, 4 / T, 3 / T, 2 / T, 1 / T, 0)) {}
    // The twiddle of every lane, from the 8 / T consecutive twiddles of the blocks at w.
    __m512i twiddles(const uint64_t* w) const {
        if constexpr (T == 1) return _mm512_loadu_si512(w);  // one block per lane already
        return _mm512_permutexvar_epi64(tw, _mm512_loadu_si512(w));
    }
};

// Moves the x and y words of a pair of vectors from layout From (SmallStage<From>: which word of
// the pair each lane holds) to layout To, in registers: lane k of the new x (or y) takes the lane
// of the old x|y that holds word SmallStage<To>::gather(k, ...).
template <uint32_t From, uint32_t To> struct Relayout {
    static constexpr int64_t from(int k, bool second) {
        return SmallStage<From>::scatter(int(SmallStage<To>::gather(k, second)));
    }
    __m512i ix, iy;
    Relayout()
        : ix(_mm512_set_epi64(from(7, false), from(6, false), from(5, false), from(4, false), from(3, false),
                              from(2, false), from(1, false), from(0, false))),
          iy(_mm512_set_epi64(from(7, true), from(6, true), from(5, true), from(4, true), from(3, true),
                              from(2, true), from(1, true), from(0, true))) {}
    void operator()(__m512i& x, __m512i& y) const {
        const __m512i nx = _mm512_permutex2var_epi64(x, ix, y);
        y = _mm512_permutex2var_epi64(x, iy, y);
        x = nx;
    }
};

// The three stages whose butterfly distance is 4, 2 and 1 (forward: T1, T2, T3 = 4, 2, 1;
// inverse: 1, 2, 4) in one pass over the array: each 16-word group is loaded once, gathered into
// the first stage's x and y words, moved between the stages' layouts in registers (Relayout) and
// scattered and stored once: per group, two loads, two stores and four permutations fewer than a
// pass per stage. The permutations remain these stages' main cost: fused, they still take about
// 37% of an N = 8192 transform on a 60-bit prime, each of the other ten stages about 6%. `butterfly(x, y, w, companion)` runs the first two stages,
// `last` the third; a stage with distance T takes the twiddles of its n / (2T) blocks from
// `w_table` / `ws_table` at offset n / (2T), as math/ntt.cpp does.
// The groups g_begin .. g_end - 1 (16 words each) of the array of n words.
template <uint32_t T1, uint32_t T2, uint32_t T3, typename Mul, typename Butterfly, typename Last>
void small_stages(uint64_t* a, uint32_t n, uint32_t g_begin, uint32_t g_end, const uint64_t* w_table,
                  const uint64_t* ws_table, const Mul& mul, const Butterfly& butterfly, const Last& last) {
    const SmallStage<T1> s1;
    const SmallStage<T2> s2;
    const SmallStage<T3> s3;
    const Relayout<T1, T2> r12;
    const Relayout<T2, T3> r23;
    // stage T, group g: blocks from 16 g / (2T), twiddles at n / (2T) + 8 g / T
    auto run = [&](const auto& st, uint32_t t, uint32_t g, __m512i& x, __m512i& y, const auto& bf) {
        const uint32_t at = n / (2 * t) + 8 * g / t;
        bf(x, y, st.twiddles(w_table + at), mul.companion(st.twiddles(ws_table + at)));
    };
    for (uint32_t g = g_begin; g < g_end; ++g) {
        uint64_t* p = a + 16 * size_t(g);
        const __m512i a0 = _mm512_loadu_si512(p), a1 = _mm512_loadu_si512(p + 8);
        __m512i x = _mm512_permutex2var_epi64(a0, s1.gx, a1), y = _mm512_permutex2var_epi64(a0, s1.gy, a1);
        run(s1, T1, g, x, y, butterfly);
        r12(x, y);
        run(s2, T2, g, x, y, butterfly);
        r23(x, y);
        run(s3, T3, g, x, y, last);
        _mm512_storeu_si512(p, _mm512_permutex2var_epi64(x, s3.sa, y));
        _mm512_storeu_si512(p + 8, _mm512_permutex2var_epi64(x, s3.sb, y));
    }
}

// The forward butterfly of math::ntt_forward_lazy: u in [0, 2q), v = y * w lazily in [0, 2q),
// x' = u + v, y' = u - v + 2q; `last` also applies math::ntt_forward's final reduction to [0, q).
template <typename Mul> struct ForwardButterfly {
    const Mul& mul;
    __m512i q, two_q;
    bool last;
    void operator()(__m512i& x, __m512i& y, __m512i w, __m512i wc) const {
        const __m512i u = reduce_below(x, two_q), v = mul.mul_lazy(y, w, wc);
        x = _mm512_add_epi64(u, v);
        y = _mm512_add_epi64(_mm512_sub_epi64(u, v), two_q);
        if (last) {
            x = reduce_below(reduce_below(x, two_q), q);
            y = reduce_below(reduce_below(y, two_q), q);
        }
    }
};

// The inverse butterfly of math::ntt_inverse: x' = (u + v) reduced to [0, 2q), y' = (u - v + 2q) * w lazily.
template <typename Mul> struct InverseButterfly {
    const Mul& mul;
    __m512i two_q;
    void operator()(__m512i& x, __m512i& y, __m512i w, __m512i wc) const {
        const __m512i u = x, v = y;
        x = reduce_below(_mm512_add_epi64(u, v), two_q);
        y = mul.mul_lazy(_mm512_add_epi64(_mm512_sub_epi64(u, v), two_q), w, wc);
    }
};

// The stages whose blocks of butterflies fit in the first-level data cache run block by block:
// every stage of one block of kNttBlockWords words, then the next block. A stage over the whole
// array reads and writes it once (512 KiB per limb at N = 2^16, from the second-level cache at
// best), so only the first log2(n / kNttBlockWords) stages do; the rest find their block in the
// first-level cache. The butterflies and their order within each stage are unchanged, so the
// results are bit for bit those of a stage-by-stage pass.
inline constexpr uint32_t kNttBlockWords = 2048;  // 16 KiB

// One forward stage with butterfly distance t >= 8 (m = n / (2t) groups), groups i0 .. i1 - 1:
// the butterfly of math::ntt_forward_lazy, 8 per vector.
template <typename Mul>
void forward_stage(uint64_t* a, const math::NttTables& tb, const Mul& mul, __m512i v2q, uint32_t m, uint32_t t,
                   uint32_t i0, uint32_t i1) {
    for (uint32_t i = i0; i < i1; ++i) {
        const __m512i w = _mm512_set1_epi64(int64_t(tb.psi_rev[m + i]));
        const __m512i wc = mul.companion(_mm512_set1_epi64(int64_t(tb.psi_rev_shoup[m + i])));
        uint64_t* x = a + 2 * size_t(i) * t;
        uint64_t* y = x + t;
        for (uint32_t j = 0; j < t; j += 8) {
            const __m512i u = reduce_below(_mm512_loadu_si512(x + j), v2q);
            const __m512i v = mul.mul_lazy(_mm512_loadu_si512(y + j), w, wc);
            _mm512_storeu_si512(x + j, _mm512_add_epi64(u, v));
            _mm512_storeu_si512(y + j, _mm512_add_epi64(_mm512_sub_epi64(u, v), v2q));
        }
    }
}

// The words of a group of 4 * quarter words as its four quarters, 8 columns at a time: loads
// q0..q3 (quarter words apart), runs body(q0, q1, q2, q3) (the butterflies of two stages) and
// stores them back. The radix-4 passes of both transforms.
template <typename Body> inline void for_quarters(uint64_t* p, uint32_t quarter, const Body& body) {
    for (uint32_t j = 0; j < quarter; j += 8) {
        __m512i q0 = _mm512_loadu_si512(p + j), q1 = _mm512_loadu_si512(p + quarter + j);
        __m512i q2 = _mm512_loadu_si512(p + 2 * quarter + j), q3 = _mm512_loadu_si512(p + 3 * quarter + j);
        body(q0, q1, q2, q3);
        _mm512_storeu_si512(p + j, q0);
        _mm512_storeu_si512(p + quarter + j, q1);
        _mm512_storeu_si512(p + 2 * quarter + j, q2);
        _mm512_storeu_si512(p + 3 * quarter + j, q3);
    }
}

// The forward stages (m, t) and (2m, t/2), t/2 >= 8, in one pass over the array: group i of the
// first holds the quarters x0 x1 | x2 x3 (t/2 words each); the first stage pairs (x0, x2) and
// (x1, x3), the second (x0, x1) and (x2, x3), its groups 2i and 2i + 1. The same butterflies as
// two forward_stage passes, with half the array's trips through the cache.
template <typename Mul>
void forward_two_stages(uint64_t* a, const math::NttTables& tb, const Mul& mul, __m512i v2q, uint32_t m, uint32_t t) {
    const uint32_t h = t / 2;
    const auto twiddle = [&](uint32_t k) { return _mm512_set1_epi64(int64_t(tb.psi_rev[k])); };
    const auto companion = [&](uint32_t k) { return mul.companion(_mm512_set1_epi64(int64_t(tb.psi_rev_shoup[k]))); };
    const auto butterfly = [&](__m512i& x, __m512i& y, __m512i w, __m512i wc) {
        const __m512i u = reduce_below(x, v2q), v = mul.mul_lazy(y, w, wc);
        x = _mm512_add_epi64(u, v);
        y = _mm512_add_epi64(_mm512_sub_epi64(u, v), v2q);
    };
    for (uint32_t i = 0; i < m; ++i) {
        const __m512i w1 = twiddle(m + i), c1 = companion(m + i);
        const __m512i w2 = twiddle(2 * m + 2 * i), c2 = companion(2 * m + 2 * i);
        const __m512i w3 = twiddle(2 * m + 2 * i + 1), c3 = companion(2 * m + 2 * i + 1);
        for_quarters(a + 2 * size_t(i) * t, h, [&](__m512i& x0, __m512i& x1, __m512i& x2, __m512i& x3) {
            butterfly(x0, x2, w1, c1);
            butterfly(x1, x3, w1, c1);
            butterfly(x0, x1, w2, c2);
            butterfly(x2, x3, w3, c3);
        });
    }
}

// In place; input in [0, 4q), output canonical (math::ntt_forward). n >= 16.
template <typename Mul> void ntt_forward_stages(uint64_t* a, const math::NttTables& tb) {
    const Mul mul(tb.q);
    const uint32_t n = tb.n, block = n < kNttBlockWords ? n : kNttBlockWords;
    const __m512i vq = _mm512_set1_epi64(int64_t(tb.q)), v2q = _mm512_set1_epi64(int64_t(2 * tb.q));
    // Stages of distance t >= 8 (m groups each) whose groups span more than a block: whole array,
    // two at a time where the second is one too.
    uint32_t m = 1, t = n / 2;
    while (t >= 8 && 2 * t > block) {
        if (t > block) {
            forward_two_stages(a, tb, mul, v2q, m, t);
            m <<= 2, t >>= 2;
        } else {
            forward_stage(a, tb, mul, v2q, m, t, 0, m);
            m <<= 1, t >>= 1;
        }
    }
    const ForwardButterfly<Mul> inner{mul, vq, v2q, false}, last{mul, vq, v2q, true};
    for (uint32_t o = 0; o < n; o += block) {
        // the other stages of distance t >= 8 inside the block
        for (uint32_t mb = m, tt = t; tt >= 8; mb <<= 1, tt >>= 1)
            forward_stage(a, tb, mul, v2q, mb, tt, o / (2 * tt), (o + block) / (2 * tt));
        // the last three stages (t = 4, 2, 1), the last one with the final reduction to [0, q)
        small_stages<4, 2, 1>(a, n, o / 16, (o + block) / 16, tb.psi_rev.data(), tb.psi_rev_shoup.data(), mul,
                              inner, last);
    }
}

// In place; input in [0, 2q), output canonical (math::ntt_inverse). n >= 16.
template <typename Mul> void ntt_inverse_stages(uint64_t* a, const math::NttTables& tb) {
    const Mul mul(tb.q);
    const uint64_t q = tb.q, two_q = 2 * q;
    const uint32_t n = tb.n;
    const __m512i vq = _mm512_set1_epi64(int64_t(q)), v2q = _mm512_set1_epi64(int64_t(two_q));
    // The first three stages (t = 1, 2, 4) pair words inside a vector; then 8 butterflies per vector.
    const InverseButterfly<Mul> inverse{mul, v2q};
    const uint64_t *w = tb.psi_inv_rev.data(), *ws = tb.psi_inv_rev_shoup.data();
    // One stage of distance t (h = n / (2t) groups), groups i0 .. i1 - 1, 8 butterflies per vector.
    const auto stage = [&](uint32_t h, uint32_t t, uint32_t i0, uint32_t i1) {
        for (uint32_t i = i0; i < i1; ++i) {
            const __m512i wv = _mm512_set1_epi64(int64_t(w[h + i]));
            const __m512i wc = mul.companion(_mm512_set1_epi64(int64_t(ws[h + i])));
            uint64_t* x = a + 2 * size_t(i) * t;
            uint64_t* y = x + t;
            for (uint32_t j = 0; j < t; j += 8) {
                const __m512i u = _mm512_loadu_si512(x + j), v = _mm512_loadu_si512(y + j);
                _mm512_storeu_si512(x + j, reduce_below(_mm512_add_epi64(u, v), v2q));
                _mm512_storeu_si512(y + j, mul.mul_lazy(_mm512_add_epi64(_mm512_sub_epi64(u, v), v2q), wv, wc));
            }
        }
    };
    // Block by block (kNttBlockWords, as the forward transform): the first three stages (t = 1,
    // 2, 4) pair words inside a vector; then the stages of distance t >= 8 whose groups fit in a
    // block, up to the last stage (t = n / 2) exclusive.
    const uint32_t block = n < kNttBlockWords ? n : kNttBlockWords;
    uint32_t t = 8;
    for (uint32_t o = 0; o < n; o += block) {
        small_stages<1, 2, 4>(a, n, o / 16, (o + block) / 16, w, ws, mul, inverse, inverse);
        for (uint32_t tt = 8; 2 * tt <= block && tt < n / 2; tt <<= 1)
            stage(n / (2 * tt), tt, o / (2 * tt), (o + block) / (2 * tt));
    }
    while (2 * t <= block && t < n / 2) t <<= 1;
    // The remaining stages but the last over the whole array, two at a time where both are: the
    // stages t and 2t in one pass, group i of the second holding the quarters q0 q1 | q2 q3 (t
    // words each); the first pairs (q0, q1) and (q2, q3) (its groups 2i and 2i + 1), the second
    // (q0, q2) and (q1, q3).
    const auto two_stages = [&](uint32_t t1) {
        const uint32_t h1 = n / (2 * t1), h2 = h1 / 2;
        const auto twiddle = [&](uint32_t k) { return _mm512_set1_epi64(int64_t(w[k])); };
        const auto companion = [&](uint32_t k) { return mul.companion(_mm512_set1_epi64(int64_t(ws[k]))); };
        const auto butterfly = [&](__m512i& x, __m512i& y, __m512i wv, __m512i wc) {
            const __m512i u = x, v = y;
            x = reduce_below(_mm512_add_epi64(u, v), v2q);
            y = mul.mul_lazy(_mm512_add_epi64(_mm512_sub_epi64(u, v), v2q), wv, wc);
        };
        for (uint32_t i = 0; i < h2; ++i) {
            const __m512i w1 = twiddle(h1 + 2 * i), c1 = companion(h1 + 2 * i);
            const __m512i w2 = twiddle(h1 + 2 * i + 1), c2 = companion(h1 + 2 * i + 1);
            const __m512i w3 = twiddle(h2 + i), c3 = companion(h2 + i);
            for_quarters(a + 4 * size_t(i) * t1, t1, [&](__m512i& q0, __m512i& q1, __m512i& q2, __m512i& q3) {
                butterfly(q0, q1, w1, c1);
                butterfly(q2, q3, w2, c2);
                butterfly(q0, q2, w3, c3);
                butterfly(q1, q3, w3, c3);
            });
        }
    };
    while (t < n / 2) {
        if (2 * t < n / 2) {
            two_stages(t);
            t <<= 2;
        } else {
            stage(n / (2 * t), t, 0, n / (2 * t));
            t <<= 1;
        }
    }
    // Last stage with n^{-1} folded in (t = n/2 >= 8 for n >= 16).
    uint64_t* x = a;
    uint64_t* y = a + t;
    const __m512i ni = _mm512_set1_epi64(int64_t(tb.n_inv));
    const __m512i nic = mul.companion(_mm512_set1_epi64(int64_t(tb.n_inv_shoup)));
    const __m512i li = _mm512_set1_epi64(int64_t(tb.last_inv));
    const __m512i lic = mul.companion(_mm512_set1_epi64(int64_t(tb.last_inv_shoup)));
    uint32_t j = 0;
    for (; j + 8 <= t; j += 8) {
        const __m512i u = _mm512_loadu_si512(x + j), v = _mm512_loadu_si512(y + j);
        _mm512_storeu_si512(x + j, reduce_below(mul.mul_lazy(_mm512_add_epi64(u, v), ni, nic), vq));
        _mm512_storeu_si512(y + j,
                            reduce_below(mul.mul_lazy(_mm512_add_epi64(_mm512_sub_epi64(u, v), v2q), li, lic), vq));
    }
    for (; j < t; ++j) {
        const uint64_t u = x[j], v = y[j];
        x[j] = math::reduce_once(math::mul_shoup_lazy(u + v, tb.n_inv, tb.n_inv_shoup, q), q);
        y[j] = math::reduce_once(math::mul_shoup_lazy(u - v + two_q, tb.last_inv, tb.last_inv_shoup, q), q);
    }
}

}  // namespace
}  // namespace oboro::backend::cpu
