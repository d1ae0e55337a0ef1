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

}  // namespace oboro::cuda::kernels
