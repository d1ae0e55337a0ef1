// A plaintext matrix times encrypted vectors: y = M x for a real rows x cols matrix M, with x and y
// in ciphertexts of `slots` slots (the ciphertexts' slot count, any power of two up to N/2).
//
// Layout. x is held in ceil(cols / slots) ciphertexts, consecutive pieces of `slots` values (the
// last one's unused slots are multiplied by zero columns, so their content does not matter); y
// comes back in ceil(rows / slots) ciphertexts likewise, zero in the slots after the last row.
// A matrix that fits (rows, cols <= slots) is one block: one input and one output ciphertext.
//
// Method. M is cut into slots x slots blocks (the last ones zero-padded). Block B_ij is a
// LinearTransform (linear_transform.hpp: the diagonal method with baby-step giant-step and
// hoisted baby rotations) by its non-zero diagonals diag_k[l] = B[l][(l + k) mod slots], and
//   y_i = rescale( sum_j accumulate(B_ij, x_j) ):
// one level and one rescale per output ciphertext. Zero blocks cost nothing and zero diagonals
// are skipped, so a banded or small matrix pays for its non-zero diagonals only (a rows x cols
// matrix with rows, cols << slots has at most rows + cols - 1 of them).
//
// Memory: every non-zero diagonal is a plaintext per level in use (over Q_level * P with double
// hoisting): a dense slots x slots block holds `slots` plaintexts per level, unless
// MemoryPolicy::encode_on_use encodes them at each product, a giant group at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "oboro/algorithms/linear_transform.hpp"

namespace oboro::algorithms {

class PlainMatrix {
public:
    // `values`: rows * cols finite values, row-major. ValueError for an empty or inconsistent
    // shape, a non-finite value, or a slot count that is not a power of two in [1, N/2].
    // `memory`: its encode_on_use for every block (the other fields as LinearTransform's).
    PlainMatrix(ckks::ContextPtr ctx, const std::vector<double>& values, size_t rows, size_t cols, size_t slots,
                Hoisting hoisting = Hoisting::mod_up, PlaintextScale scale = PlaintextScale::prime,
                const MemoryPolicy& memory = {});

    // The block-diagonal matrix diag(B, B, ..., B) of `copies` copies of the rows x cols matrix B,
    // each zero-padded to d x d (d the least power of two >= rows and cols), so that slot t*d + i
    // of the result is row i of B times slots t*d .. t*d + cols - 1 of x: B applied to `copies`
    // vectors packed in one ciphertext at a stride of d (copies * d <= slots). Its diagonals are
    // B's, repeated: the cost of one product of B, whatever the number of copies. ValueError as
    // for the constructor, and for copies * d > slots.
    static PlainMatrix block_diagonal(ckks::ContextPtr ctx, const std::vector<double>& block, size_t rows, size_t cols,
                                      size_t copies, size_t slots, Hoisting hoisting = Hoisting::mod_up,
                                      PlaintextScale scale = PlaintextScale::prime, const MemoryPolicy& memory = {});

    size_t rows() const { return rows_; }
    size_t cols() const { return cols_; }
    size_t slots() const { return slots_; }
    size_t input_count() const { return (cols_ + slots_ - 1) / slots_; }   // ciphertexts of x
    size_t output_count() const { return (rows_ + slots_ - 1) / slots_; }  // ciphertexts of y
    size_t diagonal_count() const;  // non-zero diagonals over all blocks
    // The host memory the encoded diagonals keep once applied at `level` (LinearTransform::
    // plaintext_bytes over the blocks: 0 for dense ones under MemoryPolicy::encode_on_use), and
    // what they keep now.
    size_t plaintext_bytes(int level) const;
    size_t kept_plaintext_bytes() const;
    // Distinct non-zero rotation steps over all blocks (sorted): the Galois keys apply() needs.
    std::vector<int64_t> rotation_steps() const;
    // The rotation_steps() of a rows x cols matrix with no zero entry, from its shape alone: no
    // matrix is built and no diagonal encoded, so it costs a few plans whatever the size. A matrix
    // with zero entries may use other steps (its plans see fewer diagonals). ValueError as for
    // the constructor's shape and slot count.
    static std::vector<int64_t> dense_rotation_steps(const ckks::Context& ctx, size_t rows, size_t cols, size_t slots,
                                                     Hoisting hoisting = Hoisting::mod_up);
    // What apply() performs (OpCounts of every block's transform, the sums, one rescale per output).
    OpCounts cost() const;

    // y = M x: input_count() ciphertexts (or batches: every element multiplied, element by element)
    // of `slots` slots, all at one level >= 1 and one scale; output_count() results one level lower.
    // ValueError / LevelMismatch / ScaleMismatch / MissingKey before any work.
    template <ckks::Encrypted T>
    std::vector<T> apply(const CountedOps& ops, const std::vector<T>& x, const ckks::GaloisKeys& keys) const;

private:
    PlainMatrix(ckks::ContextPtr ctx, size_t rows, size_t cols, size_t slots, PlaintextScale scale);

    ckks::ContextPtr ctx_;
    size_t rows_, cols_, slots_;
    std::vector<std::unique_ptr<LinearTransform>> blocks_;  // output_count() x input_count(), null: zero block
    PlaintextScale scale_;

    const LinearTransform* block(size_t i, size_t j) const { return blocks_[i * input_count() + j].get(); }
    // The sum of of_block(block) over the non-zero blocks.
    template <typename F> size_t sum_over_blocks(F of_block) const;
};

}  // namespace oboro::algorithms
