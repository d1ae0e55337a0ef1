// Per-thread bodies of the fast base conversion kernels (host and device code; the CUDA kernels
// are in base_conversion.cu, the CPU emulation in grid_emulator.hpp).
//
// What math::BaseConverter::convert / convert_centered do for one polynomial, for `polys`
// polynomials in one launch pair, in coefficient form, bit for bit:
//   kernel 1 (one thread per coefficient of each polynomial): y_i = [x_i * (Q/q_i)^{-1}]_{q_i} for
//     the k source limbs into scratch, and, when centred, the overflow count v (round(sum y_i/q_i));
//   kernel 2 (one thread per coefficient of each target limb of each polynomial): the 128-bit sum
//     of y_i * (Q/q_i mod t_j), reduced, minus v * Q mod t_j when centred.
// Both read and write along coefficients (coalesced); kernel 2 has polys x m x n threads. From one
// prime (k = 1) only kernel 2 runs, with math::convert_from_one_prime as the CPU does.
// The per-coefficient arithmetic is math::conversion_overflow / conversion_sum /
// conversion_correction (math/rns.hpp), the functions the CPU converter itself calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "oboro/backend/cuda/elementwise_kernels.hpp"
#include "oboro/math/rns.hpp"
#include "oboro/util/error.hpp"

namespace oboro::cuda::kernels {

// A BaseConverter's constants as the kernels read them (device pointers, or host pointers into
// the converter through host_conversion_view for the emulator).
struct BaseConvView {
    uint32_t k = 0, m = 0;                         // source and target primes
    const uint64_t* from = nullptr;                // k source primes
    const uint64_t* punctured_inv = nullptr;       // k: (Q/q_i)^{-1} mod q_i
    const uint64_t* punctured_inv_shoup = nullptr; // k
    const double* inv_from = nullptr;              // k: 1/q_i
    const uint64_t* qhat_mod_t = nullptr;          // m x k: (Q/q_i) mod t_j at [j * k + i]
    const uint64_t* q_mod_t = nullptr;             // m: Q mod t_j
    const math::Barrett<uint64_t>* to = nullptr;   // m target primes
};

// The host arrays a view points into: what DeviceBaseConverter uploads, and what the emulator
// points at directly.
struct BaseConvHostData {
    std::vector<uint64_t> from, punctured_inv, punctured_inv_shoup;
    std::vector<double> inv_from;
    std::vector<uint64_t> qhat_mod_t, q_mod_t;
    std::vector<math::Barrett<uint64_t>> to;

    explicit BaseConvHostData(const math::BaseConverter& c)
        : from(c.from().values()), inv_from(c.inv_from()), qhat_mod_t(c.qhat_mod_t()), q_mod_t(c.q_mod_t()) {
        for (size_t i = 0; i < c.from().size(); ++i) {
            punctured_inv.push_back(c.from().punctured_inv(i));
            punctured_inv_shoup.push_back(c.from().punctured_inv_shoup(i));
        }
        for (size_t j = 0; j < c.to().size(); ++j) to.push_back(c.to().modulus(j).barrett);
    }
    BaseConvView view() const {
        BaseConvView v;
        v.k = uint32_t(from.size());
        v.m = uint32_t(to.size());
        v.from = from.data();
        v.punctured_inv = punctured_inv.data();
        v.punctured_inv_shoup = punctured_inv_shoup.data();
        v.inv_from = inv_from.data();
        v.qhat_mod_t = qhat_mod_t.data();
        v.q_mod_t = q_mod_t.data();
        v.to = to.data();
        return v;
    }
};

struct BaseConvArgs {
    BaseConvView conv;
    bool centered = false;
    uint32_t n = 0;
    uint32_t polys = 0;
    // source limb i of polynomial p at in + p * in_poly_stride + i * n (coefficient form, canonical)
    const uint64_t* in = nullptr;
    uint64_t in_poly_stride = 0;
    // target limb j of polynomial p at out + p * out_poly_stride + out_limbs[j] * n (out_limbs
    // null: j), so that the targets need not be contiguous (ModUp: every limb but the digit's)
    uint64_t* out = nullptr;
    uint64_t out_poly_stride = 0;
    const uint32_t* out_limbs = nullptr;
    uint64_t* scratch = nullptr;  // base_conversion_scratch_words(polys, k, n) words (k > 1)
};

inline size_t base_conversion_scratch_words(uint32_t polys, uint32_t k, uint64_t n) {
    return k > 1 ? size_t(polys) * (k + 1) * n : 0;
}

// Kernel 1: rows = polys. Scratch of polynomial p: k rows of y, then one row of v.
OBORO_HD void base_conversion_prepare_thread(const ThreadIndex& t, const BaseConvArgs& a) {
    const uint64_t n = a.n, k = a.conv.k;
    for_each_row_element(t, a.n, a.polys, [&](uint64_t i, uint64_t poly) {
        const uint64_t col = i - poly * n;
        const uint64_t* x = a.in + poly * a.in_poly_stride + col;
        uint64_t* y = a.scratch + poly * (k + 1) * n + col;
        for (uint64_t s = 0; s < k; ++s)
            y[s * n] = math::mul_shoup(x[s * n], a.conv.punctured_inv[s], a.conv.punctured_inv_shoup[s], a.conv.from[s]);
        if (a.centered) y[k * n] = math::conversion_overflow(y, n, a.conv.inv_from, k);
    });
}

// Kernel 2: rows = polys x m (row = poly * m + j).
OBORO_HD void base_conversion_output_thread(const ThreadIndex& t, const BaseConvArgs& a) {
    const uint64_t n = a.n, k = a.conv.k, m = a.conv.m;
    for_each_row_element(t, a.n, uint32_t(a.polys * m), [&](uint64_t i, uint64_t row) {
        const uint64_t poly = row / m, j = row - poly * m, col = i - row * n;
        const math::Barrett<uint64_t>& br = a.conv.to[j];
        uint64_t r;
        if (k == 1) {
            r = math::convert_from_one_prime(a.in[poly * a.in_poly_stride + col], a.conv.from[0], a.conv.q_mod_t[j],
                                             a.centered, br);
        } else {
            const uint64_t* y = a.scratch + poly * (k + 1) * n + col;
            r = math::conversion_sum(y, n, a.conv.qhat_mod_t + j * k, k, br);
            if (a.centered)
                r = math::sub_mod(r, math::conversion_correction(uint32_t(y[k * n]), a.conv.q_mod_t[j], br), br.q);
        }
        const uint64_t limb = a.out_limbs ? a.out_limbs[j] : j;
        a.out[poly * a.out_poly_stride + limb * n + col] = r;
    });
}

// The launch sequence (shared by the CUDA launcher and the emulator): run(kernel, shape) with
// kernel 1 (prepare, k > 1 only) then 2 (output); nothing for an empty conversion.
template <typename Run> void for_each_base_conversion_launch(const BaseConvArgs& a, Run&& run) {
    if (a.polys == 0 || a.n == 0 || a.conv.m == 0) return;
    if (a.conv.k == 0 || a.conv.k > 64) raise<ValueError>("base conversion: ", a.conv.k, " source primes (1 .. 64)");
    if (a.conv.k > 1) run(1, elementwise_shape(a.n, a.polys));
    run(2, elementwise_shape(a.n, a.polys * a.conv.m));
}

}  // namespace oboro::cuda::kernels
