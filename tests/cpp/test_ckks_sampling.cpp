// Statistics of the samplers: the error distribution's width and cut-off, ternary frequencies,
// the sparse secret's weight, and the wide (flooding) Gaussian.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <vector>

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

// Every compilation of the error sampler's table inversion gives the baseline's magnitudes: the
// sampler's output (test_known_answers) must not depend on the CPU. Words at, just below and just
// above the entries, 0 and the largest word, and random ones; blocks of 1 to 64 samples.
TEST(Sampling, EveryCdtInversionGivesTheSameMagnitudes) {
    std::vector<uint64_t> table;
    for (uint64_t t = 1; t <= 20; ++t) table.push_back(t * (UINT64_MAX / 21));
    table.back() = UINT64_MAX;
    std::vector<uint64_t> words = {0, UINT64_MAX};
    for (uint64_t t : table) words.insert(words.end(), {t - 1, t, t + 1});
    oboro::math::Prng prng(oboro::math::Seed{5});
    while (words.size() % 64 != 0) words.push_back(prng.next_u64());
    const CdtInvertFn baseline = cdt_invert_variant(oboro::math::ChachaIsa::baseline);
    ASSERT_NE(baseline, nullptr);
    int checked = 0;
    for (auto isa : {oboro::math::ChachaIsa::avx2, oboro::math::ChachaIsa::avx512}) {
        const CdtInvertFn f = cdt_invert_variant(isa);
        if (!f) continue;
        ++checked;
        for (size_t count : {size_t(1), size_t(7), size_t(64)})
            for (size_t b = 0; b + count <= words.size(); b += count) {
                int64_t want[64], got[64];
                baseline(words.data() + b, count, table.data(), table.size(), want);
                f(words.data() + b, count, table.data(), table.size(), got);
                for (size_t j = 0; j < count; ++j) ASSERT_EQ(got[j], want[j]) << int(isa) << " word " << words[b + j];
            }
    }
    // the baseline itself: the count of entries at or below each word
    int64_t mag[3];
    const uint64_t edge[3] = {0, table[0], UINT64_MAX};
    baseline(edge, 3, table.data(), table.size(), mag);
    EXPECT_EQ(mag[0], 0);
    EXPECT_EQ(mag[1], 1);
    EXPECT_EQ(mag[2], 20);
    RecordProperty("compilations_checked", checked);
}
