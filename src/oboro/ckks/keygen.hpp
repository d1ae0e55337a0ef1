// Key generation: secret, public, relinearization and Galois (rotation/conjugation) keys.
#pragma once

#include <optional>
#include <vector>

#include "oboro/ckks/keys.hpp"
#include "oboro/math/random.hpp"

namespace oboro::ckks {

// Not copyable: a copy would draw the same errors and uniform seeds as the original, and two keys
// that share them leak their secrets.
class KeyGenerator {
public:
    // A new secret key drawn from the distribution in the parameters, and every key after it drawn
    // from a generator seeded by the operating system.
    explicit KeyGenerator(ContextPtr ctx);
    // Keys for an existing secret key (shared, not copied). ContextMismatch for another context's key.
    KeyGenerator(ContextPtr ctx, SecretKeyPtr sk);

    // FOR TESTS AND REPRODUCIBLE RESEARCH ONLY. A key generator whose secret key and every key it
    // makes afterwards (public, relinearization, Galois, encapsulation, bootstrapping) come from
    // `seed` alone: the same seed and the same sequence of calls give bit-identical keys, in any
    // process. Anyone who knows the seed knows the secret key, so keys made this way are insecure
    // unless the seed is itself secret and uniformly random; real keys come from the constructor
    // above. (Encryption still draws its randomness from the operating system.)
    static KeyGenerator from_seed_for_testing(ContextPtr ctx, const math::Seed& seed);

    KeyGenerator(const KeyGenerator&) = delete;
    KeyGenerator& operator=(const KeyGenerator&) = delete;
    KeyGenerator(KeyGenerator&&) = default;
    KeyGenerator& operator=(KeyGenerator&&) = default;

    const SecretKeyPtr& secret_key() const { return sk_; }
    PublicKey public_key();
    // The switching keys below are made at `level` over the first `special` special primes
    // (keys.hpp: over Q_level * P'; they switch ciphertexts at that level and below, and are
    // smaller), by default the top level and all of P. LevelMismatch for a level outside
    // 0..max_level; ValueError for a special count outside 1..p_count, or one whose primes' product
    // is below a digit of Q_level (the key switch would lose the message's low bits: the message
    // names the fewest special primes that do).
    RelinKey relin_key(std::optional<int> level = std::nullopt, std::optional<size_t> special = std::nullopt);
    // One key per distinct Galois element among the rotation steps (0 is skipped), plus the
    // conjugation key if asked.
    GaloisKeys galois_keys(const std::vector<int64_t>& steps, bool conjugation = false,
                           std::optional<int> level = std::nullopt, std::optional<size_t> special = std::nullopt);
    // Adds the keys of more steps to an existing set (the steps whose element has a key keep it).
    void add_galois_keys(GaloisKeys& keys, const std::vector<int64_t>& steps, bool conjugation = false,
                         std::optional<int> level = std::nullopt, std::optional<size_t> special = std::nullopt);
    KeySwitchKey galois_key(uint64_t galois, std::optional<int> level = std::nullopt,
                            std::optional<size_t> special = std::nullopt);

    // The key that switches a ciphertext decryptable under s_from (NTT form over all of Q*P) to
    // one decryptable under this secret key.
    KeySwitchKey switching_key(const uint64_t* s_from, std::optional<int> level = std::nullopt,
                               std::optional<size_t> special = std::nullopt);

    // Sparse-secret encapsulation (Bossuat, Troncoso-Pastoriza and Hubaux, 2022): a fresh
    // ephemeral secret s' with `ephemeral_hamming_weight` non-zero coefficients, and the keys
    // that switch to it at level 0 and back from it at `from_level` (default: the top level).
    // s' exists only inside this call and is wiped before it returns. ValueError for a weight
    // outside 1..N.
    EncapsulationKeys encapsulation_keys(int ephemeral_hamming_weight, std::optional<int> from_level = std::nullopt);

private:
    // A new secret key drawn from `prng`, which then makes every other key.
    KeyGenerator(ContextPtr ctx, math::Prng prng);
    // Keys for `sk` drawn from `prng`.
    KeyGenerator(ContextPtr ctx, SecretKeyPtr sk, math::Prng prng);
    math::Seed fresh_seed();  // from the generator's CSPRNG stream
    ContextPtr ctx_;
    math::Prng prng_;
    SecretKeyPtr sk_;
};

}  // namespace oboro::ckks
