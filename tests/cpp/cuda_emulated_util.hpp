// Runs the CUDA NTT and divide-and-drop kernels through the CPU grid emulator, in the same launch
// sequence as the CUDA launchers (kernels::for_each_ntt_launch / for_each_divide_drop_transform).
#pragma once

#include <vector>

#include "oboro/backend/cuda/base_conversion_kernels.hpp"
#include "oboro/backend/cuda/elementwise_kernels.hpp"
#include "oboro/backend/cuda/grid_emulator.hpp"
#include "oboro/backend/cuda/keyswitch_kernels.hpp"
#include "oboro/backend/cuda/ntt_kernels.hpp"
#include "oboro/math/ntt.hpp"
#include "oboro/math/rns.hpp"

namespace oboro::test::cuda_emu {

namespace kernels = oboro::cuda::kernels;

// The Barrett constants of the first `count` primes, as the element-wise kernels take them.
inline std::vector<math::Barrett<uint64_t>> barretts(const math::Modulus* moduli, size_t count) {
    std::vector<math::Barrett<uint64_t>> out;
    for (size_t i = 0; i < count; ++i) out.push_back(moduli[i].barrett);
    return out;
}

inline std::vector<kernels::NttTableView> table_views(const std::vector<math::NttTables>& t) {
    std::vector<kernels::NttTableView> v;
    for (const auto& x : t) v.push_back(kernels::host_table_view(x));
    return v;
}
inline std::vector<kernels::NttTableView> table_views(const math::NttTables* t, size_t count) {
    std::vector<kernels::NttTableView> v;
    for (size_t i = 0; i < count; ++i) v.push_back(kernels::host_table_view(t[i]));
    return v;
}

inline void emulate_ntt(const kernels::NttArgs& args, bool forward,
                        oboro::cuda::ThreadOrder order = oboro::cuda::ThreadOrder::forward) {
    using kernels::NttPass;
    kernels::for_each_ntt_launch(args, forward, [&](NttPass pass, const oboro::cuda::LaunchShape& shape, size_t words,
                                                    uint32_t phases, const kernels::NttArgs& part) {
        oboro::cuda::emulate_block_phases(
            shape, words, phases,
            [&](const oboro::cuda::ThreadIndex& t, uint64_t* shared, uint32_t phase) {
                switch (pass) {
                case NttPass::forward_columns: kernels::ntt_phase<NttPass::forward_columns>(t, shared, phase, part); break;
                case NttPass::forward_chunks: kernels::ntt_phase<NttPass::forward_chunks>(t, shared, phase, part); break;
                case NttPass::inverse_chunks: kernels::ntt_phase<NttPass::inverse_chunks>(t, shared, phase, part); break;
                case NttPass::inverse_columns: kernels::ntt_phase<NttPass::inverse_columns>(t, shared, phase, part); break;
                }
            },
            order);
    });
}

inline void emulate_divide_drop(const kernels::DivideDropArgs& r,
                                oboro::cuda::ThreadOrder order = oboro::cuda::ThreadOrder::forward) {
    kernels::for_each_divide_drop_transform(r, [&](const kernels::NttArgs& a, bool forward) { emulate_ntt(a, forward, order); });
}

inline void emulate_base_conversion(const kernels::BaseConvArgs& a) {
    kernels::for_each_base_conversion_launch(a, [&](int kernel, const oboro::cuda::LaunchShape& shape) {
        oboro::cuda::emulate_grid(shape, [&](const oboro::cuda::ThreadIndex& t) {
            if (kernel == 1) kernels::base_conversion_prepare_thread(t, a);
            else kernels::base_conversion_output_thread(t, a);
        });
    });
}

// The operations of the key-switching launch sequences (keyswitch_kernels.hpp), each run through
// the emulator exactly as keyswitch.cu launches it.
struct EmulatedKeySwitchOps {
    oboro::cuda::ThreadOrder order = oboro::cuda::ThreadOrder::forward;
    void ntt(const kernels::NttArgs& a, bool forward) { emulate_ntt(a, forward, order); }
    void digit_copy(const kernels::DigitCopyArgs& a) {
        oboro::cuda::emulate_grid(kernels::elementwise_shape(a.n, a.count * a.nq),
                                  [&](const oboro::cuda::ThreadIndex& t) { kernels::digit_copy_thread(t, a); });
    }
    void base_conversion(const kernels::BaseConvArgs& a) { emulate_base_conversion(a); }
    void inner_product(const kernels::InnerProductArgs& a) {
        oboro::cuda::emulate_grid(kernels::elementwise_shape(a.n, a.count * a.ne),
                                  [&](const oboro::cuda::ThreadIndex& t) { kernels::inner_product_thread(t, a); });
    }
    void divide_drop(const kernels::DivideDropArgs& a) { emulate_divide_drop(a, order); }
    void permute(const kernels::PermuteArgs<uint64_t>& a) {
        oboro::cuda::emulate_grid(kernels::elementwise_shape(a.n, a.rows),
                                  [&](const oboro::cuda::ThreadIndex& t) { kernels::permute_thread(t, a); });
    }
    void tensor(const kernels::TensorArgs<uint64_t>& a) {
        oboro::cuda::emulate_grid(kernels::elementwise_shape(a.n, a.count * a.limbs),
                                  [&](const oboro::cuda::ThreadIndex& t) { kernels::tensor_thread(t, a); });
    }
    void fold(const kernels::FoldArgs& a) {
        oboro::cuda::emulate_grid(kernels::elementwise_shape(a.n, a.count * 2 * a.nq),
                                  [&](const oboro::cuda::ThreadIndex& t) { kernels::fold_thread(t, a); });
    }
    void strided_add(const kernels::StridedAddArgs& a) {
        oboro::cuda::emulate_grid(kernels::elementwise_shape(a.n, a.count * a.polys * a.limbs),
                                  [&](const oboro::cuda::ThreadIndex& t) { kernels::strided_add_thread(t, a); });
    }
};

}  // namespace oboro::test::cuda_emu
