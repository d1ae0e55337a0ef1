// Tests for src/oboro/math/ntt.hpp: the negacyclic NTT over Z_q[X]/(X^n + 1).
//
// References are computed independently with unsigned __int128 arithmetic: schoolbook negacyclic
// products, direct polynomial evaluation at psi^(2*bitrev(i)+1), and negacyclic shifts.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "oboro/math/modarith.hpp"
#include "oboro/math/ntt.hpp"
#include "oboro/math/primes.hpp"
#include "oboro/util/error.hpp"

namespace {

using namespace oboro::math;
using u128 = unsigned __int128;
using Poly = std::vector<uint64_t>;

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

Poly random_poly(std::mt19937_64& rng, uint32_t n, uint64_t bound) {
    Poly a(n);
    for (auto& x : a) x = rng() % bound;
    return a;
}

// schoolbook product in Z_q[X]/(X^n + 1)
Poly negacyclic_mul(const Poly& a, const Poly& b, uint64_t q) {
    const size_t n = a.size();
    std::vector<u128> pos(n, 0), neg(n, 0);  // accumulate, reduce occasionally
    Poly out(n, 0);
    for (size_t i = 0; i < n; ++i) {
        for (size_t j = 0; j < n; ++j) {
            const uint64_t p = mulm(a[i], b[j], q);
            const size_t k = i + j;
            if (k < n) pos[k] += p;
            else neg[k - n] += p;
        }
    }
    for (size_t k = 0; k < n; ++k) {
        const uint64_t p = uint64_t(pos[k] % q), m = uint64_t(neg[k] % q);
        out[k] = (p + q - m) % q;
    }
    return out;
}

// a(x) mod q by Horner
uint64_t eval(const Poly& a, uint64_t x, uint64_t q) {
    uint64_t r = 0;
    for (size_t i = a.size(); i-- > 0;) r = uint64_t((u128(r) * x + a[i]) % q);
    return r;
}

// the largest NTT prime of the given size for degree n
uint64_t prime(int bits, uint32_t n) { return generate_ntt_primes(bits, n, 1)[0]; }

struct Case {
    uint32_t n;
    int bits;
};

std::vector<Case> all_cases() {
    std::vector<Case> v;
    for (uint32_t n : {2u, 4u, 16u, 1024u, 8192u})
        for (int bits : {30, 40, 50, 60, 61, 62}) v.push_back({n, bits});
    return v;
}

// ---- tables --------------------------------------------------------------------------------------

// Tables: psi is a primitive 2n-th root; psi_rev / psi_inv_rev hold psi^(+-bitrev(i)); Shoup
// companions and n^{-1} are right
TEST(NttTables, Contents) {
    for (Case c : all_cases()) {
        const uint64_t q = prime(c.bits, c.n);
        SCOPED_TRACE(::testing::Message() << "n=" << c.n << " q=" << q);
        const NttTables t(q, c.n);
        ASSERT_EQ(t.q, q);
        ASSERT_EQ(t.n, c.n);
        ASSERT_EQ(uint32_t(1) << t.log_n, c.n);
        ASSERT_EQ(powm(t.psi, c.n, q), q - 1);  // order exactly 2n (n a power of two)
        ASSERT_EQ(t.psi_rev.size(), c.n);
        ASSERT_EQ(t.psi_inv_rev.size(), c.n);
        const uint64_t psi_inv = powm(t.psi, 2 * c.n - 1, q);
        uint64_t pw = 1, pw_inv = 1;
        for (uint32_t i = 0; i < c.n; ++i) {
            const uint32_t r = bit_reverse(i, t.log_n);
            ASSERT_EQ(t.psi_rev[r], pw) << "i=" << i;
            ASSERT_EQ(t.psi_inv_rev[r], pw_inv) << "i=" << i;
            ASSERT_EQ(t.psi_rev_shoup[r], uint64_t((u128(pw) << 64) / q)) << "i=" << i;
            ASSERT_EQ(t.psi_inv_rev_shoup[r], uint64_t((u128(pw_inv) << 64) / q)) << "i=" << i;
            pw = mulm(pw, t.psi, q);
            pw_inv = mulm(pw_inv, psi_inv, q);
        }
        ASSERT_EQ(mulm(t.n_inv, c.n, q), 1u);
        ASSERT_EQ(t.n_inv_shoup, uint64_t((u128(t.n_inv) << 64) / q));
        ASSERT_EQ(t.last_inv, mulm(t.n_inv, t.psi_inv_rev[1], q));
        ASSERT_EQ(t.last_inv_shoup, uint64_t((u128(t.last_inv) << 64) / q));
    }
}

// bit_reverse is an involution reversing the low `bits` bits
TEST(NttTables, BitReverse) {
    EXPECT_EQ(bit_reverse(0, 0), 0u);
    EXPECT_EQ(bit_reverse(1, 1), 1u);
    EXPECT_EQ(bit_reverse(1, 3), 4u);
    EXPECT_EQ(bit_reverse(6, 3), 3u);
    EXPECT_EQ(bit_reverse(1, 13), 4096u);
    EXPECT_EQ(bit_reverse(0x1234, 16), 0x2C48u);
    for (int bits = 1; bits <= 14; ++bits)
        for (uint32_t x = 0; x < (1u << bits); x += 1 + (x >> 3))
            ASSERT_EQ(bit_reverse(bit_reverse(x, bits), bits), x);
    // against the bit-by-bit definition, up to 32 bits
    std::mt19937 rng(5);
    for (int bits = 1; bits <= 32; ++bits)
        for (int k = 0; k < 200; ++k) {
            const uint32_t x = bits == 32 ? uint32_t(rng()) : uint32_t(rng()) & ((1u << bits) - 1);
            uint32_t want = 0;
            for (int i = 0; i < bits; ++i) want |= ((x >> i) & 1u) << (bits - 1 - i);
            ASSERT_EQ(bit_reverse(x, bits), want) << x << " " << bits;
        }
}

// Degree not a power of two >= 2, a modulus above 62 bits, or q != 1 mod 2n: ParameterError
TEST(NttTables, Errors) {
    const uint64_t q = prime(50, 1024);
    for (uint32_t n : {0u, 1u, 3u, 6u, 12u, 1000u, 1025u, 3072u})
        EXPECT_THROW(NttTables(q, n), oboro::ParameterError) << "n=" << n;
    EXPECT_THROW(NttTables((uint64_t(1) << 62) | 1, 4), oboro::ParameterError);
    EXPECT_THROW(NttTables(~uint64_t(0), 4), oboro::ParameterError);
    EXPECT_THROW(NttTables(12289, 4096), oboro::ParameterError);  // 12289 != 1 mod 8192
    EXPECT_NO_THROW(NttTables(12289, 2048));
}

// ---- transforms ----------------------------------------------------------------------------------

// forward then inverse is the identity; both outputs are canonical; inputs at the edges
TEST(Ntt, RoundTripIsIdentity) {
    std::mt19937_64 rng(1);
    for (Case c : all_cases()) {
        const uint64_t q = prime(c.bits, c.n);
        SCOPED_TRACE(::testing::Message() << "n=" << c.n << " q=" << q);
        const NttTables t(q, c.n);
        std::vector<Poly> inputs = {random_poly(rng, c.n, q), Poly(c.n, 0), Poly(c.n, q - 1), Poly(c.n, 1)};
        for (const Poly& a : inputs) {
            Poly b = a;
            ntt_forward(b.data(), t);
            for (uint64_t x : b) ASSERT_LT(x, q);
            ntt_inverse(b.data(), t);
            for (uint64_t x : b) ASSERT_LT(x, q);
            ASSERT_EQ(b, a);
        }
        // inverse then forward is the identity as well
        Poly a = random_poly(rng, c.n, q), b = a;
        ntt_inverse(b.data(), t);
        ntt_forward(b.data(), t);
        ASSERT_EQ(b, a);
    }
}

// ntt_forward accepts lazy inputs up to 4q - 1 (as documented) and gives the same canonical
// output as for the reduced input; ntt_forward_lazy's output is < 4q and congruent
TEST(Ntt, ForwardAcceptsLazyInputUpTo4q) {
    std::mt19937_64 rng(2);
    for (Case c : all_cases()) {
        const uint64_t q = prime(c.bits, c.n);
        SCOPED_TRACE(::testing::Message() << "n=" << c.n << " q=" << q);
        const NttTables t(q, c.n);
        for (int variant = 0; variant < 3; ++variant) {
            Poly lazy(c.n);
            for (auto& x : lazy) {
                if (variant == 0) x = 4 * q - 1;                     // every input at the bound
                else if (variant == 1) x = rng() % (4 * q);         // anywhere in [0, 4q)
                else x = 3 * q + rng() % q;                         // all in the top quarter
            }
            Poly reduced(c.n);
            for (uint32_t i = 0; i < c.n; ++i) reduced[i] = lazy[i] % q;
            Poly a = lazy, b = reduced, l = lazy;
            ntt_forward(a.data(), t);
            ntt_forward(b.data(), t);
            ntt_forward_lazy(l.data(), t);
            for (uint32_t i = 0; i < c.n; ++i) {
                ASSERT_LT(a[i], q) << "i=" << i;
                ASSERT_EQ(a[i], b[i]) << "i=" << i;
                ASSERT_LT(l[i], 4 * q) << "i=" << i;
                ASSERT_EQ(l[i] % q, b[i]) << "i=" << i;
            }
            // the lazy output ([0, 4q)) reduced to [0, 2q) is valid inverse input: back to the start
            for (auto& x : l) x = x >= 2 * q ? x - 2 * q : x;
            ntt_inverse(l.data(), t);
            ASSERT_EQ(l, reduced);
        }
    }
}

// ntt_inverse accepts inputs in [0, 2q) (e.g. x + q) and gives the same canonical output
TEST(Ntt, InverseAcceptsInputUpTo2q) {
    std::mt19937_64 rng(3);
    for (Case c : all_cases()) {
        const uint64_t q = prime(c.bits, c.n);
        SCOPED_TRACE(::testing::Message() << "n=" << c.n << " q=" << q);
        const NttTables t(q, c.n);
        Poly a = random_poly(rng, c.n, q), lazy = a, top(c.n, 2 * q - 1), top_red(c.n, q - 1);
        for (auto& x : lazy)
            if (rng() & 1) x += q;
        ntt_inverse(a.data(), t);
        ntt_inverse(lazy.data(), t);
        ntt_inverse(top.data(), t);
        ntt_inverse(top_red.data(), t);
        ASSERT_EQ(lazy, a);
        ASSERT_EQ(top, top_red);
        for (uint64_t x : top) ASSERT_LT(x, q);
    }
}

// Pointwise product in the NTT domain == schoolbook negacyclic product (n <= 1024)
TEST(Ntt, PointwiseProductIsNegacyclicConvolution) {
    std::mt19937_64 rng(4);
    for (Case c : all_cases()) {
        if (c.n > 1024) continue;
        const uint64_t q = prime(c.bits, c.n);
        SCOPED_TRACE(::testing::Message() << "n=" << c.n << " q=" << q);
        const NttTables t(q, c.n);
        const Poly a = random_poly(rng, c.n, q), b = random_poly(rng, c.n, q);
        const Poly want = negacyclic_mul(a, b, q);
        Poly fa = a, fb = b;
        ntt_forward(fa.data(), t);
        ntt_forward(fb.data(), t);
        for (uint32_t i = 0; i < c.n; ++i) fa[i] = mulm(fa[i], fb[i], q);
        ntt_inverse(fa.data(), t);
        ASSERT_EQ(fa, want);
    }
}

// For all n: multiplying by X^k (a negacyclic shift) and by a sparse polynomial in the NTT domain
// matches the direct computation; also checks linearity
TEST(Ntt, ShiftAndSparseProductAllSizes) {
    std::mt19937_64 rng(5);
    for (Case c : all_cases()) {
        const uint64_t q = prime(c.bits, c.n);
        SCOPED_TRACE(::testing::Message() << "n=" << c.n << " q=" << q);
        const NttTables t(q, c.n);
        const uint32_t n = c.n;
        const Poly a = random_poly(rng, n, q);
        // sparse s = 3 X^k1 - X^k2 (+ 5 if distinct): the product is a sum of signed shifts
        const uint32_t k1 = uint32_t(rng() % n), k2 = uint32_t(rng() % n);
        Poly s(n, 0);
        s[k1] = 3 % q;
        s[k2] = (s[k2] + q - 1) % q;
        s[0] = (s[0] + 5) % q;
        Poly want(n, 0);
        for (uint32_t j = 0; j < n; ++j) {
            if (s[j] == 0) continue;
            for (uint32_t i = 0; i < n; ++i) {
                const uint64_t p = mulm(a[i], s[j], q);
                const uint32_t k = i + j;
                if (k < n) want[k] = (want[k] + p) % q;
                else want[k - n] = (want[k - n] + q - p) % q;
            }
        }
        Poly fa = a, fs = s;
        ntt_forward(fa.data(), t);
        ntt_forward(fs.data(), t);
        for (uint32_t i = 0; i < n; ++i) fa[i] = mulm(fa[i], fs[i], q);
        ntt_inverse(fa.data(), t);
        ASSERT_EQ(fa, want);
        // X^n == -1: X^(n-1) * X == -1
        if (n >= 2) {
            Poly x1(n, 0), xn1(n, 0);
            x1[1] = 1;
            xn1[n - 1] = 1;
            ntt_forward(x1.data(), t);
            ntt_forward(xn1.data(), t);
            for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(mulm(x1[i], xn1[i], q), q - 1) << "i=" << i;
        }
        // linearity: NTT(a + b) == NTT(a) + NTT(b)
        const Poly b = random_poly(rng, n, q);
        Poly sum(n), fa2 = a, fb = b;
        for (uint32_t i = 0; i < n; ++i) sum[i] = (a[i] + b[i]) % q;
        ntt_forward(sum.data(), t);
        ntt_forward(fa2.data(), t);
        ntt_forward(fb.data(), t);
        for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(sum[i], (fa2[i] + fb[i]) % q) << "i=" << i;
    }
}

// Evaluation order: after ntt_forward, slot i holds a(psi^(2*bitrev(i)+1)).
// Full random polynomials for n <= 1024; for every n (8192 included), the monomial X (whose
// transform is the evaluation points themselves) and the constant 1.
TEST(Ntt, EvaluationOrder) {
    std::mt19937_64 rng(6);
    for (Case c : all_cases()) {
        const uint64_t q = prime(c.bits, c.n);
        SCOPED_TRACE(::testing::Message() << "n=" << c.n << " q=" << q);
        const NttTables t(q, c.n);
        const uint32_t n = c.n;
        std::vector<uint64_t> point(n);
        for (uint32_t i = 0; i < n; ++i) point[i] = pow_mod<uint64_t>(t.psi, 2 * uint64_t(bit_reverse(i, t.log_n)) + 1, q);
        // monomial X
        Poly x(n, 0);
        x[1 % n] = 1;
        ntt_forward(x.data(), t);
        for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(x[i], point[i]) << "slot " << i;
        // constant 7
        Poly k(n, 0);
        k[0] = 7;
        ntt_forward(k.data(), t);
        for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(k[i], 7u) << "slot " << i;
        // full random polynomial
        const bool full = n <= 1024;
        if (!full) continue;
        const Poly a = random_poly(rng, n, q);
        Poly fa = a;
        ntt_forward(fa.data(), t);
        for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(fa[i], eval(a, point[i], q)) << "slot " << i;
    }
}

// NttTables(full, d): a polynomial in X^(n/d) has the full transform's words in runs of n/d equal
// words, and the size-d transform of its d coefficients gives one word per run (and inverts back).
TEST(NttTables, PrefixTransformGivesTheRuns) {
    std::mt19937_64 rng(8);
    for (uint32_t n : {16u, 1024u, 8192u}) {
        const uint64_t q = prime(60, n);
        const NttTables full(q, n);
        for (uint32_t d = 2; d <= n; d *= 2) {
            SCOPED_TRACE(::testing::Message() << "n=" << n << " d=" << d);
            const NttTables small(full, d);
            EXPECT_EQ(small.n, d);
            EXPECT_EQ(pow_mod<uint64_t>(small.psi, d, q), q - 1);  // a primitive 2d-th root
            EXPECT_EQ(small.psi, pow_mod<uint64_t>(full.psi, n / d, q));
            const Poly a = random_poly(rng, d, q);
            Poly spread(n, 0);
            for (uint32_t k = 0; k < d; ++k) spread[size_t(k) * (n / d)] = a[k];
            ntt_forward(spread.data(), full);
            Poly runs = a;
            ntt_forward(runs.data(), small);
            for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(spread[i], runs[i / (n / d)]) << "word " << i;
            ntt_inverse(runs.data(), small);
            EXPECT_EQ(runs, a);
        }
        EXPECT_THROW(NttTables(full, 1), oboro::ParameterError);
        EXPECT_THROW(NttTables(full, 2 * n), oboro::ParameterError);
        EXPECT_THROW(NttTables(full, 3), oboro::ParameterError);
    }
}

// Small hand-checked case: n = 2, q = 17 (psi = smallest primitive 4th root = 4):
// a = 3 + 5X -> slots a(4) = 23 = 6, a(4^3 = 13) = 68 = 0
TEST(Ntt, HandCheckedN2) {
    const NttTables t(17, 2);
    ASSERT_EQ(t.psi, 4u);
    uint64_t a[2] = {3, 5};
    ntt_forward(a, t);
    EXPECT_EQ(a[0], 6u);
    EXPECT_EQ(a[1], 0u);
    ntt_inverse(a, t);
    EXPECT_EQ(a[0], 3u);
    EXPECT_EQ(a[1], 5u);
}

// Small moduli (q far below 2^30) work too: the lazy bounds do not depend on q being large
TEST(Ntt, SmallModuli) {
    std::mt19937_64 rng(7);
    for (auto [q, n] : {std::pair<uint64_t, uint32_t>{17, 8}, {97, 16}, {257, 128}, {7681, 256}, {12289, 2048}}) {
        SCOPED_TRACE(::testing::Message() << "n=" << n << " q=" << q);
        const NttTables t(q, n);
        Poly a = random_poly(rng, n, 4 * q), red(n);
        for (uint32_t i = 0; i < n; ++i) red[i] = a[i] % q;
        ntt_forward(a.data(), t);
        if (n <= 256) {
            const Poly b = random_poly(rng, n, q);
            Poly fb = b;
            ntt_forward(fb.data(), t);
            Poly prod(n);
            for (uint32_t i = 0; i < n; ++i) prod[i] = mulm(a[i], fb[i], q);
            ntt_inverse(prod.data(), t);
            ASSERT_EQ(prod, negacyclic_mul(red, b, q));
        }
        ntt_inverse(a.data(), t);
        ASSERT_EQ(a, red);
    }
}

}  // namespace
