// RNS bases and fast base conversion.
//
// A value x mod Q = q_0 * ... * q_{k-1} is held as its residues x_i = x mod q_i. Fast base
// conversion (Bajard et al.; used by hybrid key switching and rescaling) computes
//     Conv_{Q->T}(x)_j = sum_i [x_i * (Q/q_i)^{-1}]_{q_i} * (Q/q_i)  mod t_j,
// which equals x + e*Q mod t_j for some integer 0 <= e < k. Callers that need the exact value
// either tolerate e*Q (it is removed or made small later) or correct it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "oboro/math/modarith.hpp"

namespace oboro::math {

struct Modulus {
    uint64_t value = 0;
    Barrett<uint64_t> barrett;
    Modulus() = default;
    explicit Modulus(uint64_t q) : value(q), barrett(q) {}
};

// v mod q for an integral double v of any magnitude, exactly: |v| >= 2^63 is read from its
// IEEE-754 bits as mantissa * 2^shift. Host and device code (the CUDA encoder calls it per
// coefficient, bit for bit the CPU encoder's result). v must be finite.
OBORO_HD uint64_t reduce_integral_double(double v, const Barrett<uint64_t>& br) {
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    const bool negative = bits >> 63;
    const uint64_t biased_exponent = (bits >> 52) & 0x7ff;
    uint64_t r;
    if (biased_exponent < 1023 + 63) {  // |v| < 2^63
        r = br.reduce_word(uint64_t(negative ? -v : v));
    } else {  // |v| = mantissa * 2^(biased_exponent - 1075), the mantissa with its implicit bit
        const uint64_t mantissa = (bits & ((uint64_t(1) << 52) - 1)) | (uint64_t(1) << 52);
        r = br.mul(br.reduce_word(mantissa), pow_mod<uint64_t>(2, biased_exponent - 1075, br.q));
    }
    return negative ? neg_mod(r, br.q) : r;
}

class RnsBase {
public:
    RnsBase() = default;
    explicit RnsBase(std::vector<uint64_t> moduli);

    size_t size() const { return moduli_.size(); }
    uint64_t operator[](size_t i) const { return moduli_[i].value; }
    const Modulus& modulus(size_t i) const { return moduli_[i]; }
    const std::vector<uint64_t>& values() const { return values_; }

    // (Q/q_i)^{-1} mod q_i and its Shoup companion
    uint64_t punctured_inv(size_t i) const { return qhat_inv_[i]; }
    uint64_t punctured_inv_shoup(size_t i) const { return qhat_inv_shoup_[i]; }

private:
    std::vector<Modulus> moduli_;
    std::vector<uint64_t> values_;
    std::vector<uint64_t> qhat_inv_, qhat_inv_shoup_;
};

// Converts polynomials in coefficient form from base `from` to base `to`.
class BaseConverter {
public:
    BaseConverter() = default;
    BaseConverter(const RnsBase& from, const RnsBase& to);

    const RnsBase& from() const { return from_; }
    const RnsBase& to() const { return to_; }
    // The precomputed constants (for device copies; see conversion_* below):
    const std::vector<uint64_t>& qhat_mod_t() const { return qhat_mod_t_; }  // [j * from.size() + i]
    const std::vector<uint64_t>& q_mod_t() const { return q_mod_t_; }
    const std::vector<double>& inv_from() const { return inv_from_; }

    // in: from.size() limbs of n words (limb i at in + i*in_stride), canonical residues.
    // out: to.size() limbs of n words (limb j at out + j*out_stride), canonical residues.
    // scratch: from.size()*n words.
    void convert(const uint64_t* in, size_t in_stride, uint64_t* out, size_t out_stride, size_t n,
                 uint64_t* scratch) const;
    // Same, with output limb j written to outs[j] (targets need not be contiguous).
    void convert(const uint64_t* in, size_t in_stride, uint64_t* const* outs, size_t n, uint64_t* scratch) const;

    // Exact conversion of the centred representative x' of x mod Q (|x'| <= Q/2): the overflow
    // count of the fast conversion is estimated in double precision as round(sum_i y_i / q_i)
    // and subtracted. Key switching uses it for ModUp and ModDown: a non-centred value (in
    // [0, Q), or with +e*Q) has a mean of about Q/2 in every coefficient, and a constant offset
    // in every coefficient becomes a large error in a few slots of the canonical embedding.
    // Output layout as in convert().
    void convert_centered(const uint64_t* in, size_t in_stride, uint64_t* out, size_t out_stride, size_t n,
                          uint64_t* scratch) const;
    void convert_centered(const uint64_t* in, size_t in_stride, uint64_t* const* outs, size_t n,
                          uint64_t* scratch) const;

    // The pieces of convert_impl, for SIMD implementations of the same computation
    // (backend/cpu/poly_ops.cpp base_convert), which must give the same residues:
    // (Q/q_i) mod t_j for every source prime i, Q mod t_j, and the overflow count of the centred
    // conversion: v[c] = floor(0.5 + sum_i y_i[c] / q_i) for y_i = [x_i * (Q/q_i)^{-1}]_{q_i}
    // (limb i of y at y + i*n), computed in one fixed order so every caller agrees to the bit.
    const uint64_t* punctured_mod_target(size_t j) const { return qhat_mod_t_.data() + j * from_.size(); }
    uint64_t q_mod_target(size_t j) const { return q_mod_t_[j]; }
    const double* inverse_sources() const { return inv_from_.data(); }  // 1 / q_i, as centered_overflow uses them
    void centered_overflow(const uint64_t* y, size_t n, uint8_t* v) const;

private:
    void convert_impl(const uint64_t* in, size_t in_stride, uint64_t* const* outs, size_t n, uint64_t* scratch,
                      bool centered) const;

    RnsBase from_, to_;
    std::vector<uint64_t> qhat_mod_t_;  // [j * from.size() + i] = (Q/q_i) mod t_j
    std::vector<uint64_t> q_mod_t_;     // Q mod t_j
    std::vector<double> inv_from_;      // 1 / q_i
};

// ---- fast base conversion at one coefficient ----------------------------------------------------
// The per-coefficient steps of BaseConverter (from k > 1 primes), host-device, shared with the
// CUDA kernels (backend/cuda/base_conversion_kernels.hpp). y_i = [x_i * (Q/q_i)^{-1}]_{q_i} (one
// Shoup multiplication) are read at y[i * stride].

// The centred conversion's overflow count: round(sum_i y_i / q_i), as floor(0.5 + sum), in double
// precision (an estimate error only matters at exact ties). On the GPU without fused
// multiply-adds (nvcc contracts by default; the CPU build does not), so both round the same.
OBORO_HD uint32_t conversion_overflow(const uint64_t* y, size_t stride, const double* inv_from, size_t k) {
    double sum = 0.5;
#if defined(__CUDA_ARCH__)
    for (size_t i = 0; i < k; ++i) sum = __dadd_rn(sum, __dmul_rn(double(y[i * stride]), inv_from[i]));
#else
    for (size_t i = 0; i < k; ++i) sum += double(y[i * stride]) * inv_from[i];
#endif
    return uint32_t(sum);  // sum in [0.5, k + 0.5), k <= 64
}

// sum_i y_i * (Q/q_i mod t) mod t (qhat_row = the k constants of target t), accumulated in 128
// bits with a reduction every 16 terms (each product is < 2^124).
OBORO_HD uint64_t conversion_sum(const uint64_t* y, size_t stride, const uint64_t* qhat_row, size_t k,
                                 const Barrett<uint64_t>& br) {
    dword_t<uint64_t> acc = 0;
    for (size_t i = 0; i < k; ++i) {
        acc += mul_wide(y[i * stride], qhat_row[i]);
        if ((i & 15) == 15) acc = br.reduce(acc);
    }
    return br.reduce(acc);
}

// v * Q mod t: what the centred conversion subtracts for an overflow count v.
OBORO_HD uint64_t conversion_correction(uint32_t v, uint64_t q_mod_t, const Barrett<uint64_t>& br) {
    return br.mul(br.reduce_word(v), q_mod_t);
}

}  // namespace oboro::math
