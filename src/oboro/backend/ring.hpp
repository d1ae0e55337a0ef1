// The ring the kernels compute in, as the backend sees it: Z_Q[X]/(X^N + 1) in RNS form with the
// ciphertext primes Q = q_0 ... q_L and the special primes P = p_0 ... p_{k-1} of hybrid key
// switching, and every table derived from them once (NTT tables, per-level base conversions and
// inverses, automorphism permutations). It knows nothing of CKKS: the ckks::Context builds one
// from its parameters and hands it to the backend, which is all the kernels of every device read.
// Immutable after construction and safe to share between threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "oboro/math/ntt.hpp"
#include "oboro/math/rns.hpp"

namespace oboro::backend {

// Key-switching constants of one digit at one level: which ciphertext primes form the digit, and
// the fast base conversion from them to every other prime of Q_level and P.
struct DigitConversion {
    size_t begin = 0, end = 0;          // the digit's primes: q_begin .. q_{end-1}
    math::BaseConverter to_others;      // digit -> (Q_level without the digit) then P
};

// The constants of one level: its rescale, and its key switches over Q_level * P', where P' is the
// first `special` special primes (all of P for the ring's own level(); fewer for keys made over a
// part of P: Ring::key_switch_level).
struct LevelConstants {
    int level = 0;
    size_t special = 0;                 // special primes of the key-switching basis: P' = p_0 .. p_{special-1}
    size_t ext_limbs() const { return size_t(level + 1) + special; }
    // rescale from this level to the one below (level >= 1): divide by q_l
    math::BaseConverter ql_to_q;        // {q_l} -> Q_{level-1}
    std::vector<uint64_t> inv_last;     // q_l^{-1} mod q_i, i < l
    // hybrid key switching at this level (P below is P')
    std::vector<DigitConversion> digits;
    math::BaseConverter p_to_q;         // ModDown: P -> Q_level
    std::vector<uint64_t> p_mod_q;      // P mod q_i, i <= l
    std::vector<uint64_t> p_inv;        // P^{-1} mod q_i, i <= l
    // ModDown fused with the rescale (level >= 1): divide by q_l * P at once.
    math::BaseConverter qlp_to_q;       // {q_l} u P -> Q_{level-1}
    std::vector<uint64_t> qlp_inv;      // (q_l * P)^{-1} mod q_i, i < l
};

class Ring {
public:
    // n: the ring degree (a power of two); q, p: the ciphertext and special primes (NTT-friendly
    // for n); digit_primes: the ciphertext primes of each key-switching digit, from q_0 up (they
    // sum to q.size()); id: a fingerprint of the parameters (caches keyed by it, e.g. a device's
    // copy of the tables).
    Ring(size_t n, std::vector<uint64_t> q, std::vector<uint64_t> p, std::vector<size_t> digit_primes, uint64_t id);
    Ring(const Ring&) = delete;
    Ring& operator=(const Ring&) = delete;

    size_t n() const { return n_; }
    int log_n() const { return log_n_; }
    int max_level() const { return int(q_.size()) - 1; }
    size_t q_count() const { return q_.size(); }
    size_t p_count() const { return p_.size(); }
    const std::vector<size_t>& digit_primes() const { return digit_primes_; }
    // The primes of the largest digit (the scratch of a digit's base conversion is sized by it).
    size_t max_digit_primes() const { return max_digit_primes_; }
    uint64_t id() const { return id_; }

    const std::vector<uint64_t>& q() const { return q_; }
    const std::vector<uint64_t>& p() const { return p_; }
    // All moduli and NTT tables, Q first (index i < q_count) then P (index q_count + j).
    const math::Modulus* moduli() const { return mods_.data(); }
    const math::NttTables* ntt_tables() const { return ntt_.data(); }
    const math::Modulus* p_moduli() const { return mods_.data() + q_.size(); }
    const math::NttTables* p_ntt_tables() const { return ntt_.data() + q_.size(); }

    const LevelConstants& level(int l) const { return levels_[size_t(l)]; }
    // The constants of key switching at level l over the first `special` special primes (1 ..
    // p_count(); p_count(): level(l)), made on first use (thread-safe).
    const LevelConstants& key_switch_level(int l, size_t special) const;
    // Digits of a key switch at `level`.
    size_t digits_at(int level) const { return levels_[size_t(level)].digits.size(); }
    // P mod q_i for every ciphertext prime
    const std::vector<uint64_t>& p_mod_q() const { return levels_.back().p_mod_q; }

    // Index permutation of the automorphism X -> X^g in NTT form (cached, thread-safe): slot i of
    // the result is slot perm[i] of the input, for every prime alike.
    const std::vector<uint32_t>& automorphism_permutation(uint64_t galois) const;

private:
    LevelConstants make_level(int l, size_t special) const;

    size_t n_ = 0;
    int log_n_ = 0;
    std::vector<size_t> digit_primes_;
    size_t max_digit_primes_ = 0;
    uint64_t id_ = 0;
    std::vector<uint64_t> q_, p_;
    std::vector<math::Modulus> mods_;
    std::vector<math::NttTables> ntt_;
    std::vector<LevelConstants> levels_;
    mutable std::mutex level_mutex_;
    mutable std::map<std::pair<int, size_t>, std::unique_ptr<LevelConstants>> partial_levels_;
    mutable std::mutex perm_mutex_;
    mutable std::map<uint64_t, std::unique_ptr<std::vector<uint32_t>>> perms_;
};

}  // namespace oboro::backend
