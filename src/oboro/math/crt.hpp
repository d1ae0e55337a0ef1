// CRT reconstruction of RNS values to real numbers, exactly: the residues are combined into a
// multi-word integer modulo Q, centred into (-Q/2, Q/2], and only then converted to floating
// point. This is what decoding needs, because the decrypted value is tiny next to Q and any
// floating-point shortcut before the centring would cancel catastrophically.
//
// Most decoded values are far below 2^127, and for them a shortcut is exact. A candidate is taken
// from the widest prime alone (its centred residue), else from the CRT sum modulo 2^128 less the
// quotient v = round(sum_i y_i / q_i) estimated in double. A candidate is accepted only if it is at
// most min((Q-1)/2, 2^127 - 1) in magnitude and has the given residue modulo every q_i: then it is
// the centred representative (the only one in that range). Anything else (a wrong estimate, a
// value of 2^127 or more) takes the multi-word path. The branches depend on the magnitude of the
// value that is returned, not on anything else.
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
    // The shortcut above: true and the centred value's (negative, magnitude) when it is proven.
    // matches: whether (negative ? -magnitude : magnitude) has these residues.
    bool matches(unsigned __int128 magnitude, bool negative, const uint64_t* residues, size_t stride) const;
    bool reconstruct_small(const uint64_t* residues, size_t stride, unsigned __int128& magnitude,
                           bool& negative) const;

    RnsBase base_;
    size_t words_ = 0;                    // words of Q, plus one spare word
    std::vector<uint64_t> q_words_;       // Q
    std::vector<uint64_t> half_q_words_;  // floor(Q/2)
    std::vector<uint64_t> qhat_words_;    // [i * words_ + w] = Q/q_i
    std::vector<unsigned __int128> qhat_low_;  // Q/q_i mod 2^128
    unsigned __int128 q_low_ = 0;              // Q mod 2^128
    unsigned __int128 small_limit_ = 0;        // min(floor(Q/2), 2^127 - 1)
    std::vector<double> inverse_q_;            // 1 / q_i
    size_t widest_ = 0;                        // the index of the largest q_i
};

}  // namespace oboro::math
