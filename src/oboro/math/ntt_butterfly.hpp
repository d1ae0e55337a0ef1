// The butterflies of the negacyclic NTT (ntt.hpp), as host-device functions: the CPU transform
// (ntt.cpp) and the GPU transform (backend/cuda/ntt_kernels.hpp) both call these, so that both
// compute bit for bit the same values whatever order they run the butterflies in.
//
// Value bounds (Harvey's lazy butterflies; q < 2^(w-2) so 4q fits in a word):
//  - forward (Cooley-Tukey): inputs in [0, 4q), outputs in [0, 4q)
//  - inverse (Gentleman-Sande): inputs in [0, 2q), outputs in [0, 2q)
#pragma once

#include "oboro/math/modarith.hpp"

namespace oboro::math {

// x, y in [0, 4q) -> x' = x + w*y, y' = x - w*y (mod q), both in [0, 4q).
template <typename W> OBORO_HD void ntt_forward_butterfly(W& x, W& y, W w, W w_shoup, W q) {
    const W two_q = 2 * q;
    W u = x;
    u = u >= two_q ? u - two_q : u;                  // [0, 2q)
    const W v = mul_shoup_lazy(y, w, w_shoup, q);    // [0, 2q)
    x = u + v;                                       // [0, 4q)
    y = u - v + two_q;                               // (0, 4q)
}

// [0, 4q) -> [0, q): the reduction after the last forward stage.
template <typename W> OBORO_HD W ntt_forward_final_reduce(W v, W q) {
    const W two_q = 2 * q;
    v = v >= two_q ? v - two_q : v;
    return v >= q ? v - q : v;
}

// x, y in [0, 2q) -> x' = x + y, y' = (x - y) * w (mod q), both in [0, 2q).
template <typename W> OBORO_HD void ntt_inverse_butterfly(W& x, W& y, W w, W w_shoup, W q) {
    const W two_q = 2 * q;
    const W u = x, v = y;
    const W sum = u + v;
    x = sum >= two_q ? sum - two_q : sum;
    y = mul_shoup_lazy(u - v + two_q, w, w_shoup, q);
}

// The last inverse stage with n^{-1} folded in: x' = (x + y) / n, y' = (x - y) * psi^-1 / n
// (last_inv = n^{-1} * psi_inv_rev[1]), both reduced to [0, q). Inputs in [0, 2q).
template <typename W>
OBORO_HD void ntt_inverse_last_butterfly(W& x, W& y, W n_inv, W n_inv_shoup, W last_inv, W last_inv_shoup, W q) {
    const W u = x, v = y;
    x = reduce_once(mul_shoup_lazy(u + v, n_inv, n_inv_shoup, q), q);
    y = reduce_once(mul_shoup_lazy(u - v + 2 * q, last_inv, last_inv_shoup, q), q);
}

}  // namespace oboro::math
