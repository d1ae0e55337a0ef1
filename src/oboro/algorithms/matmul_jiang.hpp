// Encrypted d x d matrix product of Jiang, Kim, Lauter and Song (CCS 2018), for d^2 <= slots.
// The matrices are row-major in ciphertexts of exactly d^2 slots (rotations cyclic mod d^2).
//
//   A0 = sigma(A), B0 = tau(B)                        (BSGS linear transforms, 1 level each)
//   A_k = phi^k(A0) = m_k * rot(A0, k) + m'_k * rot(A0, k-d)   (k = 1..d-1, hoisted, 1 level)
//   B_k = psi^k(B0) = rot(B0, k*d)                    (k = 1..d-1, hoisted, no level)
//   C = rescale(relin( sum_k A_k (x) B_k ))           (d tensor products, ONE relin and rescale)
//
// Depth: 2 cMult + 1 Mult. Rotations: BSGS(sigma) + BSGS(tau) + 2(d-1) + (d-1), all rotations
// of one ciphertext hoisted together (4 ModUps for phi, psi and the baby steps of sigma and tau,
// plus the giant steps). The paper's implementation [15] in paper 003 Table 5 does 62 rotations
// at d = 16 with 16 relinearizations; BSGS reduces the sigma/tau rotations from 3(d-1) to about
// 2 sqrt(2d) + 2 sqrt(d), and the summed degree-2 products save d-1 relinearizations.
// Masks are encoded at scale q_level (see level_plaintexts.hpp), so A_0 needs no cMult: it is A0
// dropped one level, and every A_k B_k has the same level and scale.
#pragma once

#include <memory>
#include <vector>

#include "oboro/algorithms/linear_transform.hpp"

namespace oboro::algorithms {

class JiangMatmul {
public:
    static constexpr int depth = 3;  // levels consumed: sigma/tau, phi masks, product

    // ValueError unless d is a power of two with d^2 <= the context's slots.
    JiangMatmul(ckks::ContextPtr ctx, size_t d);

    size_t d() const { return d_; }
    size_t slots() const { return d_ * d_; }
    // Every rotation step the product performs (sorted, distinct): the Galois keys it needs.
    std::vector<int64_t> rotation_steps() const;

    // The operations of multiply() by step (op_counts.hpp): left = sigma + the 2(d-1) hoisted phi
    // rotations and masks, right = tau + the d-1 hoisted psi rotations, product = d tensor products
    // added up, finish = one relinearization and rescale.
    MatmulCost cost() const;

    // The steps below and multiply() take a Ciphertext or a CiphertextBatch (T): a batch runs
    // every element's product in the same batched calls, element c of a result from the elements
    // c of the operands.

    // A_k = phi^k(sigma(A)), k = 0..d-1, all at level(A) - 2 and A's scale.
    template <ckks::Encrypted T>
    std::vector<T> left_operands(const CountedOps& ops, const T& a, const ckks::GaloisKeys& keys) const;
    // B_k = psi^k(tau(B)), k = 0..d-1, at level(B) - 1 and B's scale.
    template <ckks::Encrypted T>
    std::vector<T> right_operands(const CountedOps& ops, const T& b, const ckks::GaloisKeys& keys) const;
    // acc += sum_k A_k (x) B_k as a degree-2 ciphertext (acc empty: starts the sum). The B_k are
    // dropped to the A_k's level where they are above it.
    template <ckks::Encrypted T>
    void accumulate(const CountedOps& ops, const std::vector<T>& a_ops, const std::vector<T>& b_ops, T& acc) const;
    // relinearize + rescale of an accumulated sum: the product's ciphertext.
    template <ckks::Encrypted T> T finish(const CountedOps& ops, T acc, const ckks::RelinKey& rk) const;

    // C = A B (row-major in the first d^2 slots, level min(level(A)-2, level(B)-1) - 1).
    template <ckks::Encrypted T>
    T multiply(const CountedOps& ops, const T& a, const T& b, const ckks::RelinKey& rk,
               const ckks::GaloisKeys& keys) const;

private:
    ckks::ContextPtr ctx_;
    size_t d_;
    LinearTransform sigma_, tau_;
    LevelPlaintexts phi_masks_;  // m_1, m'_1, m_2, m'_2, ...
};

}  // namespace oboro::algorithms
