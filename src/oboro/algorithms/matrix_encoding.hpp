// Matrices in CKKS slots: the row-major layout, the 3-D layout of paper 003, their masks, and the
// permutations of Jiang, Kim, Lauter and Song (CCS 2018) as plaintext diagonals.
//
// Row-major (paper 003 section 2, "flatten"): entry (i, j) of a d x d matrix is slot i*d + j.
// 3-D layout (paper 003 section 3): a ciphertext of S >= d^3 slots is read as d x d squares,
// slot s = t*d^2 + i*d + j is row i, column j of square t; an input matrix lies in square 0 and
// the product C comes back in square 0 (the first d^2 slots, row-major).
// Jiang layout: the matrix fills a ciphertext of exactly d^2 slots (sparse packing), so that a
// rotation is cyclic modulo d^2, which the permutations below assume.
//
// Linear maps on n slots are written by diagonals: y[l] = sum_k diag_k[l] * x[(l + k) mod n],
// with offsets k in [0, n); a left rotation by k is the map with the single diagonal k of ones.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace oboro::algorithms {

using Diagonals = std::map<int64_t, std::vector<double>>;
// Complex diagonals (the homomorphic DFT of bootstrapping, algorithms/homomorphic_dft.hpp).
using ComplexDiagonals = std::map<int64_t, std::vector<std::complex<double>>>;

// ValueError (naming `op`) unless d is a power of two >= 2... and the layout fits: d^2 (jiang) or
// d^3 (3-D) slots at most `max_slots`.
void check_matrix_dim(const char* op, size_t d);
size_t jiang_slots(const char* op, size_t d, size_t max_slots);  // d^2, checked
size_t cube_slots(const char* op, size_t d, size_t max_slots);   // d^3, checked

// Row-major d x d matrix (d*d values) -> `slots` slot values (zeros after the matrix).
std::vector<double> flatten(const std::vector<double>& matrix, size_t d, size_t slots);
// The first d*d slots -> the row-major d x d matrix (real parts).
std::vector<double> unflatten(const std::vector<std::complex<double>>& slots, size_t d);

// Block layout (matmul_block.hpp): a rows x cols row-major matrix cut into d x d blocks, the
// grid ceil(rows/d) x ceil(cols/d) in row-major order, each block row-major and zero-padded.
struct BlockShape {
    size_t rows = 0, cols = 0, d = 0;
    size_t grid_rows() const { return (rows + d - 1) / d; }
    size_t grid_cols() const { return (cols + d - 1) / d; }
};
std::vector<std::vector<double>> split_blocks(const std::vector<double>& matrix, const BlockShape& shape);
std::vector<double> join_blocks(const std::vector<std::vector<double>>& blocks, const BlockShape& shape);

// 3-D masks over `slots` slots (slots a multiple of d^2): M_C(k) column k of every square, M_R(k)
// row k of every square, M_S(k) square k.
std::vector<double> column_mask(size_t d, size_t k, size_t slots);
std::vector<double> row_mask(size_t d, size_t k, size_t slots);
std::vector<double> square_mask(size_t d, size_t k, size_t slots);

// Jiang et al. on d^2 slots.
// sigma(A)_{i,j} = A_{i, i+j}: 2d-1 diagonals (offsets i and i-d, taken mod d^2).
Diagonals sigma_diagonals(size_t d);
// tau(B)_{i,j} = B_{i+j, j}: d diagonals (offsets d*j).
Diagonals tau_diagonals(size_t d);
// phi^k(A)_{i,j} = A_{i, j+k} = mask_k * rot(A, k) + mask'_k * rot(A, k-d) for 0 < k < d: the
// two masks, keyed by the offsets k and k-d+d^2.
Diagonals phi_diagonals(size_t d, size_t k);
// psi^k(B)_{i,j} = B_{i+k, j} = rot(B, k*d): one diagonal of ones.
Diagonals psi_diagonals(size_t d, size_t k);

// Applies diagonals to a plain vector (the reference the tests compare the encrypted maps with).
std::vector<double> apply_diagonals(const Diagonals& diags, const std::vector<double>& x);

}  // namespace oboro::algorithms
