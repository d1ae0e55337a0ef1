// Tests for src/oboro/math/rns.hpp (RnsBase, BaseConverter) and src/oboro/math/crt.hpp
// (CrtReconstructor), against exact multi-word integer references implemented here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "oboro/math/crt.hpp"
#include "oboro/math/primes.hpp"
#include "oboro/math/rns.hpp"
#include "oboro/util/error.hpp"

namespace {

using namespace oboro::math;
using u128 = unsigned __int128;

// ---- a tiny fixed-width unsigned big integer (little-endian 64-bit words) ------------------------

struct Big {
    std::vector<uint64_t> w;
    explicit Big(size_t words, uint64_t v = 0) : w(words, 0) { w[0] = v; }
};

int cmp(const Big& a, const Big& b) {
    for (size_t i = a.w.size(); i-- > 0;)
        if (a.w[i] != b.w[i]) return a.w[i] < b.w[i] ? -1 : 1;
    return 0;
}
void mul_word(Big& a, uint64_t m) {
    uint64_t carry = 0;
    for (auto& x : a.w) {
        const u128 p = u128(x) * m + carry;
        x = uint64_t(p);
        carry = uint64_t(p >> 64);
    }
    ASSERT_EQ(carry, 0u) << "Big overflow";
}
void add(Big& a, const Big& b) {
    uint64_t carry = 0;
    for (size_t i = 0; i < a.w.size(); ++i) {
        const u128 s = u128(a.w[i]) + b.w[i] + carry;
        a.w[i] = uint64_t(s);
        carry = uint64_t(s >> 64);
    }
    ASSERT_EQ(carry, 0u) << "Big overflow";
}
void sub(Big& a, const Big& b) {  // a -= b, requires a >= b
    uint64_t borrow = 0;
    for (size_t i = 0; i < a.w.size(); ++i) {
        const u128 d = u128(a.w[i]) - b.w[i] - borrow;
        a.w[i] = uint64_t(d);
        borrow = uint64_t(d >> 64) ? 1 : 0;
    }
    ASSERT_EQ(borrow, 0u) << "Big underflow";
}
void sub_word(Big& a, uint64_t v) { sub(a, Big(a.w.size(), v)); }
void shr1(Big& a) {
    for (size_t i = 0; i < a.w.size(); ++i) a.w[i] = (a.w[i] >> 1) | (i + 1 < a.w.size() ? a.w[i + 1] << 63 : 0);
}
// (q - 1) / 2: the largest magnitude a value centred modulo an odd q can have
Big centred_limit(const Big& q) {
    Big h = q;
    sub_word(h, 1);
    shr1(h);
    return h;
}
uint64_t mod_word(const Big& a, uint64_t t) {
    u128 r = 0;
    for (size_t i = a.w.size(); i-- > 0;) r = ((r << 64) | a.w[i]) % t;
    return uint64_t(r);
}
long double to_ld(const Big& a) {
    long double v = 0;
    for (size_t i = 0; i < a.w.size(); ++i) v += std::ldexp((long double)a.w[i], int(64 * i));
    return v;
}

uint64_t mulm(uint64_t a, uint64_t b, uint64_t q) { return uint64_t(u128(a) * b % q); }
uint64_t powm(uint64_t b, uint64_t e, uint64_t q) {
    uint64_t r = 1 % q;
    b %= q;
    while (e) {
        if (e & 1) r = mulm(r, b, q);
        b = mulm(b, b, q);
        e >>= 1;
    }
    return r;
}

// Exact CRT data of a base: Q, Q/q_i, (Q/q_i)^{-1} mod q_i
struct Crt {
    std::vector<uint64_t> q;
    size_t words;
    Big Q;
    std::vector<Big> qhat;
    std::vector<uint64_t> qhat_inv;
    explicit Crt(const std::vector<uint64_t>& primes) : q(primes), words(primes.size() + 2), Q(words, 1) {
        for (uint64_t p : q) mul_word(Q, p);
        for (size_t i = 0; i < q.size(); ++i) {
            Big h(words, 1);
            for (size_t j = 0; j < q.size(); ++j)
                if (j != i) mul_word(h, q[j]);
            qhat.push_back(h);
            qhat_inv.push_back(powm(mod_word(h, q[i]), q[i] - 2, q[i]));
        }
    }
    std::vector<uint64_t> residues(const Big& x) const {
        std::vector<uint64_t> r;
        for (uint64_t p : q) r.push_back(mod_word(x, p));
        return r;
    }
    // S = sum_i [x_i * qhat_inv_i]_{q_i} * qhat_i: the un-reduced fast-base-conversion sum
    Big fast_sum(const std::vector<uint64_t>& res) const {
        Big s(words, 0);
        for (size_t i = 0; i < q.size(); ++i) {
            Big t = qhat[i];
            mul_word(t, mulm(res[i], qhat_inv[i], q[i]));
            add(s, t);
        }
        return s;
    }
    // S = x + e*Q with x in [0, Q): returns x and e
    Big reduce(Big s, int& e) const {
        e = 0;
        while (cmp(s, Q) >= 0) {
            sub(s, Q);
            ++e;
        }
        return s;
    }
    Big from_residues(const std::vector<uint64_t>& res) const {
        int e;
        return reduce(fast_sum(res), e);
    }
};

// A pool of distinct primes of 40..62 bits (distinct sizes -> distinct ranges -> no duplicates).
struct Pool {
    std::vector<std::vector<uint64_t>> by_size;  // index: bits - 40
    Pool() {
        for (int bits = 40; bits <= 62; ++bits) by_size.push_back(generate_ntt_primes(bits, 1 << 10, bits == 62 ? 40 : 6));
    }
    uint64_t get(int bits, size_t idx) const { return by_size[bits - 40].at(idx); }
};
const Pool& pool() {
    static const Pool p;
    return p;
}

// A base of k primes cycling through the given sizes, starting at index `offset` in each size
std::vector<uint64_t> make_base(size_t k, const std::vector<int>& sizes, size_t offset) {
    std::vector<uint64_t> v;
    std::vector<size_t> used(sizes.size(), 0);
    for (size_t i = 0; i < k; ++i) {
        const size_t s = i % sizes.size();
        v.push_back(pool().get(sizes[s], offset + used[s]++));
    }
    return v;
}

// random x in [0, Q): random words below the top word of Q
Big random_below(const Crt& c, std::mt19937_64& rng) {
    Big x(c.words, 0);
    size_t top = c.words;
    while (top > 0 && c.Q.w[top - 1] == 0) --top;
    for (size_t i = 0; i + 1 < top; ++i) x.w[i] = rng();
    x.w[top - 1] = rng() % c.Q.w[top - 1];
    return x;
}

// ---- RnsBase -------------------------------------------------------------------------------------

// Accessors and punctured inverses (Q/q_i)^{-1} mod q_i with Shoup companions
TEST(RnsBase, PuncturedInverses) {
    for (size_t k = 1; k <= 12; ++k) {
        const std::vector<uint64_t> primes = make_base(k, {40, 50, 61, 62, 45}, 0);
        const RnsBase base(primes);
        const Crt ref(primes);
        ASSERT_EQ(base.size(), k);
        ASSERT_EQ(base.values(), primes);
        for (size_t i = 0; i < k; ++i) {
            ASSERT_EQ(base[i], primes[i]);
            ASSERT_EQ(base.modulus(i).value, primes[i]);
            ASSERT_EQ(base.modulus(i).barrett.q, primes[i]);
            ASSERT_EQ(base.punctured_inv(i), ref.qhat_inv[i]) << "k=" << k << " i=" << i;
            ASSERT_EQ(mulm(base.punctured_inv(i), mod_word(ref.qhat[i], primes[i]), primes[i]), 1u);
            ASSERT_EQ(base.punctured_inv_shoup(i), uint64_t((u128(base.punctured_inv(i)) << 64) / primes[i]));
        }
    }
}

// Out-of-range moduli and repeated (or multiple-of) moduli raise ParameterError
TEST(RnsBase, Errors) {
    const uint64_t p = pool().get(50, 0), r = pool().get(60, 0);
    EXPECT_THROW(RnsBase({p, r, p}), oboro::ParameterError);           // repeated prime
    EXPECT_THROW(RnsBase({3, 9}), oboro::ParameterError);              // 9 is a multiple of 3
    EXPECT_THROW(RnsBase({p, (uint64_t(1) << 62) | 1}), oboro::ParameterError);  // 63-bit modulus
    EXPECT_THROW(RnsBase({p, ~uint64_t(0)}), oboro::ParameterError);
    EXPECT_THROW(RnsBase({p, 1}), oboro::ParameterError);
    EXPECT_THROW(RnsBase({0}), oboro::ParameterError);
    EXPECT_NO_THROW(RnsBase({pool().get(62, 0)}));
    EXPECT_NO_THROW(RnsBase({3, 5, 7}));
}

// ---- BaseConverter -------------------------------------------------------------------------------

// Converts a batch of values and checks every output residue against the exact definition
//   r_j = S mod t_j,  S = sum_i [x_i (Q/q_i)^{-1}]_{q_i} (Q/q_i) = x + e*Q,  0 <= e < k
// and (equivalently, as the documented contract) r_j == (x + e*Q) mod t_j with ONE e for all j.
void check_conversion(const std::vector<uint64_t>& from_primes, const std::vector<uint64_t>& to_primes,
                      uint64_t seed) {
    SCOPED_TRACE(::testing::Message() << "k=" << from_primes.size() << " m=" << to_primes.size()
                                      << " q0=" << from_primes[0] << " t0=" << to_primes[0]);
    const RnsBase from(from_primes), to(to_primes);
    const BaseConverter conv(from, to);
    ASSERT_EQ(conv.from().values(), from_primes);
    ASSERT_EQ(conv.to().values(), to_primes);
    const Crt c(from_primes);
    const size_t k = from_primes.size(), m = to_primes.size();
    std::mt19937_64 rng(seed);

    // test values, as residue vectors
    std::vector<std::vector<uint64_t>> inputs;
    Big qm1 = c.Q;
    sub_word(qm1, 1);                        // Q - 1
    const Big half = centred_limit(c.Q);     // (Q - 1) / 2
    Big half_up = half;
    add(half_up, Big(c.words, 1));           // (Q + 1) / 2
    Big qm2 = qm1;
    sub_word(qm2, 1);
    for (const Big& x : {Big(c.words, 0), Big(c.words, 1), Big(c.words, 2), qm1, qm2, half, half_up})
        inputs.push_back(c.residues(x));
    for (int i = 0; i < 40; ++i) inputs.push_back(c.residues(random_below(c, rng)));  // random big x
    for (int i = 0; i < 40; ++i) {                                                   // random residues
        std::vector<uint64_t> r;
        for (uint64_t p : from_primes) r.push_back(rng() % p);
        inputs.push_back(r);
    }
    {  // worst case for the accumulator: every y_i = q_i - 1, i.e. x_i = -(Q/q_i) mod q_i -> e = k-1
        std::vector<uint64_t> r;
        for (size_t i = 0; i < k; ++i) r.push_back((from_primes[i] - mod_word(c.qhat[i], from_primes[i])) % from_primes[i]);
        inputs.push_back(r);
    }
    const size_t n = inputs.size();

    // strided input and output layout (padding must not be read or written)
    const size_t in_stride = n + 3, out_stride = n + 5;
    const uint64_t sentinel = 0xDEADBEEFCAFEF00Dull;
    std::vector<uint64_t> in(k * in_stride, sentinel), out(m * out_stride, sentinel), scratch(k * n, 0);
    for (size_t cidx = 0; cidx < n; ++cidx)
        for (size_t i = 0; i < k; ++i) in[i * in_stride + cidx] = inputs[cidx][i];
    conv.convert(in.data(), in_stride, out.data(), out_stride, n, scratch.data());

    int max_e = 0;
    for (size_t cidx = 0; cidx < n; ++cidx) {
        const Big s = c.fast_sum(inputs[cidx]);
        int e = 0;
        const Big x = c.reduce(s, e);
        ASSERT_GE(e, 0);
        ASSERT_LT(e, int(k)) << "coefficient " << cidx;  // sanity of the reference: 0 <= e < k
        ASSERT_EQ(c.residues(x), inputs[cidx]);           // and x really has these residues
        max_e = std::max(max_e, e);
        for (size_t j = 0; j < m; ++j) {
            const uint64_t t = to_primes[j];
            const uint64_t got = out[j * out_stride + cidx];
            ASSERT_LT(got, t) << "not canonical, coefficient " << cidx << " j=" << j;
            ASSERT_EQ(got, mod_word(s, t)) << "coefficient " << cidx << " j=" << j;
            // contract form: x + e*Q mod t_j with the common e
            const uint64_t want = (mod_word(x, t) + mulm(uint64_t(e), mod_word(c.Q, t), t)) % t;
            ASSERT_EQ(got, want) << "coefficient " << cidx << " j=" << j << " e=" << e;
        }
    }
    if (k > 1) {
        EXPECT_EQ(max_e, int(k) - 1);  // the worst-case input reaches the largest e
    }
    for (size_t j = 0; j < m; ++j)
        for (size_t cidx = n; cidx < out_stride; ++cidx) ASSERT_EQ(out[j * out_stride + cidx], sentinel) << "padding written";
}

// Bases of 1..12 primes of 40..61 bits into small target bases
TEST(BaseConverter, MatchesExactReference) {
    const std::vector<int> sizes = {40, 61, 50, 55, 45, 60, 58, 42};
    for (size_t k = 1; k <= 12; ++k) {
        for (size_t m : {size_t(1), size_t(3)}) {
            const std::vector<uint64_t> from = make_base(k, sizes, 0);
            const std::vector<uint64_t> to = make_base(m, {61, 60, 51}, 4);  // disjoint from `from`
            check_conversion(from, to, 1000 * k + m);
        }
    }
}

// Largest moduli (62 bits) on both sides, and bases large enough (k >= 16) to exercise the
// intermediate reduction of the 128-bit accumulator
TEST(BaseConverter, LargestModuliAndLongBases) {
    for (size_t k : {size_t(1), size_t(2), size_t(15), size_t(16), size_t(17), size_t(31), size_t(32), size_t(33)}) {
        std::vector<uint64_t> from, to;
        for (size_t i = 0; i < k; ++i) from.push_back(pool().get(62, i));
        for (size_t j = 0; j < 3; ++j) to.push_back(pool().get(62, 36 + j));
        check_conversion(from, to, 77 + k);
    }
}

// Converting into a base that contains a source prime q_i reproduces x_i exactly, whatever e is:
// x + e*Q == x (mod q_i) because q_i divides Q
TEST(BaseConverter, TargetContainingSourcePrimeReproducesResidue) {
    const std::vector<uint64_t> from = make_base(5, {50, 60}, 0);
    const std::vector<uint64_t> to = {from[2], from[4], pool().get(61, 0)};
    const RnsBase f(from), t(to);
    const BaseConverter conv(f, t);
    std::mt19937_64 rng(9);
    const size_t n = 64;
    std::vector<uint64_t> in(5 * n), out(3 * n), scratch(5 * n);
    for (size_t i = 0; i < 5; ++i)
        for (size_t c = 0; c < n; ++c) in[i * n + c] = rng() % from[i];
    conv.convert(in.data(), n, out.data(), n, n, scratch.data());
    for (size_t c = 0; c < n; ++c) {
        EXPECT_EQ(out[0 * n + c], in[2 * n + c]);
        EXPECT_EQ(out[1 * n + c], in[4 * n + c]);
    }
}

// ---- CrtReconstructor ----------------------------------------------------------------------------

// residues of a signed integer v (|v| < Q/2)
std::vector<uint64_t> signed_residues(const std::vector<uint64_t>& primes, int64_t v) {
    std::vector<uint64_t> r;
    for (uint64_t p : primes) {
        const uint64_t mag = v < 0 ? uint64_t(0) - uint64_t(v) : uint64_t(v);  // |v|, also for INT64_MIN
        const uint64_t m = mag % p;
        r.push_back(v < 0 ? (p - m) % p : m);
    }
    return r;
}

// Small and int64-sized signed integers embedded into residues come back exactly, for bases of
// 1..12 primes (the centring happens before any rounding)
TEST(CrtReconstructor, SmallSignedValuesExact) {
    std::mt19937_64 rng(11);
    for (size_t k = 1; k <= 12; ++k) {
        const std::vector<uint64_t> primes = make_base(k, {40, 61, 50, 62, 55}, 1);
        const RnsBase base(primes);
        const CrtReconstructor crt(base);
        const Crt c(primes);
        SCOPED_TRACE(::testing::Message() << "k=" << k);
        // Largest |v| that is still centred: (Q-1)/2, capped to int64
        const Big half = centred_limit(c.Q);
        bool half_fits = true;
        for (size_t i = 1; i < half.w.size(); ++i) half_fits = half_fits && half.w[i] == 0;
        const uint64_t vmax = half_fits ? std::min<uint64_t>(half.w[0], INT64_MAX) : INT64_MAX;
        std::vector<int64_t> vs = {0, 1, -1, 2, -2, 12345, -12345, int64_t(1) << 40, -(int64_t(1) << 40),
                                   int64_t(vmax), -int64_t(vmax), int64_t(vmax) - 1, -int64_t(vmax) + 1};
        if (!half_fits) vs.push_back(INT64_MIN);  // |INT64_MIN| = 2^63 < Q/2 for k >= 2
        for (int i = 0; i < 50; ++i) {
            const int64_t v = int64_t(rng() % (vmax + 1));
            vs.push_back(rng() & 1 ? v : -v);
            vs.push_back(int64_t(rng() % 100000) - 50000);
        }
        for (int64_t v : vs) {
            const uint64_t mag = v < 0 ? uint64_t(0) - uint64_t(v) : uint64_t(v);
            if (mag > vmax && !(v == INT64_MIN && !half_fits)) continue;  // not centred for this Q
            const std::vector<uint64_t> r = signed_residues(primes, v);
            ASSERT_EQ(crt.to_long_double(r.data()), (long double)v) << "v=" << v;
        }
    }
}

// The centring boundary: (Q-1)/2 is positive, (Q+1)/2 is -(Q-1)/2, Q-1 is -1, 0 is 0; the
// magnitudes are the exact long double of (Q-1)/2 (relative 1e-15 against an independent sum)
TEST(CrtReconstructor, CentringBoundary) {
    for (size_t k = 1; k <= 12; ++k) {
        const std::vector<uint64_t> primes = make_base(k, {61, 40, 62, 50}, 2);
        const RnsBase base(primes);
        const CrtReconstructor crt(base);
        const Crt c(primes);
        SCOPED_TRACE(::testing::Message() << "k=" << k);
        Big qm1 = c.Q;
        sub_word(qm1, 1);
        const Big half = centred_limit(c.Q);
        Big half_up = half;
        add(half_up, Big(c.words, 1));
        const long double h = to_ld(half);
        const long double pos = crt.to_long_double(c.residues(half).data());
        const long double neg = crt.to_long_double(c.residues(half_up).data());
        EXPECT_GT(pos, 0.0L);
        EXPECT_LT(neg, 0.0L);
        EXPECT_EQ(neg, -pos);  // |(Q+1)/2 - Q| == (Q-1)/2, the very same integer
        EXPECT_LE(std::fabs(pos - h), 1e-15L * h);
        EXPECT_EQ(crt.to_long_double(c.residues(qm1).data()), -1.0L);
        EXPECT_EQ(crt.to_long_double(c.residues(Big(c.words, 0)).data()), 0.0L);
        EXPECT_EQ(crt.to_long_double(c.residues(Big(c.words, 1)).data()), 1.0L);
        // one below the boundary, and (Q-1)/2 - 5 / (Q+1)/2 + 5: the neighbours stay on their side
        Big below = half;
        sub_word(below, 5);
        Big above = half_up;
        add(above, Big(c.words, 5));
        const long double b = crt.to_long_double(c.residues(below).data());
        const long double a = crt.to_long_double(c.residues(above).data());
        EXPECT_GT(b, 0.0L);
        EXPECT_LT(a, 0.0L);
        EXPECT_LE(std::fabs(b - to_ld(below)), 1e-15L * h);
        Big q_minus_above = c.Q;
        sub(q_minus_above, above);
        EXPECT_LE(std::fabs(a + to_ld(q_minus_above)), 1e-15L * h);
    }
}

// Random x in [0, Q): the result is x or x - Q (centred), to relative 1e-15
TEST(CrtReconstructor, RandomValuesRelativeAccuracy) {
    std::mt19937_64 rng(12);
    for (size_t k = 1; k <= 12; ++k) {
        const std::vector<uint64_t> primes = make_base(k, {45, 60, 61, 52}, 0);
        const RnsBase base(primes);
        const CrtReconstructor crt(base);
        const Crt c(primes);
        SCOPED_TRACE(::testing::Message() << "k=" << k);
        const Big half = centred_limit(c.Q);
        for (int i = 0; i < 400; ++i) {
            Big x = random_below(c, rng);
            // also shrink some values to cover all magnitudes, positive and negative
            if (i % 4 == 1) {
                for (size_t w = c.words / 2; w < c.words; ++w) x.w[w] = 0;
            } else if (i % 4 == 2) {
                Big y = c.Q;
                for (size_t w = c.words / 2; w < c.words; ++w) x.w[w] = 0;
                sub(y, x);
                x = y;  // Q - small: a negative value of moderate size
            }
            long double want;
            if (cmp(x, half) <= 0) {
                want = to_ld(x);
            } else {
                Big m = c.Q;
                sub(m, x);
                want = -to_ld(m);
            }
            const long double got = crt.to_long_double(c.residues(x).data());
            ASSERT_LE(std::fabs(got - want), 1e-15L * std::fabs(want)) << "i=" << i;
            if (want != 0) {
                ASSERT_EQ(std::signbit(got), std::signbit(want));
            }
        }
    }
}

// Large exactly representable values v * 2^s (|v| < 2^63) reconstruct exactly even when Q is
// hundreds of bits
TEST(CrtReconstructor, ScaledPowersOfTwoExact) {
    std::mt19937_64 rng(13);
    const std::vector<uint64_t> primes = make_base(12, {60, 61, 62}, 2);  // ~730-bit Q
    const RnsBase base(primes);
    const CrtReconstructor crt(base);
    for (int s : {0, 1, 63, 64, 65, 128, 300, 500, 600, 660}) {
        for (int i = 0; i < 10; ++i) {
            const int64_t v = int64_t(rng() >> 1) * (rng() & 1 ? 1 : -1);
            std::vector<uint64_t> r = signed_residues(primes, v);
            for (size_t j = 0; j < primes.size(); ++j) r[j] = mulm(r[j], powm(2, uint64_t(s), primes[j]), primes[j]);
            ASSERT_EQ(crt.to_long_double(r.data()), std::ldexp((long double)v, s)) << "v=" << v << " s=" << s;
        }
    }
}

// to_double: strided limbs, n coefficients, with multipliers (1, 2^-40, 0.1, -3.5, 0); equals the
// long double value times the multiplier, rounded to double
TEST(CrtReconstructor, ToDoubleWithMultiplier) {
    std::mt19937_64 rng(14);
    for (size_t k : {size_t(1), size_t(3), size_t(8)}) {
        const std::vector<uint64_t> primes = make_base(k, {50, 61, 40}, 0);
        const RnsBase base(primes);
        const CrtReconstructor crt(base);
        const Crt c(primes);
        SCOPED_TRACE(::testing::Message() << "k=" << k);
        const size_t n = 40, stride = n + 7;
        std::vector<uint64_t> limbs(k * stride, 0);
        std::vector<long double> exact(n);
        for (size_t cidx = 0; cidx < n; ++cidx) {
            std::vector<uint64_t> r;
            if (cidx < n / 2) {  // small signed integers
                const int64_t v = int64_t(rng() % 2000001) - 1000000;
                r = signed_residues(primes, v);
                exact[cidx] = (long double)v;
            } else {  // arbitrary residues
                for (uint64_t p : primes) r.push_back(rng() % p);
                exact[cidx] = crt.to_long_double(r.data());
            }
            for (size_t i = 0; i < k; ++i) limbs[i * stride + cidx] = r[i];
        }
        for (double mult : {1.0, std::ldexp(1.0, -40), 0.1, -3.5, 0.0}) {
            std::vector<double> out(n + 1, 12345.0);
            crt.to_double(limbs.data(), stride, n, mult, out.data());
            for (size_t cidx = 0; cidx < n; ++cidx) {
                const double want = double(exact[cidx] * (long double)mult);
                ASSERT_EQ(out[cidx], want) << "coefficient " << cidx << " multiplier " << mult;
                if (cidx < n / 2 && mult != 0.1) {  // exact binary multipliers keep small integers exact
                    ASSERT_EQ(out[cidx], double(exact[cidx]) * mult);
                }
            }
            ASSERT_EQ(out[n], 12345.0);  // no write past n
        }
    }
}

// to_double takes shortcuts for values below 2^127 (crt.hpp). Around every boundary they could get
// wrong (|x| = 2^127 - 1, 2^127, 2^127 + 1, (q-1)/2 and (q+1)/2 for the widest prime q, the
// centring boundary (Q-1)/2 of a Q below 2^128,
// random values of 1..160 bits, both signs), its result is the exact path's, to the bit.
TEST(CrtReconstructor, ToDoubleShortcutMatchesExactPath) {
    std::mt19937_64 rng(16);
    for (size_t k : {size_t(1), size_t(2), size_t(3), size_t(5), size_t(12)}) {
        const std::vector<uint64_t> primes = make_base(k, {61, 50, 62, 40}, 3);
        const RnsBase base(primes);
        const CrtReconstructor crt(base);
        const Crt c(primes);
        SCOPED_TRACE(::testing::Message() << "k=" << k);
        const Big half = centred_limit(c.Q);
        std::vector<Big> magnitudes;
        auto power_of_two_plus = [&](int bits, int64_t delta) {
            Big x(c.words, 0);
            if (size_t(bits / 64) >= c.words) return;
            x.w[size_t(bits / 64)] = uint64_t(1) << (bits % 64);
            if (delta < 0) sub_word(x, uint64_t(-delta));
            if (delta > 0) add(x, Big(c.words, uint64_t(delta)));
            magnitudes.push_back(x);
        };
        for (int64_t d : {-1, 0, 1}) power_of_two_plus(127, d);
        power_of_two_plus(126, 0);
        power_of_two_plus(64, -1);
        const uint64_t widest = *std::max_element(primes.begin(), primes.end());
        for (uint64_t d : {0, 1}) magnitudes.push_back(Big(c.words, widest / 2 + d));  // the one-prime candidate's edge
        magnitudes.push_back(half);
        Big below_half = half;
        sub_word(below_half, 1);
        magnitudes.push_back(below_half);
        for (int bits = 1; bits <= 160; bits += 7) {
            Big x(c.words, 0);
            for (int b = 0; b < bits && size_t(b / 64) < c.words; b += 64)
                x.w[size_t(b / 64)] = rng() >> (bits - b < 64 ? 64 - (bits - b) : 0);
            magnitudes.push_back(x);
        }
        std::vector<uint64_t> limbs;
        std::vector<long double> exact;
        for (const Big& m : magnitudes) {
            if (cmp(m, half) > 0) continue;  // not a centred magnitude for this Q
            for (bool negative : {false, true}) {
                Big x = m;
                if (negative && cmp(m, Big(c.words, 0)) != 0) {
                    x = c.Q;
                    sub(x, m);
                }
                const std::vector<uint64_t> r = c.residues(x);
                limbs.insert(limbs.end(), r.begin(), r.end());
                exact.push_back(crt.to_long_double(r.data()));
            }
        }
        const size_t n = exact.size();
        std::vector<uint64_t> by_limb(k * n);  // to_double reads limb i of coefficient c at i * n + c
        for (size_t cidx = 0; cidx < n; ++cidx)
            for (size_t i = 0; i < k; ++i) by_limb[i * n + cidx] = limbs[cidx * k + i];
        for (double mult : {1.0, std::ldexp(1.0, -40), 0.1}) {
            std::vector<double> out(n);
            crt.to_double(by_limb.data(), n, n, mult, out.data());
            for (size_t cidx = 0; cidx < n; ++cidx)
                ASSERT_EQ(out[cidx], double(exact[cidx] * (long double)mult)) << "value " << cidx << " times " << mult;
        }
    }
}

// CRT and fast base conversion agree: converting to a base and reconstructing both views gives
// x + e*Q for e in [0, k)
TEST(CrtReconstructor, ConsistentWithBaseConversion) {
    std::mt19937_64 rng(15);
    const std::vector<uint64_t> from = make_base(2, {40, 41}, 0);   // Q ~ 2^81
    const std::vector<uint64_t> to = make_base(3, {60, 61, 62}, 5);      // T ~ 2^183 >> k*Q
    const RnsBase f(from), t(to);
    const BaseConverter conv(f, t);
    const CrtReconstructor crt_from(f), crt_to(t);
    const Crt cf(from);
    const long double Q = to_ld(cf.Q);
    for (int i = 0; i < 200; ++i) {
        uint64_t in[2] = {rng() % from[0], rng() % from[1]}, out[3], scratch[2];
        conv.convert(in, 1, out, 1, 1, scratch);
        const long double x = crt_from.to_long_double(in);  // centred x
        const long double y = crt_to.to_long_double(out);   // x_positive + e*Q, small next to T
        const long double x_pos = x < 0 ? x + Q : x;
        const long double e = std::round((y - x_pos) / Q);
        ASSERT_TRUE(e == 0.0L || e == 1.0L) << "e=" << e;
        ASSERT_LE(std::fabs(y - (x_pos + e * Q)), 1e-15L * Q);
    }
}

}  // namespace
