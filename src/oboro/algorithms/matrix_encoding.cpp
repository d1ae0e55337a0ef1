#include "oboro/algorithms/matrix_encoding.hpp"

#include "oboro/util/error.hpp"

namespace oboro::algorithms {

namespace {
bool is_power_of_two(size_t x) { return x != 0 && (x & (x - 1)) == 0; }

size_t checked_layout(const char* op, size_t d, size_t needed, size_t max_slots, const char* what) {
    check_matrix_dim(op, d);
    if (needed > max_slots)
        raise<ValueError>(op, ": a ", d, " x ", d, " matrix needs ", what, " = ", needed,
                          " slots but the ciphertexts have at most ", max_slots,
                          "; use a smaller d, a larger ring, or block matrix multiplication");
    return needed;
}
}  // namespace

void check_matrix_dim(const char* op, size_t d) {
    if (d < 2 || !is_power_of_two(d))
        raise<ValueError>(op, ": the matrix dimension d = ", d, " must be a power of two >= 2");
}

size_t jiang_slots(const char* op, size_t d, size_t max_slots) {
    return checked_layout(op, d, d * d, max_slots, "d^2");
}

size_t cube_slots(const char* op, size_t d, size_t max_slots) {
    return checked_layout(op, d, d * d * d, max_slots, "d^3");
}

std::vector<double> flatten(const std::vector<double>& matrix, size_t d, size_t slots) {
    if (matrix.size() != d * d)
        raise<ValueError>("flatten: got ", matrix.size(), " values for a ", d, " x ", d, " matrix");
    if (slots < d * d) raise<ValueError>("flatten: a ", d, " x ", d, " matrix does not fit ", slots, " slots");
    std::vector<double> out(slots, 0.0);
    for (size_t i = 0; i < d * d; ++i) out[i] = matrix[i];
    return out;
}

std::vector<double> unflatten(const std::vector<std::complex<double>>& slots, size_t d) {
    if (slots.size() < d * d)
        raise<ValueError>("unflatten: ", slots.size(), " slots hold no ", d, " x ", d, " matrix");
    std::vector<double> out(d * d);
    for (size_t i = 0; i < d * d; ++i) out[i] = slots[i].real();
    return out;
}

namespace {
void check_block_shape(const char* op, const BlockShape& s) {
    check_matrix_dim(op, s.d);
    if (s.rows == 0 || s.cols == 0) raise<ValueError>(op, ": a ", s.rows, " x ", s.cols, " matrix is empty");
}
}  // namespace

std::vector<std::vector<double>> split_blocks(const std::vector<double>& matrix, const BlockShape& s) {
    check_block_shape("split_blocks", s);
    if (matrix.size() != s.rows * s.cols)
        raise<ValueError>("split_blocks: got ", matrix.size(), " values for a ", s.rows, " x ", s.cols, " matrix");
    std::vector<std::vector<double>> blocks(s.grid_rows() * s.grid_cols(), std::vector<double>(s.d * s.d, 0.0));
    for (size_t i = 0; i < s.rows; ++i)
        for (size_t j = 0; j < s.cols; ++j)
            blocks[(i / s.d) * s.grid_cols() + j / s.d][(i % s.d) * s.d + j % s.d] = matrix[i * s.cols + j];
    return blocks;
}

std::vector<double> join_blocks(const std::vector<std::vector<double>>& blocks, const BlockShape& s) {
    check_block_shape("join_blocks", s);
    if (blocks.size() != s.grid_rows() * s.grid_cols())
        raise<ValueError>("join_blocks: got ", blocks.size(), " blocks for a ", s.grid_rows(), " x ", s.grid_cols(), " grid");
    std::vector<double> matrix(s.rows * s.cols);
    for (size_t i = 0; i < s.rows; ++i)
        for (size_t j = 0; j < s.cols; ++j) {
            const auto& block = blocks[(i / s.d) * s.grid_cols() + j / s.d];
            if (block.size() < s.d * s.d) raise<ValueError>("join_blocks: a block of ", block.size(), " values for d = ", s.d);
            matrix[i * s.cols + j] = block[(i % s.d) * s.d + j % s.d];
        }
    return matrix;
}

namespace {
// 1 where pred(square, row, column) holds, over `slots` slots read as d x d squares.
template <typename Pred> std::vector<double> mask(size_t d, size_t slots, Pred pred) {
    if (slots % (d * d) != 0) raise<ValueError>("mask: ", slots, " slots are not a whole number of ", d, " x ", d, " squares");
    std::vector<double> m(slots, 0.0);
    for (size_t s = 0; s < slots; ++s) m[s] = pred(s / (d * d), (s / d) % d, s % d) ? 1.0 : 0.0;
    return m;
}
}  // namespace

std::vector<double> column_mask(size_t d, size_t k, size_t slots) {
    return mask(d, slots, [k](size_t, size_t, size_t j) { return j == k; });
}
std::vector<double> row_mask(size_t d, size_t k, size_t slots) {
    return mask(d, slots, [k](size_t, size_t i, size_t) { return i == k; });
}
std::vector<double> square_mask(size_t d, size_t k, size_t slots) {
    return mask(d, slots, [k](size_t t, size_t, size_t) { return t == k; });
}

namespace {
// The permutation y[l] = x[source(l)] on n slots as diagonals (offset = source - l mod n).
template <typename Source> Diagonals permutation_diagonals(size_t n, Source source) {
    Diagonals diags;
    for (size_t l = 0; l < n; ++l) {
        const int64_t k = int64_t((source(l) + n - l) % n);
        auto& diag = diags[k];
        if (diag.empty()) diag.assign(n, 0.0);
        diag[l] = 1.0;
    }
    return diags;
}
}  // namespace

Diagonals sigma_diagonals(size_t d) {
    check_matrix_dim("sigma_diagonals", d);
    return permutation_diagonals(d * d, [d](size_t l) { return (l / d) * d + (l / d + l % d) % d; });
}

Diagonals tau_diagonals(size_t d) {
    check_matrix_dim("tau_diagonals", d);
    return permutation_diagonals(d * d, [d](size_t l) { return ((l / d + l % d) % d) * d + l % d; });
}

Diagonals phi_diagonals(size_t d, size_t k) {
    check_matrix_dim("phi_diagonals", d);
    if (k >= d) raise<ValueError>("phi_diagonals: the column shift k = ", k, " must be below d = ", d);
    return permutation_diagonals(d * d, [d, k](size_t l) { return (l / d) * d + (l % d + k) % d; });
}

Diagonals psi_diagonals(size_t d, size_t k) {
    check_matrix_dim("psi_diagonals", d);
    if (k >= d) raise<ValueError>("psi_diagonals: the row shift k = ", k, " must be below d = ", d);
    return permutation_diagonals(d * d, [d, k](size_t l) { return (l + k * d) % (d * d); });
}

std::vector<double> apply_diagonals(const Diagonals& diags, const std::vector<double>& x) {
    const size_t n = x.size();
    std::vector<double> y(n, 0.0);
    for (const auto& [k, diag] : diags) {
        if (diag.size() != n) raise<ValueError>("apply_diagonals: a diagonal of ", diag.size(), " values for ", n, " slots");
        for (size_t l = 0; l < n; ++l) y[l] += diag[l] * x[(l + size_t(k)) % n];
    }
    return y;
}

}  // namespace oboro::algorithms
