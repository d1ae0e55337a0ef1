// Encryption with the public key or the secret key, and decryption.
//
// Public-key encryption works over Q*P and divides by P at the end (as SEAL does): the
// encryption noise u*e + e0 + e1*s shrinks by P and only a rounding error remains, which keeps
// about 4 more bits of precision than encrypting over Q directly.
//
// Secret-key encryption has only the fresh error e as noise (no u*e, no e1*s), so it is the
// more precise of the two; its uniform half `a` is expanded from a fresh 32-byte seed.
#pragma once

#include <complex>
#include <optional>
#include <vector>

#include "oboro/ckks/ciphertext.hpp"
#include "oboro/ckks/encoder.hpp"
#include "oboro/ckks/keys.hpp"
#include "oboro/math/random.hpp"

namespace oboro::ckks {

class Encryptor {
public:
    Encryptor(ContextPtr ctx, PublicKey pk);
    Encryptor(ContextPtr ctx, SecretKey sk);

    Ciphertext encrypt(const Plaintext& pt);
    // Encryption of zero at a level (for masking and tests).
    Ciphertext encrypt_zero(int level, double scale, size_t slots);

private:
    void check(const Plaintext& pt) const;
    ContextPtr ctx_;
    std::optional<PublicKey> pk_;
    std::optional<SecretKey> sk_;
    math::Prng prng_;
};

// Decryption. CKKS decryptions leak information about the secret key when they are shown to
// someone else (IND-CPA-D, Li-Micciancio 2021): the decrypted value carries the ciphertext's
// noise. When results leave the secret-key holder, turn on noise flooding: a fresh Gaussian of
// standard deviation 2^flooding_bits (in units of the scaled integer coefficients) is added to
// every coefficient before decoding; it costs about flooding_bits - log2(noise) bits of
// precision. See docs/security.md for how to choose it.
class Decryptor {
public:
    Decryptor(ContextPtr ctx, SecretKey sk);

    // 0 (the default) turns flooding off. Values up to 50 bits are accepted.
    void set_noise_flooding(double flooding_bits);
    double noise_flooding() const { return flooding_bits_; }

    // m = c0 + c1*s (+ c2*s^2 for a size-3 ciphertext), at the ciphertext's level and scale.
    Plaintext decrypt(const Ciphertext& ct) const;
    // decrypt + decode in one step (avoids a copy).
    std::vector<std::complex<double>> decrypt_decode(const Ciphertext& ct, const Encoder& encoder) const;

private:
    void decrypt_into(const Ciphertext& ct, uint64_t* out) const;
    ContextPtr ctx_;
    SecretKey sk_;
    double flooding_bits_ = 0;
    mutable math::Prng prng_;
};

}  // namespace oboro::ckks
