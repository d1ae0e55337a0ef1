// The harness of the coverage-guided fuzz targets (libFuzzer), one per record type of the checked
// format (fuzz_<type>.cpp), and of the seed corpus generator (make_corpus.cpp). See the
// "Fuzzing" section of docs/serialization.md.
//
// The contract a target checks for its loader: on any input it returns an object or throws
// SerializationError. Anything else (another exception, a crash, a leak, a report of
// AddressSanitizer or UndefinedBehaviorSanitizer) is a bug. A loaded object is then used a little
// (decrypted, added, key-switched ...): what a loader accepts must be a valid object, and an
// operation on it must not fail or touch memory it should not.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <typeinfo>

#include "oboro/ckks/ciphertext.hpp"
#include "oboro/ckks/context.hpp"
#include "oboro/ckks/encoder.hpp"
#include "oboro/ckks/encryptor.hpp"
#include "oboro/ckks/evaluator.hpp"
#include "oboro/ckks/keygen.hpp"
#include "oboro/ckks/keys.hpp"
#include "oboro/io/serialize.hpp"
#include "oboro/util/error.hpp"

namespace oboro::fuzz {

// The parameters of every record the targets load (but the context target's own): N = 2^6, so that
// records are a few kilobytes, an execution takes well under a millisecond, and libFuzzer's
// mutations land on the fields rather than in megabytes of residues. Three ciphertext primes (levels
// 0..2) and two special primes, one digit per prime, so that keys below the top level and over
// fewer special primes (the optional fields of a switching key) can be made. Far below any
// security level.
ckks::Parameters parameters();

// A context with keys of its own, to use loaded objects with: made once per process for
// parameters() (fixture()), and for the contexts that the context and bundle targets load.
struct Session {
    explicit Session(ckks::ContextPtr context);

    ckks::ContextPtr ctx;
    mutable ckks::KeyGenerator keygen;  // more keys can be drawn from it (make_corpus)
    ckks::PublicKey pk;
    ckks::RelinKey rk;
    ckks::GaloisKeys gk;  // rotations by 1 and -1, and the conjugation
    ckks::Encoder encoder;
    mutable ckks::Encryptor encryptor;  // secret key (encrypting draws from its generator)
    ckks::Decryptor decryptor;
    ckks::Evaluator eval;  // with rk and gk

    // A fresh encryption of a few values at `level` with `slots` slots.
    ckks::Ciphertext ciphertext(int level, size_t slots = 8) const;
};
const Session& fixture();

// Runs one operation on a loaded object: it must succeed. Any exception is a bug of the loader
// that accepted the object (or of the operation): reported, then abort() so that libFuzzer keeps
// the input.
template <class F> void must_work(const char* what, F&& f) {
    try {
        f();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "\n*** oboro fuzz: %s on a loaded object threw %s: %s\n", what, typeid(e).name(), e.what());
        std::abort();
    }
}

// Decodes (or decrypts and decodes) a loaded object: a mutant's values are garbage, which decoding
// may refuse as wrapped around the modulus (ModulusOverflow, ckks/encoder.hpp); any other error
// escapes to must_work.
template <class F> void decode_unless_wrapped(F&& f) {
    try {
        f();
    } catch (const ModulusOverflow&) {
    }
}

// Runs an operation whose preconditions depend on the values (a product whose scale would exceed
// the modulus): it may refuse with one of the library's typed errors, but with nothing else, and
// never with SerializationError (the object was loaded already).
template <class F> void may_refuse(const char* what, F&& f) {
    try {
        f();
    } catch (const SerializationError& e) {
        std::fprintf(stderr, "\n*** oboro fuzz: %s on a loaded object threw SerializationError: %s\n", what, e.what());
        std::abort();
    } catch (const Error&) {
        return;  // a typed refusal, as documented
    } catch (const std::exception& e) {
        std::fprintf(stderr, "\n*** oboro fuzz: %s on a loaded object threw %s: %s\n", what, typeid(e).name(), e.what());
        std::abort();
    }
}

// The target's contract: `load(data)` returns an object or throws SerializationError; any other
// exception aborts (with its message). A loaded object is handed to `use`, whose operations must
// work (must_work).
template <class Load, class Use> void check(io::ByteView data, Load&& load, Use&& use) {
    std::optional<decltype(load(data))> object;
    try {
        object.emplace(load(data));
    } catch (const SerializationError&) {
        return;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "\n*** oboro fuzz: the loader threw %s, not SerializationError: %s\n", typeid(e).name(),
                     e.what());
        std::abort();
    }
    use(*object);
}

// ---- uses of loaded objects (with the session of the context they were loaded for) ----
void use_plaintext(const Session& s, const ckks::Plaintext& pt);
// Decrypted, added to itself, relinearized (3 polynomials), rotated, multiplied and rescaled.
void use_ciphertext(const Session& s, const ckks::Ciphertext& ct);
void use_batch(const Session& s, const ckks::CiphertextBatch& batch);
// Encrypts with it.
void use_public_key(const Session& s, const ckks::PublicKey& pk);
// Relinearizes a product at the key's level (a key of any level and special prime count).
void use_relin_key(const Session& s, const ckks::RelinKey& rk);
// Each key applied to a ciphertext at the key's level.
void use_galois_keys(const Session& s, const ckks::GaloisKeys& gk);
// Decrypts and encrypts with it, and makes a public key from it.
void use_secret_key(const Session& s, const ckks::SecretKeyPtr& sk);
// The Galois keys as above; the encapsulation keys switch a level-0 ciphertext to the ephemeral
// secret and, raised to the level of the key back, back again. (A Bootstrapper is not made from the
// configuration: its matrices cost seconds, and the fuzz parameters have too few levels for one.)
void use_bootstrap_keys(const Session& s, const algorithms::BootstrapConfig& config,
                        const algorithms::BootstrapKeys& keys);

}  // namespace oboro::fuzz
