// Encoding, encryption and decryption precision against a double-precision reference.
#include "ckks_test_util.hpp"
#include "oboro/backend/cpu/keyswitch.hpp"
#include "oboro/backend/cpu/poly_ops.hpp"
#include "oboro/backend/cpu/public_key_encrypt.hpp"
#include "oboro/ckks/sampling.hpp"

using namespace oboro;
using namespace oboro::ckks;
using namespace oboro::test;

class PresetTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PresetTest, EncodeDecodeIsExactToRounding) {
    Keys& k = Keys::get(GetParam());
    const auto v = random_complex(k.ctx->max_slots(), 1.0, 1);
    const auto back = k.encoder->decode(k.encoder->encode(v));
    EXPECT_GE(precision_bits(back, v), 30.0);
}

// Over kKeyDraws seeded key sets (ckks_test_util.hpp), the lower median of the per-draw precision
// is bounded by the estimates of docs/precision.md less one bit: the medians measured sit within
// 0.4 bits of the estimates (S1 26.8 / 30.3, S2 25.6 / 29.7, S4 23.5 / 28.6 bits for public- /
// secret-key encryption), and one bit below leaves half a bit to the lowest of 64 single draws.
// Public-key encryption keeps fewer bits: the rounding error of c1/P, times s (docs/precision.md).
TEST_P(PresetTest, PublicAndSecretKeyEncryptDecrypt) {
    const KeySetup only_encryption{.relin = false, .rotations = std::vector<int64_t>{}, .conjugation = false};
    const DrawPrecision p = over_key_draws(GetParam(), only_encryption, [](Keys& k, int draw, DrawPrecision& p) {
        const auto v = random_complex(k.ctx->max_slots(), 1.0, 100 + uint64_t(draw));
        p.add("public-key encryption", precision_bits(k.decrypt(k.encrypt(v)), v));
        p.add("secret-key encryption", precision_bits(k.decrypt(k.encrypt(v, std::nullopt, false)), v));
    });
    const size_t n = size_t(1) << Parameters::preset(GetParam()).log_n;
    p.expect_median_at_least("public-key encryption", public_key_fresh_bits_estimate(n) - 1.0);
    p.expect_median_at_least("secret-key encryption", secret_key_fresh_bits_estimate(n) - 1.0);
}

// encrypt(encoder, values) puts the message into the error before its transforms; with the same
// randomness it must give what encrypt(encode(values)) gives. Decryption shows it word for word
// (c0 + c1*s = m + noise; a secret-key encryption's uniform half has a fresh seed either way).
TEST_P(PresetTest, OneStepEncryptionEqualsEncodeThenEncrypt) {
    Keys& k = Keys::get(GetParam());
    const math::Seed seed{7, 1, 2, 3};
    const int top = k.ctx->max_level();
    for (bool with_public_key : {true, false}) {
        Encryptor& enc = with_public_key ? *k.pk_encryptor : *k.sk_encryptor;
        for (int level : {top, std::min(top, 1), 0}) {
            for (size_t slots : {k.ctx->max_slots(), size_t(4)}) {
                SCOPED_TRACE(testing::Message() << (with_public_key ? "public" : "secret") << " key, level " << level
                                                << ", " << slots << " slots");
                auto v = random_complex(slots, 1.0, 11 + uint64_t(level));
                v[0] = {1.0, -1.0};  // the interval's ends
                v[slots - 1] = {0.0, 0.0};
                const double scale = k.ctx->standard_scale(level);
                enc.reseed_for_testing(seed);
                const Ciphertext one = enc.encrypt(*k.encoder, v, level, scale, slots);
                enc.reseed_for_testing(seed);
                const Ciphertext two = enc.encrypt(k.encoder->encode(v, level, scale, slots));
                EXPECT_EQ(one.level(), level);
                EXPECT_EQ(one.scale(), scale);
                EXPECT_EQ(one.slots(), slots);
                EXPECT_EQ(one.uniform_seed().has_value(), !with_public_key);
                const Plaintext a = k.decryptor->decrypt(one), b = k.decryptor->decrypt(two);
                const size_t words = a.limbs() * k.ctx->n();
                EXPECT_TRUE(std::equal(a.poly(0), a.poly(0) + words, b.poly(0)));
                EXPECT_GE(precision_bits(k.decrypt(one), v), public_key_fresh_bits_estimate(k.ctx->n()) - 4.0);
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Presets, PresetTest, ::testing::Values("S1", "S2", "S4"));

// Public-key encryption limb by limb gives the words of its step-by-step form: u's NTT over
// Q_l * P, the two products with the public key, the errors (and P * m for c_0) transformed and
// added, and the two divisions by P (mod_down). One special prime (S1: a conversion from one prime) and six (S4),
// the top level and level 0, with a message and without.
TEST(PublicKeyEncrypt, EqualsTheStepByStepForm) {
    for (const char* preset : {"S1", "S4"}) {
        Keys& k = Keys::get(preset);
        const Context& ctx = *k.ctx;
        const size_t n = ctx.n(), p = ctx.p_count(), qp = ctx.q_count() + p;
        const uint64_t bound = gaussian_bound(kErrorSigma);
        for (int level : {ctx.max_level(), 0})
            for (bool with_message : {true, false}) {
                SCOPED_TRACE(testing::Message() << preset << ", level " << level << ", message " << with_message);
                const size_t nq = size_t(level + 1), ne = nq + p;
                std::vector<math::Modulus> mods(ctx.moduli(), ctx.moduli() + nq);
                mods.insert(mods.end(), ctx.p_moduli(), ctx.p_moduli() + p);
                math::Prng prng(math::Seed{5, uint8_t(level)});
                const auto u = sample_ternary(prng, n);
                const auto e0 = sample_gaussian(prng, n), e1 = sample_gaussian(prng, n);
                std::vector<uint64_t> message(nq * n);
                sample_uniform(prng, message.data(), ctx.moduli(), nq, n);
                const uint64_t* m = with_message ? message.data() : nullptr;
                const backend::LevelConstants& lc = ctx.ring().level(level);
                // the step-by-step form
                std::vector<uint64_t> un(ne * n), ext(ne * n), addend(ne * n), want(2 * nq * n);
                small_to_ntt(u, un.data(), ctx.moduli(), ctx.ntt_tables(), nq);
                small_to_ntt(u, un.data() + nq * n, ctx.p_moduli(), ctx.p_ntt_tables(), p);
                auto ws = scratch_pool().acquire();
                for (int half = 0; half < 2; ++half) {
                    const uint64_t* key = half == 0 ? k.pk.b() : k.pk.a(qp, n);
                    const auto& e = half == 0 ? e0 : e1;
                    small_to_limbs(e, bound, addend.data(), ctx.moduli(), nq);
                    small_to_limbs(e, bound, addend.data() + nq * n, ctx.p_moduli(), p);
                    if (half == 0 && m) backend::cpu::mul_scalar_add(addend.data(), m, lc.p_mod_q.data(), ctx.moduli(), nq, n);
                    backend::cpu::ntt_forward(addend.data(), ctx.ntt_tables(), nq);
                    backend::cpu::ntt_forward(addend.data() + nq * n, ctx.p_ntt_tables(), p);
                    backend::cpu::mul(ext.data(), un.data(), key, ctx.moduli(), nq, n);
                    backend::cpu::mul(ext.data() + nq * n, un.data() + nq * n, key + ctx.q_count() * n, ctx.p_moduli(), p, n);
                    backend::cpu::add(ext.data(), ext.data(), addend.data(), mods.data(), ne, n);
                    backend::cpu::mod_down(ctx.ring(), lc, ext.data(), want.data() + size_t(half) * nq * n, *ws);
                }
                std::vector<uint64_t> got(2 * nq * n);
                backend::cpu::public_key_encrypt(ctx.ring(), lc, u.data(), e0.data(), e1.data(), bound, m, k.pk.b(),
                                                 k.pk.a(qp, n), ctx.q_count(), got.data(), got.data() + nq * n);
                EXPECT_EQ(got, want);
            }
    }
}

TEST(OneStepEncryption, RefusesWhatEncodeRefuses) {
    Keys& k = Keys::get("S1");
    const size_t slots = k.ctx->max_slots();
    std::vector<cplx> too_many(slots + 1, cplx(0.5, 0));
    EXPECT_THROW(k.pk_encryptor->encrypt(*k.encoder, too_many), oboro::ValueError);
    std::vector<cplx> huge(4, cplx(1e30, 0));
    EXPECT_THROW(k.pk_encryptor->encrypt(*k.encoder, huge), oboro::ValueError);
    std::vector<cplx> nan(4, cplx(std::nan(""), 0));
    EXPECT_THROW(k.sk_encryptor->encrypt(*k.encoder, nan), oboro::ValueError);
    EXPECT_THROW(k.pk_encryptor->encrypt(*k.encoder, nan, k.ctx->max_level() + 1), oboro::LevelMismatch);
    EXPECT_THROW(k.pk_encryptor->encrypt(*k.encoder, nan, std::nullopt, std::nullopt, size_t(3)), oboro::ValueError);
    Keys& other = Keys::get("S2");
    EXPECT_THROW(k.pk_encryptor->encrypt(*other.encoder, huge), oboro::ContextMismatch);
}

TEST(Decryption, NoiseFloodingAddsTheRequestedNoise) {
    Keys& k = Keys::get("S1");
    const auto v = random_complex(k.ctx->max_slots(), 1.0, 4);
    const Ciphertext ct = k.encrypt(v, std::nullopt, false);
    Decryptor flooded(k.ctx, k.keygen->secret_key());
    flooded.set_noise_flooding(20);
    const double plain = precision_bits(k.decrypt(ct), v);
    const double noisy = precision_bits(flooded.decrypt_decode(ct, *k.encoder), v);
    // Coefficient noise 2^20 -> slot noise ~ 2^20 * sqrt(N/2) * 4 ~ 2^28.5, at scale 2^40: ~11.5 bits.
    EXPECT_LT(noisy, plain - 10);
    EXPECT_GT(noisy, 9.0);
    EXPECT_LT(noisy, 14.0);
    EXPECT_THROW(flooded.set_noise_flooding(-1), oboro::ValueError);
    EXPECT_THROW(flooded.set_noise_flooding(51), oboro::ValueError);
}
