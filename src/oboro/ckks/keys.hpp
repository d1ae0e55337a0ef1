// Key material. Every polynomial is in NTT form over the full basis Q*P (all ciphertext primes,
// then the special primes), limb-major.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "oboro/backend/key_switch_key.hpp"
#include "oboro/ckks/context.hpp"
#include "oboro/math/random.hpp"
#include "oboro/util/buffer.hpp"
#include "oboro/util/secret_memory.hpp"

namespace oboro::ckks {

// The secret key s. There is one object per key, made by KeyGenerator, secret_key_from_coefficients
// or io::load_secret_key and shared, immutable, by everything that uses it (SecretKeyPtr: the key
// generator, encryptors, decryptors, the Python context): it cannot be copied, so no stray copy of
// s outlives the key. Its memory never enters the block cache and is wiped when the last owner
// lets go of it (util/secret_memory.hpp, docs/security.md).
struct SecretKey {
    LockedSecretVector<int8_t> coeffs;  // the ternary secret s
    LockedSecretBuffer<uint64_t> ntt;   // s over Q*P in NTT form
    uint64_t context_id = 0;

    SecretKey() = default;
    SecretKey(const SecretKey&) = delete;
    SecretKey& operator=(const SecretKey&) = delete;
};
using SecretKeyPtr = std::shared_ptr<const SecretKey>;

// The secret key of these N ternary coefficients, with its NTT form over all of Q*P. ValueError
// unless there are N of them, each -1, 0 or 1.
SecretKeyPtr secret_key_from_coefficients(const Context& ctx, SecretVector<int8_t> coeffs);
// ValueError for a null key, ContextMismatch for another context's (`who` names the caller).
void check_secret_key(const SecretKeyPtr& sk, const Context& ctx, const char* who);

// (b, a) = (-a*s + e, a) over Q*P.
struct PublicKey {
    AlignedBuffer<uint64_t> data;      // b then a, each (q_count + p_count) limbs
    uint64_t context_id = 0;
    // a = sample_uniform(math::Prng(a_seed) over Q*P) when set (keys made by KeyGenerator):
    // serialization then stores the seed instead of a.
    std::optional<math::Seed> a_seed;
    const uint64_t* b() const { return data.data(); }
    const uint64_t* a(size_t qp_limbs, size_t n) const { return data.data() + qp_limbs * n; }
};

// A hybrid key-switching key from s' to s: for each digit j, (b_j, a_j) over Q*P (or Q_level*P,
// key_basis below) with b_j = -a_j*s + e_j + P*s' on the primes of digit j (and -a_j*s + e_j
// elsewhere). The kernels read it through view() (backend/key_switch_key.hpp has the layout).
struct KeySwitchKey {
    // [digit][b, a][limb], each limb's words packed (backend/key_switch_key.hpp)
    KeyBuffer<uint8_t> data;
    std::vector<uint32_t> limb_offsets;  // bytes per coefficient before each limb, and in all
    size_t digits = 0;
    size_t qp_limbs = 0;
    size_t special = 0;  // of the qp_limbs, the special primes' (the last ones)
    size_t n = 0;
    uint64_t context_id = 0;
    // a_j = sample_uniform(math::Prng(a_seed, stream j) over Q*P) when set (keys made by
    // KeyGenerator, or loaded from a seed): serialization then stores the seed instead of the a_j.
    std::optional<math::Seed> a_seed;
    // With a_seed: where each limb of each a_j begins in its stream ([digit][limb], bytes,
    // math::Prng::position), recorded as the a_j are drawn. They let seed_a_halves() leave the
    // a_j out of memory.
    std::vector<uint64_t> a_positions;
    std::vector<uint64_t> moduli;  // of the qp_limbs limbs, in order
    // Names these words for the caches of the backends (a GPU's copy of the key): given by
    // KeyGenerator and the loader once a key is complete (name_words), never reused; 0 (a key
    // written by hand, or changed through store) is never cached.
    uint64_t uid = 0;
    // Shared by the copies of this key while it has its uid: a backend's cache lets its copy go
    // once every copy of the key is gone (backend::KeySwitchKeyView::alive).
    std::shared_ptr<const void> alive;

    // A key of `digits` digits over the primes `basis` (key_basis) of ring degree n, `special` of
    // them special, with its words not yet written (store writes them).
    static KeySwitchKey allocate(const std::vector<math::Modulus>& basis, size_t special, size_t digits, size_t n);

    // A fresh uid (new_key_uid) and token for the words as they are now: the key is complete.
    void name_words();

    // b_digit (half 0) or a_digit (half 1), qp_limbs x n words below their primes: stored, or
    // read back.
    void store(size_t digit, size_t half, const uint64_t* words);
    void load(size_t digit, size_t half, uint64_t* words) const;
    // Every word, [digit][b, a][limb][n].
    AlignedBuffer<uint64_t> words() const;

    // Frees the stored a_j: each key switch draws them again from a_seed (key_switch_key.hpp,
    // seeded halves), for half the memory. The key's words, uid and serialization stay the
    // same. ValueError for a key without a seed and its positions (one loaded from a file
    // that stored its a_j). Nothing to do when they are already seeded.
    void seed_a_halves();
    // The reverse: the a_j drawn from a_seed once and stored, for key switches that read them
    // instead of drawing them. Nothing to do when they are stored.
    void store_a_halves();
    // Whether the a_j are in memory (not seed_a_halves()).
    bool a_stored() const { return !a_seeded_; }

    bool empty() const { return data.empty(); }
    backend::KeySwitchKeyView view() const {
        backend::KeySwitchKeyView v{data.data(), limb_offsets.data(), digits, qp_limbs, n, uid, special, alive};
        if (a_seeded_) {
            v.a_seed = &*a_seed;
            v.a_positions = a_positions.data();
            v.moduli = moduli.data();
        }
        return v;
    }

private:
    bool a_seeded_ = false;
    // The words are about to change: no cache may take them for the named ones. (Only reads when
    // the key has no name: the digits of a new key are stored from several threads.)
    void forget_name() {
        if (uid == 0) return;
        uid = 0;
        alive.reset();
    }
};

// A fresh uid for a complete key (process-wide counter, thread-safe).
uint64_t new_key_uid();

// A switching key made at `level` over `special` special primes spans Q_level * P': the ciphertext
// primes q_0 .. q_level, then p_0 .. p_{special-1} (level = max_level, special = p_count: all of
// Q*P). It switches ciphertexts at that level and below, with fewer digits and limbs than a key of
// the top level (a smaller key: the levels a circuit uses past its start, as bootstrapping's keys
// do); with fewer special primes it is smaller again, where P' still exceeds the digits of Q_level.
// The moduli of its limbs, in order.
std::vector<math::Modulus> key_basis(const Context& ctx, int level, size_t special);
// The fewest special primes whose product covers every key-switching digit of `level` in bits
// (a key at that level over fewer loses the message's low bits; p_count when none do).
size_t fewest_special_primes(const Context& ctx, int level);
// The memory of a switching key made at `level` over `special` special primes: 2 x its digits x
// N x the bytes of one coefficient of each of its limbs (backend::key_word_bytes).
size_t switching_key_bytes(const Context& ctx, int level, size_t special);
// The bits of the first `count` special primes: the part of P a key over `count` of them spans.
int special_prime_bits(const Context& ctx, size_t count);
// The level a key was made at (from its limb counts).
inline int key_level(const KeySwitchKey& key) { return int(key.qp_limbs) - int(key.special) - 1; }

using RelinKey = KeySwitchKey;

// The two keys of sparse-secret encapsulation (KeyGenerator::encapsulation_keys): bootstrapping
// switches its input to an ephemeral sparse secret s' at level 0, so that ModRaise adds only
// small integers, and back to the secret key s right after ModRaise.
struct EncapsulationKeys {
    KeySwitchKey to_ephemeral;    // s -> s', made at level 0 over the fewest special primes
    KeySwitchKey from_ephemeral;  // s' -> s, made at the level ModRaise lifts to
    int ephemeral_hamming_weight = 0;
};

// Galois keys, by Galois element (5^k mod 2N for a rotation by k, 2N-1 for conjugation). The
// keys are immutable and shared: a copy of the set (one with a few keys more, made beside the one
// in use) shares the keys' memory instead of doubling it.
struct GaloisKeys {
    std::map<uint64_t, std::shared_ptr<const KeySwitchKey>> keys;
    uint64_t context_id = 0;

    bool has(uint64_t galois) const { return keys.count(galois) != 0; }
    // The key for `galois`, or nullptr.
    const KeySwitchKey* find(uint64_t galois) const {
        const auto it = keys.find(galois);
        return it == keys.end() ? nullptr : it->second.get();
    }
    // The key for `galois`; std::out_of_range when the set has none.
    const KeySwitchKey& at(uint64_t galois) const { return *keys.at(galois); }
    // Adds `key` for `galois` unless the set has one.
    void add(uint64_t galois, KeySwitchKey key) {
        if (!has(galois)) keys.emplace(galois, std::make_shared<const KeySwitchKey>(std::move(key)));
    }
};

}  // namespace oboro::ckks
