// The building blocks of circuits in the evaluator: multiply-accumulate without a temporary
// (plaintext, ciphertext and constant products into an accumulator), zero accumulators, and
// products that land exactly on a requested scale. Each is checked bit for bit against the
// unfused operations and against a double-precision reference, on a Ciphertext and on a batch.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ckks_test_util.hpp"
#include "error_test_util.hpp"
#include "oboro/ckks/batch.hpp"

namespace oboro::test {
namespace {

class AccumulateTest : public ::testing::TestWithParam<std::string> {
protected:
    Keys& k() { return Keys::get(GetParam()); }
};

TEST_P(AccumulateTest, PlaintextAndCiphertextProductsAccumulateExactly) {
    Keys& K = k();
    const Evaluator& ev = *K.eval;
    const size_t slots = K.ctx->max_slots();
    std::vector<std::vector<cplx>> xs, ys;
    std::vector<Ciphertext> cx, cy;
    std::vector<Plaintext> py;
    for (uint64_t i = 0; i < 3; ++i) {
        xs.push_back(random_complex(slots, 1.0, 10 + i));
        ys.push_back(random_complex(slots, 1.0, 20 + i));
        cx.push_back(K.encrypt(xs.back()));
        cy.push_back(K.encrypt(ys.back()));
        py.push_back(K.encoder->encode(ys.back()));
    }
    const int level = cx[0].level();
    const double prod_scale = cx[0].scale() * py[0].scale();

    // sum_i x_i * p_i: the fused accumulation gives the words of multiply + add
    Ciphertext acc = ev.zero_like(cx[0], 2, level, prod_scale);
    Ciphertext unfused = ev.multiply(cx[0], py[0]);
    ev.multiply_accumulate(acc, cx[0], py[0]);
    for (size_t i = 1; i < 3; ++i) {
        ev.multiply_accumulate(acc, cx[i], py[i]);
        ev.add_inplace(unfused, ev.multiply(cx[i], py[i]));
    }
    EXPECT_TRUE(same_words(acc, unfused));
    std::vector<cplx> want(slots);
    for (size_t i = 0; i < 3; ++i)
        for (size_t s = 0; s < slots; ++s) want[s] += xs[i][s] * ys[i][s];
    EXPECT_GE(precision_bits(K.decrypt(ev.rescale(acc)), want), 19);

    // sum_i x_i * y_i as degree-2 products, relinearized and rescaled once
    Ciphertext acc3 = ev.zero_like(cx[0], 3, level, cx[0].scale() * cy[0].scale());
    Ciphertext unfused3 = ev.multiply(cx[0], cy[0]);
    ev.multiply_accumulate(acc3, cx[0], cy[0]);
    for (size_t i = 1; i < 3; ++i) {
        ev.multiply_accumulate(acc3, cx[i], cy[i]);
        ev.add_inplace(unfused3, ev.multiply(cx[i], cy[i]));
    }
    EXPECT_TRUE(same_words(acc3, unfused3));
    EXPECT_GE(precision_bits(K.decrypt(ev.rescale(ev.relinearize(acc3, K.rk))), want), 18);
}

// sum_i c_i * x_i with the constants encoded at acc.scale / x.scale lands exactly on the scale
// chosen for the accumulator; multiply_to lands exactly on a requested (level, scale).
TEST_P(AccumulateTest, ConstantsLandExactlyOnTheRequestedScale) {
    Keys& K = k();
    const Evaluator& ev = *K.eval;
    const Context& ctx = *K.ctx;
    const size_t slots = ctx.max_slots();
    const auto x = random_real(slots, 1.0, 30), y = random_real(slots, 1.0, 31);
    Ciphertext cx = K.encrypt(x), cy = K.encrypt(y, std::nullopt, true);
    cy.set_scale(cy.scale() * 1.5);  // operands at different scales still sum exactly
    const int l = cx.level();
    const double target = std::ldexp(1.0, 37) * 1.2345;  // not a power of two, not near a prime
    const double ql = double(ctx.q()[size_t(l)]);
    Ciphertext acc = ev.zero_like(cx, 2, l, target * ql);
    ev.multiply_accumulate(acc, cx, 0.75);
    ev.multiply_accumulate(acc, cy, -1.25);
    Ciphertext r = ev.rescale(acc);
    r.set_scale(target);  // the scale it lands on, up to double rounding
    EXPECT_NEAR(ev.rescale(acc).scale() / target, 1.0, 0x1p-50);
    std::vector<cplx> want(slots);
    for (size_t s = 0; s < slots; ++s) want[s] = 0.75 * x[s] - 1.25 * y[s] / 1.5;
    EXPECT_GE(precision_bits(K.decrypt(r), want), 18);

    const Ciphertext m = ev.multiply_to(cx, -0.3, 0, target);
    EXPECT_EQ(m.level(), 0);
    EXPECT_EQ(m.scale(), target);
    std::vector<cplx> want_m(slots);
    for (size_t s = 0; s < slots; ++s) want_m[s] = -0.3 * x[s];
    EXPECT_GE(precision_bits(K.decrypt(m), want_m), 18);
}

TEST_P(AccumulateTest, BatchesAccumulateLikeEachElement) {
    Keys& K = k();
    const Evaluator& ev = *K.eval;
    const Context& ctx = *K.ctx;
    std::vector<Ciphertext> cx, cy;
    for (uint64_t i = 0; i < 3; ++i) {
        cx.push_back(K.encrypt(random_complex(ctx.max_slots(), 1.0, 40 + i)));
        cy.push_back(K.encrypt(random_complex(ctx.max_slots(), 1.0, 50 + i)));
    }
    const auto X = CiphertextBatch::from_ciphertexts(ctx, cx), Y = CiphertextBatch::from_ciphertexts(ctx, cy);
    const Plaintext p = K.encoder->encode(random_complex(ctx.max_slots(), 1.0, 60));
    CiphertextBatch acc = ev.zero_like(X, 3, X.level(), X.scale() * Y.scale());
    ev.multiply_accumulate(acc, X, Y);
    ev.multiply_accumulate(acc, Y, X);
    CiphertextBatch accp = ev.zero_like(X, 2, X.level(), X.scale() * p.scale());
    ev.multiply_accumulate(accp, X, p);
    CiphertextBatch accc = ev.zero_like(X, 2, X.level(), X.scale() * 0x1p30);
    ev.multiply_accumulate(accc, X, 0.5);
    for (size_t c = 0; c < 3; ++c) {
        SCOPED_TRACE(c);
        Ciphertext e = ev.zero_like(cx[c], 3, cx[c].level(), cx[c].scale() * cy[c].scale());
        ev.multiply_accumulate(e, cx[c], cy[c]);
        ev.multiply_accumulate(e, cy[c], cx[c]);
        EXPECT_TRUE(same_words(acc.at(c), e));
        Ciphertext ep = ev.zero_like(cx[c], 2, cx[c].level(), cx[c].scale() * p.scale());
        ev.multiply_accumulate(ep, cx[c], p);
        EXPECT_TRUE(same_words(accp.at(c), ep));
        Ciphertext ec = ev.zero_like(cx[c], 2, cx[c].level(), cx[c].scale() * 0x1p30);
        ev.multiply_accumulate(ec, cx[c], 0.5);
        EXPECT_TRUE(same_words(accc.at(c), ec));
    }
}

// multiply_plain_sum gives the words of multiply and multiply_accumulate term by term: past the
// 64 terms of one lazy accumulation, for one term, and for a batch with plaintexts per element or
// broadcast.
TEST_P(AccumulateTest, PlainSumsAreTheProductsTermByTerm) {
    Keys& K = k();
    const Evaluator& ev = *K.eval;
    const Context& ctx = *K.ctx;
    const size_t slots = ctx.max_slots();
    std::vector<Ciphertext> cx;
    std::vector<Plaintext> py;
    for (uint64_t i = 0; i < 70; ++i) {
        cx.push_back(K.encrypt(random_complex(slots, 1.0, 200 + i)));
        py.push_back(K.encoder->encode(random_complex(slots, 1.0, 300 + i)));
    }
    for (size_t terms : {size_t(1), size_t(3), size_t(64), size_t(70)}) {
        SCOPED_TRACE(terms);
        std::vector<const Ciphertext*> a;
        std::vector<const Plaintext*> b;
        Ciphertext want = ev.multiply(cx[0], py[0]);
        for (size_t j = 0; j < terms; ++j) {
            a.push_back(&cx[j]);
            b.push_back(&py[j]);
            if (j) ev.multiply_accumulate(want, cx[j], py[j]);
        }
        const Ciphertext got = ev.multiply_plain_sum(a, b);
        EXPECT_TRUE(same_words(got, want));
        EXPECT_EQ(got.scale(), want.scale());
    }
    // batches: element c of sum_j X_j * P_j is sum_j x_{j,c} * p_{j,c}; a Plaintext is broadcast
    std::vector<CiphertextBatch> xs;
    std::vector<PlaintextBatch> ps;
    for (size_t j = 0; j < 3; ++j) {
        const Ciphertext* members[] = {&cx[3 * j], &cx[3 * j + 1], &cx[3 * j + 2]};
        xs.push_back(CiphertextBatch::from_ciphertexts(ctx, std::span<const Ciphertext* const>(members)));
        const Plaintext three[] = {py[3 * j], py[3 * j + 1], py[3 * j + 2]};
        ps.push_back(PlaintextBatch::from_plaintexts(ctx, three));
    }
    const CiphertextBatch per = ev.multiply_plain_sum<CiphertextBatch, PlaintextBatch>({&xs[0], &xs[1], &xs[2]},
                                                                                        {&ps[0], &ps[1], &ps[2]});
    const CiphertextBatch shared =
        ev.multiply_plain_sum<CiphertextBatch, Plaintext>({&xs[0], &xs[1], &xs[2]}, {&py[0], &py[1], &py[2]});
    for (size_t c = 0; c < 3; ++c) {
        SCOPED_TRACE(c);
        Ciphertext e = ev.multiply(cx[c], py[c]), f = ev.multiply(cx[c], py[0]);
        for (size_t j = 1; j < 3; ++j) {
            ev.multiply_accumulate(e, cx[3 * j + c], py[3 * j + c]);
            ev.multiply_accumulate(f, cx[3 * j + c], py[j]);
        }
        EXPECT_TRUE(same_words(per.at(c), e));
        EXPECT_TRUE(same_words(shared.at(c), f));
    }
}

INSTANTIATE_TEST_SUITE_P(Presets, AccumulateTest, ::testing::Values("S1", "S2"));

TEST(AccumulateErrors, PlainSumsNeedMatchingTerms) {
    Keys& K = Keys::get("S1");
    const Evaluator& ev = *K.eval;
    const Ciphertext x = K.encrypt(random_complex(16, 1.0, 70)), y = ev.drop_to_level(x, 0);
    const Plaintext p = K.encoder->encode(random_complex(16, 1.0, 71));
    Ciphertext z = x;
    z.set_scale(x.scale() * 1.5);
    using Cts = std::vector<const Ciphertext*>;
    using Pts = std::vector<const Plaintext*>;
    EXPECT_ERROR(ValueError, ev.multiply_plain_sum(Cts{}, Pts{}), "multiply_plain_sum", "at least one");
    EXPECT_ERROR(ValueError, ev.multiply_plain_sum(Cts{&x, &x}, Pts{&p}), "2 ciphertexts and 1");
    EXPECT_ERROR(LevelMismatch, ev.multiply_plain_sum(Cts{&x, &y}, Pts{&p, &p}), "multiply_plain_sum");
    EXPECT_ERROR(ScaleMismatch, ev.multiply_plain_sum(Cts{&x, &z}, Pts{&p, &p}), "term 1", "scale");
}

TEST(AccumulateErrors, TheAccumulatorMustFitTheProducts) {
    Keys& K = Keys::get("S1");
    const Evaluator& ev = *K.eval;
    const Ciphertext x = K.encrypt(random_real(16, 1.0, 70));
    const Plaintext p = K.encoder->encode(random_real(16, 1.0, 71));
    Ciphertext acc = ev.zero_like(x, 2, x.level(), x.scale() * p.scale());
    const Ciphertext before = acc;
    Ciphertext wrong_scale = ev.zero_like(x, 2, x.level(), x.scale());
    EXPECT_ERROR(ScaleMismatch, ev.multiply_accumulate(wrong_scale, x, p), "multiply_accumulate", "accumulator");
    Ciphertext low = ev.zero_like(x, 2, 0, x.scale() * p.scale());
    EXPECT_ERROR(LevelMismatch, ev.multiply_accumulate(low, x, p), "multiply_accumulate", "one level");
    EXPECT_ERROR(ValueError, ev.multiply_accumulate(acc, x, x), "multiply_accumulate", "3 are needed");
    EXPECT_ERROR(ValueError, ev.multiply_accumulate(acc, x, x), "2 polynomials");
    EXPECT_ERROR(ValueError, ev.multiply_accumulate(wrong_scale, x, 0.5), "multiply_accumulate", "2^20");
    EXPECT_TRUE(same_words(acc, before));  // nothing written by a failing call
    EXPECT_ERROR(ValueError, ev.zero_like(x, 4, 0, 1.0), "zero_like", "2 or 3");
    EXPECT_ERROR(LevelMismatch, ev.multiply_to(x, 0.5, x.level(), x.scale()), "multiply_to", "below");
    EXPECT_ERROR(ValueError, ev.multiply_to(x, 0.5, 0, 1.0), "multiply_to", "2^20");
}

}  // namespace
}  // namespace oboro::test
