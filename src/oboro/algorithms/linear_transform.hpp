// Plaintext matrix x encrypted vector by the diagonal method with baby-step giant-step (BSGS)
// and hoisted baby steps (Halevi-Shoup; Halevi-Shoup 2018 "Faster homomorphic linear
// transformations"):
//
//   y = sum_k diag_k * rot(x, k),  k = g + b (g a multiple of n1, 0 <= b < n1)
//     = sum_g rot( sum_b rot(diag_{g+b}, -g) * rot(x, b), g )
//
// The baby rotations rot(x, b) are of the same ciphertext and share one ModUp
// (Evaluator::rotate_many); each giant group costs one more rotation. With D diagonals over a
// range of offsets, n1 ~ sqrt(D) gives ~2 sqrt(D) rotations instead of D. The pre-rotated
// diagonals are plaintexts encoded once per level at scale q_level: a transform consumes one
// level and keeps the scale.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "oboro/algorithms/level_plaintexts.hpp"
#include "oboro/algorithms/matrix_encoding.hpp"
#include "oboro/algorithms/op_counts.hpp"

namespace oboro::algorithms {

struct BsgsPlan {
    size_t baby_size = 1;               // n1
    std::vector<int64_t> baby_steps;    // distinct b = k mod n1 in use (0 included when used)
    std::vector<int64_t> giant_steps;   // distinct g = k - b in use, as rotation steps in (-n/2, n/2]
    size_t rotations() const;           // non-zero baby + giant steps
};

// The n1 (a power of two) with the fewest rotations for these offsets (each in [0, slots));
// on ties the one with fewer giant steps, which are not hoisted.
BsgsPlan plan_bsgs(const std::vector<int64_t>& offsets, size_t slots);

class LinearTransform {
public:
    // `diags`: offsets in [0, slots), each diagonal `slots` values; applied to ciphertexts of
    // exactly `slots` slots (rotations cyclic modulo `slots`).
    LinearTransform(ckks::ContextPtr ctx, const Diagonals& diags, size_t slots);

    size_t slots() const { return slots_; }
    size_t diagonal_count() const { return offsets_.size(); }
    const BsgsPlan& plan() const { return plan_; }
    // Distinct non-zero rotation steps it performs (sorted).
    std::vector<int64_t> rotation_steps() const;

    // What apply() performs: the BSGS rotations (the baby steps hoisted: one ModUp), one cMult per
    // diagonal, the sums, one rescale.
    OpCounts cost() const;

    // y = M x, one level lower, same scale; for a batch, every element in the same batched calls.
    // Keys are checked before any work.
    template <ckks::Encrypted T> T apply(const CountedOps& ops, const T& x, const ckks::GaloisKeys& keys) const;

private:
    ckks::ContextPtr ctx_;
    size_t slots_;
    std::vector<int64_t> offsets_;
    BsgsPlan plan_;
    // For each giant step (plan_.giant_steps order): the baby steps used and their plaintexts.
    std::vector<std::vector<size_t>> group_babies_;  // indices into plan_.baby_steps
    std::vector<std::vector<size_t>> group_diags_;   // indices into diagonals_
    std::unique_ptr<LevelPlaintexts> diagonals_;     // rot(diag_{g+b}, -g), group by group
};

}  // namespace oboro::algorithms
