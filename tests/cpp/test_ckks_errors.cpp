// Typed errors of the CKKS layer: every misuse throws the documented error type (util/error.hpp)
// with a message that names the operation and, for ciphertext operands, their level and scale;
// an in-place operation that throws leaves its operand untouched ("nothing is lost").
//
// Everything runs on S1 (N = 2^13, levels 0..1) and a second small context with other primes.
#include "error_test_util.hpp"
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <typeinfo>
#include <vector>

#include "ckks_test_util.hpp"
#include "oboro/util/error.hpp"

using namespace oboro::test;
using oboro::ContextMismatch;
using oboro::LevelMismatch;
using oboro::MissingKey;
using oboro::ScaleMismatch;
using oboro::ValueError;

namespace {


// The "scale 2^X" numbers of a message, in order of appearance.
std::vector<std::string> scales_in(const std::string& msg) {
    std::vector<std::string> out;
    const std::string key = "scale 2^";
    for (size_t pos = msg.find(key); pos != std::string::npos; pos = msg.find(key, pos + 1)) {
        size_t end = pos + key.size();
        while (end < msg.size() && (std::isdigit(static_cast<unsigned char>(msg[end])) || msg[end] == '.' ||
                                    msg[end] == '-' || msg[end] == 'e'))
            ++end;
        out.push_back(msg.substr(pos + key.size(), end - pos - key.size()));
    }
    return out;
}

// A second context of the same ring degree with other primes (so another fingerprint), with keys.
struct Other {
    ContextPtr ctx;
    std::unique_ptr<KeyGenerator> keygen;
    PublicKey pk;
    RelinKey rk;
    GaloisKeys gk;
    std::unique_ptr<Encoder> encoder;
    std::unique_ptr<Encryptor> encryptor;

    static Other& get() {
        static Other o;
        return o;
    }
    Other() {
        Parameters p;
        p.log_n = 13;
        p.q_bits = {50, 40};
        p.p_bits = {60};
        p.scale = 0x1p40;
        ctx = Context::create(p);
        keygen = std::make_unique<KeyGenerator>(ctx);
        pk = keygen->public_key();
        rk = keygen->relin_key();
        gk = keygen->galois_keys({1}, true);
        encoder = std::make_unique<Encoder>(ctx);
        encryptor = std::make_unique<Encryptor>(ctx, pk);
    }
    Ciphertext encrypt(const std::vector<cplx>& v) { return encryptor->encrypt(encoder->encode(v)); }
};

class ErrorsTest : public ::testing::Test {
protected:
    Keys& k = Keys::get("S1");
    Evaluator& ev = *k.eval;
    const size_t slots = k.ctx->max_slots();
    const std::vector<cplx> va = random_complex(slots, 1.0, 101);
    const std::vector<cplx> vb = random_complex(slots, 1.0, 102);
    Ciphertext top_a = k.encrypt(va);      // level 1, scale 2^40
    Ciphertext top_b = k.encrypt(vb);      // level 1, scale 2^40
    Ciphertext low_b = k.encrypt(vb, 0);   // level 0, scale 2^40

    // Asserts that ct still decrypts to `want` (to CKKS precision) and has its original words.
    void expect_intact(const Ciphertext& ct, const Ciphertext& before, const std::vector<cplx>& want) {
        EXPECT_TRUE(same_words(ct, before)) << "the operand was modified by a call that threw";
        EXPECT_GE(precision_bits(k.decrypt(ct), want), 20.0);
    }
};

}  // namespace

// ---- mismatched levels --------------------------------------------------------------------------

TEST_F(ErrorsTest, AddSubMultiplyAtDifferentLevels) {
    EXPECT_ERROR(LevelMismatch, ev.add(top_a, low_b), "add", "level 1", "level 0", "scale 2^40");
    EXPECT_ERROR(LevelMismatch, ev.sub(top_a, low_b), "sub", "level 1", "level 0", "scale 2^40");
    EXPECT_ERROR(LevelMismatch, ev.multiply(top_a, low_b), "multiply", "level 1", "level 0", "scale 2^40");
    EXPECT_ERROR(LevelMismatch, ev.add(low_b, top_a), "add", "level 0", "level 1");
    EXPECT_ERROR(LevelMismatch, ev.multiply_relin_rescale(top_a, low_b, k.rk), "multiply", "level 1", "level 0");
}

TEST_F(ErrorsTest, CiphertextPlaintextAtDifferentLevels) {
    const Plaintext p0 = k.encoder->encode(vb, 0);
    EXPECT_ERROR(LevelMismatch, ev.add(top_a, p0), "add", "level 1", "level 0", "scale 2^40");
    EXPECT_ERROR(LevelMismatch, ev.sub(top_a, p0), "sub", "level 1", "level 0", "scale 2^40");
    EXPECT_ERROR(LevelMismatch, ev.multiply(top_a, p0), "multiply", "level 1", "level 0", "scale 2^40");
}

TEST_F(ErrorsTest, InPlaceLevelMismatchLosesNothing) {
    const Ciphertext before = top_a;
    EXPECT_ERROR(LevelMismatch, ev.add_inplace(top_a, low_b), "add", "level 1", "level 0");
    expect_intact(top_a, before, va);
    EXPECT_ERROR(LevelMismatch, ev.sub_inplace(top_a, low_b), "sub", "level 1", "level 0");
    expect_intact(top_a, before, va);
    EXPECT_ERROR(LevelMismatch, ev.multiply_inplace(top_a, low_b), "multiply", "level 1", "level 0");
    expect_intact(top_a, before, va);
    EXPECT_ERROR(LevelMismatch, ev.multiply_inplace(top_a, k.encoder->encode(vb, 0)), "multiply", "level 0");
    expect_intact(top_a, before, va);
}

TEST_F(ErrorsTest, RescaleAtLevelZero) {
    EXPECT_ERROR(LevelMismatch, ev.rescale(low_b), "rescale", "level 0", "scale 2^40");
    const Ciphertext before = low_b;
    EXPECT_ERROR(LevelMismatch, ev.rescale_inplace(low_b), "rescale", "level 0", "scale 2^40");
    expect_intact(low_b, before, vb);
    // A product rescaled down to level 0 cannot be rescaled again.
    Ciphertext prod = ev.multiply_relin_rescale(top_a, top_b, k.rk);
    ASSERT_EQ(prod.level(), 0);
    EXPECT_ERROR(LevelMismatch, ev.rescale(prod), "rescale", "level 0");
    // The fused multiply + relinearize + rescale needs a prime to rescale by, too.
    Ciphertext low_a = k.encrypt(va, 0);
    EXPECT_ERROR(LevelMismatch, ev.multiply_relin_rescale(low_a, low_b, k.rk), "multiply", "level 0");
}

// a * b + c relinearized and rescaled: c must be a ciphertext at the operands' level and at the
// product's scale; a and b are checked as for multiply_relin_rescale.
TEST_F(ErrorsTest, MultiplyAddRelinRescaleOperands) {
    const char* op = "multiply_add_relin_rescale";
    const Ciphertext c = k.sk_encryptor->encrypt(k.encoder->encode(va, 1, top_a.scale() * top_b.scale()));
    EXPECT_ERROR(LevelMismatch, ev.multiply_add_relin_rescale(top_a, top_b, ev.drop_to_level(c, 0), k.rk), op,
                 "operand 'c'", "level 0", "before its rescale");
    EXPECT_ERROR(ScaleMismatch, ev.multiply_add_relin_rescale(top_a, top_b, top_a, k.rk), op, "operand 'c'",
                 "scale 2^40", "scale 2^80");
    EXPECT_ERROR(LevelMismatch, ev.multiply_add_relin_rescale(top_a, low_b, c, k.rk), op, "level 1", "level 0");
    const Ciphertext low_a = k.encrypt(va, 0);
    EXPECT_ERROR(LevelMismatch, ev.multiply_add_relin_rescale(low_a, low_b, ev.drop_to_level(c, 0), k.rk), op,
                 "level 0", "no prime");
    EXPECT_ERROR(MissingKey, ev.multiply_add_relin_rescale(top_a, top_b, c, RelinKey{}), op, "level 1");
    // the operands are intact and the call works with them
    std::vector<cplx> want(slots);
    for (size_t i = 0; i < slots; ++i) want[i] = va[i] * vb[i] + va[i];
    EXPECT_GE(precision_bits(k.decrypt(ev.multiply_add_relin_rescale(top_a, top_b, c, k.rk)), want), 20.0);
}

TEST_F(ErrorsTest, DropToLevelUpwardsOrNegative) {
    EXPECT_ERROR(LevelMismatch, ev.drop_to_level(low_b, 1), "drop_to_level", "level 0", "level 1");
    EXPECT_ERROR(LevelMismatch, ev.drop_to_level(top_a, 2), "drop_to_level", "level 1", "level 2");
    EXPECT_ERROR(LevelMismatch, ev.drop_to_level(top_a, -1), "drop_to_level", "level 1", "-1");
    const Ciphertext before = low_b;
    EXPECT_ERROR(LevelMismatch, ev.drop_to_level_inplace(low_b, 1), "drop_to_level", "level 0");
    expect_intact(low_b, before, vb);
    // Dropping to the same level or below is fine.
    EXPECT_NO_THROW(ev.drop_to_level(top_a, 1));
    EXPECT_GE(precision_bits(k.decrypt(ev.drop_to_level(top_a, 0)), va), 20.0);
}

// ---- mismatched scales --------------------------------------------------------------------------

TEST_F(ErrorsTest, AddSubOfDifferentScales) {
    const Ciphertext s30 = k.pk_encryptor->encrypt(k.encoder->encode(vb, std::nullopt, 0x1p30));
    EXPECT_ERROR(ScaleMismatch, ev.add(top_a, s30), "add", "level 1", "scale 2^40", "scale 2^30");
    EXPECT_ERROR(ScaleMismatch, ev.sub(top_a, s30), "sub", "level 1", "scale 2^40", "scale 2^30");
    const Ciphertext before = top_a;
    EXPECT_ERROR(ScaleMismatch, ev.add_inplace(top_a, s30), "add", "scale 2^40", "scale 2^30");
    expect_intact(top_a, before, va);
}

TEST_F(ErrorsTest, CiphertextPlusPlaintextOfDifferentScale) {
    const Plaintext p30 = k.encoder->encode(vb, std::nullopt, 0x1p30);
    EXPECT_ERROR(ScaleMismatch, ev.add(top_a, p30), "add", "level 1", "scale 2^40", "scale 2^30");
    EXPECT_ERROR(ScaleMismatch, ev.sub(top_a, p30), "sub", "level 1", "scale 2^40", "scale 2^30");
    const Ciphertext before = top_a;
    EXPECT_ERROR(ScaleMismatch, ev.add_inplace(top_a, p30), "add", "scale 2^30");
    expect_intact(top_a, before, va);
    EXPECT_ERROR(ScaleMismatch, ev.sub_inplace(top_a, p30), "sub", "scale 2^30");
    expect_intact(top_a, before, va);
}

// The everyday mistake: a rescaled product (scale 2^80 / q_1) added to a fresh ciphertext at the
// same level (scale 2^40). The scales differ by far less than 1%, so the message must print them
// precisely enough to tell them apart.
TEST_F(ErrorsTest, CloseScalesAreRejectedAndDistinguishable) {
    const Ciphertext prod = ev.multiply_relin_rescale(top_a, top_b, k.rk);
    ASSERT_EQ(prod.level(), 0);
    ASSERT_NE(prod.scale(), low_b.scale());
    EXPECT_THROW(ev.add(prod, low_b), ScaleMismatch);
    const std::string msg = message_of<ScaleMismatch>([&] { ev.add(prod, low_b); });
    expect_mentions(msg, {"add", "level 0", "scale 2^"});
    const auto s = scales_in(msg);
    ASSERT_EQ(s.size(), 2u) << msg;
    EXPECT_NE(s[0], s[1]) << "both scales print the same, so the message does not show what differs: " << msg;
}

TEST_F(ErrorsTest, MultiplyWhoseScaleOverflowsTheModulus) {
    // At level 0 only q_0 (60 bits) is left: 2^40 * 2^40 does not fit.
    Ciphertext low_a = k.encrypt(va, 0);
    EXPECT_ERROR(ScaleMismatch, ev.multiply(low_a, low_b), "multiply", "level 0", "2^80");
    EXPECT_ERROR(ScaleMismatch, ev.square(low_a), "multiply", "level 0");
    const Plaintext p0 = k.encoder->encode(vb, 0);
    EXPECT_ERROR(ScaleMismatch, ev.multiply(low_a, p0), "multiply", "level 0");
    const Ciphertext before = low_a;
    EXPECT_ERROR(ScaleMismatch, ev.multiply_inplace(low_a, p0), "multiply", "level 0");
    expect_intact(low_a, before, va);
    EXPECT_ERROR(ScaleMismatch, ev.multiply_inplace(low_a, low_b), "multiply", "level 0");
    expect_intact(low_a, before, va);
    // The constant is encoded at scale q_0: 2^40 * q_0 does not fit q_0 either.
    EXPECT_ERROR(ScaleMismatch, ev.multiply_inplace(low_a, 2.0), "multiply", "level 0");
    expect_intact(low_a, before, va);
}

// ---- mixing contexts ----------------------------------------------------------------------------

TEST_F(ErrorsTest, EvaluatorRejectsForeignOperands) {
    Other& o = Other::get();
    ASSERT_NE(o.ctx->id(), k.ctx->id());
    const Ciphertext foreign = o.encrypt(vb);
    EXPECT_ERROR(ContextMismatch, ev.add(top_a, foreign), "add", "level 1", "scale 2^40");
    EXPECT_ERROR(ContextMismatch, ev.add(foreign, top_a), "add", "level 1");
    EXPECT_ERROR(ContextMismatch, ev.sub(top_a, foreign), "sub", "level 1");
    EXPECT_ERROR(ContextMismatch, ev.multiply(top_a, foreign), "multiply", "level 1");
    EXPECT_ERROR(ContextMismatch, ev.add(top_a, o.encoder->encode(vb)), "add", "level 1");
    EXPECT_ERROR(ContextMismatch, ev.multiply(top_a, o.encoder->encode(vb)), "multiply", "level 1");
    EXPECT_ERROR(ContextMismatch, ev.rescale(foreign), "rescale", "level 1", "scale 2^40");
    EXPECT_ERROR(ContextMismatch, ev.negate(foreign), "negate", "level 1");
    EXPECT_ERROR(ContextMismatch, ev.add(foreign, 1.0), "add", "level 1");
    EXPECT_ERROR(ContextMismatch, ev.multiply(foreign, 2.0), "multiply", "level 1");
    EXPECT_ERROR(ContextMismatch, ev.multiply_integer(foreign, 3), "multiply_integer", "level 1");
    EXPECT_ERROR(ContextMismatch, ev.drop_to_level(foreign, 0), "drop_to_level", "level 1");
    EXPECT_ERROR(ContextMismatch, ev.rotate(foreign, 1, k.gk), "rotate", "level 1");
    EXPECT_ERROR(ContextMismatch, ev.conjugate(foreign, k.gk), "conjugate", "level 1");
    EXPECT_ERROR(ContextMismatch, ev.relinearize(foreign, k.rk), "relinearize", "level 1");
    EXPECT_ERROR(ContextMismatch, ev.multiply_relin_rescale(foreign, foreign, k.rk), "multiply", "level 1");
    const Ciphertext before = top_a;
    EXPECT_ERROR(ContextMismatch, ev.add_inplace(top_a, foreign), "add");
    expect_intact(top_a, before, va);
}

TEST_F(ErrorsTest, EvaluatorRejectsForeignKeys) {
    Other& o = Other::get();
    Ciphertext prod = ev.multiply(top_a, top_b);
    EXPECT_ERROR(ContextMismatch, ev.relinearize(prod, o.rk), "relinearize", "key");
    EXPECT_ERROR(ContextMismatch, ev.multiply_relin_rescale(top_a, top_b, o.rk), "multiply", "key");
    EXPECT_ERROR(ContextMismatch, ev.rotate(top_a, 1, o.gk), "rotate", "Galois");
    EXPECT_ERROR(ContextMismatch, ev.conjugate(top_a, o.gk), "conjugate", "Galois");
    const Ciphertext before_prod = prod;
    EXPECT_ERROR(ContextMismatch, ev.relinearize_inplace(prod, o.rk), "relinearize");
    EXPECT_TRUE(same_words(prod, before_prod));
    const Ciphertext before = top_a;
    EXPECT_ERROR(ContextMismatch, ev.rotate_inplace(top_a, 1, o.gk), "rotate");
    expect_intact(top_a, before, va);
    EXPECT_ERROR(ContextMismatch, ev.conjugate_inplace(top_a, o.gk), "conjugate");
    expect_intact(top_a, before, va);
}

TEST_F(ErrorsTest, EncryptorDecryptorEncoderRejectForeignObjects) {
    Other& o = Other::get();
    EXPECT_ERROR(ContextMismatch, Encryptor(k.ctx, o.pk), "Encryptor", "public key");
    EXPECT_ERROR(ContextMismatch, Encryptor(k.ctx, o.keygen->secret_key()), "Encryptor", "secret key");
    EXPECT_ERROR(ContextMismatch, Decryptor(k.ctx, o.keygen->secret_key()), "Decryptor", "secret key");
    EXPECT_ERROR(ContextMismatch, KeyGenerator(k.ctx, o.keygen->secret_key()), "KeyGenerator", "secret key");
    EXPECT_ERROR(ContextMismatch, k.pk_encryptor->encrypt(o.encoder->encode(vb)), "encrypt");
    EXPECT_ERROR(ContextMismatch, k.sk_encryptor->encrypt(o.encoder->encode(vb)), "encrypt");
    EXPECT_ERROR(ContextMismatch, k.encoder->decode(o.encoder->encode(vb)), "decode");
    GaloisKeys foreign_set = o.gk;
    EXPECT_ERROR(ContextMismatch, k.keygen->add_galois_keys(foreign_set, {2}), "add_galois_keys");
}

TEST_F(ErrorsTest, DecryptorRejectsForeignCiphertext) {
    Other& o = Other::get();
    const Ciphertext foreign = o.encrypt(vb);
    EXPECT_ERROR(ContextMismatch, k.decryptor->decrypt(foreign), "decrypt", "level 1", "scale 2^40");
    EXPECT_ERROR(ContextMismatch, k.decryptor->decrypt_decode(foreign, *k.encoder), "decrypt", "level 1",
                 "scale 2^40");
}

// The context id is a fingerprint of the primes: two contexts built from the same parameters are
// deliberately compatible, so their objects mix freely (and correctly).
TEST_F(ErrorsTest, SameParametersTwiceAreCompatible) {
    const ContextPtr twin = Context::create(Parameters::preset("S1"));
    ASSERT_NE(twin.get(), k.ctx.get());
    EXPECT_EQ(twin->id(), k.ctx->id());
    EXPECT_EQ(twin->q(), k.ctx->q());
    EXPECT_EQ(twin->p(), k.ctx->p());
    Evaluator twin_eval(twin);
    Encoder twin_encoder(twin);
    Encryptor twin_encryptor(twin, k.pk);
    Decryptor twin_decryptor(twin, k.keygen->secret_key());
    const Ciphertext b = twin_encryptor.encrypt(twin_encoder.encode(vb));
    std::vector<cplx> sum(slots);
    for (size_t i = 0; i < slots; ++i) sum[i] = va[i] + vb[i];
    const Ciphertext s1 = twin_eval.add(top_a, b);
    const Ciphertext s2 = ev.add(top_a, b);
    EXPECT_GE(precision_bits(k.decrypt(s1), sum), 20.0);
    EXPECT_GE(precision_bits(twin_decryptor.decrypt_decode(s2, twin_encoder), sum), 20.0);
    EXPECT_GE(precision_bits(twin_encoder.decode(k.decryptor->decrypt(b)), vb), 20.0);
}

// ---- missing keys -------------------------------------------------------------------------------

TEST_F(ErrorsTest, RelinearizeWithoutKey) {
    Ciphertext prod = ev.multiply(top_a, top_b);
    ASSERT_EQ(prod.size(), 3u);
    const RelinKey none;
    EXPECT_ERROR(MissingKey, ev.relinearize(prod, none), "relinearize", "level 1", "scale 2^80");
    EXPECT_ERROR(MissingKey, ev.multiply_relin_rescale(top_a, top_b, none), "multiply_relin_rescale", "level 1");
    const Ciphertext before = prod;
    EXPECT_ERROR(MissingKey, ev.relinearize_inplace(prod, none), "relinearize");
    EXPECT_TRUE(same_words(prod, before));
    // Still usable: relinearize with the real key, rescale, decrypt.
    std::vector<cplx> want(slots);
    for (size_t i = 0; i < slots; ++i) want[i] = va[i] * vb[i];
    ev.relinearize_inplace(prod, k.rk);
    ev.rescale_inplace(prod);
    EXPECT_GE(precision_bits(k.decrypt(prod), want), 15.0);
}

TEST_F(ErrorsTest, RotateWithoutKeyNamesTheStep) {
    // The fixture has keys for {1, -1, 5, slots-1, slots/2}; 2 and 3 have none.
    EXPECT_ERROR(MissingKey, ev.rotate(top_a, 2, k.gk), "rotate", "2", "level 1", "scale 2^40");
    EXPECT_ERROR(MissingKey, ev.rotate(top_a, -3, k.gk), "rotate", "-3", "level 1", "scale 2^40");
    const GaloisKeys none;
    EXPECT_ERROR(MissingKey, ev.rotate(top_a, 1, none), "rotate", "1", "level 1", "scale 2^40");
    const Ciphertext before = top_a;
    EXPECT_ERROR(MissingKey, ev.rotate_inplace(top_a, 2, k.gk), "rotate", "rotation by 2");
    expect_intact(top_a, before, va);
    // A step with a key works and 0 needs none.
    EXPECT_NO_THROW(ev.rotate(top_a, 1, k.gk));
    EXPECT_NO_THROW(ev.rotate(top_a, 0, none));
}

TEST_F(ErrorsTest, ConjugateWithoutConjugationKey) {
    const GaloisKeys rot_only = k.keygen->galois_keys({1}, /*conjugation=*/false);
    EXPECT_ERROR(MissingKey, ev.conjugate(top_a, rot_only), "conjugate", "conjugation", "level 1", "scale 2^40");
    const GaloisKeys none;
    EXPECT_ERROR(MissingKey, ev.conjugate(top_a, none), "conjugate", "conjugation");
    const Ciphertext before = top_a;
    EXPECT_ERROR(MissingKey, ev.conjugate_inplace(top_a, none), "conjugate");
    expect_intact(top_a, before, va);
}

TEST_F(ErrorsTest, GaloisKeyOfAnInvalidElement) {
    const uint64_t two_n = 2 * k.ctx->n();
    EXPECT_ERROR(ValueError, k.keygen->galois_key(4), "galois_key", "4");
    EXPECT_ERROR(ValueError, k.keygen->galois_key(0), "galois_key");
    EXPECT_ERROR(ValueError, k.keygen->galois_key(two_n), "galois_key");
    EXPECT_ERROR(ValueError, k.keygen->galois_key(two_n + 1), "galois_key");
}

// ---- out-of-range arguments ---------------------------------------------------------------------

TEST_F(ErrorsTest, RotateOutOfRange) {
    const int64_t s = int64_t(slots);
    EXPECT_ERROR(ValueError, ev.rotate(top_a, s, k.gk), "rotate", std::to_string(s), "slots");
    EXPECT_ERROR(ValueError, ev.rotate(top_a, -s, k.gk), "rotate", std::to_string(-s));
    EXPECT_ERROR(ValueError, ev.rotate(top_a, s + 1, k.gk), "rotate");
    EXPECT_ERROR(ValueError, ev.rotate(top_a, std::numeric_limits<int64_t>::min(), k.gk), "rotate");
    EXPECT_ERROR(ValueError, ev.rotate(top_a, std::numeric_limits<int64_t>::max(), k.gk), "rotate");
    const Ciphertext before = top_a;
    EXPECT_ERROR(ValueError, ev.rotate_inplace(top_a, s, k.gk), "rotate");
    expect_intact(top_a, before, va);
    // The range follows the ciphertext's own slot count: 8 slots allow -7..7.
    const std::vector<cplx> v8 = random_complex(8, 1.0, 103);
    const Ciphertext sparse = k.encrypt(v8, std::nullopt, true, 8);
    EXPECT_ERROR(ValueError, ev.rotate(sparse, 8, k.gk), "rotate", "8 slots");
    EXPECT_ERROR(ValueError, ev.rotate(sparse, -8, k.gk), "rotate", "-8");
    EXPECT_NO_THROW(ev.rotate(sparse, 5, k.gk));
    EXPECT_NO_THROW(ev.rotate(top_a, s - 1, k.gk));
}

TEST_F(ErrorsTest, EncodeMoreValuesThanSlots) {
    const auto too_many = random_complex(slots + 1, 1.0, 104);
    EXPECT_ERROR(ValueError, k.encoder->encode(too_many), "encode", std::to_string(slots + 1),
                 std::to_string(slots));
    EXPECT_ERROR(ValueError, k.encoder->encode(random_complex(9, 1.0, 105), std::nullopt, std::nullopt, 8), "encode", "9", "8 slots");
    EXPECT_ERROR(ValueError, k.encoder->encode(std::vector<double>(slots + 1, 0.5)), "encode");
    EXPECT_NO_THROW(k.encoder->encode(random_complex(8, 1.0, 106), std::nullopt, std::nullopt, 8));
}

TEST_F(ErrorsTest, EncodeBadSlotCount) {
    const auto v = random_complex(4, 1.0, 107);
    EXPECT_ERROR(ValueError, k.encoder->encode(v, std::nullopt, std::nullopt, 6), "encode", "slots = 6", "power of two");
    EXPECT_ERROR(ValueError, k.encoder->encode(v, std::nullopt, std::nullopt, 3 * slots / 2), "encode", "power of two");
    EXPECT_ERROR(ValueError, k.encoder->encode(v, std::nullopt, std::nullopt, 2 * slots), "encode", std::to_string(2 * slots));
    EXPECT_ERROR(ValueError, k.encoder->encode_constant(1.0, std::nullopt, std::nullopt, 12), "encode", "slots = 12");
}

TEST_F(ErrorsTest, EncodeNonFiniteValues) {
    for (double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                       -std::numeric_limits<double>::infinity()}) {
        std::vector<cplx> v = random_complex(slots, 1.0, 108);
        v[17] = cplx(bad, 0);
        EXPECT_ERROR(ValueError, k.encoder->encode(v), "encode", "finite");
        v[17] = cplx(0, bad);
        EXPECT_ERROR(ValueError, k.encoder->encode(v), "encode", "finite");
        EXPECT_ERROR(ValueError, k.encoder->encode_constant(cplx(bad, 0)), "encode", "finite");
    }
}

TEST_F(ErrorsTest, EncodeValuesTooLargeForTheModulus) {
    // level 1: Q ~ 2^100; 1e30 * 2^40 ~ 2^140.
    EXPECT_ERROR(ValueError, k.encoder->encode_constant(1e30), "encode", "level 1", "scale 2^40");
    // level 0: q_0 ~ 2^60; 2^30 * 2^40 = 2^70.
    EXPECT_ERROR(ValueError, k.encoder->encode_constant(0x1p30, 0), "encode", "level 0", "scale 2^40");
    std::vector<cplx> v = random_complex(slots, 1.0, 109);
    v[3] = cplx(1e40, 0);
    EXPECT_ERROR(ValueError, k.encoder->encode(v), "encode", "level 1");
    // A scale too large on its own.
    EXPECT_ERROR(ValueError, k.encoder->encode(random_complex(slots, 1.0, 110), 0, 0x1p70), "encode", "level 0",
                 "scale 2^70");
    // The same value fits at a level with room.
    EXPECT_NO_THROW(k.encoder->encode_constant(0x1p30, 1));
}

// ---- values too large for the modulus (encoder.hpp: the headroom rules) ---------------------------

// A constant in every slot is the polynomial's constant coefficient alone, value * scale: the
// bounds are exact for it.
TEST_F(ErrorsTest, EncodingHeadroomBound) {
    const double scale = k.ctx->default_scale();
    const double limit = std::exp2(k.ctx->log2_q(0) - oboro::ckks::encoding_headroom_bits) / scale;
    // just inside: encodes, encrypts and decrypts to full precision at level 0
    const auto got = k.decrypt(k.encrypt(std::vector<cplx>(slots, cplx(0.999 * limit, 0)), 0));
    EXPECT_NEAR(got[0].real() / (0.999 * limit), 1.0, 1e-9);
    // just outside: refused before anything is encoded, with the bound in the message
    EXPECT_ERROR(ValueError, k.encoder->encode_constant(1.001 * limit, 0), "encode", "level 0", "scale 2^40",
                 "beyond the modulus", "bits of headroom");
}

// A product whose result wraps around q_0 (1e6 squared is 1e12, and 1e12 * 2^40 is far beyond
// q_0 ~ 2^60): decryption refuses it instead of returning 1e12 mod 2^20.
TEST_F(ErrorsTest, DecryptRefusesAWrappedProduct) {
    const Ciphertext x = k.encrypt(std::vector<cplx>(slots, cplx(1e6, 0)));
    const Ciphertext y = ev.multiply_relin_rescale(x, x, k.rk);
    ASSERT_EQ(y.level(), 0);
    EXPECT_ERROR(oboro::ModulusOverflow, k.decrypt(y), "decrypt", "wrapped around the modulus", "level 0",
                 "scale 2^", "Scale the inputs down");
    // random data of magnitude 2^12: every coefficient wraps (2^24 * 2^40 > 2^60), the batch path too
    const Ciphertext r = k.encrypt(random_complex(slots, 4096.0, 113));
    EXPECT_THROW(k.decrypt(ev.multiply_relin_rescale(r, r, k.rk)), oboro::ModulusOverflow);
    const Plaintext pt = k.decryptor->decrypt(ev.multiply_relin_rescale(r, r, k.rk));
    EXPECT_THROW(k.encoder->decode(pt), oboro::ModulusOverflow);
}

// Both sides of the decryption bound, with a product at level 0 (the scale is then 2^80 / q_1).
TEST_F(ErrorsTest, DecryptionHeadroomBound) {
    const Ciphertext one = k.encrypt(std::vector<cplx>(slots, cplx(1, 0)));
    const double out_scale = ev.multiply_relin_rescale(one, one, k.rk).scale();
    const double bound = std::exp2(k.ctx->log2_q(0) - oboro::ckks::overflow_headroom_bits) / out_scale;
    for (const double fraction : {0.98, 1.02}) {
        const double v = std::sqrt(fraction * bound);
        const Ciphertext x = k.encrypt(std::vector<cplx>(slots, cplx(v, 0)));
        const Ciphertext y = ev.multiply_relin_rescale(x, x, k.rk);
        if (fraction < 1) {
            const auto got = k.decrypt(y);  // a legitimate large value just inside the bound
            EXPECT_NEAR(got[0].real() / (v * v), 1.0, 1e-6);
        } else {
            // still below q_0 / 2, so not wrapped, but within the headroom: refused all the same
            EXPECT_ERROR(oboro::ModulusOverflow, k.decrypt(y), "decrypt", "level 0");
        }
    }
}

TEST_F(ErrorsTest, EncodeBadLevelOrScale) {
    const auto v = random_complex(slots, 1.0, 111);
    EXPECT_ERROR(LevelMismatch, k.encoder->encode(v, 2), "encode", "level 2");
    // -1 means the top level; any other negative level is an error, not the top level.
    EXPECT_ERROR(LevelMismatch, k.encoder->encode(v, -2), "encode", "-2");
    EXPECT_ERROR(ValueError, k.encoder->encode(v, std::nullopt, 0.5), "encode", "scale");
    // no sentinels: "not given" is std::nullopt; an explicit 0 scale, 0 slots or level -1 is an error
    EXPECT_ERROR(ValueError, k.encoder->encode(v, std::nullopt, 0.0), "encode", "scale 0", "leave it out");
    EXPECT_ERROR(ValueError, k.encoder->encode(v, std::nullopt, std::nullopt, 0), "encode", "slots = 0");
    EXPECT_ERROR(LevelMismatch, k.encoder->encode(v, -1), "encode", "level -1", "leave it out");
    EXPECT_ERROR(ValueError, k.encoder->encode_constant(1.0, std::nullopt, std::nullopt, 0), "encode", "slots = 0");
    EXPECT_ERROR(ValueError, k.encoder->encode(v, std::nullopt, -0x1p40), "encode", "scale");
    EXPECT_ERROR(ValueError, k.encoder->encode(v, std::nullopt, std::numeric_limits<double>::quiet_NaN()), "encode", "scale");
    EXPECT_ERROR(ValueError, k.encoder->encode(v, std::nullopt, std::numeric_limits<double>::infinity()), "encode", "scale");
}

TEST_F(ErrorsTest, EncryptZeroAtAnInvalidLevel) {
    EXPECT_ERROR(LevelMismatch, k.pk_encryptor->encrypt_zero(2, 0x1p40, slots), "encrypt", "level 2");
    EXPECT_ERROR(LevelMismatch, k.sk_encryptor->encrypt_zero(-1, 0x1p40, slots), "encrypt", "level -1");
}

TEST_F(ErrorsTest, ScalarThatDoesNotFit) {
    EXPECT_ERROR(ValueError, ev.add(top_a, 1e30), "add", "level 1", "scale 2^40");
    EXPECT_ERROR(ValueError, ev.sub(top_a, 1e30), "sub", "level 1");
    EXPECT_ERROR(ValueError, ev.add(low_b, 0x1p25), "add", "level 0");
    EXPECT_ERROR(ValueError, ev.add(top_a, std::numeric_limits<double>::quiet_NaN()), "add", "finite");
    EXPECT_ERROR(ValueError, ev.add(top_a, std::numeric_limits<double>::infinity()), "add", "finite");
    EXPECT_ERROR(ValueError, ev.multiply(top_a, 1e30), "multiply", "level 1");
    EXPECT_ERROR(ValueError, ev.multiply(top_a, std::numeric_limits<double>::quiet_NaN()), "multiply", "finite");
    const Ciphertext before = top_a;
    EXPECT_ERROR(ValueError, ev.add_inplace(top_a, 1e30), "add");
    expect_intact(top_a, before, va);
    EXPECT_ERROR(ValueError, ev.sub_inplace(top_a, std::numeric_limits<double>::infinity()), "sub");
    expect_intact(top_a, before, va);
    EXPECT_ERROR(ValueError, ev.multiply_inplace(top_a, 1e30), "multiply");
    expect_intact(top_a, before, va);
    // A scalar that fits is fine.
    std::vector<cplx> want(slots);
    for (size_t i = 0; i < slots; ++i) want[i] = va[i] + 3.0;
    EXPECT_GE(precision_bits(k.decrypt(ev.add(top_a, 3.0)), want), 20.0);
}

// ---- ciphertext shape ---------------------------------------------------------------------------

TEST_F(ErrorsTest, MultiplyOfASizeThreeCiphertext) {
    const Ciphertext prod = ev.multiply(top_a, top_b);
    ASSERT_EQ(prod.size(), 3u);
    EXPECT_ERROR(ValueError, ev.multiply(prod, top_a), "multiply", "3 polynomials", "relinearize", "level 1",
                 "scale 2^80");
    EXPECT_ERROR(ValueError, ev.multiply(top_a, prod), "multiply", "3 polynomials", "relinearize");
    EXPECT_ERROR(ValueError, ev.square(prod), "multiply", "relinearize");
    EXPECT_ERROR(ValueError, ev.rotate(prod, 1, k.gk), "rotate", "3 polynomials", "relinearize");
    EXPECT_ERROR(ValueError, ev.conjugate(prod, k.gk), "conjugate", "3 polynomials", "relinearize");
    Ciphertext a = top_a;
    const Ciphertext before = a;
    EXPECT_ERROR(ValueError, ev.multiply_inplace(a, prod), "multiply");
    expect_intact(a, before, va);
}

TEST_F(ErrorsTest, UnsupportedCiphertextSizes) {
    Ciphertext four(*k.ctx, 4, 1, 0x1p40, slots);
    std::memset(four.mutable_data(), 0, four.word_count() * sizeof(uint64_t));
    EXPECT_ERROR(ValueError, ev.relinearize(four, k.rk), "relinearize", "4");
    EXPECT_ERROR(ValueError, k.decryptor->decrypt(four), "decrypt", "4");
}

TEST_F(ErrorsTest, EmptyOperand) {
    const Ciphertext empty;
    EXPECT_ERROR(ValueError, ev.add(top_a, empty), "add", "empty");
    EXPECT_ERROR(ValueError, ev.multiply(empty, top_a), "multiply", "empty");
    EXPECT_ERROR(ValueError, ev.rescale(empty), "rescale", "empty");
    EXPECT_ERROR(ValueError, ev.rotate(empty, 1, k.gk), "rotate", "empty");
    const Ciphertext before = top_a;
    EXPECT_ERROR(ValueError, ev.add_inplace(top_a, empty), "add", "empty");
    expect_intact(top_a, before, va);
}
