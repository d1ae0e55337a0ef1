// Bootstrapping (algorithms/bootstrap.hpp) on a small insecure ring: the DFT factorisation against
// the encoder, EvalMod's model, and whole bootstraps with full and sparse slots checked against
// the input values with a bound in bits.
#include <cstring>
#include <numbers>
#include <numeric>
#include <tuple>
#include <gtest/gtest.h>

#include "ckks_test_util.hpp"
#include "error_test_util.hpp"
#include "oboro/algorithms/bootstrap.hpp"
#include "oboro/algorithms/bootstrap_set.hpp"
#include "oboro/util/parallel.hpp"
#include "oboro/algorithms/polynomial_evaluator.hpp"
#include "oboro/ckks/auto_evaluator.hpp"
#include "oboro/io/checksum.hpp"
#include "oboro/io/serialize.hpp"

namespace oboro::test {
namespace {

using namespace oboro::algorithms;

std::vector<cplx> bit_reversed(std::vector<cplx> v) {
    bit_reverse_permute(v);
    return v;
}

TEST(HomomorphicDft, StagesAreTheEncodersFftWithoutTheBitReversal) {
    auto ctx = Context::create(small_parameters());
    Encoder encoder(ctx);
    for (size_t n : {2u, 4u, 16u}) {
        const std::vector<cplx> w = random_complex(n, 1.0, 7 + n);
        std::vector<cplx> z = w;
        encoder.embed(z);  // slots of the coefficients w
        // slots_to_coeffs: the stages applied to bit-reversed w give the slots
        std::vector<cplx> y = bit_reversed(w);
        for (const auto& stage : dft_stages(n, DftDirection::slots_to_coeffs)) y = apply_diagonals(stage, y);
        EXPECT_GT(precision_bits(y, z), 48) << n;
        // coeffs_to_slots: the stages applied to the slots give bit-reversed w
        std::vector<cplx> x = z;
        for (const auto& stage : dft_stages(n, DftDirection::coeffs_to_slots)) x = apply_diagonals(stage, x);
        EXPECT_GT(precision_bits(x, bit_reversed(w)), 48) << n;
        // merged into fewer matrices: the same maps
        for (int levels = 1; levels <= int(std::log2(double(n))); ++levels) {
            std::vector<cplx> m = bit_reversed(w);
            for (const auto& g : merge_stages(dft_stages(n, DftDirection::slots_to_coeffs), levels, n))
                m = apply_diagonals(g, m);
            EXPECT_GT(precision_bits(m, z), 48) << n << " " << levels;
        }
    }
    EXPECT_THROW(merge_stages(dft_stages(8, DftDirection::slots_to_coeffs), 4, 8), ValueError);
    EXPECT_THROW(dft_stages(6, DftDirection::slots_to_coeffs), ValueError);
}

// A stage of half-block h repeats with period 2h, so a product of stages repeats with the period of
// its largest: of CoeffsToSlots' three matrices only the first (the largest blocks) is dense, and
// the others' encodings are kept compact (LevelPlaintexts::block, ckks::CompactPlaintext) with the
// same words, in 1/block of the memory. SlotsToCoeffs is the same in the other order.
TEST(HomomorphicDft, OnlyTheLargestBlocksAreDense) {
    auto ctx = Context::create(small_parameters());
    const size_t n = ctx->max_slots(), log_n = size_t(std::log2(double(n)));
    const int level = ctx->max_level();
    for (DftDirection direction : {DftDirection::coeffs_to_slots, DftDirection::slots_to_coeffs}) {
        const std::vector<ComplexDiagonals> groups = merge_stages(dft_stages(n, direction), 3, n);
        ASSERT_EQ(groups.size(), 3u);
        // the stages per group: ceil and floor of log_n / 3, the larger groups first
        std::vector<size_t> sizes(3, log_n / 3);
        for (size_t g = 0; g < log_n % 3; ++g) ++sizes[g];
        for (size_t g = 0; g < 3; ++g) {
            SCOPED_TRACE(g);
            // the group's stages in application order: largest blocks first for coeffs_to_slots
            const size_t done = std::accumulate(sizes.begin(), sizes.begin() + long(g), size_t(0));
            const size_t largest = direction == DftDirection::coeffs_to_slots ? log_n - done : done + sizes[g];
            const size_t period = size_t(1) << largest;
            std::vector<std::vector<cplx>> vectors;
            for (const auto& [k, v] : groups[g]) vectors.push_back(v);
            const LevelPlaintexts pts(ctx, vectors, n, Basis::qp);
            const size_t block = ctx->n() / (2 * period);
            EXPECT_EQ(pts.block(), block >= LevelPlaintexts::kMinCompactBlock ? block : 1);
            if (pts.block() == 1) {
                EXPECT_ERROR(ValueError, pts.compact_at(level), "LevelPlaintexts", "block() is 1");
                continue;
            }
            const auto& compact = pts.compact_at(level);
            const auto& dense = pts.at(level);
            ASSERT_EQ(compact.size(), dense.size());
            for (size_t i = 0; i < dense.size(); ++i) {
                EXPECT_EQ(compact[i].word_count() * block, dense[i].word_count());
                const Plaintext back = compact[i].expanded();
                EXPECT_TRUE(std::equal(back.data(), back.data() + back.word_count(), dense[i].data()));
            }
        }
    }
}

TEST(EvalModModel, RemovesTheIntegerPart) {
    const EvalMod em(16, 3);
    EXPECT_LE(em.depth(), 9);
    EXPECT_LT(em.approximation_error(0x1p-20), 0x1p-20 * 0x1p-25);  // 25 bits of a message at 2^-20
    EXPECT_NEAR(em.model(5 + 0x1p-12), 0x1p-12, 0x1p-12 * 0x1p-20);
    // the sine's own error grows with the message: (2 pi e)^2 / 6 relative
    const double e = 0x1p-6;
    EXPECT_NEAR(em.approximation_error(e) / e, std::pow(2 * M_PI * e, 2) / 6, 1e-3 * std::pow(2 * M_PI * e, 2));
    EXPECT_THROW(EvalMod(-1, 3), ValueError);
    EXPECT_THROW(EvalMod(16, 3, 0), ValueError);
}

// Automatic double angles: the fewest levels, then the fewest double angles. For K' = 16.5 (an
// ephemeral secret of weight 32) r = 0, 1 and 2 all take 8 levels and r = 3 takes 9: r = 0, a sine
// of degree 151, as accurate as the fixed choices.
TEST(EvalModModel, ChoosesTheDoubleAnglesWithTheFewestLevels) {
    const EvalMod automatic(16);
    EXPECT_EQ(automatic.double_angles(), 0);
    EXPECT_EQ(automatic.depth(), 8);
    EXPECT_EQ(automatic.depth(), EvalMod(16, 2).depth());
    EXPECT_EQ(EvalMod(16, 3).depth(), 9);
    EXPECT_LT(automatic.approximation_error(0x1p-20), 0x1p-20 * 0x1p-25);
    // a small bound: a low-degree sine without double angles
    const EvalMod small(2);
    EXPECT_EQ(small.double_angles(), 0);
    EXPECT_LE(small.depth(), EvalMod(2, 1).depth());
    // a given degree is kept; the double angles are still chosen
    const EvalMod fixed(16, std::nullopt, 127);
    EXPECT_EQ(fixed.cosine().degree(), 127);
    EXPECT_THROW(EvalMod(16, 9), ValueError);
}

// The two-term sine series (Jutla and Manohar): its error on a message e is (2 pi)^4 e^5 / 30 instead
// of the sine's (2 pi)^2 e^3 / 6, for one product more (one level).
TEST(EvalModModel, TwoTermSeriesCancelsTheCubicError) {
    const EvalMod one(16), two(16, std::nullopt, std::nullopt, 2);
    EXPECT_EQ((one.terms()), 1);
    EXPECT_EQ(two.terms(), 2);
    EXPECT_EQ(two.double_angles(), one.double_angles());
    EXPECT_EQ(two.depth(), one.depth() + 1);
    for (const double e : {0x1p-8, 0x1p-6}) {
        const double series = std::pow(2 * M_PI * e, 4) / 30;  // relative to e
        EXPECT_NEAR(two.approximation_error(e) / e, series, 0.05 * series) << e;
        EXPECT_NEAR(one.approximation_error(e) / e, std::pow(2 * M_PI * e, 2) / 6, 0.05 * std::pow(2 * M_PI * e, 2) / 6);
    }
    EXPECT_LT(two.approximation_error(0x1p-20), 0x1p-20 * 0x1p-25);
    EXPECT_NEAR(two.model(-7 + 0x1p-10), 0x1p-10, 0x1p-10 * 0x1p-25);
    // through double angles too
    const EvalMod angles(16, 2, std::nullopt, 2);
    EXPECT_EQ(angles.depth(), EvalMod(16, 2).depth() + 1);
    EXPECT_NEAR(angles.approximation_error(0x1p-8) / 0x1p-8, std::pow(2 * M_PI * 0x1p-8, 4) / 30,
                0.05 * std::pow(2 * M_PI * 0x1p-8, 4) / 30);
    EXPECT_THROW(EvalMod(16, 0, std::nullopt, 3), ValueError);
    EXPECT_THROW(EvalMod(16, 0, std::nullopt, 0), ValueError);
}

// The series' cosine needs far less precision than the sine (it multiplies the small sine): at
// K' = 16.5 an interpolant of cos(2 pi t / 2^j) of lower degree and j double angles, in the sine's
// levels, with fewer key switches beside the sine than the cosine of the sine's degree; an explicit
// degree keeps that degree and the sine's double angles.
TEST(EvalModModel, SeriesCosineTakesFewerKeySwitches) {
    const EvalMod two(16, std::nullopt, std::nullopt, 2);
    // sin(2 pi t) with no double angle is odd and the cosine even: exactly, so the evaluator
    // computes only the powers of their parity
    EXPECT_TRUE(two.cosine().is_odd());
    EXPECT_TRUE(two.series_cosine().is_even());
    const int sine_depth = polynomial_depth(two.cosine());
    const int extra = two.series_cosine_double_angles() - two.double_angles();
    EXPECT_GT(extra, 0);
    EXPECT_LT(two.series_cosine().degree(), two.cosine().degree());
    EXPECT_LE(polynomial_depth(two.series_cosine()) + extra, sine_depth);
    const long double two_pi = 2 * std::numbers::pi_v<long double>;
    for (int i = -1000; i <= 1000; ++i) {
        const long double y = i / 1000.0L;
        long double c = evaluate_long(two.series_cosine(), y);
        for (int j = 0; j < two.series_cosine_double_angles(); ++j) c = 2 * c * c - 1;
        EXPECT_NEAR(double(c), double(std::cos(two_pi * two.interval() * y)), 0x1p-40) << double(y);
    }
    const Polynomial same_degree = chebyshev_interpolant_long(
        [&](long double y) { return std::cos(two_pi * two.interval() * y); }, -1, 1, two.cosine().degree());
    const auto key_switches = [&](const Polynomial& p, int angles) {
        return plan_polynomials({two.cosine(), p}, sine_depth, std::vector<int>{0, angles}).relinearizations +
               uint64_t(angles);
    };
    EXPECT_LT(key_switches(two.series_cosine(), extra), key_switches(same_degree, 0));
    const EvalMod given(16, 0, 151, 2);
    EXPECT_EQ(given.series_cosine().degree(), 151);
    EXPECT_EQ(given.series_cosine_double_angles(), 0);
}

// N = 2^12, a secret of Hamming weight 32, 2 levels left after bootstrapping: residual {60, 40,
// 40}, SlotsToCoeffs 3 x 45, EvalMod 8 x 61, CoeffsToSlots 3 x 61 (B1's circuit). Insecure (test only).
Parameters bootstrap_test_parameters() {
    Parameters p;
    p.log_n = 12;
    p.q_bits = {60, 40, 40, 45, 45, 45};
    for (int i = 0; i < 11; ++i) p.q_bits.push_back(61);
    // key switching adds about N sigma q_digit / P: digits of 3 primes (183 bits) under P = 244 bits
    p.p_bits = {61, 61, 61, 61};
    p.dnum = 6;
    p.secret = SecretDistribution::sparse_ternary;
    p.hamming_weight = 32;
    p.security = SecurityLevel::none;
    return p;
}

struct BootKeys {
    Keys keys{bootstrap_test_parameters()};
    static BootKeys& get() {
        static BootKeys k;
        return k;
    }
};

BootstrapConfig config_for(size_t slots) {
    BootstrapConfig c;
    c.slots = slots;
    return c;
}

std::vector<int64_t> joined(std::vector<int64_t> a, const std::vector<int64_t>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

// A bootstrapper for `slots` slots with its keys (and those of `extra` rotation steps).
BootstrapKeys keys_with(const Bootstrapper& boot, KeyGenerator& keygen, const std::vector<int64_t>& extra) {
    BootstrapKeys bk = boot.generate_keys(keygen);
    keygen.add_galois_keys(bk.galois, extra);
    return bk;
}

struct BootSetup {
    Keys& k = BootKeys::get().keys;
    Bootstrapper boot;
    BootstrapKeys bk;
    const GaloisKeys& gk = bk.galois;
    KeyRefs key_set;
    Evaluator eval;
    explicit BootSetup(size_t slots, const std::vector<int64_t>& extra = {})
        : boot(k.ctx, config_for(slots)),
          bk(keys_with(boot, *k.keygen, extra)),
          key_set(&k.rk, &bk.galois),
          eval(k.eval->with_keys(key_set)) {}
    template <typename T> T run(const T& x) const { return boot.bootstrap(CountedOps(eval, nullptr), x, bk); }
};

struct Outcome {
    double bits = 0;
    Ciphertext out;
};

Outcome run_bootstrap(const Bootstrapper& boot, const std::vector<cplx>& values, int input_level = 0,
                      Keys& k = BootKeys::get().keys) {
    const BootstrapKeys bk = boot.generate_keys(*k.keygen);
    const KeyRefs key_set(&k.rk, &bk.galois);
    const Evaluator eval = k.eval->with_keys(key_set);
    const Ciphertext in = k.encrypt(values, input_level, true, boot.slots());
    Outcome o;
    o.out = boot.bootstrap(CountedOps(eval, nullptr), in, bk);
    o.bits = precision_bits(k.decrypt(o.out), values);
    return o;
}

// Precision: -log2 of the largest error over the slots for |m| <= 1 (N = 2^12, message ratio
// 2^12; measured 24-27 bits with sparse slots and 24 with full slots: the sine's error and
// EvalMod's noise times 2^12, spread over sqrt(n) slots by SlotsToCoeffs).
void check_bootstrap(size_t slots, double min_bits) {
    Keys& k = BootKeys::get().keys;
    BootstrapConfig config;
    config.slots = slots;
    const Bootstrapper boot(k.ctx, config);
    const int dft = std::min(3, int(std::log2(double(slots))));
    EXPECT_EQ(boot.depth(), 2 * dft + boot.eval_mod().depth());
    EXPECT_EQ(boot.output_level(), k.ctx->max_level() - boot.depth());
    const std::vector<cplx> values = random_complex(slots, 1.0, 100 + slots);
    const Outcome o = run_bootstrap(boot, values);
    EXPECT_EQ(o.out.level(), boot.output_level());
    EXPECT_EQ(o.out.scale(), k.ctx->standard_scale(boot.output_level()));
    EXPECT_EQ(o.out.slots(), slots);
    EXPECT_GT(o.bits, min_bits) << "slots " << slots;
    EXPECT_GT(boot.precision_bits(), 25);  // the series' error at a coefficient of 1 (2^-26.3 at the ratio 2^8)
}

TEST(Bootstrap, FullSlots) { check_bootstrap(2048, 21); }
TEST(Bootstrap, SparseSlots) {
    for (size_t slots : {2u, 16u, 1024u}) check_bootstrap(slots, 21);
}

TEST(Bootstrap, EdgeValuesAndInputLevels) {
    const BootSetup setup(64);
    Keys& k = setup.k;
    const Bootstrapper& boot = setup.boot;
    // zeros, the interval ends +-1 and +-i, and an input above level 0 (dropped to it first)
    std::vector<cplx> values(64, cplx(0, 0));
    values[1] = 1;
    values[2] = -1;
    values[3] = cplx(0, 1);
    values[4] = cplx(0, -1);
    values[5] = cplx(1, -1);
    EXPECT_GT(run_bootstrap(boot, values).bits, 20);
    EXPECT_GT(run_bootstrap(boot, random_complex(64, 1.0, 3), 2).bits, 20);
    // the hardest input for EvalMod: every slot 1, the constant polynomial 1, where the series'
    // error is the model's (precision_bits(), 26.3 at the message ratio 2^8); full slots too
    EXPECT_GT(run_bootstrap(boot, std::vector<cplx>(64, cplx(1, 0))).bits, std::min(20.0, boot.precision_bits() - 1));
    const Bootstrapper full(k.ctx);
    EXPECT_GT(run_bootstrap(full, std::vector<cplx>(2048, cplx(-1, 0))).bits, 20);
    // inputs at the standard scales of levels of 61-bit primes (about 2^60, above what level 0
    // takes): brought below the message scale by one rescale on the way down
    for (int level : {9, k.ctx->max_level()}) {
        const std::vector<cplx> v = random_complex(64, 1.0, 50 + uint64_t(level));
        const Ciphertext in = k.pk_encryptor->encrypt(k.encoder->encode(v, level, k.ctx->standard_scale(level), 64));
        EXPECT_GT(in.scale(), boot.max_input_scale()) << level;
        EXPECT_GT(precision_bits(k.decrypt(setup.run(in)), v), 20) << level;
    }
    // a scale no rescale on the way down brings below it
    EXPECT_THROW(setup.run(k.pk_encryptor->encrypt(k.encoder->encode(values, 2, 0x1p92, 64))), ValueError);
    // a small scale is brought up to the message scale by an exact integer product
    Ciphertext small = k.pk_encryptor->encrypt(k.encoder->encode(random_complex(64, 1.0, 4), 0, 0x1p30, 64));
    const Ciphertext out = setup.run(small);
    EXPECT_GT(precision_bits(k.decrypt(out), k.encoder->decode(k.encoder->encode(random_complex(64, 1.0, 4), 0, 0x1p30, 64))), 14);
}

TEST(Bootstrap, ProductRotationAndASecondBootstrapAfterwards) {
    const BootSetup setup(32, {1});
    Keys& k = setup.k;
    const Bootstrapper& boot = setup.boot;
    const GaloisKeys& gk = setup.gk;
    const Evaluator& eval = setup.eval;
    const std::vector<cplx> x = random_real(32, 1.0, 11);
    Ciphertext ct = boot.bootstrap(CountedOps(eval, nullptr), k.encrypt(x, 0, true, 32), setup.bk);
    // x^2 rotated by one, then bootstrapped again from level 0
    Ciphertext sq = eval.multiply_relin_rescale(ct, ct);
    sq = eval.rotate(sq, 1, gk);
    std::vector<cplx> want(32);
    for (size_t i = 0; i < 32; ++i) want[i] = x[(i + 1) % 32] * x[(i + 1) % 32];
    EXPECT_GT(precision_bits(k.decrypt(sq), want), 19);
    sq = eval.drop_to_level(sq, 0);
    const Ciphertext again = boot.bootstrap(CountedOps(eval, nullptr), sq, setup.bk);
    EXPECT_EQ(again.level(), boot.output_level());
    EXPECT_GT(precision_bits(k.decrypt(again), want), 18);
}

TEST(Bootstrap, BatchBitForBitAsSingleCiphertexts) {
    const BootSetup setup(16);
    Keys& k = setup.k;
    const Bootstrapper& boot = setup.boot;
    const Evaluator& eval = setup.eval;
    std::vector<Ciphertext> cts;
    for (uint64_t s = 0; s < 3; ++s) cts.push_back(k.encrypt(random_complex(16, 1.0, 40 + s), 0, true, 16));
    const CiphertextBatch batch = CiphertextBatch::from_ciphertexts(*k.ctx, cts);
    const CiphertextBatch out = boot.bootstrap(CountedOps(eval, nullptr), batch, setup.bk);
    for (size_t c = 0; c < cts.size(); ++c)
        EXPECT_TRUE(same_words(out.at(c), boot.bootstrap(CountedOps(eval, nullptr), cts[c], setup.bk))) << c;
}

// A bootstrap on one and on two threads (full slots: EvalMod on the two parts): the same words.
TEST(Bootstrap, ThreadCountsGiveTheSameWords) {
    const BootSetup setup(2048);  // full slots: the parts are split
    Keys& k = setup.k;
    const Ciphertext in = k.encrypt(random_complex(2048, 1.0, 45), 0, true, 2048);
    const int threads = num_threads();
    set_num_threads(1);
    const Ciphertext one = setup.run(in);
    set_num_threads(2);
    const Ciphertext two = setup.run(in);
    set_num_threads(threads);
    EXPECT_TRUE(same_words(one, two));
    EXPECT_GT(precision_bits(k.decrypt(two), random_complex(2048, 1.0, 45)), 21);
}

// Two real inputs in one bootstrap: each output is its input's values at the output level and
// standard scale, with the precision of a single bootstrap (measured: within a bit of it).
void check_real_pair(size_t slots, double min_bits) {
    const BootSetup setup(slots);
    Keys& k = setup.k;
    const CountedOps ops(setup.eval, nullptr);
    const std::vector<cplx> re = random_real(slots, 1.0, 60 + slots), im = random_real(slots, 1.0, 61 + slots);
    // the second above level 0 (dropped to it), at the first's scale
    const Ciphertext x = k.encrypt(re, 0, true, slots);
    const Ciphertext y = k.pk_encryptor->encrypt(k.encoder->encode(im, 3, x.scale(), slots));
    const auto [a, b] = setup.boot.bootstrap_real_pair(ops, x, y, setup.bk);
    for (const Ciphertext* c : {&a, &b}) {
        EXPECT_EQ(c->level(), setup.boot.output_level());
        EXPECT_EQ(c->scale(), k.ctx->standard_scale(setup.boot.output_level()));
        EXPECT_EQ(c->slots(), slots);
    }
    const double bits_a = precision_bits(k.decrypt(a), re), bits_b = precision_bits(k.decrypt(b), im);
    EXPECT_GT(bits_a, min_bits) << slots;
    EXPECT_GT(bits_b, min_bits) << slots;
    std::printf("real pair, %zu slots: %.1f and %.1f bits\n", slots, bits_a, bits_b);
}

TEST(Bootstrap, TwoRealCiphertextsInOne) {
    check_real_pair(2048, 22);
    check_real_pair(64, 22);
    // the interval ends in both inputs
    const BootSetup setup(16);
    Keys& k = setup.k;
    const CountedOps ops(setup.eval, nullptr);
    std::vector<cplx> ends(16, cplx(1, 0)), zeros(16, cplx(0, 0));
    for (size_t i = 0; i < 16; i += 2) ends[i] = -1;
    const auto [a, b] = setup.boot.bootstrap_real_pair(ops, k.encrypt(ends, 0, true, 16), k.encrypt(ends, 0, true, 16), setup.bk);
    EXPECT_GT(precision_bits(k.decrypt(a), ends), 18);
    EXPECT_GT(precision_bits(k.decrypt(b), ends), 18);
    const auto [c, d] = setup.boot.bootstrap_real_pair(ops, k.encrypt(zeros, 0, true, 16), k.encrypt(ends, 0, true, 16), setup.bk);
    EXPECT_GT(precision_bits(k.decrypt(c), zeros), 18);
    EXPECT_GT(precision_bits(k.decrypt(d), ends), 18);
    // the transforms and EvalMod run once for the two (the counted operations of one bootstrap)
    const Ciphertext x = k.encrypt(ends, 0, true, 16);
    OpCounts one, pair;
    setup.boot.bootstrap(CountedOps(setup.eval, &one), x, setup.bk);
    setup.boot.bootstrap_real_pair(CountedOps(setup.eval, &pair), x, x, setup.bk);
    EXPECT_EQ(one, pair);
    // mismatched inputs
    const Ciphertext other_scale = k.pk_encryptor->encrypt(k.encoder->encode(ends, 0, 0x1p30, 16));
    EXPECT_THROW(setup.boot.bootstrap_real_pair(ops, x, other_scale, setup.bk), ValueError);
    EXPECT_THROW(setup.boot.bootstrap_real_pair(ops, x, k.encrypt(random_real(8, 1.0, 2), 0, true, 8), setup.bk),
                 ValueError);
    EXPECT_THROW(setup.boot.bootstrap_real_pair(ops, x, x, BootstrapKeys{}), MissingKey);
}

TEST(Bootstrap, RealBatchTwoPerBootstrap) {
    const BootSetup setup(16);
    Keys& k = setup.k;
    const CountedOps ops(setup.eval, nullptr);
    for (size_t count : {1u, 2u, 5u}) {
        std::vector<std::vector<cplx>> values;
        std::vector<Ciphertext> cts;
        for (size_t c = 0; c < count; ++c) {
            values.push_back(random_real(16, 1.0, 80 + c));
            cts.push_back(k.encrypt(values.back(), 0, true, 16));
        }
        const CiphertextBatch out = setup.boot.bootstrap_real(ops, CiphertextBatch::from_ciphertexts(*k.ctx, cts), setup.bk);
        ASSERT_EQ(out.count(), count);
        EXPECT_EQ(out.level(), setup.boot.output_level());
        EXPECT_EQ(out.scale(), k.ctx->standard_scale(setup.boot.output_level()));
        for (size_t c = 0; c < count; ++c) EXPECT_GT(precision_bits(k.decrypt(out.at(c)), values[c]), 20) << count << " " << c;
    }
}

TEST(Bootstrap, ClearErrors) {
    const BootSetup setup(16);
    Keys& k = setup.k;
    const Bootstrapper& boot = setup.boot;
    const GaloisKeys& gk = setup.gk;
    const Evaluator& eval = setup.eval;
    const Ciphertext ct = k.encrypt(random_complex(16, 1.0, 1), 0, true, 16);
    // missing rotation keys, conjugation key, relinearization key
    const BootstrapKeys some{k.keygen->galois_keys({1}, true), std::nullopt};
    EXPECT_THROW(boot.bootstrap(CountedOps(eval, nullptr), ct, some), MissingKey);
    const BootstrapKeys no_conj{k.keygen->galois_keys(boot.rotation_steps(), false), std::nullopt};
    EXPECT_THROW(boot.bootstrap(CountedOps(eval, nullptr), ct, no_conj), MissingKey);
    const KeyRefs galois_only(gk);
    EXPECT_THROW(boot.bootstrap(CountedOps(k.eval->with_keys(galois_only), nullptr), ct, setup.bk), MissingKey);
    // more slots than the bootstrapper's, a scale too large for the message ratio
    EXPECT_THROW(
        boot.bootstrap(CountedOps(eval, nullptr), k.encrypt(random_complex(32, 1.0, 1), 0, true, 32), setup.bk),
        ValueError);
    const Ciphertext big = k.pk_encryptor->encrypt(k.encoder->encode(random_complex(16, 1.0, 1), 0, 0x1p55, 16));
    EXPECT_THROW(boot.bootstrap(CountedOps(eval, nullptr), big, setup.bk), ValueError);
    // parameters that cannot bootstrap: an ephemeral weight EvalMod cannot handle, too few
    // levels, slots out of range
    Parameters dense = bootstrap_test_parameters();
    dense.secret = SecretDistribution::ternary;
    BootstrapConfig heavy;
    heavy.ephemeral_hamming_weight = 65;
    EXPECT_THROW(Bootstrapper(Context::create(dense), heavy), ParameterError);
    // an ephemeral secret too light for the 128-bit bound of its key (B1: q_0 p_0 = 121 bits)
    BootstrapConfig light;
    light.ephemeral_hamming_weight = 16;
    EXPECT_THROW(Bootstrapper(Context::create(Parameters::preset("B1")), light), ParameterError);
    Parameters shallow = bootstrap_test_parameters();
    shallow.q_bits.resize(10);
    EXPECT_THROW(Bootstrapper(Context::create(shallow)), ParameterError);
    BootstrapConfig bad;
    bad.slots = 3;
    EXPECT_THROW(Bootstrapper(k.ctx, bad), ParameterError);
    bad.slots = 4096;
    EXPECT_THROW(Bootstrapper(k.ctx, bad), ParameterError);
    // ModRaise takes level 0 only
    EXPECT_THROW(eval.mod_raise(k.encrypt(random_complex(16, 1.0, 1), 3, true, 16)), LevelMismatch);
}

// EvalMod's two-term series at the message ratio 2^8 (the automatic choice CoeffsToSlots first
// at a scale below 2^45): one level fewer left than the sine, a vector of ones near the series'
// bound (the sine leaves it 13 bits at 2^8) and random values at the lower noise of the smaller
// ratio; the output's level and scale exact. Measured at N = 2^12 with full slots: 25.9 bits for a
// vector of ones (13.3 with the sine), 27.2 for random values in the unit disk.
TEST(Bootstrap, TwoTermSineSeries) {
    Keys& k = BootKeys::get().keys;
    BootstrapConfig config = config_for(2048);
    const Bootstrapper boot(k.ctx, config);
    EXPECT_EQ(boot.eval_mod().terms(), 2);
    EXPECT_EQ(boot.message_ratio_bits(), 8);
    config.eval_mod_terms = 1;
    config.message_ratio_bits = 8;
    const Bootstrapper sine(k.ctx, config);
    EXPECT_EQ(sine.eval_mod().terms(), 1);
    config.message_ratio_bits.reset();
    EXPECT_EQ(Bootstrapper(k.ctx, config).message_ratio_bits(), 12);  // automatic with the sine
    EXPECT_EQ(boot.depth(), sine.depth() + 1);
    EXPECT_EQ(boot.output_level(), sine.output_level() - 1);
    EXPECT_LT(sine.precision_bits(), 14);
    EXPECT_GT(boot.precision_bits(), 25);
    const std::vector<cplx> ones(2048, cplx(1, 0));
    const std::vector<cplx> values = random_complex(2048, 1.0, 4242);
    const Outcome o = run_bootstrap(boot, ones);
    EXPECT_EQ(o.out.level(), boot.output_level());
    EXPECT_EQ(o.out.scale(), k.ctx->standard_scale(boot.output_level()));
    EXPECT_GT(o.bits, 24);
    EXPECT_GT(run_bootstrap(boot, values).bits, 24);
    EXPECT_LT(run_bootstrap(sine, ones).bits, 14);
}

// SlotsToCoeffs first: the input's own lowest levels take SlotsToCoeffs, so the output keeps
// SlotsToCoeffs' levels (5 here instead of 2 with the same EvalMod, the sine), and EvalMod sees the
// slot values themselves (at the message ratio 2^15). Measured at N = 2^12: 27-29 bits for random
// values in the unit disk with full, 64 and 2 slots, 27 for a vector of ones (against 26.7 and 21.3
// CoeffsToSlots first with the sine at the ratio 2^12).
TEST(Bootstrap, SlotsToCoeffsFirst) {
    Keys& k = BootKeys::get().keys;
    for (size_t slots : {2048u, 64u, 2u}) {
        BootstrapConfig config = config_for(slots);
        config.eval_mod_terms = 1;  // SlotsToCoeffs first's automatic EvalMod
        const Bootstrapper cts_first(k.ctx, config);
        config.eval_mod_terms.reset();
        config.order = BootstrapOrder::slots_to_coeffs_first;
        const Bootstrapper boot(k.ctx, config);
        const int stc = std::min(3, int(std::log2(double(slots))));
        EXPECT_EQ(boot.order(), BootstrapOrder::slots_to_coeffs_first);
        EXPECT_EQ(boot.min_input_level(), stc);
        EXPECT_EQ(cts_first.min_input_level(), 0);
        EXPECT_EQ(boot.output_level(), cts_first.output_level() + stc);
        EXPECT_EQ(boot.depth(), cts_first.depth() - stc);
        EXPECT_EQ(boot.message_ratio_bits(), 15);
        EXPECT_EQ(boot.eval_mod().terms(), 1);
        EXPECT_EQ(boot.iterations(), 1);
        const BootstrapKeys bk = boot.generate_keys(*k.keygen);
        for (const auto& [g, level] : boot.galois_key_levels()) EXPECT_LE(level, k.ctx->max_level());
        const KeyRefs key_set(&k.rk, &bk.galois);
        const Evaluator eval = k.eval->with_keys(key_set);
        const CountedOps ops(eval, nullptr);
        // at the lowest level it takes, above it, at the top, a vector of ones, and a scale of 2^55
        // above the lowest level (brought down by one rescale)
        const std::vector<cplx> values = random_complex(slots, 1.0, 400 + slots);
        for (const Ciphertext& in :
             {k.encrypt(values, stc, true, slots), k.encrypt(values, stc + 2, true, slots),
              k.encrypt(values, k.ctx->max_level(), true, slots),
              k.pk_encryptor->encrypt(k.encoder->encode(values, stc + 1, 0x1p55, slots))}) {
            const Ciphertext out = boot.bootstrap(ops, in, bk);
            EXPECT_EQ(out.level(), boot.output_level());
            EXPECT_EQ(out.scale(), k.ctx->standard_scale(boot.output_level()));
            EXPECT_EQ(out.slots(), slots);
            EXPECT_GT(precision_bits(k.decrypt(out), values), 25) << slots << " from level " << in.level();
        }
        const std::vector<cplx> ones(slots, cplx(1, 0));
        const Ciphertext fresh = boot.bootstrap(ops, k.encrypt(ones, stc, true, slots), bk);
        EXPECT_GT(precision_bits(k.decrypt(fresh), ones), 25) << slots;
        // a second bootstrap of the output, a product and a rotation of it
        const Ciphertext again = boot.bootstrap(ops, fresh, bk);
        EXPECT_GT(precision_bits(k.decrypt(again), ones), 24) << slots;
        EXPECT_GT(precision_bits(k.decrypt(eval.multiply_relin_rescale(again, again)), ones), 23) << slots;
        // two real inputs in one bootstrap, the second above the lowest level at the first's scale
        const std::vector<cplx> re = random_real(slots, 1.0, 410), im = random_real(slots, 1.0, 411);
        const Ciphertext x = k.encrypt(re, stc, true, slots);
        const Ciphertext y = k.pk_encryptor->encrypt(k.encoder->encode(im, stc + 3, x.scale(), slots));
        const auto [a, b] = boot.bootstrap_real_pair(ops, x, y, bk);
        EXPECT_EQ(a.level(), boot.output_level());
        EXPECT_GT(precision_bits(k.decrypt(a), re), 25) << slots;
        EXPECT_GT(precision_bits(k.decrypt(b), im), 25) << slots;
        // a batch: element by element, bit for bit
        std::vector<Ciphertext> cts;
        for (uint64_t c = 0; c < 3; ++c) cts.push_back(k.encrypt(random_complex(slots, 1.0, 420 + c), stc, true, slots));
        const CiphertextBatch out = boot.bootstrap(ops, CiphertextBatch::from_ciphertexts(*k.ctx, cts), bk);
        for (size_t c = 0; c < cts.size(); ++c) EXPECT_TRUE(same_words(out.at(c), boot.bootstrap(ops, cts[c], bk))) << c;
        // below the lowest level, or too large a scale there
        EXPECT_ERROR(ValueError, boot.bootstrap(ops, k.encrypt(values, stc - 1, true, slots), bk), "SlotsToCoeffs first",
                     "level " + std::to_string(stc));
        EXPECT_THROW(boot.bootstrap(ops, k.pk_encryptor->encrypt(k.encoder->encode(values, stc, 0x1p55, slots)), bk),
                     ValueError);
    }
    // one iteration only, also where the output scale would choose two
    BootstrapConfig two = config_for(16);
    two.order = BootstrapOrder::slots_to_coeffs_first;
    two.iterations = 2;
    EXPECT_ERROR(ParameterError, Bootstrapper(k.ctx, two), "SlotsToCoeffs first", "one iteration");
    // too few levels for CoeffsToSlots and EvalMod
    Parameters shallow = bootstrap_test_parameters();
    shallow.q_bits.resize(11);
    two.iterations = std::nullopt;
    EXPECT_THROW(Bootstrapper(Context::create(shallow), two), ParameterError);
}

// Preset B2's chain in the small ring: residual {60, 48, 48}, so the output level's scale is 2^48
// and its noise floor 8 bits lower than at 2^40, where two iterations are the automatic choice.
// Measured 38 bits with full slots and 42 with 64 slots (a secret key of weight 32, no
// encapsulation, and N = 2^12: less noise than B2 at N = 2^16, which gives 34.5), against 25-27
// with one iteration.
Parameters high_precision_test_parameters() {
    Parameters p = bootstrap_test_parameters();
    p.q_bits[1] = p.q_bits[2] = 48;
    p.scale = 0x1p48;
    return p;
}

TEST(Bootstrap, TwoIterationsForHighPrecision) {
    static Keys k(high_precision_test_parameters());
    BootstrapConfig one_iteration;
    one_iteration.iterations = 1;
    for (size_t slots : {2048u, 64u}) {
        BootstrapConfig config = config_for(slots);
        const Bootstrapper twice(k.ctx, config);
        config.iterations = 1;
        const Bootstrapper once(k.ctx, config);
        EXPECT_EQ(twice.iterations(), 2);  // automatic at an output scale of 2^48
        EXPECT_EQ(twice.output_level(), once.output_level());
        EXPECT_EQ(twice.depth(), once.depth());
        EXPECT_EQ(twice.cost(), repeated(once.cost(), 2));
        EXPECT_GE(twice.iteration_scale_bits(), 14);
        EXPECT_GT(twice.precision_bits(), once.precision_bits() + twice.iteration_scale_bits() - 1);
        const BootstrapKeys bk = twice.generate_keys(*k.keygen);
        const KeyRefs key_set(&k.rk, &bk.galois);
        const Evaluator eval = k.eval->with_keys(key_set);
        const CountedOps ops(eval, nullptr);
        // random values, the interval ends and the hardest input (every slot 1), one above level 0
        std::vector<cplx> ends(slots, cplx(1, 0));
        for (size_t i = 0; i < slots; i += 2) ends[i] = cplx(-1, i % 4 ? 1 : -1) / std::sqrt(2.0);
        for (const auto& [values, level] : {std::pair{random_complex(slots, 1.0, 300 + slots), 0},
                                           std::pair{ends, 0}, std::pair{std::vector<cplx>(slots, cplx(1, 0)), 0},
                                           std::pair{random_complex(slots, 1.0, 301), 2}}) {
            const Ciphertext in = k.encrypt(values, level, true, slots);
            const Ciphertext out = twice.bootstrap(ops, in, bk);
            EXPECT_EQ(out.level(), twice.output_level());
            EXPECT_EQ(out.scale(), k.ctx->standard_scale(twice.output_level()));
            const double bits = precision_bits(k.decrypt(out), values);
            EXPECT_GT(bits, 34) << slots << " level " << level;
            if (level == 0) EXPECT_GT(bits, precision_bits(k.decrypt(once.bootstrap(ops, in, bk)), values) + 6) << slots;
        }
        // two real inputs in one bootstrap, iterated the same way
        const std::vector<cplx> re = random_real(slots, 1.0, 302), im = random_real(slots, 1.0, 303);
        const auto [a, b] = twice.bootstrap_real_pair(ops, k.encrypt(re, 0, true, slots), k.encrypt(im, 0, true, slots), bk);
        EXPECT_GT(precision_bits(k.decrypt(a), re), 33) << slots;
        EXPECT_GT(precision_bits(k.decrypt(b), im), 33) << slots;
    }
    // B1's chain (an output scale of 2^40): one iteration unless asked
    EXPECT_EQ(Bootstrapper(BootKeys::get().keys.ctx, config_for(16)).iterations(), 1);
    BootstrapConfig two = config_for(16);
    two.iterations = 2;
    EXPECT_EQ(Bootstrapper(BootKeys::get().keys.ctx, two).iterations(), 2);
    // 3 iterations, and 2 where the output is at level 0 (the comparison takes a rescale)
    BootstrapConfig three = config_for(16);
    three.iterations = 3;
    EXPECT_THROW(Bootstrapper(k.ctx, three), ParameterError);
    Parameters no_level_left = high_precision_test_parameters();
    no_level_left.q_bits.erase(no_level_left.q_bits.begin() + 1, no_level_left.q_bits.begin() + 3);
    EXPECT_THROW(Bootstrapper(Context::create(no_level_left), two), ParameterError);
    two.iterations = 1;
    EXPECT_EQ(Bootstrapper(Context::create(no_level_left), two).output_level(), 0);
}

// A dense secret key: the input is switched to an ephemeral secret of weight 32 for ModRaise and
// back (sparse-secret encapsulation). Measured 21 bits with full slots against 24 for the weight-32
// secret key: the rescalings' rounding noise grows with |s| (sqrt(2N/3) = 52 against sqrt(32) = 6,
// 3 bits), which is why the bootstrappable presets keep a sparse secret key of weight 192.
TEST(Bootstrap, DenseSecretThroughEncapsulation) {
    Parameters p = bootstrap_test_parameters();
    p.secret = SecretDistribution::ternary;
    p.hamming_weight = 0;
    static Keys dense(p);
    for (size_t slots : {16u, 2048u}) {
        const Bootstrapper boot(dense.ctx, config_for(slots));
        EXPECT_TRUE(boot.encapsulates());
        const std::vector<cplx> values = random_complex(slots, 1.0, 40 + slots);
        const Outcome o = run_bootstrap(boot, values, 0, dense);
        EXPECT_GT(o.bits, 19) << slots;
        EXPECT_EQ(o.out.level(), boot.output_level());
        EXPECT_EQ(o.out.scale(), dense.ctx->standard_scale(boot.output_level()));
    }
    // without the encapsulation keys: refused, not a wrong result
    const Bootstrapper boot(dense.ctx, config_for(16));
    BootstrapKeys bk = boot.generate_keys(*dense.keygen);
    ASSERT_TRUE(bk.encapsulation.has_value());
    EXPECT_EQ(bk.encapsulation->ephemeral_hamming_weight, 32);
    EXPECT_EQ(key_level(bk.encapsulation->to_ephemeral), 0);
    EXPECT_EQ(bk.encapsulation->to_ephemeral.special, size_t(1));  // q_0 over one 61-bit prime
    const KeyRefs key_set(&dense.rk, &bk.galois);
    const Evaluator eval = dense.eval->with_keys(key_set);
    const Ciphertext ct = dense.encrypt(random_complex(16, 1.0, 2), 0, true, 16);
    bk.encapsulation.reset();
    EXPECT_THROW(boot.bootstrap(CountedOps(eval, nullptr), ct, bk), MissingKey);
    // keys made for a heavier ephemeral secret than EvalMod removes: refused
    bk.encapsulation = dense.keygen->encapsulation_keys(48);
    EXPECT_THROW(boot.bootstrap(CountedOps(eval, nullptr), ct, bk), ValueError);
    EXPECT_THROW(dense.keygen->encapsulation_keys(0), ValueError);
}

TEST(Evaluator, SwitchKeyMovesACiphertextToAnotherSecret) {
    Keys& k = BootKeys::get().keys;
    KeyGenerator other(k.ctx);  // another secret in the same context
    Encryptor under_other(k.ctx, other.secret_key());
    // the key from the other secret to k's: a ciphertext under it decrypts under k after the switch
    const KeySwitchKey key = k.keygen->switching_key(other.secret_key()->ntt.data(), 5);
    const std::vector<cplx> values = random_complex(64, 1.0, 9);
    const Ciphertext ct = under_other.encrypt(k.encoder->encode(values, 5, std::nullopt, 64));
    // not decryptable before: under the wrong key it decrypts to uniform garbage, refused as wrapped
    EXPECT_THROW(k.decrypt(ct), ModulusOverflow);
    EXPECT_GT(precision_bits(k.decrypt(k.eval->switch_key(ct, key)), values), 25);
    // a key made below the ciphertext's level, an empty key
    const KeySwitchKey low = k.keygen->switching_key(other.secret_key()->ntt.data(), 2);
    EXPECT_THROW(k.eval->switch_key(ct, low), LevelMismatch);
    EXPECT_THROW(k.eval->switch_key(ct, KeySwitchKey{}), MissingKey);
}

// A ciphertext of fewer slots goes through a bootstrapper of more: its values repeat in the larger
// layout, and it comes back with its own slot count.
TEST(Bootstrap, FewerSlotsThanTheBootstrapper) {
    const BootSetup setup(64);
    const std::vector<cplx> values = random_complex(8, 1.0, 21);
    const Ciphertext out = setup.run(setup.k.encrypt(values, 0, true, 8));
    EXPECT_EQ(out.slots(), 8u);
    EXPECT_GT(precision_bits(setup.k.decrypt(out), values), 21);
}

// The keys travel through the checked format (io::serialize, record type bootstrap_keys): loaded,
// they bootstrap bit for bit as the originals; seeded, they take about half the bytes; damaged or
// cut, they are refused.
TEST(Bootstrap, KeysRoundTripThroughTheCheckedFormat) {
    Parameters p = bootstrap_test_parameters();
    p.hamming_weight = 192;  // encapsulation keys too
    static Keys k(p);
    BootstrapConfig config = config_for(16);
    config.message_ratio_bits = 11;
    const Bootstrapper boot(k.ctx, config);
    const BootstrapKeys bk = boot.generate_keys(*k.keygen);
    const io::Bytes seeded = io::serialize(*k.ctx, config, bk);
    const io::Bytes plain = io::serialize(*k.ctx, config, bk, /*compress=*/false);
    EXPECT_LT(seeded.size(), plain.size() * 6 / 10);
    EXPECT_EQ(io::peek_type(seeded), io::ObjectType::bootstrap_keys);
    for (const bool from_seeds : {true, false}) {
        const io::Bytes& bytes = from_seeds ? seeded : plain;
        auto [loaded_config, loaded] = io::load_bootstrap_keys(*k.ctx, bytes);
        EXPECT_EQ(loaded_config.slots, config.slots);
        EXPECT_EQ(loaded_config.message_ratio_bits, 11);
        EXPECT_FALSE(loaded_config.cosine_degree.has_value());
        EXPECT_FALSE(loaded_config.double_angles.has_value());
        ASSERT_TRUE(loaded.encapsulation.has_value());
        EXPECT_EQ(loaded.galois.keys.size(), bk.galois.keys.size());
        const Bootstrapper again(k.ctx, loaded_config);
        again.apply_memory_policy(loaded);
        const KeyRefs key_set(&k.rk, &loaded.galois);
        const Evaluator eval = k.eval->with_keys(key_set);
        const KeyRefs original_set(&k.rk, &bk.galois);
        const Evaluator original = k.eval->with_keys(original_set);
        const Ciphertext ct = k.encrypt(random_complex(16, 1.0, 30), 0, true, 16);
        EXPECT_TRUE(same_words(again.bootstrap(CountedOps(eval, nullptr), ct, loaded),
                               boot.bootstrap(CountedOps(original, nullptr), ct, bk)));
        // the default keeps the uniform halves of the keys used once as seeds: so do keys loaded
        // from their seeds once the policy is applied; keys written whole have none to keep
        EXPECT_TRUE(loaded_config.memory.seeded_keys);
        EXPECT_EQ(loaded_config.memory.whole_key_reads, 2.0);
        for (const auto& [g, key] : loaded.galois.keys)
            EXPECT_EQ(key->a_stored(), !from_seeds || bk.galois.at(g).a_stored()) << g;
        EXPECT_EQ(loaded.encapsulation->from_ephemeral.a_stored(), !from_seeds);
    }
    EXPECT_FALSE(bk.encapsulation->to_ephemeral.a_stored());
    // the order, the iterations, an automatic message ratio (format version 4), the memory
    // policy (5; seeded keys from 8, the uses from which a key stays whole from 9) and EvalMod's
    // terms (6; automatic from 7) travel too
    BootstrapConfig stc_first = config_for(16);
    stc_first.order = BootstrapOrder::slots_to_coeffs_first;
    stc_first.iterations = 1;
    stc_first.memory = MemoryPolicy::low();
    stc_first.eval_mod_terms = 2;
    const io::Bytes v9 = io::serialize(*k.ctx, stc_first, bk, /*compress=*/false);
    EXPECT_EQ(v9[8], 9);
    const BootstrapConfig loaded_v9 = io::load_bootstrap_keys(*k.ctx, v9).first;
    EXPECT_EQ(loaded_v9.order, BootstrapOrder::slots_to_coeffs_first);
    EXPECT_EQ(loaded_v9.iterations, 1);
    EXPECT_FALSE(loaded_v9.message_ratio_bits.has_value());
    EXPECT_EQ(loaded_v9.memory, MemoryPolicy::low());
    EXPECT_EQ(loaded_v9.eval_mod_terms, 2);
    BootstrapConfig whole_from_3 = config_for(16);
    whole_from_3.memory.whole_key_reads = 3.5;
    EXPECT_EQ(io::load_bootstrap_keys(*k.ctx, io::serialize(*k.ctx, whole_from_3, bk)).first.memory.whole_key_reads, 3.5);
    EXPECT_FALSE(io::load_bootstrap_keys(*k.ctx, plain).first.eval_mod_terms.has_value());  // automatic
    BootstrapConfig whole = config_for(16);
    whole.memory = kFastBootstrapMemory;
    EXPECT_EQ(io::load_bootstrap_keys(*k.ctx, io::serialize(*k.ctx, whole, bk)).first.memory, kFastBootstrapMemory);
    // A record written by an older version, with its checksum and size recomputed: the bytes of
    // `config` with its keys stored whole (memory flags 0) in the layout of version 8 (without
    // version 9's f64 at payload offset 45), without the `cut` bytes at payload offset `at`, and
    // `set` written over.
    BootstrapConfig config_whole = config;
    config_whole.memory = kFastBootstrapMemory;
    const io::Bytes plain_whole = io::serialize(*k.ctx, config_whole, bk, /*compress=*/false);
    const auto older = [&](uint8_t version, size_t at, size_t cut, std::optional<std::pair<size_t, uint8_t>> set = {}) {
        io::Bytes old(plain_whole.begin(), plain_whole.end() - long(io::kChecksumSize));
        old.erase(old.begin() + 32 + 45, old.begin() + 32 + 53);
        if (set) old[32 + set->first] = set->second;
        old.erase(old.begin() + long(32 + at), old.begin() + long(32 + at + cut));
        old[8] = version;
        const uint64_t payload = old.size() - io::kHeaderSize;
        for (int i = 0; i < 8; ++i) old[24 + size_t(i)] = uint8_t(payload >> (8 * i));
        const uint64_t sum = io::xxh64(old.data(), old.size());
        for (int i = 0; i < 8; ++i) old.push_back(uint8_t(sum >> (8 * i)));
        return old;
    };
    // version 8: every seeded key seeded (no uses from which a key stays whole)
    BootstrapConfig all_seeded = config;
    all_seeded.memory.whole_key_reads = 0;
    EXPECT_EQ(io::load_bootstrap_keys(*k.ctx, older(8, 0, 0, std::pair{size_t(44), uint8_t(2)})).first.memory,
              all_seeded.memory);
    // version 7: the memory flags (payload offset 44) know only the encoding at each use (1);
    // the seeded keys' 2 is refused there
    EXPECT_FALSE(io::load_bootstrap_keys(*k.ctx, older(7, 0, 0)).first.memory.seeded_keys);
    EXPECT_THROW(io::load_bootstrap_keys(*k.ctx, older(7, 0, 0, std::pair{size_t(44), uint8_t(2)})), SerializationError);
    // version 6: EvalMod's terms 1 or 2 (payload offset 45), never automatic
    EXPECT_EQ(io::load_bootstrap_keys(*k.ctx, older(6, 0, 0, std::pair{size_t(45), uint8_t(1)})).first.eval_mod_terms, 1);
    EXPECT_THROW(io::load_bootstrap_keys(*k.ctx, older(6, 0, 0)), SerializationError);
    // version 5: no EvalMod terms (the byte after the memory policy, payload offset 45): one term
    const auto [loaded_v5, keys_v5] = io::load_bootstrap_keys(*k.ctx, older(5, 45, 1));
    EXPECT_EQ(loaded_v5.eval_mod_terms, 1);
    EXPECT_EQ(keys_v5.galois.keys.size(), bk.galois.keys.size());
    // version 4: no memory policy either (the 10 bytes after the order, payload offset 36)
    const auto [loaded_v4, keys_v4] = io::load_bootstrap_keys(*k.ctx, older(4, 36, 10));
    EXPECT_EQ(loaded_v4.message_ratio_bits, 11);
    EXPECT_EQ(loaded_v4.memory.key_saving_tolerance, MemoryPolicy{}.key_saving_tolerance);
    EXPECT_FALSE(loaded_v4.memory.encode_on_use);
    EXPECT_EQ(keys_v4.galois.keys.size(), bk.galois.keys.size());
    // version 3: no iterations, no order either (the 18 bytes after the ephemeral weight, header
    // 32 + 7 fields of 4): automatic iterations, CoeffsToSlots first
    const auto [loaded_v3, keys_v3] = io::load_bootstrap_keys(*k.ctx, older(3, 28, 18));
    EXPECT_EQ(loaded_v3.message_ratio_bits, 11);
    EXPECT_FALSE(loaded_v3.iterations.has_value());
    EXPECT_EQ(loaded_v3.order, BootstrapOrder::coeffs_to_slots_first);
    EXPECT_EQ(keys_v3.galois.keys.size(), bk.galois.keys.size());
    // out-of-range iterations (payload offset 28), order (32), tolerance (36), memory flags (44),
    // reads from which a key is stored whole (45) and EvalMod's terms (53) are refused (the checksum
    // recomputed, as an attacker could)
    const double nan = std::nan(""), huge = 1e6;
    uint64_t nan_bits, huge_bits;
    std::memcpy(&nan_bits, &nan, 8);
    std::memcpy(&huge_bits, &huge, 8);
    for (const auto& [offset, value, width] : {std::tuple{32 + 28, uint64_t(3), 4}, std::tuple{32 + 28, uint64_t(0), 4},
                                               std::tuple{32 + 32, uint64_t(2), 4}, std::tuple{32 + 36, nan_bits, 8},
                                               std::tuple{32 + 36, huge_bits, 8}, std::tuple{32 + 44, uint64_t(4), 1},
                                               std::tuple{32 + 45, nan_bits, 8}, std::tuple{32 + 45, huge_bits, 8},
                                               std::tuple{32 + 53, uint64_t(3), 1}}) {
        io::Bytes bad(v9.begin(), v9.end() - long(io::kChecksumSize));
        for (int i = 0; i < width; ++i) bad[size_t(offset + i)] = uint8_t(value >> (8 * i));
        const uint64_t bad_sum = io::xxh64(bad.data(), bad.size());
        for (int i = 0; i < 8; ++i) bad.push_back(uint8_t(bad_sum >> (8 * i)));
        EXPECT_THROW(io::load_bootstrap_keys(*k.ctx, bad), SerializationError) << offset << " " << value;
    }
    // cut short, a flipped byte (the checksum), another record type
    EXPECT_THROW(io::load_bootstrap_keys(*k.ctx, io::ByteView(seeded.data(), seeded.size() - 9)), SerializationError);
    io::Bytes flipped = seeded;
    flipped[seeded.size() / 2] ^= 0x10;
    EXPECT_THROW(io::load_bootstrap_keys(*k.ctx, flipped), SerializationError);
    EXPECT_THROW(io::load_bootstrap_keys(*k.ctx, io::serialize(*k.ctx, bk.galois)), SerializationError);
    EXPECT_THROW(io::load_galois_keys(*k.ctx, seeded), SerializationError);
}

// Automatic bootstrapping: an AutoEvaluator with a BootstrapSet as its refresher bootstraps a
// product's operand at level 0 first; without one the product is a LevelMismatch. The set picks
// the cheapest bootstrapper that takes the ciphertext.
TEST(Bootstrap, AutomaticModeRefreshesOperandsAtLevelZero) {
    const BootSetup setup(16);
    Keys& k = setup.k;
    auto boot = std::make_shared<const Bootstrapper>(k.ctx, config_for(16));
    auto full = std::make_shared<const Bootstrapper>(k.ctx);
    const auto set = std::make_shared<const BootstrapSet>(std::vector<BootstrapSet::Entry>{
        {full, full->generate_keys(*k.keygen)}, {boot, setup.bk}});
    EXPECT_EQ(set->entries().front().boot->slots(), 16u);  // sorted
    EXPECT_EQ(set->for_slots(8)->boot->slots(), 16u);
    EXPECT_EQ(set->for_slots(64)->boot->slots(), 2048u);
    EXPECT_EQ(set->exactly(64), nullptr);
    const AutoEvaluator plain(setup.eval);
    const AutoEvaluator automatic = plain.with_refresher(set);
    const std::vector<cplx> x = random_complex(16, 1.0, 50), y = random_complex(16, 1.0, 51);
    const Ciphertext a = k.encrypt(x, 0, true, 16), b = k.encrypt(y, 3, true, 16);
    EXPECT_THROW(plain.multiply(a, b), LevelMismatch);
    std::vector<cplx> xy(16), xx(16), x3(16);
    for (size_t i = 0; i < 16; ++i) xy[i] = x[i] * y[i], xx[i] = x[i] * x[i], x3[i] = x[i] * 0.75;
    const Ciphertext ab = automatic.multiply(a, b);
    EXPECT_EQ(ab.level(), boot->output_level() - 1);  // a came back at level 2, b met it there, the product
                                                     // took one
    EXPECT_GT(precision_bits(k.decrypt(ab), xy), 19);
    EXPECT_GT(precision_bits(k.decrypt(automatic.square(a)), xx), 19);
    EXPECT_GT(precision_bits(k.decrypt(automatic.multiply(a, cplx(0.75, 0))), x3), 19);
    // an integer costs no level: no bootstrap, the same level
    EXPECT_EQ(automatic.multiply(a, int64_t(3)).level(), 0);
    // no bootstrapper takes 4096 slots: MissingKey, not a wrong result
    EXPECT_THROW(plain.with_refresher(std::make_shared<const BootstrapSet>()).multiply(a, a), MissingKey);
    EXPECT_THROW((BootstrapSet(std::vector<BootstrapSet::Entry>{{boot, setup.bk}, {boot, setup.bk}})), ValueError);
}

// With SlotsToCoeffs first a bootstrap takes inputs at min_input_level (3) and above, so automatic
// mode refreshes a product's operand there instead of taking it below: a chain of products never
// leaves the levels a bootstrap can take, and an operand already below them is a clear error.
TEST(Bootstrap, AutomaticModeWithSlotsToCoeffsFirstRefreshesAtTheMinimumInputLevel) {
    const BootSetup setup(16);
    Keys& k = setup.k;
    BootstrapConfig config = config_for(16);
    config.order = BootstrapOrder::slots_to_coeffs_first;
    auto boot = std::make_shared<const Bootstrapper>(k.ctx, config);
    const int low = boot->min_input_level();
    ASSERT_GT(low, 0);
    const auto set =
        std::make_shared<const BootstrapSet>(std::vector<BootstrapSet::Entry>{{boot, boot->generate_keys(*k.keygen)}});
    EXPECT_EQ(set->refresh_level(16), low);
    EXPECT_EQ(set->refresh_level(4096), 0);  // no bootstrapper for that many slots
    const AutoEvaluator automatic = AutoEvaluator(setup.eval).with_refresher(set);
    const std::vector<cplx> x = random_complex(16, 1.0, 60);
    Ciphertext c = k.encrypt(x, low + 1, true, 16);
    std::vector<cplx> want = x;
    int lowest = c.level(), refreshed = 0;
    for (int i = 0; i < 2 * (boot->output_level() - low) + 1; ++i) {
        const int before = c.level();
        c = automatic.multiply(c, cplx(0.9, 0));
        for (auto& v : want) v *= 0.9;
        if (c.level() >= before) ++refreshed;  // a bootstrap gave its levels back
        lowest = std::min(lowest, c.level());
    }
    EXPECT_EQ(lowest, low);
    EXPECT_GE(refreshed, 2);
    EXPECT_GT(precision_bits(k.decrypt(c), want), 15);
    // below the minimum input level no bootstrap takes it: refused, not a wrong result
    EXPECT_THROW(automatic.multiply(k.encrypt(x, low - 1, true, 16), cplx(0.9, 0)), ValueError);
}

// At preset B1 (full slots) the plans of the default memory policy (kBootstrapKeySavingTolerance)
// take about a third fewer key bytes than those of least modelled cost, seeded keys half of that
// again, the default's (those used several times whole) under 4 GB (issue 19's target),
// MemoryPolicy::low() less still, and
// key_bytes() is what generate_keys() makes.
TEST(Bootstrap, KeysOfPresetB1) {
    const ckks::ContextPtr ctx = Context::create(Parameters::preset("B1"));
    BootstrapConfig low, least_cost, whole;
    low.memory = MemoryPolicy::low();
    least_cost.memory = MemoryPolicy{};
    whole.memory = kFastBootstrapMemory;
    const Bootstrapper default_boot(ctx), fast_boot(ctx, whole), low_boot(ctx, low), least_cost_boot(ctx, least_cost);
    EXPECT_LT(double(fast_boot.key_bytes()), 0.7 * double(least_cost_boot.key_bytes()));
    EXPECT_LT(fast_boot.galois_key_levels().size(), least_cost_boot.galois_key_levels().size());
    EXPECT_EQ(default_boot.galois_key_levels(), fast_boot.galois_key_levels());
    BootstrapConfig all_seeded;
    all_seeded.memory = kSeededBootstrapMemory;
    const Bootstrapper seeded_boot(ctx, all_seeded);
    EXPECT_EQ(2 * seeded_boot.key_bytes(), fast_boot.key_bytes());
    EXPECT_GT(default_boot.key_bytes(), seeded_boot.key_bytes());  // the keys used several times, whole
    EXPECT_LT(default_boot.key_bytes(), 4e9);
    EXPECT_LT(double(low_boot.key_bytes()), 0.7 * double(default_boot.key_bytes()));
    EXPECT_LE(low_boot.galois_key_levels().size(), 16u);
    EXPECT_EQ(low_boot.depth(), fast_boot.depth());
    EXPECT_EQ(least_cost_boot.depth(), fast_boot.depth());
    // the DFTs' diagonals: compact but for the first CoeffsToSlots and last SlotsToCoeffs matrix,
    // under 1 GiB kept (low memory encodes those two at each use)
    EXPECT_LT(fast_boot.diagonal_bytes(), size_t(1) << 30);
    EXPECT_LT(low_boot.diagonal_bytes(), fast_boot.diagonal_bytes() / 4);
    // key_bytes() counts what generate_keys() makes: checked on the test ring
    Keys& k = BootKeys::get().keys;
    const Bootstrapper boot(k.ctx, low);
    const BootstrapKeys keys = boot.generate_keys(*k.keygen);
    size_t bytes = 0;
    for (const auto& [g, key] : keys.galois.keys) bytes += key->data.size();
    if (keys.encapsulation) bytes += keys.encapsulation->to_ephemeral.data.size() + keys.encapsulation->from_ephemeral.data.size();
    EXPECT_EQ(boot.key_bytes(), bytes);
}

// galois_key_reads() counts every rotation of a pass (the DFTs', the trace's and the conjugation)
// key by key, a rotation below the key's level for the part of the key it reads; the default stores
// whole the keys a pass reads at least twice over and seeds the others, key_bytes() counts what it
// makes, and keys loaded from their seeds (all seeded by the loader) get the same split back from
// apply_memory_policy().
TEST(Bootstrap, TheDefaultStoresTheMostReadKeysWhole) {
    Keys& k = BootKeys::get().keys;
    for (size_t slots : {size_t(2048), size_t(16)})
        for (BootstrapOrder order : {BootstrapOrder::coeffs_to_slots_first, BootstrapOrder::slots_to_coeffs_first}) {
            SCOPED_TRACE(slots);
            BootstrapConfig config = config_for(slots);
            config.order = order;
            const Bootstrapper boot(k.ctx, config);
            EXPECT_EQ(config.memory.whole_key_reads, 2.0);
            const auto reads = boot.galois_key_reads();
            const auto levels = boot.galois_key_levels();
            ASSERT_EQ(reads.size(), levels.size());
            double total = 0;
            for (size_t i = 0; i < reads.size(); ++i) {
                EXPECT_EQ(reads[i].first, levels[i].first);
                EXPECT_GE(reads[i].second, 1.0);  // a use at the key's own level at least
                total += reads[i].second;
            }
            // a rotation reads at most its whole key
            EXPECT_LE(total * boot.iterations(), double(boot.cost().rot));
            const BootstrapKeys keys = boot.generate_keys(*k.keygen);
            size_t bytes = 0, whole = 0;
            for (const auto& [g, r] : reads) {
                const KeySwitchKey& key = keys.galois.at(g);
                EXPECT_EQ(boot.seeds_key(r), r < 2) << r;
                EXPECT_EQ(key.a_stored(), r >= 2) << g;
                whole += key.a_stored() ? 1 : 0;
                bytes += key.data.size();
            }
            if (keys.encapsulation) {
                EXPECT_FALSE(keys.encapsulation->to_ephemeral.a_stored());
                bytes += keys.encapsulation->to_ephemeral.data.size() + keys.encapsulation->from_ephemeral.data.size();
            }
            EXPECT_EQ(boot.key_bytes(), bytes);
            EXPECT_EQ(boot.whole_galois_keys(), whole);
            // full slots: the DFTs chain giant steps (keys read several times) and seed the rest
            if (slots == 2048) {
                EXPECT_GT(whole, 0u);
                EXPECT_LT(whole, reads.size());
            }
            auto [loaded_config, loaded] = io::load_bootstrap_keys(*k.ctx, io::serialize(*k.ctx, config, keys));
            EXPECT_EQ(loaded_config.memory, config.memory);
            for (const auto& [g, key] : loaded.galois.keys) EXPECT_FALSE(key->a_stored());
            boot.apply_memory_policy(loaded);
            for (const auto& [g, key] : loaded.galois.keys) EXPECT_EQ(key->a_stored(), keys.galois.at(g).a_stored()) << g;
            boot.apply_memory_policy(loaded);  // as the policy says already: nothing changes
            for (const auto& [g, key] : loaded.galois.keys) EXPECT_EQ(key->a_stored(), keys.galois.at(g).a_stored()) << g;
            // every key seeded (kSeededBootstrapMemory), or every key whole (kFastBootstrapMemory)
            BootstrapConfig all_seeded = config, fast = config;
            all_seeded.memory = kSeededBootstrapMemory;
            fast.memory = kFastBootstrapMemory;
            const Bootstrapper seeded_boot(k.ctx, all_seeded), fast_boot(k.ctx, fast);
            EXPECT_EQ(2 * seeded_boot.key_bytes(), fast_boot.key_bytes());
            EXPECT_LE(seeded_boot.key_bytes(), boot.key_bytes());
            EXPECT_LE(boot.key_bytes(), fast_boot.key_bytes());
            EXPECT_EQ(seeded_boot.whole_galois_keys(), 0u);
            EXPECT_EQ(fast_boot.whole_galois_keys(), reads.size());
            for (const auto& [g, r] : reads) {
                EXPECT_TRUE(seeded_boot.seeds_key(r));
                EXPECT_FALSE(fast_boot.seeds_key(r));
            }
            seeded_boot.apply_memory_policy(loaded);
            for (const auto& [g, key] : loaded.galois.keys) EXPECT_FALSE(key->a_stored());
        }
}

// Keys whose uniform halves are all drawn again from their seeds at each key switch
// (kSeededBootstrapMemory) and the same keys stored whole (kFastBootstrapMemory, made from the same seed) give the same
// words, in both orders.
TEST(Bootstrap, SeededKeysGiveTheWordsOfWholeKeys) {
    Keys& k = BootKeys::get().keys;
    for (BootstrapOrder order : {BootstrapOrder::coeffs_to_slots_first, BootstrapOrder::slots_to_coeffs_first}) {
        BootstrapConfig seeded = config_for(16), whole = config_for(16);
        seeded.order = whole.order = order;
        seeded.memory = kSeededBootstrapMemory;  // every key seeded
        whole.memory = kFastBootstrapMemory;
        const Bootstrapper seeded_boot(k.ctx, seeded), whole_boot(k.ctx, whole);
        math::Seed seed{};
        seed[0] = 7;
        KeyGenerator a = KeyGenerator::from_seed_for_testing(k.ctx, seed), b = KeyGenerator::from_seed_for_testing(k.ctx, seed);
        const BootstrapKeys seeded_keys = seeded_boot.generate_keys(a), whole_keys = whole_boot.generate_keys(b);
        EXPECT_FALSE(seeded_keys.galois.keys.begin()->second->a_stored());
        EXPECT_TRUE(whole_keys.galois.keys.begin()->second->a_stored());
        const RelinKey rk = KeyGenerator::from_seed_for_testing(k.ctx, seed).relin_key();
        const KeyRefs seeded_set(&rk, &seeded_keys.galois), whole_set(&rk, &whole_keys.galois);
        const Evaluator se = k.eval->with_keys(seeded_set), we = k.eval->with_keys(whole_set);
        const Ciphertext in = k.encrypt(random_complex(16, 1.0, 40), seeded_boot.min_input_level(), true, 16);
        EXPECT_TRUE(same_words(seeded_boot.bootstrap(CountedOps(se, nullptr), in, seeded_keys),
                               whole_boot.bootstrap(CountedOps(we, nullptr), in, whole_keys)));
    }
}

// MemoryPolicy::low(): fewer Galois keys and the DFT diagonals encoded at each use, for more
// giant rotations; the same levels, scale and precision.
TEST(Bootstrap, LowMemoryTakesFewerKeys) {
    Keys& k = BootKeys::get().keys;
    for (size_t slots : {size_t(2048), size_t(16)}) {
        SCOPED_TRACE(slots);
        BootstrapConfig low = config_for(slots);
        low.memory = MemoryPolicy::low();
        const Bootstrapper fast_boot(k.ctx, config_for(slots)), low_boot(k.ctx, low);
        EXPECT_LE(low_boot.galois_key_levels().size(), fast_boot.galois_key_levels().size());
        EXPECT_LE(low_boot.key_bytes(), fast_boot.key_bytes());
        EXPECT_GE(low_boot.cost().key_switch.mod_ups, fast_boot.cost().key_switch.mod_ups);
        EXPECT_EQ(low_boot.depth(), fast_boot.depth());
        const std::vector<cplx> values = random_complex(slots, 1.0, 300 + slots);
        EXPECT_EQ(fast_boot.kept_diagonal_bytes(), 0u);  // nothing encoded before the first bootstrap
        const Outcome fast = run_bootstrap(fast_boot, values), small = run_bootstrap(low_boot, values);
        // diagonal_bytes() is what the first bootstrap leaves encoded; low memory keeps less, but
        // with 16 slots every diagonal repeats within few slots: compact, kept by both
        EXPECT_EQ(fast_boot.kept_diagonal_bytes(), fast_boot.diagonal_bytes());
        EXPECT_EQ(low_boot.kept_diagonal_bytes(), low_boot.diagonal_bytes());
        if (slots == 16) EXPECT_EQ(low_boot.diagonal_bytes(), fast_boot.diagonal_bytes());
        else EXPECT_LT(low_boot.diagonal_bytes(), fast_boot.diagonal_bytes());
        EXPECT_EQ(small.out.level(), fast.out.level());
        EXPECT_EQ(small.out.scale(), fast.out.scale());
        EXPECT_GT(small.bits, 21);
        // the same precision up to the noise: two bootstraps of fresh randomness (keys, encryption)
        // differ by up to about a bit in their worst slot here, so the margin is two
        EXPECT_GT(small.bits, fast.bits - 2);
        // the keys of the fast plans do not serve the low-memory ones
        const BootstrapKeys fast_keys = fast_boot.generate_keys(*k.keygen);
        const KeyRefs key_set(&k.rk, &fast_keys.galois);
        const Evaluator eval = k.eval->with_keys(key_set);
        const Ciphertext in = k.encrypt(values, 0, true, slots);
        bool missing = false;
        for (int64_t step : low_boot.rotation_steps()) missing = missing || !fast_keys.galois.has(k.ctx->galois_element(step));
        if (missing) EXPECT_THROW(low_boot.bootstrap(CountedOps(eval, nullptr), in, fast_keys), MissingKey);
    }
}

// encode_diagonals() encodes at set-up exactly what a first bootstrap would (diagonal_bytes()), under
// both memory policies and in both orders; the bootstrap after it encodes nothing more, and gives
// the words of a bootstrapper that encoded at its first bootstrap.
TEST(Bootstrap, DiagonalsEncodedAtSetUpAreThoseOfTheFirstBootstrap) {
    Keys& k = BootKeys::get().keys;
    for (bool low : {false, true})
        for (BootstrapOrder order : {BootstrapOrder::coeffs_to_slots_first, BootstrapOrder::slots_to_coeffs_first}) {
            SCOPED_TRACE(::testing::Message() << "low " << low << " slots-to-coeffs first "
                                              << (order == BootstrapOrder::slots_to_coeffs_first));
            BootstrapConfig config = config_for(2048);
            if (low) config.memory = MemoryPolicy::low();
            config.order = order;
            const Bootstrapper eager(k.ctx, config), lazy(k.ctx, config);
            EXPECT_EQ(eager.kept_diagonal_bytes(), 0u);
            eager.encode_diagonals();
            EXPECT_EQ(eager.kept_diagonal_bytes(), eager.diagonal_bytes());
            eager.encode_diagonals();  // a second call keeps what is there
            EXPECT_EQ(eager.kept_diagonal_bytes(), eager.diagonal_bytes());
            const BootstrapKeys keys = eager.generate_keys(*k.keygen);
            const KeyRefs key_set(&k.rk, &keys.galois);
            const Evaluator eval = k.eval->with_keys(key_set);
            const Ciphertext in = k.encrypt(random_complex(2048, 1.0, 700), eager.min_input_level(), true, 2048);
            const Ciphertext a = eager.bootstrap(CountedOps(eval, nullptr), in, keys);
            EXPECT_EQ(eager.kept_diagonal_bytes(), eager.diagonal_bytes());
            const Ciphertext b = lazy.bootstrap(CountedOps(eval, nullptr), in, keys);
            EXPECT_TRUE(same_words(a, b));
        }
}

TEST(Bootstrap, KeyLevelsCoverEveryStep) {
    Keys& k = BootKeys::get().keys;
    const Bootstrapper boot(k.ctx);
    const auto levels = boot.galois_key_levels();
    EXPECT_EQ(levels.size(), boot.rotation_steps().size() + 1);  // and the conjugation
    for (const auto& [g, level] : levels) {
        EXPECT_GE(level, boot.output_level());
        EXPECT_LE(level, k.ctx->max_level());
    }
}

}  // namespace
}  // namespace oboro::test
