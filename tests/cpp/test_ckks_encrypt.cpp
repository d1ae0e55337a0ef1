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
