// Encrypted d x d matrix product with the 3-D layout of Mahon & Kosieradzki, as ported to CKKS by
// paper 003 (Isokawa et al.), for d^3 <= slots. A ciphertext of S slots (a power of two >= d^3)
// is read as d x d squares (matrix_encoding.hpp); A and B are row-major in square 0.
//
//   ComputeAbar: A' = A; for i < log d: A' += ShiftSqrs(ShiftCols(A', 2^i), -2^i)
//                A' = cMult(A', M_C(0)); for i < log d: A' += ShiftCols(A', -2^i)
//       -> square t holds column t of A copied into every column: A'[t][i][j] = A[i][t]
//   ComputeBbar: the same with ShiftRows and M_R(0) -> B'[t][i][j] = B[t][j]
//   ComputeC:    C = Mult(A', B'); for i < log d: C += ShiftSqrs(C, 2^i); C = cMult(C, M_S(0))
//       -> square 0 holds sum_t A[i][t] B[t][j] = (AB)[i][j]; the other squares are zero.
// ShiftCols(c, i) = Rot(c, i), ShiftRows(c, i) = Rot(c, i d), ShiftSqrs(c, i) = Rot(c, i d^2).
//
// Cost (paper 003 Table 2): Add 5 log d, Rot 7 log d, cMult 3, Mult 1; depth 1 Mult + 2 cMult.
// How the three kinds of log d shift-and-add loops run (Shifts3D):
//  * paper:   as written, 7 log d rotations one by one.
//  * fused:   the composed shift ShiftSqrs(ShiftCols(x, 2^i), -2^i) is the single rotation
//             Rot(x, 2^i - 2^i d^2) that it equals (likewise for rows): the same slot permutation
//             with one key switch instead of two, so 5 log d rotations and 5 log d keys.
//  * hoisted: each loop x += Shift(x, 2^i), i < log d, is the rotate-and-sum
//             sum_{t<d} Rot(x, t * stride) of ckks/trace.hpp, done in h iterations of hoisted
//             rotations (per iteration of r rounds: 1 ModUp, 2^r - 1 key inner products, 1 lazy
//             ModDown), h from its cost model at the top level: fewer ModUps/ModDowns than fused
//             for a few more keys. Same result up to CKKS noise.
// Masks are encoded at scale q_level (level_plaintexts.hpp), so every step keeps the scale.
#pragma once

#include <vector>

#include "oboro/algorithms/level_plaintexts.hpp"
#include "oboro/algorithms/matrix_encoding.hpp"
#include "oboro/algorithms/op_counts.hpp"

namespace oboro::algorithms {

enum class Shifts3D { paper, fused, hoisted };
const char* to_string(Shifts3D s);

class Matmul3D {
public:
    static constexpr int depth = 3;  // levels consumed: the M_C/M_R masks, the product, M_S

    // slots: the operands' slot count (a power of two >= d^3, at most the context's; 0 = d^3).
    // ValueError unless d is a power of two with d^3 <= slots.
    Matmul3D(ckks::ContextPtr ctx, size_t d, size_t slots = 0, Shifts3D shifts = Shifts3D::hoisted);

    size_t d() const { return d_; }
    size_t slots() const { return slots_; }
    Shifts3D shifts() const { return shifts_; }
    int hoisted_iterations() const { return h_; }  // h of each hoisted sum (Shifts3D::hoisted)
    // Every rotation step the product performs (sorted, distinct): the Galois keys it needs.
    std::vector<int64_t> rotation_steps() const;

    // The operations of multiply() by step (op_counts.hpp): left = ComputeAbar, right =
    // ComputeBbar (each 2 log d rotations fused, 3 log d not, 2 log d adds, 1 cMult), product =
    // the tensor product added up, finish = relin, rescale, the log d square sums and M_S(0).
    MatmulCost cost() const;

    // The steps below and multiply() take a Ciphertext or a CiphertextBatch (T): a batch runs
    // every element's product in the same batched calls, element c of a result from the elements
    // c of the operands.

    // Paper 003 Algorithms 2-4. compute_abar/bbar: one level; compute_c: two levels.
    template <ckks::Encrypted T> T compute_abar(const CountedOps& ops, const T& a, const ckks::GaloisKeys& keys) const;
    template <ckks::Encrypted T> T compute_bbar(const CountedOps& ops, const T& b, const ckks::GaloisKeys& keys) const;
    template <ckks::Encrypted T>
    T compute_c(const CountedOps& ops, const T& abar, const T& bbar, const ckks::RelinKey& rk,
                const ckks::GaloisKeys& keys) const;
    // The steps of ComputeC split for block products: acc += Abar (x) Bbar (degree 2, acc empty
    // starts it), then relin + rescale + the square sum + M_S(0).
    template <ckks::Encrypted T> void accumulate(const CountedOps& ops, const T& abar, const T& bbar, T& acc) const;
    template <ckks::Encrypted T>
    T finish(const CountedOps& ops, T acc, const ckks::RelinKey& rk, const ckks::GaloisKeys& keys) const;

    // Algorithm 1: C = A B in square 0 (the first d^2 slots, row-major), 3 levels below.
    template <ckks::Encrypted T>
    T multiply(const CountedOps& ops, const T& a, const T& b, const ckks::RelinKey& rk,
               const ckks::GaloisKeys& keys) const;

private:
    // x += Shift(x, ...) steps of ComputeAbar / ComputeBbar with unit stride `unit` (1: columns, d: rows)
    template <ckks::Encrypted T>
    T compute_bar(const CountedOps& ops, const T& x, int64_t unit, size_t mask, const char* name,
                  const ckks::GaloisKeys& keys) const;
    // sum_{t<d} Rot(x, t * stride): log d rounds of x += Rot(x, 2^i stride), or hoisted.
    template <ckks::Encrypted T>
    T shift_sum(const CountedOps& ops, T x, int64_t stride, const ckks::GaloisKeys& keys) const;
    // The strides of the three sums (ComputeAbar/Bbar's first and second loops, ComputeC).
    std::vector<int64_t> sum_strides() const;

    ckks::ContextPtr ctx_;
    size_t d_;
    size_t slots_;
    Shifts3D shifts_;
    int log_d_;
    int h_ = 0;
    LevelPlaintexts masks_;  // M_C(0), M_R(0), M_S(0)
};

}  // namespace oboro::algorithms
