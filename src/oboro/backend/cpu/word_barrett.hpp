// Constants of the reductions the SIMD element-wise kernels use. They are derived from the
// scalar ones in math/modarith.hpp (math::Barrett's ratio, math::shoup_precompute), so that each
// idea has one implementation; only the way the SIMD code spends its multiplications differs.
//
// Single-word ("shifted") Barrett reduction of a double word x < 2^(b+62), where b is the bit
// length of q (2^(b-1) <= q < 2^b, 4 <= b <= 62):
//     c = floor(x / 2^(b-2))              fits in one word because x < 2^(b+62)
//     qhat = floor(c * mu / 2^64),        mu = floor(2^(b+62) / q) < 2^63
//     r = x - qhat * q                    in [0, 3q), computed on the low words only
// Why r < 3q: with t = x/q, c*mu/2^64 >= (x/2^(b-2) - 1)(2^(b+62)/q - 1)/2^64
//     > t - x/2^(b+62) - 2^(b-2)/q >= t - 1 - 1/2, so qhat >= floor(t) - 2 and qhat <= floor(t).
// As 3q < 2^64, r is exact in word arithmetic. The scalar math::Barrett needs three 64x64
// products where this needs one high product; in SIMD code, where a 64-bit high product costs
// four 32-bit products, that is what makes the vector multiply pay.
//
// Every product of canonical residues (< q^2 <= 2^(2b)) and every product plus a value below 2q
// (q^2 + 2q <= 2^(2b) - 1) meets the bound x < 2^(b+62).
#pragma once

#include <cstddef>
#include <cstdint>

#include "oboro/math/modarith.hpp"
#include "oboro/math/rns.hpp"

namespace oboro::backend::cpu {

struct WordBarrett {
    uint64_t q = 0;
    uint64_t mu = 0;     // floor(2^(b+62) / q)
    int lo_shift = 0;    // b - 2: c = (hi << hi_shift) | (lo >> lo_shift)
    int hi_shift = 0;    // 66 - b
    uint64_t r64 = 0;    // 2^64 mod q, to fold the high word of a 128-bit accumulator
    uint64_t r64_shoup = 0;

    explicit WordBarrett(const math::Modulus& m) : q(m.value) {
        const int b = 64 - __builtin_clzll(q);
        lo_shift = b - 2;
        hi_shift = 66 - b;
        // floor(floor(2^128/q) / 2^(66-b)) = floor(2^(b+62)/q): reuse Barrett's 2-word ratio.
        const unsigned __int128 ratio = (static_cast<unsigned __int128>(m.barrett.ratio_hi) << 64) | m.barrett.ratio_lo;
        mu = static_cast<uint64_t>(ratio >> hi_shift);
        r64 = m.barrett.reduce_word(~uint64_t(0)) + 1;  // (2^64 - 1) mod q, plus one
        if (r64 == q) r64 = 0;
        r64_shoup = math::shoup_precompute(r64, q);
    }
};

// How the SIMD kernels take an inner product's 128-bit sum to a residue (eltwise_simd.hpp,
// reduce_sum), chosen by the largest value the sum can reach: the fewer its bits, the less work.
// Below 2^(b+62) the single-word Barrett reduction above takes it as it is (Fold::none). Below
// 2^125 its high word is below 2^61, so hi * (2^64 mod q), a plain product below 2^(b+61), plus the
// low word stays below 2^(b+61) + 2^64 <= 2^(b+62) (Fold::product). Any larger sum first folds its
// high word by a Shoup product (Fold::shoup). A key-switching inner product of 3 terms on 60- and
// 61-bit primes (S1, S2, B1's lower levels) needs no fold, and one of 6 terms on B1's 61-bit primes
// the product: at 3 terms the AVX2 dot2 took 8.7 -> 6.3 ns per element and weighted_sum
// 4.7 -> 2.8 on 60-bit primes (bench_kernels, AMD EPYC Zen 3, 2026-12-07).
enum class Fold { none, product, shoup };

// The fold for a sum of `terms` products x * y (x < x_bound, y < y_bound) plus at most `extra`
// (below 2^127), reduced modulo q.
inline Fold sum_fold(size_t terms, uint64_t x_bound, uint64_t y_bound, unsigned __int128 extra, uint64_t q) {
    using u128 = unsigned __int128;
    const u128 product = static_cast<u128>(x_bound - 1) * (y_bound - 1), room = ~static_cast<u128>(0) - extra;
    if (terms != 0 && product > room / terms) return Fold::shoup;
    const u128 largest = product * terms + extra;
    const int b = 64 - __builtin_clzll(q);
    if (largest < static_cast<u128>(1) << (b + 62)) return Fold::none;
    if (largest < static_cast<u128>(1) << 125) return Fold::product;
    return Fold::shoup;
}

// How many products of canonical residues a 128-bit accumulator that starts below q can take:
// k with q + k (q-1)^2 < 2^128 (at least 15 for q < 2^62). Inner products longer than this are
// reduced every k terms.
inline uint64_t lazy_product_terms(uint64_t q) {
    const unsigned __int128 sq = static_cast<unsigned __int128>(q - 1) * (q - 1);
    const unsigned __int128 k = (~static_cast<unsigned __int128>(0) - q) / sq;
    return k > 64 ? 64 : static_cast<uint64_t>(k);
}

}  // namespace oboro::backend::cpu
