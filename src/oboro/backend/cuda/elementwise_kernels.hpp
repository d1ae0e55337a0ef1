// Per-thread bodies of the element-wise modular kernels (host and device code).
//
// Data layout (docs: DESIGN.md "Data layout"): `rows x n` words, row-major and contiguous, where a
// batch of polynomials is simply more rows; row r is reduced modulo moduli[r % limbs]. One launch
// covers every row: threads along x cover the n coefficients (one thread per coefficient), blocks
// along y walk the rows with a grid-stride loop (so any number of rows fits in gridDim.y).
//
// Each *_thread function is called once per thread with its ThreadIndex, by the CUDA kernel in
// elementwise.cu on a GPU, and by grid_emulator.hpp on a CPU in the tests.
#pragma once

#include <cstdint>

#include "oboro/backend/cuda/thread_index.hpp"
#include "oboro/math/modarith.hpp"

namespace oboro::cuda::kernels {

inline constexpr uint32_t elementwise_block_size = 256;

// The launch shape used for `rows x n` element-wise kernels.
inline LaunchShape elementwise_shape(uint32_t n, uint32_t rows) {
    LaunchShape s;
    s.block = Dim3{elementwise_block_size, 1, 1};
    s.grid = Dim3{(n + elementwise_block_size - 1) / elementwise_block_size,
                  rows < max_grid_yz ? (rows == 0 ? 1u : rows) : max_grid_yz, 1};
    return s;
}

// The launch of an element-wise kernel over `rows` rows of n coefficients; an empty one (no rows,
// or n == 0) is not launched. row_launch(args) of each kernel's arguments (next to its per-thread
// body) gives its rows: the CUDA launchers and the emulator take the shape from there.
struct RowLaunch {
    LaunchShape shape;
    bool empty = true;
};
inline RowLaunch row_launch(uint32_t n, uint32_t rows) { return RowLaunch{elementwise_shape(n, rows), n == 0 || rows == 0}; }

// out = a * b + c (mod q_r), all operands `rows x n`, inputs in [0, q_r), output in [0, q_r).
// Barrett reduction of the double-word a*b + c (< q^2 + q). out may alias a, b or c.
template <typename W> struct MulAddModArgs {
    W* out = nullptr;
    const W* a = nullptr;
    const W* b = nullptr;
    const W* c = nullptr;
    const math::Barrett<W>* moduli = nullptr;  // `limbs` entries
    uint32_t n = 0;
    uint32_t rows = 0;
    uint32_t limbs = 0;
};

template <typename W>
OBORO_HD void mul_add_mod_thread(const ThreadIndex& t, const MulAddModArgs<W>& p) {
    const uint64_t col = t.global_x();
    if (col >= p.n) return;
    for (uint64_t row = t.block.y; row < p.rows; row += t.grid_dim.y) {
        const math::Barrett<W> br = p.moduli[row % p.limbs];
        const uint64_t i = row * p.n + col;
        p.out[i] = br.reduce(math::mul_wide(p.a[i], p.b[i]) + p.c[i]);
    }
}

// out = a * s_l + c (mod q_l) with one scalar s_l per limb, by Shoup multiplication
// (s_shoup_l = shoup_precompute(s_l, q_l)). Inputs in [0, q), output in [0, q). out may alias a or c.
template <typename W> struct ScalarMulAddModArgs {
    W* out = nullptr;
    const W* a = nullptr;
    const W* c = nullptr;
    const W* scalar = nullptr;        // `limbs` entries, each in [0, q_l)
    const W* scalar_shoup = nullptr;  // `limbs` entries
    const W* moduli = nullptr;        // `limbs` entries
    uint32_t n = 0;
    uint32_t rows = 0;
    uint32_t limbs = 0;
};

template <typename W>
OBORO_HD void scalar_mul_add_mod_thread(const ThreadIndex& t, const ScalarMulAddModArgs<W>& p) {
    const uint64_t col = t.global_x();
    if (col >= p.n) return;
    for (uint64_t row = t.block.y; row < p.rows; row += t.grid_dim.y) {
        const uint64_t l = row % p.limbs;
        const W q = p.moduli[l];
        const uint64_t i = row * p.n + col;
        const W prod = math::mul_shoup(p.a[i], p.scalar[l], p.scalar_shoup[l], q);
        p.out[i] = math::add_mod(prod, p.c[i], q);
    }
}

// ---- add / sub / negate over rows ------------------------------------------------------------

// Calls f(i, row) for this thread's coefficient `col` in every row it covers (grid-stride over
// rows along y), i = row * n + col. The row loop of every `rows x n` kernel.
template <typename F> OBORO_HD void for_each_row_element(const ThreadIndex& t, uint32_t n, uint32_t rows, F&& f) {
    const uint64_t col = t.global_x();
    if (col >= n) return;
    for (uint64_t row = t.block.y; row < rows; row += t.grid_dim.y) f(row * n + col, row);
}

enum class ModOp : uint32_t { add, sub, negate };

// out = a + b, a - b or -a (mod q_r), `rows x n`, inputs canonical, output canonical; b unused
// by negate. out may alias a or b.
template <typename W> struct ModOpArgs {
    W* out = nullptr;
    const W* a = nullptr;
    const W* b = nullptr;
    const W* moduli = nullptr;  // `limbs` entries
    uint32_t n = 0;
    uint32_t rows = 0;
    uint32_t limbs = 0;
};

template <ModOp Op, typename W> OBORO_HD void mod_op_thread(const ThreadIndex& t, const ModOpArgs<W>& p) {
    for_each_row_element(t, p.n, p.rows, [&](uint64_t i, uint64_t row) {
        const W q = p.moduli[row % p.limbs];
        if constexpr (Op == ModOp::add) p.out[i] = math::add_mod(p.a[i], p.b[i], q);
        else if constexpr (Op == ModOp::sub) p.out[i] = math::sub_mod(p.a[i], p.b[i], q);
        else p.out[i] = math::neg_mod(p.a[i], q);
    });
}

// ---- tensor product ------------------------------------------------------------------------------

// The tensor product of `count` pairs of degree-1 ciphertexts (NTT form, `limbs` limbs each):
// (d0, d1, d2) = (a0*b0, a0*b1 + a1*b0, a1*b1), Karatsuba (math::tensor_karatsuba, as the CPU
// backend). Ciphertext c of an operand starts at base + c * stride; its polynomial j at
// + j * limbs * n. The size-3 results are written straight into their destination (a batch of
// size-3 ciphertexts when out_stride = 3 * limbs * n), or added to it (`accumulate`: a sum of
// products, the CPU's tensor_add). One thread per coefficient, rows = count x limbs. out must not
// alias a or b.
template <typename W> struct TensorArgs {
    W* out = nullptr;
    uint64_t out_stride = 0;
    const W* a = nullptr;
    uint64_t a_stride = 0;
    const W* b = nullptr;
    uint64_t b_stride = 0;
    const math::Barrett<W>* moduli = nullptr;  // `limbs` entries
    uint32_t n = 0;
    uint32_t limbs = 0;
    uint32_t count = 0;
    bool accumulate = false;
};

template <typename W> RowLaunch row_launch(const TensorArgs<W>& a) { return row_launch(a.n, a.count * a.limbs); }

template <typename W> OBORO_HD void tensor_thread(const ThreadIndex& t, const TensorArgs<W>& p) {
    const uint64_t poly = uint64_t(p.limbs) * p.n;  // words per polynomial
    for_each_row_element(t, p.n, p.count * p.limbs, [&](uint64_t i, uint64_t row) {
        const uint64_t c = row / p.limbs, k = i - c * poly;  // k: limb * n + col inside the polynomial
        const W* a = p.a + c * p.a_stride + k;
        const W* b = p.b + c * p.b_stride + k;
        W* d = p.out + c * p.out_stride + k;
        const math::Barrett<W>& br = p.moduli[row % p.limbs];
        if (!p.accumulate) {
            math::tensor_karatsuba(a[0], a[poly], b[0], b[poly], br, d[0], d[poly], d[2 * poly]);
            return;
        }
        W t0, t1, t2;
        math::tensor_karatsuba(a[0], a[poly], b[0], b[poly], br, t0, t1, t2);
        d[0] = math::add_mod(d[0], t0, br.q);
        d[poly] = math::add_mod(d[poly], t1, br.q);
        d[2 * poly] = math::add_mod(d[2 * poly], t2, br.q);
    });
}

// ---- automorphism ------------------------------------------------------------------------------

// dst[r][k] = src[r][perm_r[k]] over `rows x n`: an automorphism X -> X^g in NTT form (the CPU
// backend's permute). One launch applies one permutation to a whole batch (perm_r = perm) or a
// different one per ciphertext (perm_r = perm_table[r / rows_per_perm], rows_per_perm = size x
// limbs: a rotation step per ciphertext, each permutation read where it already is, with no copy
// into a contiguous array). dst must not alias src. Writes are coalesced; reads gather within a row.
template <typename W> struct PermuteArgs {
    W* dst = nullptr;
    const W* src = nullptr;
    const uint32_t* perm = nullptr;                // n entries: every row
    const uint32_t* const* perm_table = nullptr;   // or, when set, one pointer per rows_per_perm rows
    uint32_t rows_per_perm = 0;
    uint32_t n = 0;
    uint32_t rows = 0;
};

template <typename W> RowLaunch row_launch(const PermuteArgs<W>& a) { return row_launch(a.n, a.rows); }

template <typename W> OBORO_HD void permute_thread(const ThreadIndex& t, const PermuteArgs<W>& p) {
    for_each_row_element(t, p.n, p.rows, [&](uint64_t i, uint64_t row) {
        const uint32_t* perm = p.perm_table ? p.perm_table[row / p.rows_per_perm] : p.perm;
        const uint64_t col = i - row * p.n;
        p.dst[i] = p.src[row * p.n + perm[col]];
    });
}

}  // namespace oboro::cuda::kernels
