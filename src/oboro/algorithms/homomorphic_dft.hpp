// The encoder's special FFT (ckks/encoder.hpp) as homomorphic linear transforms: the
// CoeffsToSlots and SlotsToCoeffs steps of bootstrapping (Cheon, Han, Kim, Kim and Song,
// "Bootstrapping for approximate HE", Eurocrypt 2018; Chen, Chillotti and Song, "Improved
// bootstrapping for approximate HE", Eurocrypt 2019).
//
// Encoder::embed (coefficients -> slots) is a bit-reversal permutation followed by log2(n)
// butterfly stages; embed_inverse is the inverse stages followed by the bit reversal (and 1/n).
// A stage is a sparse matrix of 3 diagonals (offsets 0 and +-half its block), so a product of g
// consecutive stages has at most 2^(g+1) - 1 diagonals: grouping the log2(n) stages into `levels`
// products gives a transform of `levels` levels and O(levels * 2^(log2(n)/levels)) rotations
// (with baby-step giant-step, fewer). The bit reversal is never evaluated: CoeffsToSlots leaves
// the coefficients in bit-reversed slot order, the slot-wise EvalMod does not care, and
// SlotsToCoeffs takes them in that order.
#pragma once

#include <complex>
#include <cstddef>
#include <vector>

#include "oboro/algorithms/linear_transform.hpp"
#include "oboro/algorithms/matrix_encoding.hpp"

namespace oboro::algorithms {

enum class DftDirection {
    coeffs_to_slots,  // embed_inverse without the bit reversal: slots -> bit-reversed coefficients
    slots_to_coeffs,  // embed without the bit reversal: bit-reversed coefficients -> slots
};

// The butterfly stages on n slots (a power of two >= 2), in the order they are applied; each has
// offsets in [0, n). coeffs_to_slots stages carry a factor 1/2 each (1/n in all).
std::vector<ComplexDiagonals> dft_stages(size_t n, DftDirection direction);

// The matrix `a` applied after `b` (both on n slots): (a b)_k = sum_{i + j = k} a_i * rot(b_j, i).
// Diagonals whose entries are all below 2^-60 of the largest are dropped (cancellations).
ComplexDiagonals compose(const ComplexDiagonals& a, const ComplexDiagonals& b, size_t n);

// The matrices times a constant.
ComplexDiagonals scaled(ComplexDiagonals m, std::complex<double> factor);

// The matrix on n slots acting on 2n-slot vectors that repeat with period n (a sparse
// ciphertext seen with twice its slots): entry l of diagonal k is the n-slot one's entry l mod n.
ComplexDiagonals periodic_extension(const ComplexDiagonals& m, size_t n);

// The stages grouped into `levels` consecutive products (each of floor or ceil of stages/levels
// stages, the larger groups first), in the order they are applied. ValueError unless
// 1 <= levels <= the number of stages.
std::vector<ComplexDiagonals> merge_stages(const std::vector<ComplexDiagonals>& stages, int levels, size_t n);

// y = M x on a plain vector (the reference of the tests).
std::vector<std::complex<double>> apply_diagonals(const ComplexDiagonals& m, const std::vector<std::complex<double>>& x);

// A chain of linear transforms applied one after the other, each consuming one level (double
// hoisting where the queue supports it: LinearTransform).
class TransformChain {
public:
    struct Step {
        ComplexDiagonals matrix;
        size_t slots = 0;          // the slots the ciphertext is seen with during this step
        double scale_factor = 1;   // the diagonals at q_level * scale_factor: the scale is multiplied by it
    };
    TransformChain(ckks::ContextPtr ctx, const std::vector<Step>& steps, Hoisting hoisting,
                   const MemoryPolicy& memory = {});

    int depth() const { return int(transforms_.size()); }
    // Distinct non-zero rotation steps of every transform (sorted).
    std::vector<int64_t> rotation_steps() const;
    // The rotation steps of step i (applied at level: input level - i).
    std::vector<int64_t> rotation_steps(size_t step) const { return transforms_[step].rotation_steps(); }
    // The rotations by each of them in step i (LinearTransform::key_uses).
    std::vector<std::pair<int64_t, size_t>> key_uses(size_t step) const { return transforms_[step].key_uses(); }
    OpCounts cost() const;
    // The host memory of the diagonals its transforms keep once applied from `input_level`
    // (LinearTransform::plaintext_bytes of step i at input_level - i).
    size_t plaintext_bytes(int input_level) const;
    // The host memory they keep now.
    size_t kept_plaintext_bytes() const;
    // Encodes now what plaintext_bytes(input_level) counts (LinearTransform::encode_diagonals).
    void encode_diagonals(int input_level) const;

    // x through every step, each at its slot count (x is seen with it: set_slots, valid for
    // vectors that repeat with that period); the scale is multiplied by the steps' scale factors.
    template <ckks::Encrypted T> T apply(const CountedOps& ops, T x, const ckks::GaloisKeys& keys) const;

private:
    std::vector<LinearTransform> transforms_;
};

}  // namespace oboro::algorithms
