// The building blocks of circuits in the evaluator: multiply-accumulate without a temporary
// (plaintext, ciphertext and constant products into an accumulator), zero accumulators, and
// products that land exactly on a requested scale. Each is checked bit for bit against the
// unfused operations and against a double-precision reference, on a Ciphertext and on a batch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "ckks_test_util.hpp"
#include "error_test_util.hpp"
#include "forwarding_queue.hpp"
#include "oboro/backend/queue.hpp"
#include "oboro/ckks/batch.hpp"

namespace oboro::test {
namespace {

// The CPU queue's kernels behind the backend::Queue defaults for the fused ones (host memory).
class DefaultKernelsQueue final : public ForwardingQueue {
public:
    const char* device_name() const override { return "defaults"; }
};

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

// A constant times an operand above the accumulator's level: the words of the operand dropped to
// that level first, for a Ciphertext and a batch, down to level 0 (one limb), and a size-3 operand.
TEST_P(AccumulateTest, ConstantsFromAboveTheLevelAreTheDroppedOperand) {
    Keys& K = k();
    const Evaluator& ev = *K.eval;
    const Context& ctx = *K.ctx;
    std::vector<Ciphertext> cx;
    for (uint64_t i = 0; i < 2; ++i) cx.push_back(K.encrypt(random_complex(ctx.max_slots(), 1.0, 90 + i)));
    const auto X = CiphertextBatch::from_ciphertexts(ctx, cx);
    const Ciphertext x3 = ev.multiply(cx[0], cx[1]);
    for (int level : {ctx.max_level() - 1, 0}) {
        SCOPED_TRACE(level);
        const double scale = cx[0].scale() * 0x1p30;
        Ciphertext acc = ev.zero_like(cx[0], 2, level, scale), want = acc;
        ev.multiply_accumulate(acc, cx[0], -0.625);
        ev.multiply_accumulate(want, ev.drop_to_level(cx[0], level), -0.625);
        EXPECT_TRUE(same_words(acc, want));
        CiphertextBatch batch_acc = ev.zero_like(X, 2, level, scale);
        ev.multiply_accumulate(batch_acc, X, 0.375);
        for (size_t c = 0; c < 2; ++c) {
            Ciphertext one = ev.zero_like(cx[c], 2, level, scale);
            ev.multiply_accumulate(one, ev.drop_to_level(cx[c], level), 0.375);
            EXPECT_TRUE(same_words(batch_acc.at(c), one));
        }
        Ciphertext acc3 = ev.zero_like(x3, 3, level, x3.scale() * 0x1p30), want3 = acc3;
        ev.multiply_accumulate(acc3, x3, 1.5);
        ev.multiply_accumulate(want3, ev.drop_to_level(x3, level), 1.5);
        EXPECT_TRUE(same_words(acc3, want3));
    }
}

// A sum of constant terms in one call gives the words of the terms added one by one: operands at
// and above the accumulator's level, one operand twice, 1 to 17 terms, down to level 0, for a
// Ciphertext, a batch, and on a queue with the default kernels (a device's path without a GPU);
// and the values of sum_j c_j x_j.
TEST_P(AccumulateTest, ConstantSumsAreTheTermsOneByOne) {
    Keys& K = k();
    const Evaluator& ev = *K.eval;
    const Context& ctx = *K.ctx;
    const size_t slots = ctx.max_slots();
    std::vector<std::vector<cplx>> xs;
    std::vector<Ciphertext> cx;
    for (uint64_t i = 0; i < 17; ++i) {
        xs.push_back(random_complex(slots, 1.0, 700 + i));
        cx.push_back(K.encrypt(xs.back()));
    }
    const auto defaults = std::make_shared<DefaultKernelsQueue>();
    const Evaluator dev(K.ctx, defaults);
    for (int level : {ctx.max_level(), ctx.max_level() - 1, 0}) {
        SCOPED_TRACE(level);
        const Ciphertext at_level = ev.drop_to_level(cx[1], level);
        for (size_t terms : {size_t(1), size_t(3), size_t(17)}) {
            SCOPED_TRACE(terms);
            std::vector<const Ciphertext*> a;
            std::vector<double> c;
            for (size_t j = 0; j < terms; ++j) {
                a.push_back(j == 1 ? &at_level : &cx[j]);
                c.push_back(0.75 - 0.125 * double(j));
            }
            if (terms > 2) a[2] = a[0];  // the same operand twice
            // at q_level over the operands' scale, which the rescale brings back (level 0: the words only)
            const double scale = cx[0].scale() * (level > 0 ? double(ctx.q()[size_t(level)]) : 0x1p30);
            Ciphertext got = ev.zero_like(cx[0], 2, level, scale), want = got, on_defaults = got;
            ev.multiply_accumulate(got, a, c);
            for (size_t j = 0; j < terms; ++j) ev.multiply_accumulate(want, *a[j], c[j]);
            EXPECT_TRUE(same_words(got, want));
            dev.multiply_accumulate(on_defaults, a, c);
            EXPECT_TRUE(same_words(on_defaults, want));
            if (level > 0) {
                std::vector<cplx> ref(slots, 0);
                for (size_t j = 0; j < terms; ++j) {
                    const size_t x = a[j] == &at_level ? 1 : size_t(a[j] - cx.data());
                    for (size_t l = 0; l < slots; ++l) ref[l] += c[j] * xs[x][l];
                }
                EXPECT_GE(precision_bits(K.decrypt(ev.rescale(got)), ref), 18.0);
            }
        }
        // a batch: element e of the sum is the sum of the elements e
        const auto X0 = CiphertextBatch::from_ciphertexts(ctx, std::vector<Ciphertext>{cx[0], cx[1]});
        const auto X1 = CiphertextBatch::from_ciphertexts(ctx, std::vector<Ciphertext>{cx[2], cx[3]});
        CiphertextBatch batch = ev.zero_like(X0, 2, level, cx[0].scale() * 0x1p30);
        const std::vector<const CiphertextBatch*> terms{&X0, &X1};
        ev.multiply_accumulate(batch, terms, std::vector<double>{0.5, -1.5});
        for (size_t e = 0; e < 2; ++e) {
            Ciphertext one = ev.zero_like(cx[e], 2, level, cx[0].scale() * 0x1p30);
            ev.multiply_accumulate(one, cx[e], 0.5);
            ev.multiply_accumulate(one, cx[2 + e], -1.5);
            EXPECT_TRUE(same_words(batch.at(e), one));
        }
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

// Plaintexts of vectors that repeat with period p, encoded with p slots, are polynomials in
// X^(n / 2p): their NTT words come in runs (ckks::CompactPlaintext). Kept one word per run, they
// give multiply_plain_sum the dense plaintexts' words: runs shorter and longer than the CPU
// queue's expansion buffer, dense and compact terms mixed, a level of one limb (limbs cut into
// pieces), Q_level * P, and batches (a compact plaintext is the same for every element).
TEST_P(AccumulateTest, CompactPlainSumsGiveTheDenseWords) {
    Keys& K = k();
    const Evaluator& ev = *K.eval;
    const Context& ctx = *K.ctx;
    const size_t slots = ctx.max_slots(), n = ctx.n();
    const std::vector<size_t> periods = {1, 2, 16, slots / 8};  // runs of n/2 .. 8 words
    std::vector<Plaintext> dense;
    std::vector<CompactPlaintext> compact;
    for (int level : {ctx.max_level(), 0}) {
        SCOPED_TRACE(level);
        dense.clear();
        compact.clear();
        for (size_t t = 0; t < periods.size(); ++t) {
            const size_t p = periods[t];
            // at level 0 (one limb) a small scale keeps the products below q_0
            const std::optional<double> scale = level == 0 ? std::optional<double>(262144.0) : std::nullopt;
            Plaintext pt = K.encoder->encode(random_complex(p, 1.0, 400 + t), level, scale, p);
            compact.emplace_back(pt, n / (2 * p));
            EXPECT_EQ(compact.back().block(), n / (2 * p));
            EXPECT_EQ(compact.back().word_count(), pt.word_count() / (n / (2 * p)));
            const Plaintext back = compact.back().expanded();
            ASSERT_EQ(back.word_count(), pt.word_count());
            EXPECT_TRUE(std::equal(back.data(), back.data() + back.word_count(), pt.data()));
            EXPECT_EQ(back.level(), pt.level());
            EXPECT_EQ(back.scale(), pt.scale());
            dense.push_back(std::move(pt));
        }
        std::vector<Ciphertext> cx;
        for (uint64_t i = 0; i < 9; ++i) cx.push_back(K.encrypt(random_complex(slots, 1.0, 500 + i), level));
        std::vector<const Ciphertext*> a;
        std::vector<const Plaintext*> d;
        std::vector<const CompactPlaintext*> c;
        for (size_t j = 0; j < cx.size(); ++j) {
            a.push_back(&cx[j]);
            d.push_back(&dense[j % periods.size()]);
            c.push_back(&compact[j % periods.size()]);
        }
        const Ciphertext want = ev.multiply_plain_sum(a, d);
        const Ciphertext got = ev.multiply_plain_sum(a, c);
        EXPECT_TRUE(same_words(got, want));
        EXPECT_EQ(got.scale(), want.scale());
        // against the slot-wise reference: sum_j x_j * (p_j repeated)
        std::vector<cplx> ref(slots, 0);
        for (size_t j = 0; j < cx.size(); ++j) {
            const size_t t = j % periods.size();
            const auto x = random_complex(slots, 1.0, 500 + j), v = random_complex(periods[t], 1.0, 400 + t);
            for (size_t l = 0; l < slots; ++l) ref[l] += x[l] * v[l % periods[t]];
        }
        EXPECT_GE(precision_bits(K.decrypt(level ? ev.rescale(got) : got), ref), level ? 15.0 : 8.0);
        // a batch of three: each element's sum with the same compact plaintexts
        std::vector<CiphertextBatch> xs;
        for (size_t j = 0; j < 3; ++j) {
            const Ciphertext* members[] = {&cx[j], &cx[j + 3], &cx[j + 6]};
            xs.push_back(CiphertextBatch::from_ciphertexts(ctx, std::span<const Ciphertext* const>(members)));
        }
        const CiphertextBatch batch = ev.multiply_plain_sum<CiphertextBatch, CompactPlaintext>(
            {&xs[0], &xs[1], &xs[2]}, {&compact[0], &compact[1], &compact[3]});
        for (size_t e = 0; e < 3; ++e) {
            SCOPED_TRACE(e);
            const Ciphertext one = ev.multiply_plain_sum<Ciphertext, Plaintext>(
                {&cx[3 * e], &cx[3 * e + 1], &cx[3 * e + 2]}, {&dense[0], &dense[1], &dense[3]});
            EXPECT_TRUE(same_words(batch.at(e), one));
        }
    }
    // over Q_level * P (double hoisting's rotations times its diagonals)
    const int top = ctx.max_level();
    const Plaintext pe = K.encoder->encode_extended(random_complex(16, 1.0, 600), top, ctx.q()[size_t(top)], 16);
    const CompactPlaintext ce(pe, n / 32);
    const std::vector<Ciphertext> ext = ev.rotate_many_extended(K.encrypt(random_complex(slots, 1.0, 601)), {1, 5}, K.gk);
    EXPECT_TRUE(same_words(ev.multiply_plain_sum<Ciphertext, CompactPlaintext>({&ext[0], &ext[1]}, {&ce, &ce}),
                           ev.multiply_plain_sum<Ciphertext, Plaintext>({&ext[0], &ext[1]}, {&pe, &pe})));
}

// multiply_plain_sums gives each sum the words of its own multiply_plain_sum: sums sharing their
// ciphertexts (a linear transform's babies in each giant group), of different lengths (past the
// CPU queue's terms per pass) and scales, with dense and with compact plaintexts, at the top level
// and at level 0 (one limb: limbs cut into pieces), over Q_level * P and on batches.
TEST_P(AccumulateTest, PlainSumsGiveEachSumsWords) {
    Keys& K = k();
    const Evaluator& ev = *K.eval;
    const Context& ctx = *K.ctx;
    const size_t slots = ctx.max_slots(), n = ctx.n();
    for (int level : {ctx.max_level(), 0}) {
        SCOPED_TRACE(level);
        const std::optional<double> scale = level == 0 ? std::optional<double>(262144.0) : std::nullopt;
        std::vector<Plaintext> dense;
        std::vector<CompactPlaintext> compact;
        for (uint64_t t = 0; t < 6; ++t) {
            dense.push_back(K.encoder->encode(random_complex(16, 1.0, 700 + t), level, scale, 16));
            compact.emplace_back(dense.back(), n / 32);
        }
        std::vector<Ciphertext> cx;
        for (uint64_t i = 0; i < 6; ++i) cx.push_back(K.encrypt(random_complex(slots, 1.0, 710 + i), level));
        // sums of 1, 6 and 5 terms over the same ciphertexts, the last at another scale
        const std::vector<std::vector<size_t>> members = {{3}, {0, 1, 2, 3, 4, 5}, {5, 4, 2, 1, 0}};
        std::vector<std::vector<const Ciphertext*>> a;
        std::vector<std::vector<const Plaintext*>> d;
        std::vector<std::vector<const CompactPlaintext*>> c;
        for (size_t g = 0; g < members.size(); ++g) {
            a.emplace_back();
            d.emplace_back();
            c.emplace_back();
            for (size_t j : members[g]) {
                a.back().push_back(&cx[j]);
                d.back().push_back(&dense[(j + g) % dense.size()]);
                c.back().push_back(&compact[(j + g) % compact.size()]);
            }
        }
        Plaintext rescaled = dense[0];
        rescaled.set_scale(dense[0].scale() / 2);
        d[2] = std::vector<const Plaintext*>(d[2].size(), &rescaled);
        const std::vector<Ciphertext> got = ev.multiply_plain_sums(a, d), got_compact = ev.multiply_plain_sums(a, c);
        ASSERT_EQ(got.size(), members.size());
        ASSERT_EQ(got_compact.size(), members.size());
        for (size_t g = 0; g < members.size(); ++g) {
            SCOPED_TRACE(g);
            const Ciphertext want = ev.multiply_plain_sum(a[g], d[g]);
            EXPECT_TRUE(same_words(got[g], want));
            EXPECT_EQ(got[g].scale(), want.scale());
            EXPECT_TRUE(same_words(got_compact[g], ev.multiply_plain_sum(a[g], c[g])));
        }
        // against the slot-wise reference: sum 1 is sum_j x_j * (p_{j+1} repeated)
        std::vector<cplx> ref(slots, 0);
        for (size_t j : members[1]) {
            const auto x = random_complex(slots, 1.0, 710 + j), v = random_complex(16, 1.0, 700 + (j + 1) % dense.size());
            for (size_t l = 0; l < slots; ++l) ref[l] += x[l] * v[l % 16];
        }
        EXPECT_GE(precision_bits(K.decrypt(level ? ev.rescale(got[1]) : got[1]), ref), level ? 15.0 : 8.0);
        // batches: each element's sums
        const CiphertextBatch xb = CiphertextBatch::from_ciphertexts(ctx, std::vector<Ciphertext>{cx[0], cx[1]}),
                              yb = CiphertextBatch::from_ciphertexts(ctx, std::vector<Ciphertext>{cx[2], cx[3]});
        const std::vector<CiphertextBatch> batch = ev.multiply_plain_sums<CiphertextBatch, CompactPlaintext>(
            {{&xb, &yb}, {&yb}}, {{&compact[0], &compact[1]}, {&compact[2]}});
        for (size_t e = 0; e < 2; ++e) {
            SCOPED_TRACE(e);
            EXPECT_TRUE(same_words(batch[0].at(e), ev.multiply_plain_sum<Ciphertext, CompactPlaintext>(
                                                       {&cx[e], &cx[2 + e]}, {&compact[0], &compact[1]})));
            EXPECT_TRUE(same_words(batch[1].at(e),
                                   ev.multiply_plain_sum<Ciphertext, CompactPlaintext>({&cx[2 + e]}, {&compact[2]})));
        }
    }
    // over Q_level * P (double hoisting's rotations times its diagonals)
    const int top = ctx.max_level();
    const Plaintext pe = K.encoder->encode_extended(random_complex(16, 1.0, 720), top, ctx.q()[size_t(top)], 16);
    const CompactPlaintext ce(pe, n / 32);
    const std::vector<Ciphertext> ext = ev.rotate_many_extended(K.encrypt(random_complex(slots, 1.0, 721)), {0, 1, 5}, K.gk);
    const std::vector<Ciphertext> sums = ev.multiply_plain_sums<Ciphertext, CompactPlaintext>(
        {{&ext[0], &ext[1]}, {&ext[2], &ext[1], &ext[0]}}, {{&ce, &ce}, {&ce, &ce, &ce}});
    EXPECT_EQ(sums[1].basis(), Basis::qp);
    EXPECT_TRUE(same_words(sums[0], ev.multiply_plain_sum<Ciphertext, Plaintext>({&ext[0], &ext[1]}, {&pe, &pe})));
    EXPECT_TRUE(same_words(sums[1], ev.multiply_plain_sum<Ciphertext, Plaintext>({&ext[2], &ext[1], &ext[0]},
                                                                                  {&pe, &pe, &pe})));
}

// Encoder::encode_compact computes the runs directly (a transform of 2p words per limb): the words of
// the dense encoding's runs, for every period from a constant to runs of the shortest kept length,
// over Q_level and Q_level * P, at the top level, in the middle and at level 0, for complex and
// real values, and for coefficients of 2^63 and more (a scale far above the level's primes).
TEST_P(AccumulateTest, CompactEncodingsAreTheDenseEncodingsRuns) {
    Keys& K = k();
    const Context& ctx = *K.ctx;
    const size_t n = ctx.n(), slots = ctx.max_slots();
    uint64_t seed = 900;
    for (int level : {ctx.max_level(), ctx.max_level() / 2, 0})
        for (Basis basis : {Basis::q, Basis::qp})
            for (size_t p = 1; p <= slots / 8; p *= 2)
                for (double scale : {0x1p30, double(ctx.q()[size_t(level)]), 0x1p70}) {
                    SCOPED_TRACE(::testing::Message() << "level " << level << " basis qp " << (basis == Basis::qp)
                                                      << " period " << p << " scale " << scale);
                    // beyond the room of Q_level (q_0 alone: 2^30 only; 2^70 over Q_level * P only)
                    if ((level == 0 && scale > 0x1p30) || (scale > 0x1p60 && basis == Basis::q)) continue;
                    const bool real = p % 4 == 2;
                    const std::vector<cplx> v = real ? random_real(p, 1.0, ++seed) : random_complex(p, 1.0, ++seed);
                    const Plaintext dense = basis == Basis::qp ? K.encoder->encode_extended(v, level, scale, p)
                                                               : K.encoder->encode(v, level, scale, p);
                    const CompactPlaintext want(dense, n / (2 * p));
                    const CompactPlaintext got = K.encoder->encode_compact(v, level, scale, p, basis);
                    EXPECT_EQ(got.block(), want.block());
                    EXPECT_EQ(got.level(), want.level());
                    EXPECT_EQ(got.special_limbs(), want.special_limbs());
                    EXPECT_EQ(got.scale(), want.scale());
                    EXPECT_EQ(got.slots(), want.slots());
                    ASSERT_EQ(got.word_count(), want.word_count());
                    EXPECT_TRUE(std::equal(got.data(), got.data() + got.word_count(), want.data()));
                }
}

INSTANTIATE_TEST_SUITE_P(Presets, AccumulateTest, ::testing::Values("S1", "S2"));

// At N = 2^15 a limb is two of the CPU queue's pieces of a constant sum: the words of the terms one
// by one there too.
TEST(AccumulateLargeRing, ConstantSumsCrossPiecesOfALimb) {
    const auto ctx = Context::create(Parameters::preset("S3"));
    ASSERT_GE(ctx->n(), size_t(32768));
    KeyGenerator keygen(ctx);
    Encryptor encryptor(ctx, keygen.secret_key());
    const Encoder encoder(ctx);
    const Evaluator ev(ctx);
    std::vector<Ciphertext> cx;
    for (uint64_t i = 0; i < 3; ++i) cx.push_back(encryptor.encrypt(encoder.encode(random_complex(64, 1.0, 800 + i))));
    const int level = ctx->max_level() - 1;
    const std::vector<const Ciphertext*> a{&cx[0], &cx[1], &cx[2]};
    const std::vector<double> c{0.5, -0.25, 1.75};
    Ciphertext got = ev.zero_like(cx[0], 2, level, cx[0].scale() * 0x1p30), want = got;
    ev.multiply_accumulate(got, a, c);
    for (size_t j = 0; j < a.size(); ++j) ev.multiply_accumulate(want, *a[j], c[j]);
    EXPECT_TRUE(same_words(got, want));
}

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

TEST(AccumulateErrors, PlainSumsOfSeveralSumsAreChecked) {
    Keys& K = Keys::get("S1");
    const Evaluator& ev = *K.eval;
    const Ciphertext x = K.encrypt(random_complex(16, 1.0, 72)), y = ev.drop_to_level(x, 0);
    const Plaintext p = K.encoder->encode(random_complex(16, 1.0, 73));
    const Plaintext p0 = K.encoder->encode(random_complex(16, 1.0, 73), 0, 1024.0);
    Ciphertext z = x;
    z.set_scale(x.scale() * 1.5);
    using Cts = std::vector<std::vector<const Ciphertext*>>;
    using Pts = std::vector<std::vector<const Plaintext*>>;
    EXPECT_ERROR(ValueError, ev.multiply_plain_sums(Cts{}, Pts{}), "multiply_plain_sums", "at least one");
    EXPECT_ERROR(ValueError, ev.multiply_plain_sums(Cts{{&x}, {&x}}, Pts{{&p}}), "2 lists of ciphertexts and 1");
    EXPECT_ERROR(ValueError, ev.multiply_plain_sums(Cts{{&x}, {}}, Pts{{&p}, {}}), "sum 1 has no terms");
    EXPECT_ERROR(ValueError, ev.multiply_plain_sums(Cts{{&x}, {&x, &x}}, Pts{{&p}, {&p}}), "2 ciphertexts and 1");
    // every sum at the first's level (its terms numbered on from the sums before)
    EXPECT_ERROR(LevelMismatch, ev.multiply_plain_sums(Cts{{&x}, {&y}}, Pts{{&p}, {&p0}}), "term 1", "term 0's");
    EXPECT_ERROR(ScaleMismatch, ev.multiply_plain_sums(Cts{{&x}, {&x, &z}}, Pts{{&p}, {&p, &p}}), "term 2", "term 1's");
    // sums at scales of their own are fine
    const std::vector<Ciphertext> two = ev.multiply_plain_sums(Cts{{&x}, {&z}}, Pts{{&p}, {&p}});
    EXPECT_EQ(two[1].scale(), z.scale() * p.scale());
}

TEST(AccumulateErrors, CompactPlaintextsAreChecked) {
    Keys& K = Keys::get("S1");
    const Evaluator& ev = *K.eval;
    const Context& ctx = *K.ctx;
    const size_t n = ctx.n();
    const Plaintext sparse = K.encoder->encode(random_complex(16, 1.0, 80), std::nullopt, std::nullopt, 16);
    const Plaintext full = K.encoder->encode(random_complex(ctx.max_slots(), 1.0, 81));
    EXPECT_ERROR(ValueError, CompactPlaintext(full, 8), "CompactPlaintext", "not in runs of 8");
    EXPECT_ERROR(ValueError, CompactPlaintext(sparse, n / 16), "not in runs");  // runs are n/32 words
    EXPECT_ERROR(ValueError, CompactPlaintext(sparse, 3), "power of two");
    EXPECT_ERROR(ValueError, CompactPlaintext(sparse, 2 * n), "power of two");
    const CompactPlaintext c(sparse, n / 32);
    const Ciphertext x = K.encrypt(random_complex(16, 1.0, 82));
    const Ciphertext x3 = ev.multiply(x, x);
    using Cts = std::vector<const Ciphertext*>;
    using Cps = std::vector<const CompactPlaintext*>;
    const CompactPlaintext unit(K.encoder->encode(random_complex(16, 1.0, 83), std::nullopt, 1024.0, 16), n / 32);
    EXPECT_ERROR(ValueError, ev.multiply_plain_sum(Cts{&x3}, Cps{&unit}), "multiply_plain_sum", "3 polynomials");
    const Ciphertext low = ev.drop_to_level(x, 0);
    EXPECT_ERROR(LevelMismatch, ev.multiply_plain_sum(Cts{&low}, Cps{&c}), "multiply_plain_sum");
    // a queue that has no compact kernel (the default, which a device queue inherits) refuses it
    Ciphertext out = ev.multiply_plain_sum(Cts{&x}, Cps{&c});
    const oboro::backend::ConstBatchSpan a{x3.data(), 1, 3, x3.limbs(), n, 0}, b{c.data(), 1, 1, c.limbs(), c.n(), 0};
    const oboro::backend::BatchSpan o{out.mutable_data(), 1, 2, out.limbs(), n, 0};
    EXPECT_ERROR(Error, oboro::backend::cpu_queue()->mul_plain_sum(ctx.ring(), o, &a, &b, 1), "compact", "not on cpu");
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
    // a constant's operand may be above the accumulator's level, not below it
    Ciphertext high = ev.zero_like(x, 2, x.level(), x.scale() * 0x1p30);
    const Ciphertext before_high = high;
    EXPECT_ERROR(LevelMismatch, ev.multiply_accumulate(high, ev.drop_to_level(x, 0), 0.5), "multiply_accumulate",
                 "level or above");
    EXPECT_TRUE(same_words(high, before_high));
    // a sum of constant terms: every term checked before any is added
    const std::vector<const Ciphertext*> low_last{&x, &x, &(low = ev.drop_to_level(x, 0))};
    const std::vector<double> three_constants{0.5, 0.25, 0.125};
    EXPECT_ERROR(LevelMismatch, ev.multiply_accumulate(high, low_last, three_constants), "multiply_accumulate",
                 "level or above");
    const std::vector<const Ciphertext*> two{&x, &x}, with_null{&x, nullptr}, none;
    const std::vector<double> one_constant{0.5}, two_constants{0.5, 0.5}, no_constants;
    EXPECT_ERROR(ValueError, ev.multiply_accumulate(high, two, one_constant), "multiply_accumulate", "2 operands",
                 "1 constants");
    EXPECT_ERROR(ValueError, ev.multiply_accumulate(high, with_null, two_constants), "multiply_accumulate", "null");
    ev.multiply_accumulate(high, none, no_constants);  // no terms: nothing added
    EXPECT_TRUE(same_words(high, before_high));
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
