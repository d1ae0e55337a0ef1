// Scalar modular arithmetic, generic over the machine word (uint32_t or uint64_t).
//
// Every function here is header-only and marked OBORO_HD so that the same code runs in
// CPU kernels, in CUDA kernels, and in the CPU emulation of CUDA kernels used by the tests.
//
// Conventions:
//  - q is an odd modulus with q < 2^(w-2) (w = word bits), so that lazy values in [0, 4q)
//    still fit in one word (Harvey's lazy butterflies rely on this).
//  - "lazy" results lie in [0, 2q) and need one conditional subtraction to be canonical.
#pragma once

#include <cstdint>
#include <type_traits>

#if defined(__CUDACC__)
#define OBORO_HD __host__ __device__ __forceinline__
#else
#define OBORO_HD inline
#endif

namespace oboro::math {

// The double-width type used for products of two words.
template <typename W> struct DoubleWord;
template <> struct DoubleWord<uint32_t> { using type = uint64_t; };
template <> struct DoubleWord<uint64_t> { using type = unsigned __int128; };
template <typename W> using dword_t = typename DoubleWord<W>::type;

template <typename W> inline constexpr int word_bits = int(sizeof(W) * 8);

// Largest modulus bit size a word type supports with lazy [0, 4q) arithmetic.
template <typename W> inline constexpr int max_modulus_bits = word_bits<W> - 2;

// High word of a*b.
template <typename W> OBORO_HD W mul_hi(W a, W b) {
#if defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<W, uint64_t>) return __umul64hi(a, b);
    else return __umulhi(a, b);
#else
    return W((dword_t<W>(a) * b) >> word_bits<W>);
#endif
}

template <typename W> OBORO_HD dword_t<W> mul_wide(W a, W b) { return dword_t<W>(a) * b; }

// ---- add / sub / negate --------------------------------------------------------------------

// a, b in [0, q) -> (a + b) mod q
template <typename W> OBORO_HD W add_mod(W a, W b, W q) {
    W s = a + b;
    return s >= q ? s - q : s;
}

// a, b in [0, q) -> (a - b) mod q
template <typename W> OBORO_HD W sub_mod(W a, W b, W q) { return a >= b ? a - b : a + q - b; }

// a in [0, q) -> -a mod q
template <typename W> OBORO_HD W neg_mod(W a, W q) { return a == 0 ? 0 : q - a; }

// a in [0, 2q) -> a mod q
template <typename W> OBORO_HD W reduce_once(W a, W q) { return a >= q ? a - q : a; }

// ---- Barrett reduction ---------------------------------------------------------------------

// Precomputed constant for Barrett reduction of double-word values:
// ratio = floor(2^(2w) / q), kept as two words (hi, lo).
template <typename W> struct Barrett {
    W q = 0;
    W ratio_hi = 0;  // floor(2^(2w)/q) >> w
    W ratio_lo = 0;  // floor(2^(2w)/q) mod 2^w

    Barrett() = default;
    OBORO_HD explicit Barrett(W modulus) : q(modulus) {
        // floor(2^(2w) / q) computed as floor((2^(2w) - 1) / q), equal because q is odd (> 1).
        using D = dword_t<W>;
        constexpr int w = word_bits<W>;
        const W all_ones = ~W(0);
        // Long division of the two-word number (all_ones, all_ones) by q.
        D hi_rem = D(all_ones) % q;
        ratio_hi = W(D(all_ones) / q);
        D lo_part = (hi_rem << w) | all_ones;
        ratio_lo = W(lo_part / q);
    }

    // x < q^2 (or any double-word x < 2^(2w)) -> x mod q
    OBORO_HD W reduce(dword_t<W> x) const {
        constexpr int w = word_bits<W>;
        const W x_lo = W(x);
        const W x_hi = W(x >> w);
        // Estimate floor(x * ratio / 2^(2w)); the error is at most 2 (one fix-up below per unit).
        // x * ratio = (x_hi*2^w + x_lo) * (r_hi*2^w + r_lo); we need the bits above 2w.
        const W c1 = mul_hi(x_lo, ratio_lo);
        const dword_t<W> t1 = mul_wide(x_lo, ratio_hi) + c1;
        const dword_t<W> t2 = mul_wide(x_hi, ratio_lo) + W(t1);
        const W qhat = W(x_hi * ratio_hi + W(t1 >> w) + W(t2 >> w));
        W r = x_lo - qhat * q;  // exact in word arithmetic, result in [0, 3q)
        if (r >= q) r -= q;
        if (r >= q) r -= q;
        return r;
    }

    // a single word (any value) -> a mod q
    OBORO_HD W reduce_word(W a) const {
        const W qhat = mul_hi(a, ratio_hi);  // floor(a/q) minus at most 2
        W r = a - qhat * q;
        if (r >= q) r -= q;
        if (r >= q) r -= q;
        return r;
    }

    OBORO_HD W mul(W a, W b) const { return reduce(mul_wide(a, b)); }
};

// A signed word c -> c mod q in [0, q), without a branch on its sign or size: the callers' values
// are secret (errors, secrets) or random (encoded coefficients), so a branch would leak them and
// would defeat the branch predictor.
OBORO_HD uint64_t reduce_signed(int64_t c, const Barrett<uint64_t>& br) {
    const uint64_t negative = uint64_t(c >> 63);               // all ones when c < 0
    const uint64_t magnitude = (uint64_t(c) ^ negative) - negative;  // |c|
    const uint64_t r = br.reduce_word(magnitude);
    const uint64_t flip = negative & (uint64_t(0) - uint64_t(r != 0));
    return r + (flip & (br.q - 2 * r));  // r, or q - r for a negative c (0 stays 0)
}

// ---- Shoup multiplication by a precomputed operand ----------------------------------------

// For a fixed multiplicand w in [0, q): w_shoup = floor(w * 2^wbits / q).
template <typename W> OBORO_HD W shoup_precompute(W w, W q) {
    return W((dword_t<W>(w) << word_bits<W>) / q);
}

// a (any word), w in [0, q) -> a*w mod q in [0, 2q)
template <typename W> OBORO_HD W mul_shoup_lazy(W a, W w, W w_shoup, W q) {
    const W qhat = mul_hi(a, w_shoup);
    return a * w - qhat * q;
}

template <typename W> OBORO_HD W mul_shoup(W a, W w, W w_shoup, W q) {
    return reduce_once(mul_shoup_lazy(a, w, w_shoup, q), q);
}

// ---- Montgomery multiplication ---------------------------------------------------------------

// Montgomery form with R = 2^w: x_mont = x * R mod q.
template <typename W> struct Montgomery {
    W q = 0;
    W q_neg_inv = 0;  // -q^{-1} mod 2^w
    W r2 = 0;         // R^2 mod q, to enter Montgomery form

    Montgomery() = default;
    OBORO_HD explicit Montgomery(W modulus) : q(modulus) {
        // Newton iteration for q^{-1} mod 2^w: each step doubles the number of correct bits.
        W inv = modulus;  // correct to 3 bits for odd q
        for (int i = 0; i < 6; ++i) inv *= W(2) - modulus * inv;
        q_neg_inv = W(0) - inv;
        const Barrett<W> br(modulus);
        const W r_mod_q = br.reduce_word(W(0) - modulus);  // 2^w - q == 2^w mod q
        r2 = br.mul(r_mod_q, r_mod_q);
    }

    // t < q * 2^w -> t * R^{-1} mod q in [0, q)
    OBORO_HD W reduce(dword_t<W> t) const {
        constexpr int w = word_bits<W>;
        const W m = W(t) * q_neg_inv;
        // (t + m*q) is divisible by 2^w; compute its high word without overflowing two words.
        const dword_t<W> mq = mul_wide(m, q);
        const W t_hi = W(t >> w);
        const W carry = (W(t) != 0) ? 1 : 0;  // low words sum to exactly 2^w or 0
        W r = t_hi + W(mq >> w) + carry;
        return r >= q ? r - q : r;
    }

    OBORO_HD W mul(W a_mont, W b_mont) const { return reduce(mul_wide(a_mont, b_mont)); }
    OBORO_HD W to_mont(W a) const { return reduce(mul_wide(a, r2)); }
    OBORO_HD W from_mont(W a_mont) const { return reduce(dword_t<W>(a_mont)); }
};

// ---- exponentiation and inverses ---------------------------------------------------------------

template <typename W> OBORO_HD W pow_mod(W base, uint64_t exp, W q) {
    const Barrett<W> br(q);
    W result = W(1) % q;
    base = br.reduce_word(base);
    while (exp) {
        if (exp & 1) result = br.mul(result, base);
        base = br.mul(base, base);
        exp >>= 1;
    }
    return result;
}

// q prime, a != 0 mod q -> a^{-1} mod q (Fermat)
template <typename W> OBORO_HD W inv_mod(W a, W q) { return pow_mod<W>(a, uint64_t(q) - 2, q); }

// ---- per-coefficient kernels ---------------------------------------------------------------------
// The element-wise bodies shared by the CPU scalar kernels (backend/cpu/eltwise_scalar.cpp) and
// the CUDA kernels (backend/cuda/*_kernels.hpp), so that both compute the same bits.

// Base conversion of one coefficient x in [0, p) from the prime p to the prime t (br = Barrett(t),
// p_mod_t = p mod t): x mod t, or, when `centered`, the centred representative (x - p if x > p/2)
// mod t. Rescale and ModDown use the centred form so that the division rounds.
template <typename W> OBORO_HD W convert_from_one_prime(W x, W p, W p_mod_t, bool centered, const Barrett<W>& br) {
    const W r = br.reduce_word(x);
    return (centered && x > (p >> 1)) ? sub_mod(r, p_mod_t, br.q) : r;
}

// The tensor product of two degree-1 ciphertexts at one coefficient, Karatsuba (3 products):
// d0 = a0*b0, d1 = a0*b1 + a1*b0 = (a0+a1)(b0+b1) - a0*b0 - a1*b1, d2 = a1*b1; all canonical.
template <typename W>
OBORO_HD void tensor_karatsuba(W a0, W a1, W b0, W b1, const Barrett<W>& br, W& d0, W& d1, W& d2) {
    const W q = br.q;
    const W p00 = br.mul(a0, b0), p11 = br.mul(a1, b1);
    const W cross = br.mul(add_mod(a0, a1, q), add_mod(b0, b1, q));
    d0 = p00;
    d1 = sub_mod(sub_mod(cross, p00, q), p11, q);
    d2 = p11;
}

}  // namespace oboro::math
