// CRT reconstruction of RNS values to real numbers, exactly: the residues are combined into a
// multi-word integer modulo Q, centred into (-Q/2, Q/2], and only then converted to floating
// point. This is what decoding needs, because the decrypted value is tiny next to Q and any
// floating-point shortcut before the centring would cancel catastrophically.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "oboro/math/rns.hpp"

namespace oboro::math {

class CrtReconstructor {
public:
    explicit CrtReconstructor(const RnsBase& base);

    // limbs: base.size() limbs of n words each (limb i at limbs + i*stride).
    // out[c] = centred(x_c mod Q) * multiplier, in double precision.
    void to_double(const uint64_t* limbs, size_t stride, size_t n, double multiplier, double* out) const;

    // Same, returning the exact centred value as long double (for tests and diagnostics).
    long double to_long_double(const uint64_t* residues) const;

private:
    // Computes the centred value of one coefficient as (negative?, magnitude words).
    void reconstruct(const uint64_t* residues, size_t stride, uint64_t* acc, bool& negative) const;

    RnsBase base_;
    size_t words_ = 0;                    // words of Q, plus one spare word
    std::vector<uint64_t> q_words_;       // Q
    std::vector<uint64_t> half_q_words_;  // floor(Q/2)
    std::vector<uint64_t> qhat_words_;    // [i * words_ + w] = Q/q_i
};

}  // namespace oboro::math
