// Every evaluator operation against a double-precision reference, with explicit precision bounds
// in bits, on the presets S1, S2 and S4 (paper parameter sets) and at edge cases.
#include "ckks_test_util.hpp"
#include "forwarding_queue.hpp"

using namespace oboro::test;

namespace {
std::vector<cplx> rotate_ref(const std::vector<cplx>& v, int64_t k) {
    const int64_t n = int64_t(v.size());
    std::vector<cplx> out(v.size());
    for (int64_t i = 0; i < n; ++i) out[size_t(i)] = v[size_t(((i + k) % n + n) % n)];
    return out;
}
}  // namespace

class OpsTest : public ::testing::TestWithParam<std::string> {
protected:
    Keys& k() { return Keys::get(GetParam()); }
    size_t slots() { return k().ctx->max_slots(); }
    // N, without making the preset's cached keys (the tests over key draws make their own).
    size_t ring_degree() const { return size_t(1) << Parameters::preset(GetParam()).log_n; }
    // Bounds for results of public-key encryptions: their fresh noise is ~2 bits larger at
    // N = 2^16 (docs/precision.md), and the slot error's heavy tail needs a margin (keys are
    // fresh on every run).
    double fresh(double bits) { return k().ctx->log_n() >= 16 ? bits - 2.0 : bits; }
};

TEST_P(OpsTest, AddSubNegate) {
    const auto a = random_complex(slots(), 1.0, 10), b = random_complex(slots(), 1.0, 11);
    auto ca = k().encrypt(a), cb = k().encrypt(b);
    std::vector<cplx> sum(a.size()), diff(a.size()), neg(a.size());
    for (size_t i = 0; i < a.size(); ++i) { sum[i] = a[i] + b[i]; diff[i] = a[i] - b[i]; neg[i] = -a[i]; }
    EXPECT_GE(precision_bits(k().decrypt(k().eval->add(ca, cb)), sum), fresh(22.0));
    EXPECT_GE(precision_bits(k().decrypt(k().eval->sub(ca, cb)), diff), fresh(22.0));
    EXPECT_GE(precision_bits(k().decrypt(k().eval->negate(ca)), neg), fresh(23.0));
    auto c = ca;
    k().eval->add_inplace(c, cb);
    k().eval->sub_inplace(c, cb);
    EXPECT_GE(precision_bits(k().decrypt(c), a), fresh(22.0));
}

TEST_P(OpsTest, PlaintextAndScalarOperands) {
    const auto a = random_complex(slots(), 1.0, 12), b = random_complex(slots(), 1.0, 13);
    auto ca = k().encrypt(a);
    const Plaintext pb = k().encoder->encode(b);
    std::vector<cplx> sum(a.size()), diff(a.size()), plus3(a.size()), minus(a.size());
    for (size_t i = 0; i < a.size(); ++i) {
        sum[i] = a[i] + b[i]; diff[i] = a[i] - b[i]; plus3[i] = a[i] + 3.25; minus[i] = a[i] - 0.5;
    }
    EXPECT_GE(precision_bits(k().decrypt(k().eval->add(ca, pb)), sum), fresh(23.0));
    EXPECT_GE(precision_bits(k().decrypt(k().eval->sub(ca, pb)), diff), fresh(23.0));
    EXPECT_GE(precision_bits(k().decrypt(k().eval->add(ca, 3.25)), plus3), fresh(23.0));
    EXPECT_GE(precision_bits(k().decrypt(k().eval->sub(ca, 0.5)), minus), fresh(23.0));
}

// The precision bound of a product of two fresh public-key encryptions, for the lower median over
// kKeyDraws seeded key sets (ckks_test_util.hpp): a*e_b + b*e_a, two terms of |x| <= sqrt(2) times
// a fresh error, keeps about 0.7 bits less than one encryption (the estimate of
// public_key_fresh_bits_estimate; measured medians S1 26.1, S2 24.9, S4 22.8), and the bound
// leaves one more bit below that.
namespace {
double product_bits_bound(size_t n) { return public_key_fresh_bits_estimate(n) - 2.0; }
}  // namespace

TEST_P(OpsTest, MultiplyRelinearizeRescale) {
    const KeySetup relin_only{.relin = true, .rotations = std::vector<int64_t>{}, .conjugation = false};
    const DrawPrecision p = over_key_draws(GetParam(), relin_only, [](Keys& k, int draw, DrawPrecision& p) {
        const size_t slots = k.ctx->max_slots();
        const auto a = random_complex(slots, 1.0, 14 + 100 * uint64_t(draw)), b = random_complex(slots, 1.0, 15 + 100 * uint64_t(draw));
        const auto ca = k.encrypt(a), cb = k.encrypt(b);
        std::vector<cplx> prod(a.size());
        for (size_t i = 0; i < a.size(); ++i) prod[i] = a[i] * b[i];
        const Ciphertext c3 = k.eval->multiply(ca, cb);
        EXPECT_EQ(c3.size(), 3u);
        // Decryption of the size-3 product (with s^2) already matches.
        p.add("size-3 product", precision_bits(k.decrypt(c3), prod));
        const Ciphertext c2 = k.eval->relinearize(c3, k.rk);
        EXPECT_EQ(c2.size(), 2u);
        const Ciphertext c = k.eval->rescale(c2);
        EXPECT_EQ(c.level(), ca.level() - 1);
        // exact scale tracking: Delta^2 / q_l, not a nominal 2^40
        EXPECT_DOUBLE_EQ(c.scale(), ca.scale() * cb.scale() / double(k.ctx->q()[size_t(ca.level())]));
        p.add("multiply, relinearize, rescale", precision_bits(k.decrypt(c), prod));
        p.add("multiply_relin_rescale", precision_bits(k.decrypt(k.eval->multiply_relin_rescale(ca, cb, k.rk)), prod));
    });
    for (const char* what : {"size-3 product", "multiply, relinearize, rescale", "multiply_relin_rescale"})
        p.expect_median_at_least(what, product_bits_bound(ring_degree()));
}

// a * b + c relinearized and rescaled in one call (the division by q_l fused with the
// relinearization's by P): the exact level and scale of the product's rescale, a's and b's product
// plus c to the precision of multiply_relin_rescale (secret-key encryptions: a single draw), the
// same words as each element of a batch, and the same values through a queue without the fused
// kernel (backend::Queue's default: add, relinearize, rescale). A size-3 c (a product not
// relinearized) shares the product's key switch: a * b + x * y with one relinearization.
TEST_P(OpsTest, MultiplyAddRelinRescale) {
    const auto a = random_complex(slots(), 1.0, 30), b = random_complex(slots(), 1.0, 31), c = random_complex(slots(), 1.0, 32);
    for (int level : {k().ctx->max_level(), 1}) {
        const Ciphertext ca = k().encrypt(a, level, false), cb = k().encrypt(b, level, false);
        const Ciphertext cc = k().sk_encryptor->encrypt(k().encoder->encode(c, level, ca.scale() * cb.scale()));
        std::vector<cplx> want(a.size());
        for (size_t i = 0; i < a.size(); ++i) want[i] = a[i] * b[i] + c[i];
        const Ciphertext r = k().eval->multiply_add_relin_rescale(ca, cb, cc, k().rk);
        EXPECT_EQ(r.level(), level - 1);
        EXPECT_EQ(r.size(), 2u);
        EXPECT_DOUBLE_EQ(r.scale(), ca.scale() * cb.scale() / double(k().ctx->q()[size_t(level)]));
        EXPECT_GE(precision_bits(k().decrypt(r), want), product_bits_bound(ring_degree())) << "level " << level;
        // c = 0 gives multiply_relin_rescale's words
        const Ciphertext zero = k().eval->zero_like(ca, 2, level, ca.scale() * cb.scale());
        const Ciphertext r0 = k().eval->multiply_add_relin_rescale(ca, cb, zero, k().rk);
        const Ciphertext f = k().eval->multiply_relin_rescale(ca, cb, k().rk);
        EXPECT_TRUE(std::equal(r0.data(), r0.data() + r0.word_count(), f.data())) << "level " << level;
        // a batch of two (c broadcast to both, then one each): each element's words
        const std::vector<Ciphertext> as{ca, cb}, bs{cb, ca}, cs{cc, cc};
        const auto A = CiphertextBatch::from_ciphertexts(*k().ctx, as), B = CiphertextBatch::from_ciphertexts(*k().ctx, bs);
        const auto C1 = CiphertextBatch::from_ciphertexts(*k().ctx, std::vector<Ciphertext>{cc});
        const auto C2 = CiphertextBatch::from_ciphertexts(*k().ctx, cs);
        for (const auto* C : {&C1, &C2}) {
            const auto R = k().eval->multiply_add_relin_rescale(A, B, *C, k().rk).to_ciphertexts();
            for (const Ciphertext& e : R) EXPECT_TRUE(std::equal(e.data(), e.data() + e.word_count(), r.data()));
        }
        // the default kernels of a device queue (offsite memory, the CPU's element-wise kernels)
        const auto queue = std::make_shared<OffsiteQueue>();
        const Evaluator dev(k().ctx, queue);
        const auto D = dev.multiply_add_relin_rescale(A.to_device(queue), B.to_device(queue), C1.to_device(queue), k().rk);
        for (const Ciphertext& e : D.to_host().to_ciphertexts())
            EXPECT_GE(precision_bits(k().decrypt(e), want), product_bits_bound(ring_degree())) << "default, level " << level;
        // lazy relinearization: c = x * y of 3 polynomials
        const Ciphertext cx = k().encrypt(c, level, false), cy = k().encrypt(b, level, false);
        const Ciphertext xy = k().eval->multiply(cx, cy);
        ASSERT_EQ(xy.size(), 3u);
        std::vector<cplx> want3(a.size());
        for (size_t i = 0; i < a.size(); ++i) want3[i] = a[i] * b[i] + c[i] * b[i];
        const double bound = product_bits_bound(ring_degree()) - 1;  // two products' noise
        const Ciphertext r3 = k().eval->multiply_add_relin_rescale(ca, cb, xy, k().rk);
        EXPECT_EQ(r3.size(), 2u);
        EXPECT_EQ(r3.level(), level - 1);
        EXPECT_GE(precision_bits(k().decrypt(r3), want3), bound) << "size-3 c, level " << level;
        const auto XY = CiphertextBatch::from_ciphertexts(*k().ctx, std::vector<Ciphertext>{xy, xy});
        for (const Ciphertext& e : k().eval->multiply_add_relin_rescale(A, B, XY, k().rk).to_ciphertexts())
            EXPECT_TRUE(std::equal(e.data(), e.data() + e.word_count(), r3.data())) << "size-3 c batch, level " << level;
        const auto D3 = dev.multiply_add_relin_rescale(A.to_device(queue), B.to_device(queue), XY.to_device(queue), k().rk);
        for (const Ciphertext& e : D3.to_host().to_ciphertexts())
            EXPECT_GE(precision_bits(k().decrypt(e), want3), bound) << "size-3 c, default, level " << level;
    }
}

TEST_P(OpsTest, MultiplyByPlaintextScalarAndInteger) {
    const auto a = random_complex(slots(), 1.0, 16), b = random_complex(slots(), 1.0, 17);
    auto ca = k().encrypt(a);
    std::vector<cplx> pb_ref(a.size()), sc_ref(a.size()), int_ref(a.size());
    for (size_t i = 0; i < a.size(); ++i) { pb_ref[i] = a[i] * b[i]; sc_ref[i] = a[i] * -1.75; int_ref[i] = a[i] * -7.0; }
    const Plaintext pb = k().encoder->encode(b);
    EXPECT_GE(precision_bits(k().decrypt(k().eval->rescale(k().eval->multiply(ca, pb))), pb_ref), 20.0);
    const Ciphertext cs = k().eval->multiply(ca, -1.75);
    const Ciphertext csr = k().eval->rescale(cs);
    EXPECT_NEAR(csr.scale() / ca.scale(), 1.0, 1e-12);  // constant encoded at q_l: the scale comes back
    EXPECT_GE(precision_bits(k().decrypt(csr), sc_ref), 20.0);
    const Ciphertext ci = k().eval->multiply_integer(ca, -7);
    EXPECT_EQ(ci.level(), ca.level());
    EXPECT_EQ(ci.scale(), ca.scale());
    EXPECT_GE(precision_bits(k().decrypt(ci), int_ref), 20.0);
}

// The precision bound of a rotation or conjugation of a fresh public-key encryption, for the lower
// median over kKeyDraws seeded key sets: key switching adds its own error, which at S1 and S2 (one
// 60-bit special prime over digits of up to 60 bits) is about 2 bits above the encryption's
// (measured medians S1 24.7, S2 23.6) and at S4 (six special primes) negligible (23.2); the bound
// is the encryption's estimate less 3 bits, one below the worst of those.
namespace {
double rotation_bits_bound(size_t n) { return public_key_fresh_bits_estimate(n) - 3.0; }
}  // namespace

TEST_P(OpsTest, RotationsAndConjugation) {
    const int64_t n = int64_t(ring_degree() / 2);
    // At S4 two rotation keys per draw, not four: there the keys are the test's cost (a third of a
    // second each), and a rotation's error does not depend on its step (S1 and S2, all steps
    // measured within 0.1 bits of each other).
    const bool large = ring_degree() >= (size_t(1) << 16);
    const std::vector<int64_t> keys = large ? std::vector<int64_t>{1, n / 2} : std::vector<int64_t>{1, -1, 5, n / 2};
    const std::vector<int64_t> steps = large ? std::vector<int64_t>{1, n / 2, 0}
                                             : std::vector<int64_t>{1, -1, 5, n - 1, n / 2, 0};
    const KeySetup rotations{.relin = false, .rotations = keys, .conjugation = true};
    const DrawPrecision p = over_key_draws(GetParam(), rotations, [&](Keys& k, int draw, DrawPrecision& p) {
        const auto a = random_complex(size_t(n), 1.0, 18 + 100 * uint64_t(draw));
        const auto ca = k.encrypt(a);
        for (int64_t step : steps)
            p.add("rotation by " + std::to_string(step), precision_bits(k.decrypt(k.eval->rotate(ca, step, k.gk)), rotate_ref(a, step)));
        std::vector<cplx> conj(a.size());
        for (size_t i = 0; i < a.size(); ++i) conj[i] = std::conj(a[i]);
        p.add("conjugation", precision_bits(k.decrypt(k.eval->conjugate(ca, k.gk)), conj));
    });
    for (int64_t step : steps) p.expect_median_at_least("rotation by " + std::to_string(step), rotation_bits_bound(ring_degree()));
    p.expect_median_at_least("conjugation", rotation_bits_bound(ring_degree()));
}

TEST_P(OpsTest, DepthUntilLevelZero) {
    // Multiply by fresh operands (encrypted at the current level) down to level 0, then check
    // ops at level 0 (the last limb). Squaring would double the relative error per level, so
    // the chain uses products with new values in [-1, 1], whose errors only add up.
    auto v = random_real(slots(), 1.0, 19);
    Ciphertext c = k().encrypt(v);
    std::vector<cplx> ref = v;
    uint64_t seed = 100;
    while (c.level() > 0) {
        const auto b = random_real(slots(), 1.0, seed++);
        c = k().eval->multiply_relin_rescale(c, k().encrypt(b, c.level()), k().rk);
        for (size_t i = 0; i < ref.size(); ++i) ref[i] *= b[i];
    }
    EXPECT_EQ(c.level(), 0);
    // Every level's scale stays near 2^40 (primes alternate around 2^40).
    EXPECT_NEAR(std::log2(c.scale()), 40.0, 0.1);
    const double chain_bits = precision_bits(k().decrypt(c), ref);
    std::printf("[ info ] %s: %d products down to level 0 keep %.2f bits\n", GetParam().c_str(), k().ctx->max_level(), chain_bits);
    EXPECT_GE(chain_bits, 18.0) << GetParam();
    const auto r = k().decrypt(k().eval->rotate(k().eval->add(c, c), 1, k().gk));
    std::vector<cplx> ref2(ref.size());
    for (size_t i = 0; i < ref.size(); ++i) ref2[i] = 2.0 * ref[(i + 1) % ref.size()];
    EXPECT_GE(precision_bits(r, ref2), 17.0);
}

TEST_P(OpsTest, DropToLevel) {
    const auto a = random_complex(slots(), 1.0, 20);
    auto ca = k().encrypt(a);
    const Ciphertext d = k().eval->drop_to_level(ca, 0);
    EXPECT_EQ(d.level(), 0);
    EXPECT_EQ(d.scale(), ca.scale());
    EXPECT_GE(precision_bits(k().decrypt(d), a), fresh(22.0));
}

INSTANTIATE_TEST_SUITE_P(Presets, OpsTest, ::testing::Values("S1", "S2", "S4"));

// ---- edge cases on S1 ------------------------------------------------------------------------

TEST(OpsEdge, ZeroVectorStaysZero) {
    Keys& k = Keys::get("S1");
    const std::vector<cplx> zero(k.ctx->max_slots(), cplx(0, 0));
    auto c = k.encrypt(zero);
    const auto prod = k.decrypt(k.eval->multiply_relin_rescale(c, c, k.rk));
    EXPECT_GE(precision_bits(prod, zero), 25.0);
}

TEST(OpsEdge, LargeValues) {
    // |x| up to 2^15 at scale 2^40 uses 55 of the 100 bits of Q: precision is relative.
    Keys& k = Keys::get("S1");
    const auto v = random_real(k.ctx->max_slots(), 32768.0, 21);
    EXPECT_GE(precision_bits(k.decrypt(k.encrypt(v)), v), 25.0 - 15.0 + 5.0);
}

TEST(OpsEdge, SparseSlotsWrapAround) {
    // 8 values in 8 slots: rotation wraps at 8, not at N/2.
    Keys& k = Keys::get("S1");
    const auto v = random_complex(8, 1.0, 22);
    auto c = k.encrypt(v, std::nullopt, true, 8);
    EXPECT_EQ(c.slots(), 8u);
    EXPECT_GE(precision_bits(k.decrypt(c), v), 25.0);
    EXPECT_GE(precision_bits(k.decrypt(k.eval->rotate(c, 1, k.gk)), rotate_ref(v, 1)), 22.0);
    EXPECT_GE(precision_bits(k.decrypt(k.eval->rotate(c, -1, k.gk)), rotate_ref(v, -1)), 22.0);
}

TEST(OpsEdge, FewerValuesThanSlotsArePaddedWithZeros) {
    Keys& k = Keys::get("S1");
    const std::vector<cplx> v = {cplx(0.5, 0), cplx(-1.25, 0)};
    const auto got = k.decrypt(k.encrypt(v));
    std::vector<cplx> want(k.ctx->max_slots(), cplx(0, 0));
    want[0] = v[0];
    want[1] = v[1];
    EXPECT_GE(precision_bits(got, want), 25.0);
}

TEST(OpsEdge, SizeThreeAddAndSubKeepTheThirdPolynomial) {
    Keys& k = Keys::get("S1");
    const auto a = random_real(k.ctx->max_slots(), 1.0, 23), b = random_real(k.ctx->max_slots(), 1.0, 24);
    auto ca = k.encrypt(a), cb = k.encrypt(b);
    const Ciphertext p = k.eval->multiply(ca, cb);
    const Ciphertext q = k.eval->multiply(cb, cb);
    std::vector<cplx> ref(a.size());
    for (size_t i = 0; i < a.size(); ++i) ref[i] = a[i] * b[i] - b[i] * b[i];
    const Ciphertext d = k.eval->rescale(k.eval->relinearize(k.eval->sub(p, q), k.rk));
    EXPECT_GE(precision_bits(k.decrypt(d), ref), 19.0);
}

TEST(OpsEdge, RescaleToMatchesAProductForAddition) {
    // x*y + x: x is brought to the product's level and exact scale, then added.
    Keys& k = Keys::get("S2");
    const auto x = random_complex(k.ctx->max_slots(), 1.0, 25), y = random_complex(k.ctx->max_slots(), 1.0, 26);
    auto cx = k.encrypt(x), cy = k.encrypt(y);
    Ciphertext r = k.eval->multiply_relin_rescale(cx, cy, k.rk);
    const Ciphertext aligned = k.eval->rescale_to(cx, r.level(), r.scale());
    EXPECT_EQ(aligned.level(), r.level());
    EXPECT_NEAR(aligned.scale() / r.scale(), 1.0, 0x1p-40);
    k.eval->add_inplace(r, aligned);
    std::vector<cplx> ref(x.size());
    for (size_t i = 0; i < x.size(); ++i) ref[i] = x[i] * y[i] + x[i];
    EXPECT_GE(precision_bits(k.decrypt(r), ref), 20.0);
    // two levels down in one call
    const Ciphertext two = k.eval->rescale_to(cx, cx.level() - 2, cx.scale());
    EXPECT_EQ(two.level(), cx.level() - 2);
    EXPECT_GE(precision_bits(k.decrypt(two), x), 22.0);
}
