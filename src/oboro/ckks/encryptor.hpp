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

class Decryptor {
public:
    Decryptor(ContextPtr ctx, SecretKey sk);

    // m = c0 + c1*s (+ c2*s^2 for a size-3 ciphertext), at the ciphertext's level and scale.
    Plaintext decrypt(const Ciphertext& ct) const;
    // decrypt + decode in one step (avoids a copy).
    std::vector<std::complex<double>> decrypt_decode(const Ciphertext& ct, const Encoder& encoder) const;

private:
    void decrypt_into(const Ciphertext& ct, uint64_t* out) const;
    ContextPtr ctx_;
    SecretKey sk_;
};

}  // namespace oboro::ckks
