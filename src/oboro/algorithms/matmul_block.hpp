// Encrypted products of matrices of any size: A (m x k) times B (k x n), each cut into d x d
// blocks (matrix_encoding.hpp: split_blocks), one ciphertext per block, multiplied block by block
// with Jiang et al. or the 3-D method as the base product:
//
//   C_ij = sum_l A_il B_lj   over a grid of gm x gk times gk x gn blocks
//
// Each input block is transformed ONCE (sigma + phi / tau + psi, or ComputeAbar / ComputeBbar) and
// reused for every output block it contributes to; the gk degree-2 products of an output block
// are summed and relinearized (and rescaled) once. The work runs over the inner index l: the
// transforms of block column l of A and block row l of B in parallel, then every output
// accumulator in parallel, so only one block column and one block row of transformed operands
// are alive at a time. Cost (MatmulCost::total): gm gk left + gk gn right + gm gk gn product +
// gm gn finish, i.e. in key switches
//   jiang: gm gk (R_sigma + 2(d-1)) + gk gn (R_tau + d-1) + gm gn      (hoisted rotations + relins)
//   3-D:   2 S (gm gk + gk gn) + gm gn (S + 1)    (S: the key switches of one shift sum)
// against gm gk gn full products done one by one.
#pragma once

#include <memory>
#include <vector>

#include "oboro/algorithms/matmul_3d.hpp"
#include "oboro/algorithms/matmul_jiang.hpp"

namespace oboro::algorithms {

enum class BlockBase { jiang, cube };

// A matrix as a row-major grid of block ciphertexts; with batches (T = CiphertextBatch), element
// c of every block is the block of matrix c: one grid of batches holds as many matrices.
template <ckks::Encrypted T> struct BlockGridOf {
    size_t rows = 0, cols = 0;  // in blocks
    std::vector<T> blocks;
};
using BlockGrid = BlockGridOf<ckks::Ciphertext>;
using BlockGridBatch = BlockGridOf<ckks::CiphertextBatch>;

class BlockMatmul {
public:
    static constexpr int depth = 3;  // levels consumed, as the base product

    // ValueError unless d fits the base method (d^2 or d^3 <= slots, a power of two).
    BlockMatmul(ckks::ContextPtr ctx, BlockBase base, size_t d);

    // The base the block products use by default: the 3-D method where d^3 fits the slots (fewest
    // operations per block), else Jiang et al.
    static BlockBase default_base(size_t d, size_t max_slots);

    BlockBase base() const { return base_; }
    size_t d() const { return d_; }
    size_t slots() const;  // of each block ciphertext
    std::vector<int64_t> rotation_steps() const;
    // The operations multiply() performs for a grid of gm x gk times gk x gn blocks.
    OpCounts cost(size_t gm, size_t gk, size_t gn) const;

    // C = A B as a grid of a.rows x b.cols blocks, 3 levels below the inputs; with batches, the
    // products of the matrices c (all blocks must hold batches of one length). In host memory the
    // blocks are spread over the thread pool (util/parallel.hpp); on a device queue they are
    // enqueued from the calling thread, one batched call per operation. The counts are summed
    // over the threads.
    template <ckks::Encrypted T>
    BlockGridOf<T> multiply(const CountedOps& ops, const BlockGridOf<T>& a, const BlockGridOf<T>& b,
                            const ckks::RelinKey& rk, const ckks::GaloisKeys& keys) const;

private:
    // One transformed operand: the d operands of Jiang et al., or Abar / Bbar (one ciphertext).
    template <ckks::Encrypted T> using Prepared = std::vector<T>;
    template <ckks::Encrypted T>
    Prepared<T> prepare_left(const CountedOps& ops, const T& a, const ckks::GaloisKeys& keys) const;
    template <ckks::Encrypted T>
    Prepared<T> prepare_right(const CountedOps& ops, const T& b, const ckks::GaloisKeys& keys) const;
    template <ckks::Encrypted T>
    void accumulate(const CountedOps& ops, const Prepared<T>& a, const Prepared<T>& b, T& acc) const;
    template <ckks::Encrypted T>
    T finish(const CountedOps& ops, T acc, const ckks::RelinKey& rk, const ckks::GaloisKeys& keys) const;
    template <ckks::Encrypted T> void check_grid(const BlockGridOf<T>& g, const char* name) const;

    ckks::ContextPtr ctx_;
    BlockBase base_;
    size_t d_;
    std::unique_ptr<JiangMatmul> jiang_;
    std::unique_ptr<Matmul3D> cube_;
};

}  // namespace oboro::algorithms
