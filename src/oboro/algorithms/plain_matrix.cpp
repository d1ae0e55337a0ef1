#include "oboro/algorithms/plain_matrix.hpp"

#include <cmath>
#include <set>

#include "oboro/algorithms/requirements.hpp"
#include "oboro/util/error.hpp"

namespace oboro::algorithms {

namespace {

// The non-zero diagonals of block (bi, bj) of the row-major rows x cols matrix, the blocks
// slots x slots and zero-padded: diag_k[l] = M[bi*slots + l][bj*slots + (l + k) mod slots].
Diagonals block_diagonals(const std::vector<double>& m, size_t rows, size_t cols, size_t slots, size_t bi, size_t bj) {
    const size_t r0 = bi * slots, c0 = bj * slots;
    const size_t r_end = std::min(rows - r0, slots), c_end = std::min(cols - c0, slots);
    Diagonals diags;
    for (size_t l = 0; l < r_end; ++l) {
        const double* row = &m[(r0 + l) * cols + c0];
        for (size_t c = 0; c < c_end; ++c) {
            if (row[c] == 0.0) continue;
            const int64_t k = int64_t((c + slots - l) % slots);
            auto [it, fresh] = diags.try_emplace(k);
            if (fresh) it->second.assign(slots, 0.0);
            it->second[l] = row[c];
        }
    }
    return diags;
}

}  // namespace

namespace {

void check_shape(size_t rows, size_t cols, size_t slots, size_t max_slots) {
    if (rows == 0 || cols == 0) raise<ValueError>("matvec: the matrix is empty (", rows, " x ", cols, ")");
    if (slots == 0 || (slots & (slots - 1)) || slots > max_slots)
        raise<ValueError>("matvec: ", slots, " slots is not a power of two in [1, ", max_slots, "]");
}

void check_matrix(const std::vector<double>& values, size_t rows, size_t cols, size_t slots, size_t max_slots) {
    check_shape(rows, cols, slots, max_slots);
    if (values.size() != rows * cols)
        raise<ValueError>("matvec: ", values.size(), " values for a ", rows, " x ", cols, " matrix");
    for (size_t i = 0; i < values.size(); ++i)
        if (!std::isfinite(values[i]))
            raise<ValueError>("matvec: entry (", i / cols, ", ", i % cols, ") of the matrix is ", values[i]);
}

}  // namespace

PlainMatrix::PlainMatrix(ckks::ContextPtr ctx, size_t rows, size_t cols, size_t slots, PlaintextScale scale)
    : ctx_(std::move(ctx)), rows_(rows), cols_(cols), slots_(slots), scale_(scale) {}

PlainMatrix::PlainMatrix(ckks::ContextPtr ctx, const std::vector<double>& values, size_t rows, size_t cols,
                         size_t slots, Hoisting hoisting, PlaintextScale scale, const MemoryPolicy& memory)
    : ctx_(std::move(ctx)), rows_(rows), cols_(cols), slots_(slots), scale_(scale) {
    check_matrix(values, rows, cols, slots, ctx_->max_slots());
    blocks_.resize(output_count() * input_count());
    for (size_t i = 0; i < output_count(); ++i)
        for (size_t j = 0; j < input_count(); ++j) {
            const Diagonals diags = block_diagonals(values, rows, cols, slots, i, j);
            if (!diags.empty())
                blocks_[i * input_count() + j] =
                    std::make_unique<LinearTransform>(ctx_, diags, slots, hoisting, scale, memory);
        }
}

PlainMatrix PlainMatrix::block_diagonal(ckks::ContextPtr ctx, const std::vector<double>& block, size_t rows,
                                        size_t cols, size_t copies, size_t slots, Hoisting hoisting,
                                        PlaintextScale scale, const MemoryPolicy& memory) {
    check_matrix(block, rows, cols, slots, ctx->max_slots());
    size_t d = 1;
    while (d < rows || d < cols) d *= 2;
    if (copies == 0 || copies > slots / d)
        raise<ValueError>("matvec: ", copies, " copies of a ", rows, " x ", cols, " block at a stride of ", d,
                          " do not fit ", slots, " slots (at most ", slots / d, ")");
    PlainMatrix m(ctx, copies * d, copies * d, slots, scale);
    // diag_k[t*d + i] = B[i][j] for k = (j - i) mod slots: the same offsets in every copy
    Diagonals diags;
    for (size_t i = 0; i < rows; ++i)
        for (size_t j = 0; j < cols; ++j) {
            const double v = block[i * cols + j];
            if (v == 0.0) continue;
            auto [it, fresh] = diags.try_emplace(int64_t((j + slots - i) % slots));
            if (fresh) it->second.assign(slots, 0.0);
            for (size_t t = 0; t < copies; ++t) it->second[t * d + i] = v;
        }
    m.blocks_.resize(1);
    if (!diags.empty()) m.blocks_[0] = std::make_unique<LinearTransform>(ctx, diags, slots, hoisting, scale, memory);
    return m;
}

template <typename F> size_t PlainMatrix::sum_over_blocks(F of_block) const {
    size_t n = 0;
    for (const auto& b : blocks_)
        if (b) n += of_block(*b);
    return n;
}

size_t PlainMatrix::diagonal_count() const {
    return sum_over_blocks([](const LinearTransform& b) { return b.diagonal_count(); });
}

size_t PlainMatrix::plaintext_bytes(int level) const {
    return sum_over_blocks([level](const LinearTransform& b) { return b.plaintext_bytes(level); });
}

size_t PlainMatrix::kept_plaintext_bytes() const {
    return sum_over_blocks([](const LinearTransform& b) { return b.kept_plaintext_bytes(); });
}

std::vector<int64_t> PlainMatrix::dense_rotation_steps(const ckks::Context& ctx, size_t rows, size_t cols,
                                                       size_t slots, Hoisting hoisting) {
    check_shape(rows, cols, slots, ctx.max_slots());
    // A block of r rows and c columns with no zero entry has the diagonals k = (col - row) mod
    // slots: every k when r + c - 1 >= slots, else 0 .. c - 1 and slots - r + 1 .. slots - 1
    // (block_diagonals). The blocks come in at most four sizes (full or last, in each direction).
    std::set<std::pair<size_t, size_t>> sizes;
    for (size_t r0 = 0; r0 < rows; r0 += slots)
        for (size_t c0 = 0; c0 < cols; c0 += slots) sizes.insert({std::min(slots, rows - r0), std::min(slots, cols - c0)});
    std::set<int64_t> steps;
    for (const auto& [r, c] : sizes) {
        std::vector<int64_t> offsets;
        for (size_t k = 0; k < slots; ++k)
            if (r + c - 1 >= slots || k < c || k + r > slots) offsets.push_back(int64_t(k));
        for (int64_t s : plan_for(ctx, offsets, slots, hoisting).rotation_steps()) steps.insert(s);
    }
    return {steps.begin(), steps.end()};
}

std::vector<int64_t> PlainMatrix::rotation_steps() const {
    std::set<int64_t> steps;
    for (const auto& b : blocks_)
        if (b)
            for (int64_t s : b->rotation_steps()) steps.insert(s);
    return {steps.begin(), steps.end()};
}

OpCounts PlainMatrix::cost() const {
    OpCounts c;
    for (size_t i = 0; i < output_count(); ++i) {
        size_t used = 0;
        for (size_t j = 0; j < input_count(); ++j)
            if (const LinearTransform* b = block(i, j)) {
                OpCounts t = b->cost();
                t.rescale = 0;
                c += t;
                ++used;
            }
        if (used) {
            c.add += used - 1;
            c.rescale += 1;
        }
    }
    return c;
}

template <ckks::Encrypted T>
std::vector<T> PlainMatrix::apply(const CountedOps& ops, const std::vector<T>& x, const ckks::GaloisKeys& keys) const {
    if (x.size() != input_count())
        raise<ValueError>("matvec: a ", rows_, " x ", cols_, " matrix on ", slots_, " slots takes ", input_count(),
                          " ciphertext(s) of x, not ", x.size());
    for (size_t j = 0; j < x.size(); ++j) {
        require_layout("matvec", x[j], "x", slots_, "matrix's");
        require_levels("matvec", x[j], "x", 1, "one cMult");
        if (x[j].level() != x[0].level())
            raise<LevelMismatch>("matvec: the pieces of x are at levels ", x[0].level(), " and ", x[j].level(),
                                 " (bring them to one level first)");
        if (x[j].scale() != x[0].scale())
            raise<ScaleMismatch>("matvec: the pieces of x have the scales ", x[0].scale(), " and ", x[j].scale());
    }
    require_rotation_keys("matvec", *ctx_, keys, rotation_steps(),
                          "PlainMatrix::rotation_steps (Python: oboro.linalg.rotation_steps(ctx, M, method='matvec'))");
    std::vector<T> y;
    y.reserve(output_count());
    for (size_t i = 0; i < output_count(); ++i) {
        T acc;
        bool started = false;
        for (size_t j = 0; j < input_count(); ++j) {
            const LinearTransform* b = block(i, j);
            if (!b) continue;
            T part = b->accumulate(ops, x[j], keys);
            if (!started) acc = std::move(part);
            else ops.add_inplace(acc, part);
            started = true;
        }
        if (started) {
            ops.rescale_inplace(acc);
        } else {  // a zero row of blocks: the zero vector where the others land
            const int level = x[0].level();
            const double scale = x[0].scale() * plaintext_scale(*ctx_, scale_, level) / double(ctx_->q()[size_t(level)]);
            acc = ops.eval().zero_like(x[0], 2, level - 1, scale);
        }
        y.push_back(std::move(acc));
    }
    return y;
}

template std::vector<ckks::Ciphertext> PlainMatrix::apply(const CountedOps&, const std::vector<ckks::Ciphertext>&,
                                                          const ckks::GaloisKeys&) const;
template std::vector<ckks::CiphertextBatch> PlainMatrix::apply(const CountedOps&,
                                                               const std::vector<ckks::CiphertextBatch>&,
                                                               const ckks::GaloisKeys&) const;

}  // namespace oboro::algorithms
