// The CKKS context: everything derived once from the parameters and shared by every object that
// uses them: the primes, NTT tables, and the per-level constants of rescaling and hybrid key
// switching. A context is immutable after construction and safe to share between threads.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "oboro/ckks/parameters.hpp"
#include "oboro/math/crt.hpp"
#include "oboro/math/ntt.hpp"
#include "oboro/math/rns.hpp"

namespace oboro::ckks {

// Key-switching constants of one digit at one level: which ciphertext primes form the digit, and
// the fast base conversion from them to every other prime of Q_level and P.
struct DigitConversion {
    size_t begin = 0, end = 0;          // the digit's primes: q_begin .. q_{end-1}
    math::BaseConverter to_others;      // digit -> (Q_level without the digit) then P
};

struct LevelConstants {
    // rescale from this level to the one below (level >= 1): divide by q_l
    math::BaseConverter ql_to_q;        // {q_l} -> Q_{level-1}
    std::vector<uint64_t> inv_last;     // q_l^{-1} mod q_i, i < l
    // hybrid key switching at this level
    std::vector<DigitConversion> digits;
    math::BaseConverter p_to_q;         // ModDown: P -> Q_level
    std::vector<uint64_t> p_inv;        // P^{-1} mod q_i, i <= l
    // ModDown fused with the rescale (level >= 1): divide by q_l * P at once.
    math::BaseConverter qlp_to_q;       // {q_l} u P -> Q_{level-1}
    std::vector<uint64_t> qlp_inv;      // (q_l * P)^{-1} mod q_i, i < l
    std::unique_ptr<math::CrtReconstructor> crt;  // Q_level, for decoding
};

class Context {
public:
    explicit Context(const Parameters& params);
    static std::shared_ptr<const Context> create(const Parameters& params) {
        return std::make_shared<const Context>(params);
    }

    const Parameters& params() const { return params_; }
    size_t n() const { return n_; }
    int log_n() const { return params_.log_n; }
    size_t max_slots() const { return n_ / 2; }
    int max_level() const { return int(q_.size()) - 1; }
    size_t q_count() const { return q_.size(); }
    size_t p_count() const { return p_.size(); }
    double default_scale() const { return scale_; }
    int dnum() const { return dnum_; }
    size_t digit_size() const { return alpha_; }
    size_t num_digits() const { return (q_.size() + alpha_ - 1) / alpha_; }
    // A fingerprint of the parameters: objects carry it so that mixing contexts is detected.
    uint64_t id() const { return id_; }

    const std::vector<uint64_t>& q() const { return q_; }
    const std::vector<uint64_t>& p() const { return p_; }
    // All moduli and NTT tables, Q first (index i < q_count) then P (index q_count + j).
    const math::Modulus* moduli() const { return mods_.data(); }
    const math::NttTables* ntt_tables() const { return ntt_.data(); }
    const math::Modulus* p_moduli() const { return mods_.data() + q_.size(); }
    const math::NttTables* p_ntt_tables() const { return ntt_.data() + q_.size(); }

    const LevelConstants& level(int l) const { return levels_[size_t(l)]; }
    // P mod q_i for every ciphertext prime
    const std::vector<uint64_t>& p_mod_q() const { return p_mod_q_; }

    // log2 of Q_level = q_0 * ... * q_level
    double log2_q(int level) const;
    // log2 of Q*P for the primes actually chosen (the security check uses it too)
    double actual_log_qp() const;

    // Galois element of a rotation to the left by `steps` slots (negative: to the right), and of
    // complex conjugation.
    uint64_t galois_element(int64_t steps) const;
    uint64_t conjugation_element() const { return 2 * n_ - 1; }
    // Index permutation of the automorphism X -> X^g in NTT form (cached, thread-safe).
    const std::vector<uint32_t>& automorphism_permutation(uint64_t galois) const;

private:
    Parameters params_;
    size_t n_ = 0;
    double scale_ = 0;
    int dnum_ = 0;
    size_t alpha_ = 0;
    uint64_t id_ = 0;
    std::vector<uint64_t> q_, p_;
    std::vector<math::Modulus> mods_;
    std::vector<math::NttTables> ntt_;
    std::vector<LevelConstants> levels_;
    std::vector<uint64_t> p_mod_q_;
    mutable std::mutex perm_mutex_;
    mutable std::map<uint64_t, std::unique_ptr<std::vector<uint32_t>>> perms_;
};

using ContextPtr = std::shared_ptr<const Context>;

}  // namespace oboro::ckks
