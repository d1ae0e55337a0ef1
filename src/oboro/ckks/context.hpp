// The CKKS context: everything derived once from the parameters and shared by every object that
// uses them: the primes, and the ring the backend computes in (backend/ring.hpp: NTT tables,
// the per-level constants of rescaling and hybrid key switching, automorphism permutations),
// plus what CKKS alone needs (the default scale, the CRT reconstruction of decoding). A context
// is immutable after construction and safe to share between threads.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "oboro/backend/ring.hpp"
#include "oboro/ckks/parameters.hpp"
#include "oboro/math/crt.hpp"
#include "oboro/math/ntt.hpp"
#include "oboro/math/rns.hpp"

namespace oboro::ckks {

// The per-level constants of the kernels (base conversions, inverses) live in the backend's Ring.
using backend::DigitConversion;
using backend::LevelConstants;

class Context {
public:
    explicit Context(const Parameters& params);
    static std::shared_ptr<const Context> create(const Parameters& params) {
        return std::make_shared<const Context>(params);
    }

    const Parameters& params() const { return params_; }
    // The ring as the backend sees it (ckks-free): what the kernels of every device are given.
    const backend::Ring& ring() const { return *ring_; }
    size_t n() const { return ring_->n(); }
    int log_n() const { return params_.log_n; }
    size_t max_slots() const { return n() / 2; }
    int max_level() const { return ring_->max_level(); }
    size_t q_count() const { return ring_->q_count(); }
    size_t p_count() const { return ring_->p_count(); }
    double default_scale() const { return scale_; }
    // The standard scale D_l of level l (automatic mode's scale ladder): D_0 is the parameters'
    // scale and D_{l-1} = D_l^2 / q_l exactly, so the product of two ciphertexts at the standard
    // scale of level l, rescaled, is at the standard scale of level l - 1, bit for bit (see
    // context.cpp for how the ladder is computed).
    double standard_scale(int level) const { return standard_scales_[size_t(level)]; }
    // The key-switching digits: their number, and the ciphertext primes of each from q_0 up.
    int dnum() const { return int(num_digits()); }
    const std::vector<size_t>& digit_primes() const { return ring_->digit_primes(); }
    size_t num_digits() const { return digit_primes().size(); }
    // A fingerprint of the parameters: objects carry it so that mixing contexts is detected.
    uint64_t id() const { return ring_->id(); }

    const std::vector<uint64_t>& q() const { return ring_->q(); }
    const std::vector<uint64_t>& p() const { return ring_->p(); }
    // All moduli and NTT tables, Q first (index i < q_count) then P (index q_count + j).
    const math::Modulus* moduli() const { return ring_->moduli(); }
    const math::NttTables* ntt_tables() const { return ring_->ntt_tables(); }
    const math::Modulus* p_moduli() const { return ring_->p_moduli(); }
    const math::NttTables* p_ntt_tables() const { return ring_->p_ntt_tables(); }

    const LevelConstants& level(int l) const { return ring_->level(l); }
    // P mod q_i for every ciphertext prime
    const std::vector<uint64_t>& p_mod_q() const { return ring_->p_mod_q(); }
    // Exact CRT reconstruction over Q_level (decoding).
    const math::CrtReconstructor& crt(int level) const { return *crt_[size_t(level)]; }

    // log2 of Q_level = q_0 * ... * q_level
    double log2_q(int level) const;
    // log2 of P = p_0 * ... (the special primes)
    double log2_p() const;
    // log2 of Q*P for the primes actually chosen (the security check uses it too)
    double actual_log_qp() const;

    // Galois element of a rotation to the left by `steps` slots (negative: to the right), and of
    // complex conjugation.
    uint64_t galois_element(int64_t steps) const;
    uint64_t conjugation_element() const { return 2 * n() - 1; }
    // Index permutation of the automorphism X -> X^g in NTT form (cached, thread-safe).
    const std::vector<uint32_t>& automorphism_permutation(uint64_t galois) const {
        return ring_->automorphism_permutation(galois);
    }

private:
    static double log2_product(const std::vector<uint64_t>& primes, size_t count);

    Parameters params_;
    double scale_ = 0;
    std::unique_ptr<backend::Ring> ring_;
    std::vector<std::unique_ptr<math::CrtReconstructor>> crt_;
    std::vector<double> standard_scales_;
};

using ContextPtr = std::shared_ptr<const Context>;

// A rotation by `step` slots as the step in 0 .. slots-1 (slots: a ciphertext's slot count):
// rotations are cyclic over the slots, so this one representative names one Galois key.
inline int64_t canonical_step(int64_t step, size_t slots) {
    const int64_t s = int64_t(slots);
    return ((step % s) + s) % s;
}

}  // namespace oboro::ckks
