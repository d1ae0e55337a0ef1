// Encoding, encryption and decryption precision against a double-precision reference.
#include "ckks_test_util.hpp"

using namespace oboro::test;

class PresetTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PresetTest, EncodeDecodeIsExactToRounding) {
    Keys& k = Keys::get(GetParam());
    const auto v = random_complex(k.ctx->max_slots(), 1.0, 1);
    const auto back = k.encoder->decode(k.encoder->encode(v));
    EXPECT_GE(precision_bits(back, v), 30.0);
}

TEST_P(PresetTest, PublicKeyEncryptDecrypt) {
    Keys& k = Keys::get(GetParam());
    const auto v = random_complex(k.ctx->max_slots(), 1.0, 2);
    const double bits = precision_bits(k.decrypt(k.encrypt(v)), v);
    // The rounding error r1 of c1/P, times s, limits public-key encryption to ~23.4 bits at
    // N = 2^16 with a uniform ternary secret, a bit more per halving of N (docs/precision.md
    // derives it). Secret-key encryption (below) keeps >= 25 bits everywhere.
    EXPECT_GE(bits, public_key_fresh_bits_bound(k.ctx->n())) << GetParam();
}

TEST_P(PresetTest, SecretKeyEncryptDecrypt) {
    Keys& k = Keys::get(GetParam());
    const auto v = random_complex(k.ctx->max_slots(), 1.0, 3);
    EXPECT_GE(precision_bits(k.decrypt(k.encrypt(v, std::nullopt, false)), v), 25.0) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Presets, PresetTest, ::testing::Values("S1", "S2", "S4"));

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
