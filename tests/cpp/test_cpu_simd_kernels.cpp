// The element-wise kernel tables (backend/cpu/eltwise.hpp): the scalar table against plain
// 128-bit arithmetic, and every SIMD table against the scalar one, bit for bit. Moduli of 30 to
// 62 bits (the smallest and largest odd values of each size, where the Barrett estimates are
// loosest, and an NTT prime), lengths that are not multiples of the vector width, edge values
// (0, 1, q-1) and inputs at the lazy bounds of each kernel's contract. Each ISA is a separate
// test, skipped with a message on CPUs without it.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "oboro/backend/cpu/eltwise.hpp"
#include "oboro/backend/ring.hpp"
#include "oboro/backend/cpu/ntt_simd.hpp"
#include "oboro/backend/cpu/poly_ops.hpp"
#include "oboro/backend/key_switch_key.hpp"
#include "oboro/backend/cpu/word_barrett.hpp"
#include "oboro/math/modarith.hpp"
#include "oboro/math/primes.hpp"
#include "oboro/util/buffer.hpp"

using namespace oboro;
using backend::cpu::EltwiseKernels;
using backend::cpu::Isa;
using u128 = unsigned __int128;

namespace {

constexpr size_t kLengths[] = {1, 3, 5, 8, 13, 16, 31, 1000, 1029};

std::vector<uint64_t> test_moduli() {
    std::vector<uint64_t> out;
    for (int b : {30, 40, 50, 60, 61, 62}) {
        out.push_back((uint64_t(1) << (b - 1)) + 1);  // smallest odd b-bit value
        out.push_back((uint64_t(1) << b) - 1);        // largest b-bit value
        out.push_back(math::generate_ntt_primes(b, 1024, 1)[0]);
    }
    // the largest prime a 61-bit chain takes (math::generate_ntt_primes_near: up to 2^61 (1 +
    // 2^-10), as B1's), whose halves sums take 3 terms
    out.push_back(math::generate_ntt_primes_near(61, 1024, 2)[1]);
    out.push_back((uint64_t(1) << 61) + (uint64_t(1) << 51) - 1);
    return out;
}

// Random words below `bound` with the edge values 0, 1, bound-1 and q-1 (when below bound)
// planted at the start, the end and the middle.
std::vector<uint64_t> words(size_t n, uint64_t bound, uint64_t q, std::mt19937_64& gen) {
    std::uniform_int_distribution<uint64_t> d(0, bound - 1);
    std::vector<uint64_t> v(n);
    for (auto& x : v) x = d(gen);
    const uint64_t edges[] = {0, 1, bound - 1, q - 1};
    for (size_t e = 0; e < 4 && e < n; ++e) {
        if (edges[e] < bound) v[e] = edges[e];
        if (edges[e] < bound) v[n - 1 - e] = edges[3 - e] < bound ? edges[3 - e] : v[n - 1 - e];
    }
    if (n > 8) v[n / 2] = bound - 1;
    return v;
}

uint64_t full_word_bound() { return ~uint64_t(0); }

std::string where(uint64_t q, size_t n) { return "q=" + std::to_string(q) + " n=" + std::to_string(n); }

// The reference: the scalar table against 128-bit arithmetic with %.
TEST(EltwiseScalar, MatchesWideArithmetic) {
    const EltwiseKernels& k = backend::cpu::scalar_kernels();
    std::mt19937_64 gen(1);
    for (uint64_t q : test_moduli()) {
        const math::Modulus m(q);
        for (size_t n : kLengths) {
            auto x = words(n, q, q, gen), y = words(n, q, q, gen), acc = words(n, 2 * q, q, gen);
            const uint64_t w = gen() % q;
            std::vector<uint64_t> d(n), d2(n), d3(n), a2 = acc;
            k.add(d.data(), x.data(), y.data(), q, n);
            for (size_t i = 0; i < n; ++i) ASSERT_EQ(d[i], (x[i] + y[i]) % q) << where(q, n);
            k.sub(d.data(), x.data(), y.data(), q, n);
            for (size_t i = 0; i < n; ++i) ASSERT_EQ(d[i], (x[i] + q - y[i]) % q) << where(q, n);
            k.negate(d.data(), x.data(), q, n);
            for (size_t i = 0; i < n; ++i) ASSERT_EQ(d[i], (q - x[i]) % q) << where(q, n);
            k.mul(d.data(), x.data(), y.data(), m, n);
            for (size_t i = 0; i < n; ++i) ASSERT_EQ(d[i], uint64_t(u128(x[i]) * y[i] % q)) << where(q, n);
            k.mul_add(a2.data(), x.data(), y.data(), m, n);
            for (size_t i = 0; i < n; ++i) ASSERT_EQ(a2[i], uint64_t((u128(x[i]) * y[i] + acc[i]) % q)) << where(q, n);
            auto big = words(n, full_word_bound(), q, gen);
            k.mul_scalar(d.data(), big.data(), w, math::shoup_precompute(w, q), q, n);
            for (size_t i = 0; i < n; ++i) ASSERT_EQ(d[i], uint64_t(u128(big[i]) * w % q)) << where(q, n);
            std::vector<uint64_t> a3 = x;  // canonical accumulator
            k.mul_scalar_add(a3.data(), big.data(), w, math::shoup_precompute(w, q), q, n);
            for (size_t i = 0; i < n; ++i) ASSERT_EQ(a3[i], uint64_t((u128(big[i]) * w + x[i]) % q)) << where(q, n);
            k.tensor(d.data(), d2.data(), d3.data(), x.data(), y.data(), acc.data(), a2.data(), m, n);
            for (size_t i = 0; i < n; ++i) {
                const u128 x0 = x[i], x1 = y[i], y0 = acc[i] % q, y1 = a2[i];
                ASSERT_EQ(d[i], uint64_t(x0 * y0 % q));
                ASSERT_EQ(d2[i], uint64_t((x0 * y1 % q + x1 * y0 % q) % q));
                ASSERT_EQ(d3[i], uint64_t(x1 * y1 % q));
            }
        }
    }
}

class EltwiseSimd : public ::testing::TestWithParam<Isa> {
protected:
    const EltwiseKernels* simd() {
        const EltwiseKernels* k = backend::cpu::eltwise_kernels(GetParam());
        return k;
    }
};

#define SIMD_OR_SKIP(k)                                                                               \
    const EltwiseKernels* k = simd();                                                                 \
    if (!k) GTEST_SKIP() << "SKIPPED: this CPU has no " << (GetParam() == Isa::avx2     ? "AVX2"                  \
                                                            : GetParam() == Isa::avx512 ? "AVX-512"           \
                                                                                        : "AVX-512 IFMA")

TEST_P(EltwiseSimd, AddSubNegateAddScalar) {
    SIMD_OR_SKIP(k);
    const EltwiseKernels& s = backend::cpu::scalar_kernels();
    std::mt19937_64 gen(2);
    for (uint64_t q : test_moduli()) {
        for (size_t n : kLengths) {
            auto x = words(n, q, q, gen), y = words(n, q, q, gen);
            const uint64_t w = gen() % q;
            std::vector<uint64_t> e(n), g(n);
            s.add(e.data(), x.data(), y.data(), q, n);
            k->add(g.data(), x.data(), y.data(), q, n);
            ASSERT_EQ(e, g) << "add " << where(q, n);
            s.sub(e.data(), x.data(), y.data(), q, n);
            k->sub(g.data(), x.data(), y.data(), q, n);
            ASSERT_EQ(e, g) << "sub " << where(q, n);
            // streaming stores: an aligned output, and one a word off (ordinary stores then)
            for (size_t shift : {size_t(0), size_t(1)}) {
                AlignedBuffer<uint64_t> out(n + 1);
                s.add(e.data(), x.data(), y.data(), q, n);
                k->add_stream(out.data() + shift, x.data(), y.data(), q, n);
                ASSERT_EQ(e, std::vector<uint64_t>(out.data() + shift, out.data() + shift + n)) << "add_stream " << where(q, n);
                s.sub(e.data(), x.data(), y.data(), q, n);
                k->sub_stream(out.data() + shift, x.data(), y.data(), q, n);
                ASSERT_EQ(e, std::vector<uint64_t>(out.data() + shift, out.data() + shift + n)) << "sub_stream " << where(q, n);
            }
            s.negate(e.data(), x.data(), q, n);
            k->negate(g.data(), x.data(), q, n);
            ASSERT_EQ(e, g) << "negate " << where(q, n);
            for (uint64_t c : {uint64_t(0), q - 1, w}) {
                s.add_scalar(e.data(), x.data(), c, q, n);
                k->add_scalar(g.data(), x.data(), c, q, n);
                ASSERT_EQ(e, g) << "add_scalar " << where(q, n);
            }
            // in place (output aliases an input), as the poly_ops callers do
            auto z = x;
            s.sub(e.data(), x.data(), y.data(), q, n);
            k->sub(z.data(), z.data(), y.data(), q, n);
            ASSERT_EQ(e, z) << "sub in place " << where(q, n);
        }
    }
}

TEST_P(EltwiseSimd, MulAndFusedMulAdd) {
    SIMD_OR_SKIP(k);
    const EltwiseKernels& s = backend::cpu::scalar_kernels();
    std::mt19937_64 gen(3);
    for (uint64_t q : test_moduli()) {
        const math::Modulus m(q);
        for (size_t n : kLengths) {
            auto x = words(n, q, q, gen), y = words(n, q, q, gen);
            std::vector<uint64_t> e(n), g(n);
            s.mul(e.data(), x.data(), y.data(), m, n);
            k->mul(g.data(), x.data(), y.data(), m, n);
            ASSERT_EQ(e, g) << "mul " << where(q, n);
            // streaming stores: an aligned output, and one a word off (ordinary stores then)
            for (size_t shift : {size_t(0), size_t(1)}) {
                AlignedBuffer<uint64_t> out(n + 1);
                k->mul_stream(out.data() + shift, x.data(), y.data(), m, n);
                ASSERT_EQ(e, std::vector<uint64_t>(out.data() + shift, out.data() + shift + n)) << "mul_stream " << where(q, n);
            }
            // all q-1: the largest product
            std::vector<uint64_t> top(n, q - 1);
            s.mul(e.data(), top.data(), top.data(), m, n);
            k->mul(g.data(), top.data(), top.data(), m, n);
            ASSERT_EQ(e, g) << "mul (q-1)^2 " << where(q, n);
            // mul_add: the accumulator may be lazy, in [0, 2q)
            for (uint64_t acc_bound : {q, 2 * q}) {
                auto acc = words(n, acc_bound, q, gen);
                auto ea = acc, ga = acc;
                s.mul_add(ea.data(), x.data(), y.data(), m, n);
                k->mul_add(ga.data(), x.data(), y.data(), m, n);
                ASSERT_EQ(ea, ga) << "mul_add acc<" << acc_bound / q << "q " << where(q, n);
                std::vector<uint64_t> emax(n, acc_bound - 1), gmax(n, acc_bound - 1);
                s.mul_add(emax.data(), top.data(), top.data(), m, n);
                k->mul_add(gmax.data(), top.data(), top.data(), m, n);
                ASSERT_EQ(emax, gmax) << "mul_add at the bound " << where(q, n);
            }
        }
    }
}

TEST_P(EltwiseSimd, ShoupMultiplications) {
    SIMD_OR_SKIP(k);
    const EltwiseKernels& s = backend::cpu::scalar_kernels();
    std::mt19937_64 gen(4);
    for (uint64_t q : test_moduli()) {
        for (size_t n : kLengths) {
            auto x = words(n, q, q, gen), y = words(n, q, q, gen), any = words(n, full_word_bound(), q, gen);
            std::vector<uint64_t> e(n), g(n);
            for (uint64_t w : {uint64_t(0), uint64_t(1), q - 1, gen() % q}) {
                const uint64_t ws = math::shoup_precompute(w, q);
                s.mul_scalar(e.data(), any.data(), w, ws, q, n);  // any word: Shoup's contract
                k->mul_scalar(g.data(), any.data(), w, ws, q, n);
                ASSERT_EQ(e, g) << "mul_scalar w=" << w << " " << where(q, n);
                s.sub_mul_scalar(e.data(), x.data(), y.data(), w, ws, q, n);
                k->sub_mul_scalar(g.data(), x.data(), y.data(), w, ws, q, n);
                ASSERT_EQ(e, g) << "sub_mul_scalar w=" << w << " " << where(q, n);
                e = g = y;
                s.mul_scalar_add(e.data(), any.data(), w, ws, q, n);
                k->mul_scalar_add(g.data(), any.data(), w, ws, q, n);
                ASSERT_EQ(e, g) << "mul_scalar_add w=" << w << " " << where(q, n);
            }
        }
    }
}

TEST_P(EltwiseSimd, Tensor) {
    SIMD_OR_SKIP(k);
    const EltwiseKernels& s = backend::cpu::scalar_kernels();
    std::mt19937_64 gen(5);
    for (uint64_t q : test_moduli()) {
        const math::Modulus m(q);
        for (size_t n : kLengths) {
            auto a0 = words(n, q, q, gen), a1 = words(n, q, q, gen), b0 = words(n, q, q, gen), b1 = words(n, q, q, gen);
            std::vector<uint64_t> e0(n), e1(n), e2(n), g0(n), g1(n), g2(n);
            s.tensor(e0.data(), e1.data(), e2.data(), a0.data(), a1.data(), b0.data(), b1.data(), m, n);
            k->tensor(g0.data(), g1.data(), g2.data(), a0.data(), a1.data(), b0.data(), b1.data(), m, n);
            ASSERT_EQ(e0, g0) << where(q, n);
            ASSERT_EQ(e1, g1) << where(q, n);
            ASSERT_EQ(e2, g2) << where(q, n);
            // streaming stores into three aligned outputs, and into outputs a word off
            for (size_t shift : {size_t(0), size_t(1)}) {
                const size_t stride = (n + 7) / 8 * 8;  // keeps each output as aligned as the first
                AlignedBuffer<uint64_t> out(3 * stride + 1);
                uint64_t* d[3] = {out.data() + shift, out.data() + shift + stride, out.data() + shift + 2 * stride};
                k->tensor_stream(d[0], d[1], d[2], a0.data(), a1.data(), b0.data(), b1.data(), m, n);
                ASSERT_EQ(e0, std::vector<uint64_t>(d[0], d[0] + n)) << "tensor_stream " << where(q, n);
                ASSERT_EQ(e1, std::vector<uint64_t>(d[1], d[1] + n)) << "tensor_stream " << where(q, n);
                ASSERT_EQ(e2, std::vector<uint64_t>(d[2], d[2] + n)) << "tensor_stream " << where(q, n);
            }
        }
    }
}

// The key-switching inner product, from 1 to 64 terms (the SIMD tables' 30-bit halves form,
// dot2_halves, in chunks of up to 7 terms on primes below 2^60, 4 below 2^61 and 3 just above
// it, up to 15 chunks; 62-bit primes and more terms take the 128-bit form): past 15 terms of
// 62-bit products the 128-bit sums are reduced on the way (lazy_product_terms), in both tables;
// each case runs once more accumulating onto the result.
TEST_P(EltwiseSimd, InnerProduct) {
    SIMD_OR_SKIP(k);
    const EltwiseKernels& s = backend::cpu::scalar_kernels();
    std::mt19937_64 gen(6);
    for (uint64_t q : test_moduli()) {
        const math::Modulus m(q);
        for (size_t terms :
             {size_t(1), size_t(3), size_t(4), size_t(5), size_t(7), size_t(8), size_t(15), size_t(16), size_t(17),
              size_t(40), size_t(45), size_t(46), size_t(60), size_t(61), size_t(64)}) {
            const size_t n = terms % 2 ? 29 : 64;
            std::vector<std::vector<uint64_t>> x, y0, y1;
            std::vector<backend::cpu::DotTerm> dot_terms;
            for (size_t j = 0; j < terms; ++j) {
                // every second term all q-1, so that the sums reach their largest values
                x.push_back(j % 2 ? std::vector<uint64_t>(n, q - 1) : words(n, q, q, gen));
                y0.push_back(j % 2 ? std::vector<uint64_t>(n, q - 1) : words(n, q, q, gen));
                y1.push_back(words(n, q, q, gen));
            }
            for (size_t j = 0; j < terms; ++j)
                dot_terms.push_back({x[j].data(), y0[j].data(), y1[j].data()});
            std::vector<uint64_t> e0(n), e1(n), g0(n), g1(n);
            s.dot2(e0.data(), e1.data(), dot_terms.data(), terms, false, m, n);
            k->dot2(g0.data(), g1.data(), dot_terms.data(), terms, false, m, n);
            std::vector<u128> r0(n), r1(n);
            for (size_t i = 0; i < n; ++i) {
                for (size_t j = 0; j < terms; ++j) {
                    const uint64_t v = x[j][i];
                    r0[i] = (r0[i] + u128(v) * y0[j][i] % q) % q;
                    r1[i] = (r1[i] + u128(v) * y1[j][i] % q) % q;
                }
                ASSERT_EQ(e0[i], uint64_t(r0[i])) << "scalar terms=" << terms << " " << where(q, n);
                ASSERT_EQ(e1[i], uint64_t(r1[i])) << "scalar terms=" << terms << " " << where(q, n);
            }
            ASSERT_EQ(e0, g0) << "terms=" << terms << " " << where(q, n);
            ASSERT_EQ(e1, g1) << "terms=" << terms << " " << where(q, n);
            // accumulate: the same sum added once more to the (canonical) outputs
            s.dot2(e0.data(), e1.data(), dot_terms.data(), terms, true, m, n);
            k->dot2(g0.data(), g1.data(), dot_terms.data(), terms, true, m, n);
            for (size_t i = 0; i < n; ++i) ASSERT_EQ(e0[i], uint64_t(2 * r0[i] % q)) << "accumulate " << where(q, n);
            ASSERT_EQ(e0, g0) << "accumulate terms=" << terms << " " << where(q, n);
            ASSERT_EQ(e1, g1) << "accumulate terms=" << terms << " " << where(q, n);
        }
    }
}

// The fold of an inner product's sum (word_barrett.hpp, sum_fold) on the presets' primes: none
// below 2^(b+62), the plain product of the high word below 2^125, the Shoup fold beyond; and the
// sums at exactly those largest values (every word q - 1, the accumulated outputs q - 1) in dot2,
// where each fold meets the largest sum it is chosen for.
TEST(SumFold, ChosenByTheLargestSum) {
    using backend::cpu::Fold;
    using backend::cpu::sum_fold;
    const uint64_t p60 = math::generate_ntt_primes(60, 1 << 16, 1)[0];
    const uint64_t p61 = math::generate_ntt_primes_near(61, 1 << 16, 2)[1];  // just above 2^61 (B1's)
    const uint64_t p40 = math::generate_ntt_primes(40, 1 << 16, 1)[0];
    const uint64_t top60 = (uint64_t(1) << 60) - 1;  // b = 60: sums below 2^122 need no fold
    EXPECT_EQ(sum_fold(4, p60, p60, p60 - 1, p60), Fold::none);
    EXPECT_EQ(sum_fold(4, top60, top60, top60 - 1, top60), Fold::none);
    EXPECT_EQ(sum_fold(5, top60, top60, 0, top60), Fold::product);
    // a counts' term of 255 (t - 1) passes 2^64: counted in 128 bits, it takes 4 terms past 2^122
    EXPECT_EQ(sum_fold(4, top60, top60, u128(255) * (top60 - 1), top60), Fold::product);
    EXPECT_EQ(sum_fold(3, p61, p61, p61 - 1, p61), Fold::none);     // b = 62: below 2^124
    EXPECT_EQ(sum_fold(4, p61, p61, 0, p61), Fold::product);
    EXPECT_EQ(sum_fold(7, p61, p61, p61 - 1, p61), Fold::product);  // 7 * 2^122.003 < 2^125
    EXPECT_EQ(sum_fold(8, p61, p61, 0, p61), Fold::shoup);
    EXPECT_EQ(sum_fold(64, p40, p40, p40 - 1, p40), Fold::none);
    EXPECT_EQ(sum_fold(4, p61, p40, u128(255) * (p40 - 1), p40), Fold::product);  // 61-bit sources into a 40-bit prime
    EXPECT_EQ(sum_fold(64, uint64_t(1) << 62, uint64_t(1) << 62, 0, p61), Fold::shoup);  // past 2^128: no overflow
    EXPECT_EQ(sum_fold(0, p61, p61, 0, p61), Fold::none);
}

TEST_P(EltwiseSimd, InnerProductAtTheLargestSums) {
    SIMD_OR_SKIP(k);
    const EltwiseKernels& s = backend::cpu::scalar_kernels();
    for (uint64_t q : test_moduli()) {
        const math::Modulus m(q);
        for (size_t terms = 1; terms <= 9; ++terms) {
            const size_t n = 20;
            const std::vector<uint64_t> top(n, q - 1);
            std::vector<backend::cpu::DotTerm> dot_terms(terms, {top.data(), top.data(), top.data()});
            u128 want = 0;
            for (size_t j = 0; j < terms; ++j) want = (want + u128(q - 1) * (q - 1)) % q;
            for (bool accumulate : {false, true}) {
                std::vector<uint64_t> e(n, q - 1), f(n, q - 1), g(n, q - 1), h(n, q - 1);
                s.dot2(e.data(), f.data(), dot_terms.data(), terms, accumulate, m, n);
                k->dot2(g.data(), h.data(), dot_terms.data(), terms, accumulate, m, n);
                const uint64_t r = uint64_t(accumulate ? (want + q - 1) % q : want);
                ASSERT_EQ(e, std::vector<uint64_t>(n, r)) << "scalar terms=" << terms << " " << where(q, n);
                ASSERT_EQ(g, std::vector<uint64_t>(n, r)) << "terms=" << terms << " acc=" << accumulate << " " << where(q, n);
                ASSERT_EQ(h, std::vector<uint64_t>(n, r)) << "terms=" << terms << " acc=" << accumulate << " " << where(q, n);
            }
        }
    }
}

// The same for weighted_sum: every source word bound - 1, every weight t - 1, counts of 255 and
// u = 1 (the counts' term v (t - u) at its largest).
TEST_P(EltwiseSimd, WeightedSumAtTheLargestSums) {
    SIMD_OR_SKIP(k);
    const EltwiseKernels& s = backend::cpu::scalar_kernels();
    for (uint64_t t : test_moduli()) {
        const math::Modulus m(t);
        for (uint64_t bound : {t, (uint64_t(1) << 61) + (uint64_t(1) << 51) - 1, uint64_t(1) << 60}) {
            for (size_t terms = 1; terms <= 9; ++terms) {
                const size_t n = 20, stride = n;
                const std::vector<uint64_t> y(terms * stride, bound - 1), w(terms, t - 1);
                const std::vector<uint8_t> v(n, 255);
                const uint64_t u = 1, us = math::shoup_precompute(u, t);
                for (const uint8_t* counts : {static_cast<const uint8_t*>(nullptr), v.data()}) {
                    u128 r = 0;
                    for (size_t i = 0; i < terms; ++i) r = (r + u128((bound - 1) % t) * (t - 1)) % t;
                    if (counts) r = (r + t - 255 % t) % t;
                    std::vector<uint64_t> e(n), g(n);
                    s.weighted_sum(e.data(), y.data(), stride, terms, bound, w.data(), counts, u, us, m, n);
                    k->weighted_sum(g.data(), y.data(), stride, terms, bound, w.data(), counts, u, us, m, n);
                    ASSERT_EQ(e, std::vector<uint64_t>(n, uint64_t(r))) << "scalar terms=" << terms << " " << where(t, n);
                    ASSERT_EQ(g, std::vector<uint64_t>(n, uint64_t(r)))
                        << "terms=" << terms << " bound=" << bound << " counts=" << (counts != nullptr) << " " << where(t, n);
                }
            }
        }
    }
}

// Base conversion from one prime p to another prime t, plain and centred, for every pair of
// test moduli (p above, below and equal in size to t); the edge values p/2 and p/2 + 1 are where
// the centred representative changes sign.
TEST_P(EltwiseSimd, ConvertSingle) {
    SIMD_OR_SKIP(k);
    const EltwiseKernels& s = backend::cpu::scalar_kernels();
    std::mt19937_64 gen(8);
    for (uint64_t p : test_moduli()) {
        for (uint64_t t : test_moduli()) {
            const math::Modulus m(t);
            for (size_t n : kLengths) {
                auto x = words(n, p, p, gen);
                if (n > 2) x[1] = p / 2, x[2] = p / 2 + 1;
                for (bool centered : {false, true}) {
                    std::vector<uint64_t> e(n), g(n);
                    s.convert_single(e.data(), x.data(), p, centered, m, n);
                    k->convert_single(g.data(), x.data(), p, centered, m, n);
                    for (size_t i = 0; i < n; ++i) {
                        const bool negative = centered && x[i] > p / 2;
                        const uint64_t want = negative ? (t - (p - x[i]) % t) % t : x[i] % t;
                        ASSERT_EQ(e[i], want) << "scalar p=" << p << " centered=" << centered << " " << where(t, n);
                    }
                    ASSERT_EQ(e, g) << "p=" << p << " centered=" << centered << " " << where(t, n);
                }
            }
        }
    }
}

// The accumulation of fast base conversion: 1 to 46 terms (the 128-bit form reduced every 16;
// the SIMD tables' 30-bit halves form in chunks where the sources' bound and t allow it), with and
// without the subtraction of v * u: residues below 2^62, below t, and below a 61-bit prime just
// above 2^61 (B1's), times weights below t.
TEST_P(EltwiseSimd, WeightedSum) {
    SIMD_OR_SKIP(k);
    const EltwiseKernels& s = backend::cpu::scalar_kernels();
    std::mt19937_64 gen(9);
    for (uint64_t t : test_moduli()) {
        const math::Modulus m(t);
        for (uint64_t bound : {uint64_t(1) << 62, t, (uint64_t(1) << 61) + (uint64_t(1) << 51) - 1}) {
            for (size_t terms :
                 {size_t(1), size_t(2), size_t(3), size_t(4), size_t(7), size_t(8), size_t(15), size_t(16), size_t(17),
                  size_t(40), size_t(45), size_t(46)}) {
                const size_t n = terms % 2 ? 37 : 64, stride = n + 3;
                std::vector<uint64_t> y(terms * stride), w(terms);
                for (size_t i = 0; i < terms; ++i) {
                    // some rows all bound - 1 and weights t - 1, so that the sums reach their largest values
                    const auto row = i % 3 == 1 ? std::vector<uint64_t>(n, bound - 1) : words(n, bound, bound, gen);
                    std::copy(row.begin(), row.end(), y.begin() + i * stride);
                    w[i] = i % 2 ? t - 1 : gen() % t;
                }
                std::vector<uint8_t> v(n);
                for (auto& c : v) c = uint8_t(gen() % 41);
                const uint64_t u = gen() % t, us = math::shoup_precompute(u, t);
                for (const uint8_t* counts :
                     {static_cast<const uint8_t*>(nullptr), static_cast<const uint8_t*>(v.data())}) {
                    std::vector<uint64_t> e(n), g(n);
                    s.weighted_sum(e.data(), y.data(), stride, terms, bound, w.data(), counts, u, us, m, n);
                    k->weighted_sum(g.data(), y.data(), stride, terms, bound, w.data(), counts, u, us, m, n);
                    for (size_t c = 0; c < n; ++c) {
                        u128 r = 0;
                        for (size_t i = 0; i < terms; ++i) r = (r + u128(y[i * stride + c] % t) * w[i]) % t;
                        if (counts) r = (r + t - u128(counts[c]) * u % t) % t;
                        ASSERT_EQ(e[c], uint64_t(r)) << "scalar terms=" << terms << " " << where(t, n);
                    }
                    ASSERT_EQ(e, g) << "terms=" << terms << " bound=" << bound << " " << where(t, n);
                }
            }
        }
    }
}

// The centred conversion's overflow counts: the same doubles, summed in the same order, as the
// portable kernel (math::conversion_overflow), to the bit: the counts decide which multiple of Q
// is subtracted. Rows of zeros, of q_i - 1 and of (q_i - 1) / 2 (sums just below a half) included.
TEST_P(EltwiseSimd, OverflowCounts) {
    SIMD_OR_SKIP(k);
    const EltwiseKernels& s = backend::cpu::scalar_kernels();
    std::mt19937_64 gen(10);
    const auto moduli = test_moduli();
    for (size_t terms : {size_t(2), size_t(3), size_t(7), size_t(16), size_t(64)}) {
        for (size_t n : kLengths) {
            const size_t stride = n + 5;
            std::vector<uint64_t> y(terms * stride);
            std::vector<double> inv(terms);
            for (size_t i = 0; i < terms; ++i) {
                const uint64_t q = moduli[i % moduli.size()];
                inv[i] = 1.0 / double(q);
                const auto row = words(n, q, q, gen);
                std::copy(row.begin(), row.end(), y.begin() + i * stride);
                // the first coefficients: all zero, all q - 1, one (q - 1) / 2 and the rest zero
                if (n > 3) y[i * stride] = 0, y[i * stride + 1] = q - 1, y[i * stride + 2] = i == 0 ? (q - 1) / 2 : 0;
            }
            std::vector<uint8_t> e(n), g(n);
            s.overflow_counts(e.data(), y.data(), stride, terms, inv.data(), n);
            k->overflow_counts(g.data(), y.data(), stride, terms, inv.data(), n);
            ASSERT_EQ(e, g) << "terms=" << terms << " n=" << n;
            if (n > 3) {
                EXPECT_EQ(e[0], 0) << "terms=" << terms;
                EXPECT_EQ(e[1], terms) << "terms=" << terms;  // sum of (q_i - 1) / q_i rounds to terms
                EXPECT_EQ(e[2], 0) << "terms=" << terms;
            }
            for (size_t c = 0; c < n; ++c) {  // round(sum y_i / q_i), up to ties
                long double sum = 0;
                for (size_t i = 0; i < terms; ++i) sum += (long double)(y[i * stride + c]) / moduli[i % moduli.size()];
                ASSERT_LE(std::fabs(double(sum - (long double)(e[c]))), 0.5 + 1e-9) << "c=" << c;
            }
        }
    }
}

// The automorphism permutations of rings from n = 8 up: each maps every aligned group of 8 slots
// onto one aligned group of 8 (what the SIMD kernels rely on), and every table permutes as the
// portable loop does, for rotations by 1, 2 and the largest step, and for conjugation.
TEST_P(EltwiseSimd, PermuteAutomorphism) {
    SIMD_OR_SKIP(k);
    std::mt19937_64 gen(11);
    for (int log_n : {3, 4, 5, 10, 13}) {
        const size_t n = size_t(1) << log_n;
        const auto primes = math::generate_ntt_primes(50, n, 2);
        const backend::Ring ring(n, {primes[0]}, {primes[1]}, {1}, 1);
        std::vector<uint64_t> galois = {2 * n - 1};
        uint64_t g = 1;
        for (size_t step = 1; step < n / 2; ++step) {
            g = g * 5 % (2 * n);
            if (step <= 2 || step == n / 2 - 1) galois.push_back(g);
        }
        const auto x = words(n, primes[0], primes[0], gen);
        for (uint64_t gal : galois) {
            const std::vector<uint32_t>& perm = ring.automorphism_permutation(gal);
            for (size_t i = 0; i < n; ++i) ASSERT_EQ(perm[i] >> 3, perm[i & ~size_t(7)] >> 3) << "n=" << n << " i=" << i;
            std::vector<uint64_t> want(n), got(n);
            for (size_t i = 0; i < n; ++i) want[i] = x[perm[i]];
            k->permute_automorphism(got.data(), x.data(), perm.data(), n);
            ASSERT_EQ(want, got) << "n=" << n << " galois=" << gal;
        }
    }
}

// A switching key's packed words (5, 6 and 8 bytes, up to the largest word of each width) come
// back from every table as they went in, from any start and for any count, 8 at a time or not.
TEST_P(EltwiseSimd, UnpackKeyWords) {
    SIMD_OR_SKIP(k);
    std::mt19937_64 gen(13);
    const size_t n = 1024;
    for (uint32_t width : {5u, 6u, 8u}) {
        const uint64_t top = width == 8 ? ~uint64_t(0) : (uint64_t(1) << (8 * width)) - 1;
        std::vector<uint64_t> w(n);
        for (auto& x : w) x = gen() & top;
        w[0] = top;
        w[n - 1] = top;
        std::vector<uint8_t> packed(n * width);
        backend::pack_key_words(w.data(), n, width, packed.data());
        for (const auto& [begin, count] : {std::pair<size_t, size_t>{0, n}, {0, 7}, {3, 17}, {8, 1000}, {1, n - 1},
                                           {n - 9, 9}}) {
            std::vector<uint64_t> got(count);
            k->unpack_key_words(got.data(), packed.data(), n, width, begin, count);
            ASSERT_EQ(got, std::vector<uint64_t>(w.begin() + long(begin), w.begin() + long(begin + count)))
                << "width " << width << " begin " << begin << " count " << count;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Isa, EltwiseSimd, ::testing::Values(Isa::avx2, Isa::avx512, Isa::avx512ifma),
                         [](const ::testing::TestParamInfo<Isa>& i) {
                             return std::string(i.param == Isa::avx2     ? "avx2"
                                                : i.param == Isa::avx512 ? "avx512"
                                                                         : "avx512ifma");
                         });

TEST(EltwiseDispatch, SwitchSelectsScalar) {
    backend::cpu::set_simd_enabled(false);
    EXPECT_STREQ(backend::cpu::eltwise_implementation(), "scalar");
    backend::cpu::set_simd_enabled(true);
    const char* expect = backend::cpu::eltwise_kernels(Isa::avx512ifma) ? "avx512+ifma"
                         : backend::cpu::eltwise_kernels(Isa::avx512)  ? "avx512"
                         : backend::cpu::eltwise_kernels(Isa::avx2) ? "avx2"
                                                                     : "scalar";
    EXPECT_STREQ(backend::cpu::eltwise_implementation(), expect);
}

// The poly_ops entry points give the same limbs with SIMD on and off (several limbs, each with
// its own modulus, and the thread pool's split above 2^15 words).
TEST(EltwiseDispatch, PolyOpsSameWithAndWithoutSimd) {
    // n = 2^17: 9 MiB per operand, so add and sub take the streaming stores (kStreamingBytes)
    for (size_t n : {size_t(4096), size_t(1) << 17}) {
        const size_t limbs = 9;
        ASSERT_EQ(n * limbs * 8 >= backend::cpu::kStreamingBytes, n > 4096);
        std::vector<math::Modulus> mods;
        for (uint64_t q : math::generate_ntt_primes(60, n, 3)) mods.emplace_back(q);
        for (uint64_t q : math::generate_ntt_primes(40, n, 6)) mods.emplace_back(q);
        std::mt19937_64 gen(7);
        std::vector<uint64_t> a(limbs * n), b(limbs * n), s(limbs);
        for (size_t i = 0; i < limbs; ++i) {
            const auto x = words(n, mods[i].value, mods[i].value, gen), y = words(n, mods[i].value, mods[i].value, gen);
            std::copy(x.begin(), x.end(), a.begin() + i * n);
            std::copy(y.begin(), y.end(), b.begin() + i * n);
            s[i] = gen() % mods[i].value;
        }
        auto run = [&](bool simd) {
            backend::cpu::set_simd_enabled(simd);
            std::vector<AlignedBuffer<uint64_t>> buf;  // aligned, as ciphertexts are (streaming stores need it)
            for (int i = 0; i < 9; ++i) buf.emplace_back(limbs * n);
            namespace c = backend::cpu;
            c::add(buf[0].data(), a.data(), b.data(), mods.data(), limbs, n);
            c::sub(buf[1].data(), a.data(), b.data(), mods.data(), limbs, n);
            c::mul(buf[2].data(), a.data(), b.data(), mods.data(), limbs, n);
            std::copy(buf[0].data(), buf[0].data() + limbs * n, buf[3].data());
            c::mul_add(buf[3].data(), a.data(), b.data(), mods.data(), limbs, n);
            c::mul_scalar(buf[4].data(), a.data(), s.data(), mods.data(), limbs, n);
            c::sub_mul_scalar(buf[5].data(), a.data(), b.data(), s.data(), mods.data(), limbs, n);
            std::copy(buf[1].data(), buf[1].data() + limbs * n, buf[8].data());
            c::mul_scalar_add(buf[8].data(), a.data(), s.data(), mods.data(), limbs, n);
            c::tensor(buf[6].data(), buf[7].data(), buf[0].data(), a.data(), b.data(), b.data(), a.data(), mods.data(),
                      limbs, n);
            backend::cpu::set_simd_enabled(true);
            std::vector<std::vector<uint64_t>> out;
            for (const auto& x : buf) out.emplace_back(x.data(), x.data() + limbs * n);
            return out;
        };
        EXPECT_EQ(run(false), run(true)) << "n = " << n;
    }
}

// cpu::base_convert (SIMD kernels) against math::BaseConverter (the scalar reference), bit for
// bit, for 1 to 6 source primes of mixed sizes, plain and centred, with SIMD on and off.
TEST(EltwiseDispatch, BaseConvertMatchesBaseConverter) {
    const size_t n = 1024 + 5;  // a tail after the vector loop
    std::vector<uint64_t> primes = math::generate_ntt_primes(60, 1024, 4);
    for (uint64_t q : math::generate_ntt_primes(40, 1024, 6)) primes.push_back(q);
    std::mt19937_64 gen(10);
    for (size_t k : {size_t(1), size_t(2), size_t(3), size_t(6)}) {
        const math::RnsBase from(std::vector<uint64_t>(primes.begin(), primes.begin() + long(k)));
        const math::RnsBase to(std::vector<uint64_t>(primes.begin() + long(k), primes.end()));
        const math::BaseConverter conv(from, to);
        std::vector<uint64_t> in(k * n);
        for (size_t i = 0; i < k; ++i) {
            const auto row = words(n, from[i], from[i], gen);
            std::copy(row.begin(), row.end(), in.begin() + i * n);
        }
        for (bool centered : {false, true}) {
            std::vector<uint64_t> want(to.size() * n), scratch(backend::cpu::base_convert_scratch_words(k, n));
            if (centered) conv.convert_centered(in.data(), n, want.data(), n, n, scratch.data());
            else conv.convert(in.data(), n, want.data(), n, n, scratch.data());
            for (bool simd : {false, true}) {
                backend::cpu::set_simd_enabled(simd);
                std::vector<uint64_t> got(to.size() * n);
                std::vector<uint64_t*> outs;
                for (size_t j = 0; j < to.size(); ++j) outs.push_back(got.data() + j * n);
                backend::cpu::base_convert(conv, in.data(), n, outs.data(), n, scratch.data(), centered);
                backend::cpu::set_simd_enabled(true);
                ASSERT_EQ(got, want) << "k=" << k << " centered=" << centered << " simd=" << simd;
            }
        }
    }
}

}  // namespace
