// Statistics of the samplers: the error distribution's width and cut-off, ternary frequencies,
// the sparse secret's weight, and the wide (flooding) Gaussian.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "oboro/ckks/sampling.hpp"

using namespace oboro::ckks;

TEST(Sampling, ErrorGaussianHasWidth319AndBoundedTails) {
    oboro::math::Prng prng(oboro::math::Seed{1});
    const auto e = sample_gaussian(prng, 1 << 18);
    double sum = 0, sq = 0;
    int64_t max_abs = 0;
    for (int64_t v : e) {
        sum += double(v);
        sq += double(v) * double(v);
        max_abs = std::max(max_abs, v < 0 ? -v : v);
    }
    const double mean = sum / double(e.size()), sd = std::sqrt(sq / double(e.size()) - mean * mean);
    EXPECT_NEAR(mean, 0.0, 0.03);
    // rounding adds variance 1/12: sqrt(3.19^2 + 1/12) = 3.203
    EXPECT_NEAR(sd, 3.203, 0.03);
    EXPECT_LE(max_abs, 20);  // cut at 6 sigma
    EXPECT_GE(max_abs, 12);  // but the tail is there (P(|x| >= 12) ~ 2e-4 per sample)
}

TEST(Sampling, FloodingGaussianHasTheRequestedWidth) {
    oboro::math::Prng prng(oboro::math::Seed{2});
    const auto e = sample_gaussian(prng, 1 << 16, 1024.0);
    double sq = 0;
    for (int64_t v : e) sq += double(v) * double(v);
    EXPECT_NEAR(std::sqrt(sq / double(e.size())), 1024.0, 15.0);
}

TEST(Sampling, TernaryIsUniformOverMinusOneZeroOne) {
    oboro::math::Prng prng(oboro::math::Seed{3});
    const auto s = sample_ternary(prng, 30000);
    std::map<int, int> count;
    for (int8_t v : s) ++count[v];
    ASSERT_EQ(count.size(), 3u);
    for (int v : {-1, 0, 1}) EXPECT_NEAR(count[v], 10000, 400) << v;
}

TEST(Sampling, SparseTernaryHasExactlyHNonZeros) {
    oboro::math::Prng prng(oboro::math::Seed{4});
    const auto s = sample_sparse_ternary(prng, 4096, 192);
    int nonzero = 0, plus = 0;
    for (int8_t v : s) {
        nonzero += v != 0;
        plus += v == 1;
    }
    EXPECT_EQ(nonzero, 192);
    EXPECT_GT(plus, 60);
    EXPECT_LT(plus, 132);
}
