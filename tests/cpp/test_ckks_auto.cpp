// Automatic mode (ckks/auto_evaluator.hpp) against a double-precision reference, on S1 and S2:
// every operator's result lands on the standard scale of its level, with the precision bound of
// its kind; a Ciphertext and a one-element batch give the same words; the errors are typed.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <memory>
#include <vector>

#include "ckks_test_util.hpp"
#include "error_test_util.hpp"
#include "oboro/ckks/auto_evaluator.hpp"
#include "oboro/ckks/batch.hpp"

namespace oboro::test {
namespace {

// Precision bounds (bits) at scale 2^40 on these presets (docs/precision.md): public-key
// encryption, then a product or a rotation adds about a bit.
constexpr double kAddBits = 22, kMulBits = 20, kRotBits = 20;

// Keys for automatic rotations: 5 = 1 + 4 and 3 = 4 - 1 are composed from {1, -1, 4}.
struct AutoKeys {
    Keys& k;
    GaloisKeys gk;
    std::shared_ptr<const MemoryKeySet> keys;
    AutoEvaluator ae;
    explicit AutoKeys(Keys& keys_of)
        : k(keys_of), gk(k.keygen->galois_keys({1, -1, 4}, true)),
          keys(std::make_shared<const MemoryKeySet>(std::make_shared<const RelinKey>(k.rk),
                                                    std::make_shared<const GaloisKeys>(gk))),
          ae(Evaluator(k.ctx, keys)) {}
};

class AutoTest : public ::testing::TestWithParam<std::string> {
protected:
    AutoKeys& a() {
        static std::map<std::string, std::unique_ptr<AutoKeys>> cache;
        auto& slot = cache[GetParam()];
        if (!slot) slot = std::make_unique<AutoKeys>(Keys::get(GetParam()));
        return *slot;
    }
};

std::vector<cplx> times(const std::vector<cplx>& x, const std::vector<cplx>& y) {
    std::vector<cplx> r(x.size());
    for (size_t i = 0; i < x.size(); ++i) r[i] = x[i] * y[i];
    return r;
}
std::vector<cplx> plus(const std::vector<cplx>& x, const std::vector<cplx>& y, double sy = 1) {
    std::vector<cplx> r(x.size());
    for (size_t i = 0; i < x.size(); ++i) r[i] = x[i] + sy * y[i];
    return r;
}

// A fresh encryption at the top level's standard scale (as oboro.Context.encrypt makes them).
Ciphertext encrypt_standard(Keys& k, const std::vector<cplx>& v) {
    const int top = k.ctx->max_level();
    return k.pk_encryptor->encrypt(k.encoder->encode(v, top, k.ctx->standard_scale(top)));
}

// Every result of automatic mode is at the standard scale of its level.
void expect_standard(const Context& ctx, const Ciphertext& c, int level) {
    EXPECT_EQ(c.level(), level);
    EXPECT_TRUE(same_scale(c.scale(), ctx.standard_scale(c.level()))) << describe(c);
}

TEST_P(AutoTest, OperatorsMatchTheReferenceOnStandardScales) {
    AutoKeys& t = a();
    const Context& ctx = *t.k.ctx;
    const AutoEvaluator& ae = t.ae;
    const size_t slots = ctx.max_slots();
    const auto x = random_complex(slots, 1.0, 1), y = random_complex(slots, 1.0, 2);
    const int top = ctx.max_level();
    const Ciphertext cx = encrypt_standard(t.k, x), cy = encrypt_standard(t.k, y);

    auto check = [&](const char* what, const Ciphertext& c, const std::vector<cplx>& want, int level, double bound) {
        SCOPED_TRACE(what);
        expect_standard(ctx, c, level);
        EXPECT_GE(precision_bits(t.k.decrypt(c), want), bound);
    };
    check("add", ae.add(cx, cy), plus(x, y), top, kAddBits);
    check("sub", ae.sub(cx, cy), plus(x, y, -1), top, kAddBits);
    check("rsub", ae.rsub(cx, cy), plus(y, x, -1), top, kAddBits);
    const Ciphertext xy = ae.multiply(cx, cy);
    check("multiply", xy, times(x, y), top - 1, kMulBits);
    check("square", ae.square(cx), times(x, x), top - 1, kMulBits);
    // across levels: the higher operand is brought to the lower one's level and scale
    check("x*y + x", ae.add(xy, cx), plus(times(x, y), x), top - 1, kMulBits);
    check("x - x*y", ae.sub(cx, xy), plus(x, times(x, y), -1), top - 1, kMulBits);
    // constants: an integer or an integral double costs no level; others rescale
    const std::vector<cplx> three_x = plus(x, plus(x, x));
    check("x * 3", ae.multiply(cx, int64_t(3)), three_x, top, kAddBits);
    check("x * 3.0", ae.multiply(cx, cplx(3.0, 0)), three_x, top, kAddBits);
    std::vector<cplx> scaled(slots), shifted(slots), rotated_c(slots);
    for (size_t i = 0; i < slots; ++i) scaled[i] = x[i] * cplx(0.5, -0.25), shifted[i] = x[i] + cplx(0.5, 1.0);
    check("x * (0.5 - 0.25i)", ae.multiply(cx, cplx(0.5, -0.25)), scaled, top - 1, kMulBits);
    check("x + (0.5 + 1i)", ae.add(cx, cplx(0.5, 1.0)), shifted, top, kAddBits);
    // slot values and plaintexts (a plaintext at the top level drops to the ciphertext's level)
    check("x * y (values)", ae.multiply(cx, SlotValues{y, 1}), times(x, y), top - 1, kMulBits);
    check("x + y (values)", ae.add(cx, SlotValues{y, 1}), plus(x, y), top, kAddBits);
    const Plaintext py = t.k.encoder->encode(y, top, ctx.standard_scale(top));
    check("x*y + y (plaintext)", ae.add(xy, t.k.encoder->encode(y, top, xy.scale())), plus(times(x, y), y), top - 1,
          kMulBits);
    check("x * y (plaintext)", ae.multiply(cx, py), times(x, y), top - 1, kMulBits);
    // rotations: keyed (1) and composed from keyed steps (5 = 1 + 4, 3 = 4 - 1, -slots/2 + 3)
    for (int64_t k : {int64_t(1), int64_t(5), int64_t(3), int64_t(slots) + 3}) {
        SCOPED_TRACE(k);
        check("rotate", ae.rotate(cx, k), roll(x, k), top, kRotBits);
    }
    check("conjugate", ae.conjugate(cx), [&] {
        std::vector<cplx> c(slots);
        for (size_t i = 0; i < slots; ++i) c[i] = std::conj(x[i]);
        return c;
    }(), top, kRotBits);
    // drop_to_level moves a standard ciphertext to the standard scale of the new level
    check("drop_to_level", ae.drop_to_level(cx, 0), x, 0, kAddBits);
}

// The same operations on a Ciphertext and on a batch of one give the same words.
TEST_P(AutoTest, CiphertextAndBatchOfOneAgree) {
    AutoKeys& t = a();
    const Context& ctx = *t.k.ctx;
    const AutoEvaluator& ae = t.ae;
    const auto x = random_complex(ctx.max_slots(), 1.0, 3), y = random_complex(ctx.max_slots(), 1.0, 4);
    const Ciphertext cx = encrypt_standard(t.k, x), cy = encrypt_standard(t.k, y);
    const auto bx = CiphertextBatch::from_ciphertexts(ctx, std::vector<Ciphertext>{cx});
    const auto by = CiphertextBatch::from_ciphertexts(ctx, std::vector<Ciphertext>{cy});
    auto same = [&](const char* what, const Ciphertext& c, const CiphertextBatch& b) {
        const Ciphertext e = b.at(0);
        ASSERT_EQ(c.word_count(), e.word_count()) << what;
        EXPECT_TRUE(std::equal(c.data(), c.data() + c.word_count(), e.data())) << what;
        EXPECT_EQ(c.level(), e.level()) << what;
        EXPECT_EQ(c.scale(), e.scale()) << what;
    };
    same("add", ae.add(cx, cy), ae.add(bx, by));
    same("multiply", ae.multiply(cx, cy), ae.multiply(bx, by));
    const Ciphertext xy = ae.multiply(cx, cy);
    const CiphertextBatch bxy = ae.multiply(bx, by);
    same("aligned sum", ae.add(xy, cx), ae.add(bxy, bx));
    same("constant", ae.multiply(cx, cplx(0.3, 0)), ae.multiply(bx, cplx(0.3, 0)));
    same("complex constant", ae.multiply(cx, cplx(0.3, 0.2)), ae.multiply(bx, cplx(0.3, 0.2)));
    same("add constant to 8 slots", ae.add(cx, cplx(1.5, 0), size_t(8)), ae.add(bx, cplx(1.5, 0), size_t(8)));
    same("values", ae.multiply(cx, SlotValues{y, 1}), ae.multiply(bx, SlotValues{y, 1}));
    same("rotate composed", ae.rotate(cx, 3), ae.rotate(bx, 3));
    same("conjugate", ae.conjugate(cx), ae.conjugate(bx));
}

INSTANTIATE_TEST_SUITE_P(Presets, AutoTest, ::testing::Values("S1", "S2"));

TEST(AutoErrors, MissingKeysLevelsAndScales) {
    Keys& k = Keys::get("S1");
    const Context& ctx = *k.ctx;
    const AutoEvaluator no_keys(Evaluator(k.ctx));
    const Ciphertext cx = encrypt_standard(k, random_real(16, 1.0, 5));
    EXPECT_ERROR(MissingKey, no_keys.multiply(cx, cx), "multiply", "relinearization key");
    EXPECT_ERROR(MissingKey, no_keys.rotate(cx, 1), "rotate", "by 1");
    EXPECT_ERROR(MissingKey, no_keys.conjugate(cx), "conjugate", "conjugation");
    const AutoEvaluator ae(Evaluator(k.ctx, std::make_shared<const MemoryKeySet>(
                                                std::make_shared<const RelinKey>(k.rk),
                                                std::make_shared<const GaloisKeys>(k.gk))));
    const Ciphertext low = ae.multiply(cx, cx);  // S1: level 0
    ASSERT_EQ(low.level(), 0);
    EXPECT_ERROR(LevelMismatch, ae.multiply(low, low), "multiply", "no level is left");
    EXPECT_ERROR(LevelMismatch, ae.multiply(low, cplx(0.5, 0)), "multiply", "no level is left");
    EXPECT_NO_THROW(ae.multiply(low, cplx(2.0, 0)));  // an integral factor needs no level
    Ciphertext huge = cx;
    huge.set_scale(std::ldexp(1.0, 80));
    EXPECT_ERROR(ScaleMismatch, ae.multiply(huge, cplx(0.5, 0)), "multiply", "too large");
    // two ciphertexts at one level with scales that cannot be aligned at level 0
    Ciphertext other = low;
    other.set_scale(low.scale() * 3);
    EXPECT_ERROR(ScaleMismatch, ae.add(low, other), "add", "no level is left");
    (void)ctx;
}

}  // namespace
}  // namespace oboro::test
