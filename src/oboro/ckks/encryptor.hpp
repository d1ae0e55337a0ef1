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
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "oboro/ckks/batch.hpp"
#include "oboro/ckks/ciphertext.hpp"
#include "oboro/ckks/encoder.hpp"
#include "oboro/ckks/keys.hpp"
#include "oboro/math/random.hpp"

namespace oboro::ckks {

class Encryptor {
public:
    Encryptor(ContextPtr ctx, PublicKey pk);
    // Shares the secret key (it is not copied). ValueError for a null pointer.
    Encryptor(ContextPtr ctx, SecretKeyPtr sk);

    Ciphertext encrypt(const Plaintext& pt);
    // encrypt(encoder.encode(values, level, scale, slots)) in one step, with the same result for the
    // same randomness and the same errors for bad values: the message joins the encryption's
    // error in coefficient form, so it is never transformed on its own (level + 1 NTTs fewer).
    Ciphertext encrypt(const Encoder& encoder, const std::vector<std::complex<double>>& values,
                       std::optional<int> level = std::nullopt, std::optional<double> scale = std::nullopt,
                       std::optional<size_t> slots = std::nullopt);
    // Encryption of zero at a level (for masking and tests).
    Ciphertext encrypt_zero(int level, double scale, size_t slots);
    // Every plaintext of the batch (in host memory), encrypted in parallel into one batch. Each
    // element draws its randomness from its own stream of a fresh seed of this encryptor's
    // generator; secret-key encryptions keep their uniform seeds (CiphertextBatch::uniform_seed).
    CiphertextBatch encrypt_batch(const PlaintextBatch& pts);
    // encrypt_batch(encode_batch(encoder, values, rows, level, scale, slots)) in one step, as the
    // one-step encrypt above: the same errors (naming the row), the same randomness per element.
    CiphertextBatch encrypt_batch(const Encoder& encoder, std::span<const std::complex<double>> values, size_t rows,
                                  std::optional<int> level = std::nullopt, std::optional<double> scale = std::nullopt,
                                  std::optional<size_t> slots = std::nullopt);
    // The randomness of the encryptions after this call (the errors, and u of a public-key
    // encryption) comes from `seed`, so that tests can compare two ways of encrypting. Never for
    // real data: equal seeds give equal errors. The uniform half of a secret-key encryption keeps
    // its fresh seed.
    void reseed_for_testing(const math::Seed& seed);

private:
    void check(const Plaintext& pt) const;
    // An encryption at `level` into c0, c1 (level + 1 limbs each, NTT form), with the errors from
    // `prng`, of `message` (level + 1 limbs in coefficient form), or of zero when it is null;
    // returns the uniform seed of a secret-key encryption.
    std::optional<math::Seed> encrypt_into(int level, const uint64_t* message, uint64_t* c0, uint64_t* c1,
                                           math::Prng& prng) const;
    // `count` encryptions in parallel into one batch of `shape`: element c draws from stream c of
    // one fresh seed of this encryptor's generator and encrypts message(c, buffer) (it writes
    // level + 1 limbs in coefficient form into buffer and returns them; null: zero), plus element
    // c of `plain` when given (NTT form).
    CiphertextBatch encrypt_elements(size_t count, const EncodingShape& shape,
                                     const std::function<const uint64_t*(size_t, uint64_t*)>& message,
                                     const PlaintextBatch* plain);
    ContextPtr ctx_;
    std::optional<PublicKey> pk_;
    SecretKeyPtr sk_;  // null for public-key encryption
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
    // Shares the secret key (it is not copied). ValueError for a null pointer. The polynomials a
    // decryption computes (m + e: the noise e is a function of the secret) and its flooding noise
    // are wiped before their memory is reused; the decoded values returned are the caller's.
    Decryptor(ContextPtr ctx, SecretKeyPtr sk);

    // 0 (the default) turns flooding off. Values up to 50 bits are accepted.
    void set_noise_flooding(double flooding_bits);
    double noise_flooding() const { return flooding_bits_; }

    // m = c0 + c1*s (+ c2*s^2 for a size-3 ciphertext), at the ciphertext's level and scale.
    Plaintext decrypt(const Ciphertext& ct) const;
    // decrypt + decode in one step (avoids a copy).
    std::vector<std::complex<double>> decrypt_decode(const Ciphertext& ct, const Encoder& encoder) const;
    // The same for every element of a batch, in parallel (a batch in device memory is downloaded
    // once); element c's flooding noise comes from its own stream of a fresh seed.
    std::vector<std::vector<std::complex<double>>> decrypt_decode(const CiphertextBatch& batch,
                                                                  const Encoder& encoder) const;

private:
    // m = sum_j polys[j] * s^j over `limbs` limbs into out, plus flooding noise from `prng`.
    void decrypt_into(const uint64_t* const* polys, size_t size, size_t limbs, uint64_t* out, math::Prng& prng) const;
    // ContextMismatch / ValueError unless ct can be decrypted here.
    void check(const Ciphertext& ct) const;
    // decrypt_into for a checked ciphertext, with flooding noise from a generator of a fresh seed.
    void decrypt_ciphertext(const Ciphertext& ct, uint64_t* out) const;
    // A fresh seed from prng_, under a lock: decryptions may run in several threads at once
    // (Python releases the GIL while it decrypts), and each draws its flooding noise from a
    // generator of its own seed.
    math::Seed fresh_seed() const;
    ContextPtr ctx_;
    SecretKeyPtr sk_;
    double flooding_bits_ = 0;
    mutable std::mutex prng_mutex_;
    mutable math::Prng prng_;
};

}  // namespace oboro::ckks
