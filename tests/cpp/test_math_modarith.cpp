// Tests for src/oboro/math/modarith.hpp: every scalar routine, for both word types, against a
// reference computed with unsigned __int128 (exact for all inputs these routines accept:
// a double word of a uint64_t is at most 2^128 - 1).
//
// Moduli: small primes, random odd moduli of every allowed size, and the largest allowed ones
// (just below 2^(w-2)), plus 2^61 - 1 for 64-bit words.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "oboro/math/modarith.hpp"
#include "oboro/math/rns.hpp"

namespace {

using namespace oboro::math;
using u128 = unsigned __int128;

std::string hex128(u128 x) {
    std::ostringstream os;
    os << "0x" << std::hex << uint64_t(x >> 64) << ":" << uint64_t(x);
    return os.str();
}

// ---- exact references ----------------------------------------------------------------------

template <typename W> W ref_mod(u128 x, W q) { return W(x % q); }
template <typename W> W ref_mul(W a, W b, W q) { return W(u128(a) * b % q); }
template <typename W> W ref_pow(W b, uint64_t e, W q) {
    u128 r = 1 % q, x = b % q;
    while (e) {
        if (e & 1) r = r * x % q;
        x = x * x % q;
        e >>= 1;
    }
    return W(r);
}
// 2^k mod q, for any k (by repeated doubling; q < 2^62 so no overflow)
template <typename W> W ref_pow2(int k, W q) {
    u128 r = 1 % q;
    for (int i = 0; i < k; ++i) r = (r * 2) % q;
    return W(r);
}

// ---- the moduli under test -------------------------------------------------------------------

template <typename W> struct Moduli;

template <> struct Moduli<uint32_t> {
    static std::vector<uint32_t> primes() {
        // small primes, NTT primes, the largest prime below 2^30 (2^30 - 35)
        return {3u, 5u, 7u, 17u, 97u, 257u, 7681u, 12289u, 65537u, 786433u, 1073741789u};
    }
    static std::vector<uint32_t> extremes() {
        // largest allowed odd moduli (composite ones are fine for everything but inv_mod)
        return {(1u << 30) - 1, (1u << 30) - 3, (1u << 29) + 1, (1u << 29) - 1};
    }
};

template <> struct Moduli<uint64_t> {
    static std::vector<uint64_t> primes() {
        return {3ull, 5ull, 97ull, 65537ull, 1073741789ull, 4294967291ull,
                1152921504606584833ull,         // 60-bit NTT prime (1 mod 2^17)
                (1ull << 61) - 1,               // Mersenne prime 2^61 - 1
                4611686018427387847ull};        // largest prime below 2^62 (2^62 - 57)
    }
    static std::vector<uint64_t> extremes() {
        return {(1ull << 62) - 1, (1ull << 62) - 3, (1ull << 61) + 1, (1ull << 32) + 1, (1ull << 32) - 1};
    }
};

// primes + extremes + random odd moduli of every bit size in [2, w-2] (fixed seed)
template <typename W> std::vector<W> all_moduli() {
    std::vector<W> v = Moduli<W>::primes();
    for (W q : Moduli<W>::extremes()) v.push_back(q);
    std::mt19937_64 rng(0x6d6f6461726974ull + sizeof(W));
    for (int bits = 2; bits <= max_modulus_bits<W>; ++bits) {
        for (int rep = 0; rep < 2; ++rep) {
            W q = W(rng()) & ((W(1) << bits) - 1);
            q |= W(1) << (bits - 1);  // exactly `bits` bits
            q |= 1;                   // odd
            if (q < 3) q = 3;
            v.push_back(q);
        }
    }
    return v;
}

constexpr int kRandomPerModulus = 10000;

// A few canonical edge values, deduplicated implicitly by the checks being idempotent.
template <typename W> std::vector<W> edge_values(W q) {
    std::vector<W> v = {W(0), W(1), W(q - 1), W(q - 2), W(q / 2), W((q + 1) / 2), W(2 % q)};
    std::vector<W> out;
    for (W x : v)
        if (x < q) out.push_back(x);
    return out;
}

template <typename W> class ModArith : public ::testing::Test {};
using WordTypes = ::testing::Types<uint32_t, uint64_t>;
TYPED_TEST_SUITE(ModArith, WordTypes);

// ---- add / sub / neg / reduce_once -----------------------------------------------------------

template <typename W> void check_add_sub_neg(W q) {
    std::mt19937_64 rng(q);
    std::vector<W> vals = edge_values(q);
    for (int i = 0; i < 60; ++i) vals.push_back(W(rng() % q));
    for (W a : vals) {
        ASSERT_EQ(neg_mod(a, q), W((q - a) % q)) << "a=" << a;
        ASSERT_EQ(add_mod(a, neg_mod(a, q), q), W(0)) << "a=" << a;
        for (W b : vals) {
            ASSERT_EQ(add_mod(a, b, q), W((u128(a) + b) % q)) << "a=" << a << " b=" << b;
            ASSERT_EQ(sub_mod(a, b, q), W((u128(a) + q - b) % q)) << "a=" << a << " b=" << b;
        }
    }
    // reduce_once: [0, 2q) -> [0, q)
    for (W a : {W(0), W(1), W(q - 1), q, W(q + 1), W(2 * q - 1), W(rng() % (2 * q))})
        ASSERT_EQ(reduce_once(a, q), W(a % q)) << "a=" << a;
}

// add/sub/neg agree with exact arithmetic, including the wrap-around edges
TYPED_TEST(ModArith, AddSubNeg) {
    using W = TypeParam;
    for (W q : all_moduli<W>()) {
        SCOPED_TRACE(::testing::Message() << "q=" << q);
        check_add_sub_neg<W>(q);
    }
}

// ---- Barrett ---------------------------------------------------------------------------------

template <typename W> void check_barrett_constants(W q) {
    constexpr int w = word_bits<W>;
    const Barrett<W> br(q);
    // ratio = floor(2^(2w) / q) as (hi, lo). For w = 64 compute floor(2^128/q) = floor((2^128-1)/q)
    // (q odd, q > 1, so q does not divide 2^128).
    if constexpr (w == 32) {
        const u128 ratio = (u128(1) << 64) / q;
        ASSERT_EQ(br.ratio_hi, W(ratio >> 32));
        ASSERT_EQ(br.ratio_lo, W(ratio));
    } else {
        const u128 ratio = ~u128(0) / q;
        ASSERT_EQ(br.ratio_hi, W(ratio >> 64));
        ASSERT_EQ(br.ratio_lo, W(ratio));
    }
    ASSERT_EQ(br.q, q);
}

// The precomputed Barrett ratio is exactly floor(2^(2w)/q)
TYPED_TEST(ModArith, BarrettConstants) {
    using W = TypeParam;
    for (W q : all_moduli<W>()) {
        SCOPED_TRACE(::testing::Message() << "q=" << q);
        check_barrett_constants<W>(q);
    }
}

template <typename W> void check_barrett_reduce(W q) {
    using D = dword_t<W>;
    constexpr int w = word_bits<W>;
    const Barrett<W> br(q);
    const D all = ~D(0);
    const D qw = D(q) << w;  // q * 2^w
    std::vector<D> xs = {D(0),          D(1),
                         D(q - 1),      D(q),
                         D(q) + 1,      D(2) * q - 1,
                         D(q) * q - 1,  D(q - 1) * (q - 1),
                         D(q) * q,      qw - 1,
                         qw,            qw + q - 1,
                         all,           all - 1,
                         all - q,       all / q * q,
                         all / q * q - 1, D(~W(0)),
                         D(~W(0)) + 1,  D(~W(0)) << w,
                         (D(~W(0)) << w) - 1, D(1) << (2 * w - 1),
                         (D(1) << (2 * w - 1)) - 1, D(4) * q * q};
    std::mt19937_64 rng(q ^ 0xba77e77);
    for (int i = 0; i < kRandomPerModulus; ++i) {
        D x;
        if constexpr (w == 32) x = D(rng());
        else x = (D(rng()) << 64) | rng();
        xs.push_back(x);                                   // any double word
        xs.push_back(x % (D(q) * q));                      // the usual case: below q^2
        xs.push_back(x >> (rng() % (2 * w)));              // all magnitudes
    }
    for (D x : xs) ASSERT_EQ(br.reduce(x), ref_mod<W>(u128(x), q)) << "x=" << hex128(u128(x));
}

// Barrett::reduce is exact for every double-word input, up to 2^(2w) - 1
TYPED_TEST(ModArith, BarrettReduceAnyDoubleWord) {
    using W = TypeParam;
    for (W q : all_moduli<W>()) {
        SCOPED_TRACE(::testing::Message() << "q=" << q);
        check_barrett_reduce<W>(q);
    }
}

template <typename W> void check_barrett_reduce_word(W q) {
    const Barrett<W> br(q);
    const W all = ~W(0);
    const W top_mult = W(all / q * q);  // largest multiple of q in a word
    std::vector<W> xs = {W(0), W(1), W(q - 1), q, W(q + 1), W(2 * q - 1), W(2 * q), W(3 * q - 1),
                         W(3 * q), W(4 * q - 1), all, W(all - 1), top_mult, W(top_mult - 1),
                         W(all - q), W(W(1) << (word_bits<W> - 1)), W((W(1) << (word_bits<W> - 1)) - 1)};
    std::mt19937_64 rng(q ^ 0x3e3e3e);
    for (int i = 0; i < kRandomPerModulus; ++i) {
        xs.push_back(W(rng()));
        xs.push_back(W(rng() % (4 * u128(q))));
    }
    for (W x : xs) ASSERT_EQ(br.reduce_word(x), W(x % q)) << "x=" << x;
}

// Barrett::reduce_word is exact for every single word, including all-ones
TYPED_TEST(ModArith, BarrettReduceWord) {
    using W = TypeParam;
    for (W q : all_moduli<W>()) {
        SCOPED_TRACE(::testing::Message() << "q=" << q);
        check_barrett_reduce_word<W>(q);
    }
}

template <typename W> void check_barrett_mul(W q) {
    const Barrett<W> br(q);
    std::mt19937_64 rng(q ^ 0x4d554c);
    std::vector<W> e = edge_values(q);
    for (W a : e)
        for (W b : e) ASSERT_EQ(br.mul(a, b), ref_mul(a, b, q)) << "a=" << a << " b=" << b;
    for (int i = 0; i < kRandomPerModulus; ++i) {
        const W a = W(rng() % q), b = W(rng() % q);
        ASSERT_EQ(br.mul(a, b), ref_mul(a, b, q)) << "a=" << a << " b=" << b;
    }
    // Barrett::mul also accepts non-canonical words (it reduces the full double-word product)
    for (int i = 0; i < 200; ++i) {
        const W a = W(rng()), b = W(rng());
        ASSERT_EQ(br.mul(a, b), ref_mul(a, b, q)) << "a=" << a << " b=" << b;
    }
    ASSERT_EQ(br.mul(~W(0), ~W(0)), ref_mul(~W(0), ~W(0), q));
}

// Barrett::mul(a, b) == a*b mod q
TYPED_TEST(ModArith, BarrettMul) {
    using W = TypeParam;
    for (W q : all_moduli<W>()) {
        SCOPED_TRACE(::testing::Message() << "q=" << q);
        check_barrett_mul<W>(q);
    }
}

// ---- mul_hi / mul_wide -------------------------------------------------------------------------

// mul_hi / mul_wide give the exact high word / double word of a product
TYPED_TEST(ModArith, MulHiMulWide) {
    using W = TypeParam;
    constexpr int w = word_bits<W>;
    std::mt19937_64 rng(7);
    std::vector<W> xs = {W(0), W(1), W(2), ~W(0), W(~W(0) - 1), W(W(1) << (w - 1))};
    for (int i = 0; i < 200; ++i) xs.push_back(W(rng()));
    for (W a : xs)
        for (W b : {W(0), W(1), ~W(0), W(rng()), W(rng())}) {
            const u128 p = u128(a) * b;
            ASSERT_EQ(u128(mul_wide(a, b)), p);
            ASSERT_EQ(mul_hi(a, b), W(p >> w)) << "a=" << a << " b=" << b;
        }
}

// ---- Shoup -------------------------------------------------------------------------------------

template <typename W> void check_shoup(W q) {
    constexpr int w = word_bits<W>;
    std::mt19937_64 rng(q ^ 0x5400);
    std::vector<W> ws = edge_values(q);
    for (int i = 0; i < 20; ++i) ws.push_back(W(rng() % q));
    for (W m : ws) {
        const W ms = shoup_precompute(m, q);
        // w_shoup = floor(m * 2^w / q)
        ASSERT_EQ(ms, W((u128(m) << w) / q)) << "m=" << m;
        std::vector<W> as = {W(0), W(1), W(q - 1), q, W(2 * q - 1), W(4 * q - 1), ~W(0), W(~W(0) - 1)};
        for (int i = 0; i < kRandomPerModulus / 20; ++i) {
            as.push_back(W(rng() % q));   // canonical
            as.push_back(W(rng() % (4 * u128(q))));  // lazy NTT range
            as.push_back(W(rng()));       // any word
        }
        for (W a : as) {
            const W want = ref_mul(a, m, q);
            const W lazy = mul_shoup_lazy(a, m, ms, q);
            ASSERT_LT(lazy, W(2 * q)) << "a=" << a << " m=" << m;  // lazy result in [0, 2q)
            ASSERT_EQ(W(lazy % q), want) << "a=" << a << " m=" << m;
            ASSERT_EQ(mul_shoup(a, m, ms, q), want) << "a=" << a << " m=" << m;  // fully reduced
        }
    }
}

// Shoup multiplication: lazy result in [0, 2q) congruent to a*w, reduced result == a*w mod q,
// for any word a
TYPED_TEST(ModArith, ShoupMul) {
    using W = TypeParam;
    for (W q : all_moduli<W>()) {
        SCOPED_TRACE(::testing::Message() << "q=" << q);
        check_shoup<W>(q);
    }
}

// ---- Montgomery --------------------------------------------------------------------------------

template <typename W> void check_montgomery(W q) {
    constexpr int w = word_bits<W>;
    const Montgomery<W> mg(q);
    // constants: q * q_neg_inv == -1 mod 2^w, r2 == 2^(2w) mod q
    ASSERT_EQ(W(q * mg.q_neg_inv), ~W(0));
    ASSERT_EQ(mg.r2, ref_pow2<W>(2 * w, q));
    const W r_mod_q = ref_pow2<W>(w, q);  // R mod q
    std::mt19937_64 rng(q ^ 0x303);
    std::vector<W> xs = edge_values(q);
    for (int i = 0; i < kRandomPerModulus / 3; ++i) xs.push_back(W(rng() % q));
    for (W a : xs) {
        const W am = mg.to_mont(a);
        ASSERT_EQ(am, ref_mul(a, r_mod_q, q)) << "a=" << a;  // a*R mod q, canonical
        ASSERT_EQ(mg.from_mont(am), a) << "a=" << a;
        const W b = W(rng() % q);
        const W bm = mg.to_mont(b);
        const W pm = mg.mul(am, bm);
        ASSERT_LT(pm, q);
        ASSERT_EQ(mg.from_mont(pm), ref_mul(a, b, q)) << "a=" << a << " b=" << b;
        // mul on plain (non-Montgomery) values gives a*b*R^{-1}: check (result * R) == a*b
        const W ab_rinv = mg.mul(a, b);
        ASSERT_EQ(ref_mul(ab_rinv, r_mod_q, q), ref_mul(a, b, q)) << "a=" << a << " b=" << b;
    }
    // reduce(t) for any t < q * 2^w is t * R^{-1} mod q, canonical
    using D = dword_t<W>;
    const D limit = D(q) << w;
    std::vector<D> ts = {D(0), D(1), D(q), limit - 1, limit - q, D(q) * q - 1, (D(1) << w) - 1, D(1) << w};
    for (int i = 0; i < kRandomPerModulus / 3; ++i) {
        D t;
        if constexpr (w == 32) t = D(rng());
        else t = (D(rng()) << 64) | rng();
        ts.push_back(t % limit);
    }
    for (D t : ts) {
        const W r = mg.reduce(t);
        ASSERT_LT(r, q) << "t=" << hex128(u128(t));
        // r * 2^w == t (mod q); r < 2^62 so r << w fits in 128 bits
        ASSERT_EQ(W((u128(r) << w) % q), W(u128(t) % q)) << "t=" << hex128(u128(t));
    }
}

// Montgomery: constants, to_mont/from_mont round trip, mul, and reduce(t) for all t < q*2^w
TYPED_TEST(ModArith, Montgomery) {
    using W = TypeParam;
    for (W q : all_moduli<W>()) {
        SCOPED_TRACE(::testing::Message() << "q=" << q);
        check_montgomery<W>(q);
    }
}

// ---- pow_mod / inv_mod -------------------------------------------------------------------------

template <typename W> void check_pow(W q) {
    std::mt19937_64 rng(q ^ 0x9090);
    // edge cases
    ASSERT_EQ(pow_mod<W>(0, 0, q), W(1));  // 0^0 == 1 by convention
    ASSERT_EQ(pow_mod<W>(0, 5, q), W(0));
    ASSERT_EQ(pow_mod<W>(q - 1, 0, q), W(1));
    ASSERT_EQ(pow_mod<W>(q - 1, 1, q), W(q - 1));
    ASSERT_EQ(pow_mod<W>(q - 1, 2, q), W(1));
    ASSERT_EQ(pow_mod<W>(q - 1, 3, q), W(q - 1));
    ASSERT_EQ(pow_mod<W>(q, 3, q), W(0));  // base >= q is reduced first
    const std::vector<uint64_t> exps = {0, 1, 2, 3, uint64_t(q) - 1, uint64_t(q), uint64_t(q) + 1,
                                        ~uint64_t(0), uint64_t(1) << 63};
    std::vector<W> bases = edge_values(q);
    bases.push_back(~W(0));  // any word is accepted as the base
    bases.push_back(W(q + 5));
    for (int i = 0; i < 30; ++i) bases.push_back(W(rng()));
    for (W b : bases) {
        for (uint64_t e : exps) ASSERT_EQ(pow_mod<W>(b, e, q), ref_pow<W>(b, e, q)) << "b=" << b << " e=" << e;
        for (int i = 0; i < 10; ++i) {
            const uint64_t e = rng() >> (rng() % 64);
            ASSERT_EQ(pow_mod<W>(b, e, q), ref_pow<W>(b, e, q)) << "b=" << b << " e=" << e;
        }
    }
}

// pow_mod agrees with square-and-multiply in 128-bit arithmetic, for any base word and exponent
TYPED_TEST(ModArith, PowMod) {
    using W = TypeParam;
    for (W q : all_moduli<W>()) {
        SCOPED_TRACE(::testing::Message() << "q=" << q);
        check_pow<W>(q);
    }
}

template <typename W> void check_inv(W q) {
    std::mt19937_64 rng(q ^ 0x1717);
    // Fermat: a^(q-1) == 1 for a != 0 (q prime)
    std::vector<W> xs = edge_values(q);
    for (int i = 0; i < 200; ++i) xs.push_back(W(rng() % q));
    for (W a : xs) {
        if (a == 0) continue;
        ASSERT_EQ(pow_mod<W>(a, uint64_t(q) - 1, q), W(1)) << "a=" << a;
        const W inv = inv_mod<W>(a, q);
        ASSERT_LT(inv, q);
        ASSERT_EQ(ref_mul(a, inv, q), W(1)) << "a=" << a;
    }
    ASSERT_EQ(inv_mod<W>(1, q), W(1));
    ASSERT_EQ(inv_mod<W>(q - 1, q), W(q - 1));  // (-1)^{-1} == -1
    ASSERT_EQ(inv_mod<W>(2, q), W((q + 1) / 2));  // 2 * (q+1)/2 == q + 1
}

// inv_mod(a) * a == 1 mod q for prime q and every nonzero a
TYPED_TEST(ModArith, InvModPrimes) {
    using W = TypeParam;
    for (W q : Moduli<W>::primes()) {
        SCOPED_TRACE(::testing::Message() << "q=" << q);
        check_inv<W>(q);
    }
}

// A long chain of products computed with Barrett, Montgomery and Shoup in parallel stays equal to
// the reference at every step (catches inconsistent conventions between the reducers).
TYPED_TEST(ModArith, MixedChainAgrees) {
    using W = TypeParam;
    for (W q : all_moduli<W>()) {
        SCOPED_TRACE(::testing::Message() << "q=" << q);
        const Barrett<W> br(q);
        const Montgomery<W> mg(q);
        std::mt19937_64 rng(q ^ 0xC4A1);
        W acc = 1, acc_m = mg.to_mont(1), acc_s = 1;
        W ref = 1;
        for (int i = 0; i < 300; ++i) {
            const W x = W(rng() % q);
            const W xs = shoup_precompute(x, q);
            acc = br.mul(acc, x);
            acc_m = mg.mul(acc_m, mg.to_mont(x));
            acc_s = mul_shoup(acc_s, x, xs, q);
            ref = ref_mul(ref, x, q);
            ASSERT_EQ(acc, ref) << "step " << i;
            ASSERT_EQ(mg.from_mont(acc_m), ref) << "step " << i;
            ASSERT_EQ(acc_s, ref) << "step " << i;
        }
    }
}

// The supported modulus size is w - 2 bits
TEST(ModArithStatic, MaxModulusBits) {
    EXPECT_EQ(max_modulus_bits<uint32_t>, 30);
    EXPECT_EQ(max_modulus_bits<uint64_t>, 62);
    EXPECT_EQ(word_bits<uint32_t>, 32);
    EXPECT_EQ(word_bits<uint64_t>, 64);
}

}  // namespace

// reduce_integral_double (rns.hpp, host and device code): exact v mod q for integral doubles of
// any magnitude and sign, against a reference that builds |v| = mantissa * 2^e in 128-bit steps.
TEST(ReduceIntegralDouble, ExactForAnyMagnitudeAndSign) {
    using oboro::math::Barrett;
    const uint64_t primes[] = {(uint64_t(1) << 40) - 87, 0xffffffffffffffc5ull >> 3, 1152921504606584833ull, 97};
    std::mt19937_64 rng(7);
    for (uint64_t q : primes) {
        const Barrett<uint64_t> br(q);
        auto reference = [&](double v) {
            int e = 0;
            const double frac = std::frexp(std::fabs(v), &e);  // |v| = frac * 2^e
            uint64_t mantissa = uint64_t(std::ldexp(frac, 53));
            e -= 53;
            if (e < 0) {  // integral v: the low -e bits of the mantissa are zero
                mantissa >>= -e;
                e = 0;
            }
            unsigned __int128 r = mantissa % q;
            for (; e > 0; --e) r = (r * 2) % q;
            const uint64_t m = uint64_t(r);
            return v < 0 && m ? q - m : m;
        };
        std::vector<double> values = {0.0, -0.0, 1.0, -1.0, double(q), -double(q), 0x1p62, 0x1p63, -0x1p63,
                                      0x1p64, 0x1p100, -0x1p200, 0x1.fffffffffffffp62, 0x1.fffffffffffffp63};
        for (int i = 0; i < 200; ++i) {
            const double mag = std::ldexp(double(rng() >> 11), int(rng() % 150));  // 53-bit mantissa, up to 2^203
            values.push_back(i % 2 ? -mag : mag);
        }
        for (double v : values)
            EXPECT_EQ(oboro::math::reduce_integral_double(v, br), reference(v)) << "v = " << v << ", q = " << q;
    }
}
