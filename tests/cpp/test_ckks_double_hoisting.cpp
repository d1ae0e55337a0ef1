// Double hoisting (the extended basis Q_level * P, ciphertext.hpp: Basis): rotations kept over
// Q_level * P are bit for bit the hoisted rotations once divided by P; a weighted sum of rotations
// accumulated there with plaintexts over Q_level * P and divided by P once matches the reference;
// batches give each element's words; an operand over Q_level * P rotates and rescales as its
// mod_down does; extended objects are refused wherever they do not belong.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "ckks_test_util.hpp"
#include "error_test_util.hpp"
#include "forwarding_queue.hpp"
#include "oboro/ckks/batch.hpp"
#include "oboro/io/serialize.hpp"

namespace oboro::test {
namespace {

class DoubleHoisting : public ::testing::TestWithParam<std::string> {
protected:
    Keys& k() { return Keys::get(GetParam()); }
    Evaluator eval() {
        Keys& K = k();
        return Evaluator(K.ctx, std::make_shared<const MemoryKeySet>(std::make_shared<const RelinKey>(K.rk),
                                                                    std::make_shared<const GaloisKeys>(K.gk)));
    }
};

TEST_P(DoubleHoisting, ExtendedRotationsDividedByPAreTheHoistedRotations) {
    Keys& K = k();
    const Evaluator ev = eval();
    const Ciphertext top = K.encrypt(random_complex(K.ctx->max_slots(), 1.0, 1));
    const int64_t last = int64_t(K.ctx->max_slots()) - 1;  // the largest left rotation
    for (const int level : {top.level(), 0}) {
        SCOPED_TRACE("level " + std::to_string(level));
        const Ciphertext x = ev.drop_to_level(top, level);
        const std::vector<int64_t> steps = {1, 0, 5, -1, last};
        KeySwitchCounts counts;
        const std::vector<Ciphertext> ext = ev.rotate_many_extended(x, steps, &counts);
        const std::vector<Ciphertext> plain = ev.rotate_many(x, steps);
        ASSERT_EQ(ext.size(), steps.size());
        for (size_t r = 0; r < steps.size(); ++r) {
            SCOPED_TRACE(steps[r]);
            EXPECT_EQ(ext[r].basis(), Basis::qp);
            EXPECT_EQ(ext[r].limbs(), x.limbs() + K.ctx->p_count());
            const Ciphertext down = ev.mod_down(ext[r]);
            EXPECT_EQ(down.basis(), Basis::q);
            EXPECT_EQ(down.level(), level);
            EXPECT_EQ(down.scale(), x.scale());
            EXPECT_TRUE(same_words(down, plain[r]));  // P * sigma(c0) + ip, divided by P: sigma(c0) + ModDown(ip)
        }
        EXPECT_EQ(counts, (KeySwitchCounts{1, 4, 0}));  // one ModUp, four inner products, no ModDown
    }
}

// y = sum_b w_b * rot(x, b): the rotations and the products stay over Q_level * P and one ModDown
// ends the sum.
TEST_P(DoubleHoisting, WeightedSumOfRotationsWithOneModDown) {
    Keys& K = k();
    const Context& ctx = *K.ctx;
    const Evaluator ev = eval();
    const size_t slots = ctx.max_slots();
    const auto xv = random_complex(slots, 1.0, 2);
    const Ciphertext x = K.encrypt(xv);
    const std::vector<int64_t> steps = {0, 1, 5, -1};
    std::vector<std::vector<cplx>> w;
    std::vector<Plaintext> w_ext;
    const double w_scale = double(ctx.q()[size_t(x.level())]);
    for (size_t b = 0; b < steps.size(); ++b) {
        w.push_back(random_complex(slots, 1.0, 10 + b));
        w_ext.push_back(K.encoder->encode_extended(w.back(), x.level(), w_scale, slots));
        EXPECT_EQ(w_ext.back().basis(), Basis::qp);
    }
    const std::vector<Ciphertext> rotated = ev.rotate_many_extended(x, steps);
    Ciphertext acc = ev.zero_like(x, 2, x.level(), x.scale() * w_scale, Basis::qp);
    for (size_t b = 0; b < steps.size(); ++b) ev.multiply_accumulate(acc, rotated[b], w_ext[b]);
    const Ciphertext y = ev.rescale(ev.mod_down(acc));
    std::vector<cplx> want(slots);
    for (size_t b = 0; b < steps.size(); ++b) {
        const auto r = roll(xv, steps[b]);
        for (size_t i = 0; i < slots; ++i) want[i] += w[b][i] * r[i];
    }
    EXPECT_GE(precision_bits(K.decrypt(y), want), 17);

    // the same sum from single-hoisted rotations, for comparison of precision
    const std::vector<Ciphertext> single = ev.rotate_many(x, steps);
    Ciphertext acc_q = ev.zero_like(x, 2, x.level(), x.scale() * w_scale);
    for (size_t b = 0; b < steps.size(); ++b)
        ev.multiply_accumulate(acc_q, single[b], K.encoder->encode(w[b], x.level(), w_scale, slots));
    EXPECT_GE(precision_bits(K.decrypt(ev.rescale(acc_q)), want), 17);

    // sums and differences of extended ciphertexts, and negation, stay extended
    const Ciphertext d = ev.sub(ev.add(rotated[1], rotated[2]), ev.negate(rotated[3]));
    std::vector<cplx> want_d(slots);
    for (size_t i = 0; i < slots; ++i) want_d[i] = roll(xv, 1)[i] + roll(xv, 5)[i] + roll(xv, -1)[i];
    EXPECT_GE(precision_bits(K.decrypt(ev.mod_down(d)), want_d), 18);
}

TEST_P(DoubleHoisting, BatchesGiveEachElementsWords) {
    Keys& K = k();
    const Context& ctx = *K.ctx;
    const Evaluator ev = eval();
    std::vector<Ciphertext> xs;
    for (uint64_t i = 0; i < 3; ++i) xs.push_back(K.encrypt(random_complex(ctx.max_slots(), 1.0, 20 + i)));
    const auto X = CiphertextBatch::from_ciphertexts(ctx, xs);
    const std::vector<int64_t> steps = {1, 0, 5};
    const std::vector<CiphertextBatch> ext = ev.rotate_many_extended(X, steps);
    const Plaintext w = K.encoder->encode_extended(random_complex(ctx.max_slots(), 1.0, 30), X.level(),
                                                   double(ctx.q()[size_t(X.level())]), ctx.max_slots());
    CiphertextBatch acc = ev.zero_like(X, 2, X.level(), X.scale() * w.scale(), Basis::qp);
    for (const CiphertextBatch& e : ext) ev.multiply_accumulate(acc, e, w);
    const CiphertextBatch down = ev.mod_down(acc);
    for (size_t c = 0; c < 3; ++c) {
        SCOPED_TRACE(c);
        const std::vector<Ciphertext> e = ev.rotate_many_extended(xs[c], steps);
        Ciphertext a = ev.zero_like(xs[c], 2, xs[c].level(), xs[c].scale() * w.scale(), Basis::qp);
        for (const Ciphertext& r : e) ev.multiply_accumulate(a, r, w);
        EXPECT_TRUE(same_words(ext[0].at(c), e[0]));
        EXPECT_TRUE(same_words(down.at(c), ev.mod_down(a)));
    }
}

// A queue with the extended basis but without fused multiply-accumulate kernels: the Queue's
// defaults (product into scratch, then add) over Q*P give the fused kernels' words.
class UnfusedExtendedQueue final : public ForwardingQueue {
public:
    const char* device_name() const override { return "cpu, unfused"; }
    bool extended_basis() const override { return true; }
    void extend(const Ring& r, BatchSpan o, ConstBatchSpan a) override { cpu().extend(r, o, a); }
    void mod_down(const Ring& r, BatchSpan o, ConstBatchSpan a) override { cpu().mod_down(r, o, a); }
    void rotate_hoisted_extended(const Ring& r, const BatchSpan* outs, size_t rotations, ConstBatchSpan a,
                                 const uint32_t* const* perms, const KeyView* const* keys) override {
        cpu().rotate_hoisted_extended(r, outs, rotations, a, perms, keys);
    }

private:
    static backend::Queue& cpu() { return *backend::cpu_queue(); }
};

TEST_P(DoubleHoisting, QueueDefaultsMultiplyAccumulateOverQP) {
    Keys& K = k();
    const Evaluator fused = eval(), unfused = fused.on(std::make_shared<UnfusedExtendedQueue>());
    // below the top level, where the special limbs do not follow the last ciphertext prime's index
    const Ciphertext x = fused.drop_to_level(K.encrypt(random_complex(K.ctx->max_slots(), 1.0, 50)), 0);
    const Plaintext w = K.encoder->encode_extended(random_complex(K.ctx->max_slots(), 1.0, 51), x.level(),
                                                   double(K.ctx->q()[size_t(x.level())]), K.ctx->max_slots());
    const std::vector<Ciphertext> rotated = fused.rotate_many_extended(x, {1, 5});
    Ciphertext a = fused.zero_like(x, 2, x.level(), x.scale() * w.scale(), Basis::qp), b = a;
    for (const Ciphertext& r : rotated) {
        fused.multiply_accumulate(a, r, w);
        unfused.multiply_accumulate(b, r, w);
    }
    EXPECT_TRUE(same_words(a, b));
}

// The CPU queue's mul_plain_sum (128-bit sums) and mul_plain_sums give the default's words
// (mul_plain and mul_plain_add term by term), over Q_level * P too.
TEST_P(DoubleHoisting, QueueDefaultsMultiplyPlainSumOverQP) {
    Keys& K = k();
    const Evaluator fused = eval(), unfused = fused.on(std::make_shared<UnfusedExtendedQueue>());
    const Ciphertext x = K.encrypt(random_complex(K.ctx->max_slots(), 1.0, 52));
    const std::vector<Ciphertext> rotated = fused.rotate_many_extended(x, {0, 1, 5});
    std::vector<Plaintext> w;
    for (uint64_t j = 0; j < rotated.size(); ++j)
        w.push_back(K.encoder->encode_extended(random_complex(K.ctx->max_slots(), 1.0, 53 + j), x.level(),
                                               double(K.ctx->q()[size_t(x.level())]), K.ctx->max_slots()));
    const std::vector<const Ciphertext*> a = {&rotated[0], &rotated[1], &rotated[2]};
    const std::vector<const Plaintext*> b = {&w[0], &w[1], &w[2]};
    const Ciphertext got = fused.multiply_plain_sum(a, b);
    EXPECT_EQ(got.basis(), Basis::qp);
    EXPECT_TRUE(same_words(got, unfused.multiply_plain_sum(a, b)));
    // several sums at once: the default (one mul_plain_sum each) and the CPU queue's fused pass
    const std::vector<std::vector<const Ciphertext*>> as = {a, {&rotated[2], &rotated[0]}};
    const std::vector<std::vector<const Plaintext*>> bs = {b, {&w[1], &w[2]}};
    const std::vector<Ciphertext> sums = fused.multiply_plain_sums(as, bs), default_sums = unfused.multiply_plain_sums(as, bs);
    EXPECT_TRUE(same_words(sums[0], got));
    for (size_t g = 0; g < as.size(); ++g) EXPECT_TRUE(same_words(sums[g], default_sums[g]));
}

// An operand already over Q_level * P (a sum of double hoisting): its rotation divides only c1 by
// P and rotates c0 as it is, its rescale divides by q_l * P at once. Both are the operations on
// its mod_down up to c0's rounding to a multiple of P; the queue defaults (mod_down first) give
// exactly the words of the operations on the mod_down.
TEST_P(DoubleHoisting, ExtendedOperandsRotateAndRescaleAsTheirModDown) {
    Keys& K = k();
    const Evaluator ev = eval(), unfused = ev.on(std::make_shared<UnfusedExtendedQueue>());
    const size_t slots = K.ctx->max_slots();
    const auto xv = random_complex(slots, 1.0, 60);
    const Ciphertext top = K.encrypt(xv);
    const int64_t last = int64_t(slots) - 1;
    for (const int level : {top.level(), 1, 0}) {
        SCOPED_TRACE("level " + std::to_string(level));
        const Ciphertext x = ev.drop_to_level(top, level);
        const std::vector<Ciphertext> babies = ev.rotate_many_extended(x, {1, 5});
        const Ciphertext s = ev.add(babies[0], babies[1]);  // over Q*P: rot(x, 1) + rot(x, 5)
        std::vector<cplx> sv(slots);
        for (size_t i = 0; i < slots; ++i) sv[i] = roll(xv, 1)[i] + roll(xv, 5)[i];
        const Ciphertext s_down = ev.mod_down(s);

        KeySwitchCounts counts;
        const std::vector<Ciphertext> r = ev.rotate_many_extended(s, {0, -1, last}, &counts);
        EXPECT_EQ(counts, (KeySwitchCounts{1, 2, 1}));  // one ModDown (of c1), one ModUp, two inner products
        ASSERT_EQ(r.size(), 3u);
        EXPECT_TRUE(same_words(r[0], s));  // a step 0: the operand itself
        for (size_t j = 1; j < r.size(); ++j) {
            const int64_t step = j == 1 ? -1 : last;
            SCOPED_TRACE(step);
            EXPECT_EQ(r[j].basis(), Basis::qp);
            EXPECT_EQ(r[j].level(), level);
            EXPECT_EQ(r[j].scale(), s.scale());
            const Ciphertext got = ev.mod_down(r[j]);
            EXPECT_GE(precision_bits(K.decrypt(got), roll(sv, step)), 17);
            // the default (mod_down of all of s, then the rotation) is the rotation of s_down, word
            // for word; the CPU queue's result differs from it by c0's rounding alone
            const Ciphertext by_default = unfused.mod_down(unfused.rotate_many_extended(s, {step})[0]);
            EXPECT_TRUE(same_words(by_default, ev.rotate(s_down, step)));
            EXPECT_GE(precision_bits(K.decrypt(got), K.decrypt(by_default)), 30);
        }

        // a batch gives each element's words
        const auto S = CiphertextBatch::from_ciphertexts(*K.ctx, std::vector<Ciphertext>{s, r[1]});
        const std::vector<CiphertextBatch> R = ev.rotate_many_extended(S, {-1});
        EXPECT_TRUE(same_words(R[0].at(0), r[1]));
        EXPECT_TRUE(same_words(R[0].at(1), ev.rotate_many_extended(r[1], {-1})[0]));

        if (level == 0) continue;
        // the end of a transform: s times diagonals at scale q_l over Q*P, then one rescale
        const double q_l = double(K.ctx->q()[size_t(level)]);
        const auto wv = random_complex(slots, 1.0, 61);
        Ciphertext t = ev.zero_like(s, 2, level, s.scale() * q_l, Basis::qp);
        ev.multiply_accumulate(t, s, K.encoder->encode_extended(wv, level, q_l, slots));
        std::vector<cplx> tv(slots);
        for (size_t i = 0; i < slots; ++i) tv[i] = sv[i] * wv[i];
        const Ciphertext y = ev.rescale(t);  // divided by q_l * P at once
        EXPECT_EQ(y.basis(), Basis::q);
        EXPECT_EQ(y.level(), level - 1);
        EXPECT_EQ(y.scale(), t.scale() / q_l);
        const Ciphertext two_steps = ev.rescale(ev.mod_down(t));
        EXPECT_EQ(y.scale(), two_steps.scale());
        EXPECT_GE(precision_bits(K.decrypt(y), tv), 17);
        EXPECT_GE(precision_bits(K.decrypt(y), K.decrypt(two_steps)), 30);  // one rounding against two
        EXPECT_TRUE(same_words(unfused.rescale(t), two_steps));            // the default: mod_down, then rescale
        const auto T2 = CiphertextBatch::from_ciphertexts(*K.ctx, std::vector<Ciphertext>{t, t});
        const CiphertextBatch Y = ev.rescale(T2);
        EXPECT_TRUE(same_words(Y.at(1), y));
    }
}

INSTANTIATE_TEST_SUITE_P(Presets, DoubleHoisting, ::testing::Values("S1", "S2"));

TEST(DoubleHoistingErrors, ExtendedObjectsAreRefusedWhereTheyDoNotBelong) {
    Keys& K = Keys::get("S1");
    const Evaluator ev(K.ctx, std::make_shared<const MemoryKeySet>(nullptr, std::make_shared<const GaloisKeys>(K.gk)));
    const Ciphertext x = K.encrypt(random_complex(16, 1.0, 40));
    const Ciphertext e = ev.extend(x);
    EXPECT_ERROR(LevelMismatch, ev.rescale(ev.extend(ev.drop_to_level(x, 0))), "rescale", "level 0");
    EXPECT_ERROR(ValueError, ev.rotate(e, 1), "rotate", "mod_down it first");
    EXPECT_ERROR(ValueError, ev.add(e, x), "add", "different bases");
    EXPECT_ERROR(ValueError, ev.mod_down(x), "mod_down", "not over the extended basis");
    EXPECT_ERROR(ValueError, K.decrypt(e), "decrypt", "mod_down it first");
    EXPECT_ERROR(ValueError, io::serialize(*K.ctx, e), "serialize", "mod_down it before serializing");
    Plaintext p = K.encoder->encode_extended(random_complex(16, 1.0, 41), x.level(), 0x1p40, 16);
    EXPECT_ERROR(ValueError, ev.multiply(x, p), "multiply", "different bases");
    EXPECT_ERROR(ValueError, p.drop_to_level(0), "reshape", "mod_down");
    EXPECT_TRUE(same_words(ev.mod_down(e), x));  // P * x divided by P is x exactly

    // a queue that does not run the extended basis says so before any work
    const Evaluator other(K.ctx, std::make_shared<const MemoryKeySet>(nullptr, std::make_shared<const GaloisKeys>(K.gk)),
                          std::make_shared<OffsiteQueue>());
    const auto X = CiphertextBatch::from_ciphertexts(*K.ctx, std::vector<Ciphertext>{x}).to_device(other.queue_ptr());
    EXPECT_ERROR(Error, other.rotate_many_extended(X, {1}), "rotate_many_extended", "not available on offsite");
    EXPECT_ERROR(Error, other.extend(X), "extend", "not available on offsite");
}

}  // namespace
}  // namespace oboro::test
