// Key generation: secret, public, relinearization and Galois (rotation/conjugation) keys.
#pragma once

#include <vector>

#include "oboro/ckks/keys.hpp"
#include "oboro/math/random.hpp"

namespace oboro::ckks {

class KeyGenerator {
public:
    // A new secret key drawn from the distribution in the parameters.
    explicit KeyGenerator(ContextPtr ctx);
    // Keys for an existing secret key.
    KeyGenerator(ContextPtr ctx, SecretKey sk);

    const SecretKey& secret_key() const { return sk_; }
    PublicKey public_key();
    RelinKey relin_key();
    // One key per distinct Galois element among the rotation steps (0 is skipped), plus the
    // conjugation key if asked.
    GaloisKeys galois_keys(const std::vector<int64_t>& steps, bool conjugation = false);
    // Adds the keys of more steps to an existing set.
    void add_galois_keys(GaloisKeys& keys, const std::vector<int64_t>& steps, bool conjugation = false);
    KeySwitchKey galois_key(uint64_t galois);

    // The key that switches a ciphertext decryptable under s_from (NTT form over Q*P) to one
    // decryptable under this secret key.
    KeySwitchKey switching_key(const uint64_t* s_from);

private:
    math::Seed fresh_seed();  // from the generator's CSPRNG stream
    ContextPtr ctx_;
    SecretKey sk_;
    math::Prng prng_;
};

}  // namespace oboro::ckks
