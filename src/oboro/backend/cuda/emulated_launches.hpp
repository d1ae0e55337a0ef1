// The kernels of the CUDA backend run through the CPU grid emulator (grid_emulator.hpp), one
// function per kernel kind, with the launch sequences and shapes of the CUDA launchers
// (for_each_ntt_launch, for_each_divide_drop_transform, for_each_base_conversion_launch,
// row_launch): EmulatedLaunches is CudaLaunches (cuda_launches.hpp) with every launch run on the
// CPU when it is called. The emulated queue (emulated_queue.hpp) and the kernel tests run them.
// Plain C++: no CUDA headers.
#pragma once

#include <cstdint>

#include "oboro/backend/cuda/base_conversion_kernels.hpp"
#include "oboro/backend/cuda/batch_kernels.hpp"
#include "oboro/backend/cuda/elementwise_kernels.hpp"
#include "oboro/backend/cuda/grid_emulator.hpp"
#include "oboro/backend/cuda/keyswitch_kernels.hpp"
#include "oboro/backend/cuda/ntt_kernels.hpp"

namespace oboro::cuda {

// One element-wise launch: body(thread, args) for every thread of row_launch(args).
template <typename Args, typename Body> void emulate_rows(const Args& args, Body&& body) {
    const kernels::RowLaunch l = row_launch(args);  // ADL: the overload next to Args
    if (l.empty) return;
    emulate_grid(l.shape, [&](const ThreadIndex& t) { body(t, args); });
}

inline void emulate_ntt(const kernels::NttArgs& args, bool forward, ThreadOrder order = ThreadOrder::forward) {
    using kernels::NttPass;
    kernels::for_each_ntt_launch(args, forward, [&](NttPass pass, const LaunchShape& shape, size_t words,
                                                    uint32_t phases, const kernels::NttArgs& part) {
        emulate_block_phases(
            shape, words, phases,
            [&](const ThreadIndex& t, uint64_t* shared, uint32_t phase) {
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

inline void emulate_divide_drop(const kernels::DivideDropArgs& r, ThreadOrder order = ThreadOrder::forward) {
    kernels::for_each_divide_drop_transform(r, [&](const kernels::NttArgs& a, bool forward) { emulate_ntt(a, forward, order); });
}

inline void emulate_base_conversion(const kernels::BaseConvArgs& a) {
    kernels::for_each_base_conversion_launch(a, [&](int kernel, const LaunchShape& shape) {
        emulate_grid(shape, [&](const ThreadIndex& t) {
            if (kernel == 1) kernels::base_conversion_prepare_thread(t, a);
            else kernels::base_conversion_output_thread(t, a);
        });
    });
}

// order: how the threads of a block run within each phase of the kernels with barriers (the
// tests run both orders to catch races).
struct EmulatedLaunches {
    ThreadOrder order = ThreadOrder::forward;

    void elementwise(kernels::BatchOp op, const kernels::BatchEltArgs& a) {
        kernels::dispatch_batch_op(op, [&]<kernels::BatchOp Op>() {
            emulate_rows(a, [](const ThreadIndex& t, const kernels::BatchEltArgs& p) { kernels::batch_elt_thread<Op>(t, p); });
        });
    }
    void product_sum(const kernels::ProductSumArgs& a) {
        emulate_rows(a, [](const ThreadIndex& t, const kernels::ProductSumArgs& p) { kernels::product_sum_thread(t, p); });
    }
    void encode(const kernels::EncodeArgs& a) {
        emulate_rows(a, [](const ThreadIndex& t, const kernels::EncodeArgs& p) { kernels::encode_thread(t, p); });
    }
    void ntt(const kernels::NttArgs& a, bool forward) { emulate_ntt(a, forward, order); }
    void digit_copy(const kernels::DigitCopyArgs& a) {
        emulate_rows(a, [](const ThreadIndex& t, const kernels::DigitCopyArgs& p) { kernels::digit_copy_thread(t, p); });
    }
    void base_conversion(const kernels::BaseConvArgs& a) { emulate_base_conversion(a); }
    void inner_product(const kernels::InnerProductArgs& a) {
        emulate_rows(a, [](const ThreadIndex& t, const kernels::InnerProductArgs& p) { kernels::inner_product_thread(t, p); });
    }
    void divide_drop(const kernels::DivideDropArgs& a) { emulate_divide_drop(a, order); }
    void permute(const kernels::PermuteArgs<uint64_t>& a) {
        emulate_rows(a, [](const ThreadIndex& t, const kernels::PermuteArgs<uint64_t>& p) { kernels::permute_thread(t, p); });
    }
    void strided_add(const kernels::StridedAddArgs& a) {
        emulate_rows(a, [](const ThreadIndex& t, const kernels::StridedAddArgs& p) { kernels::strided_add_thread(t, p); });
    }
    void tensor(const kernels::TensorArgs<uint64_t>& a) {
        emulate_rows(a, [](const ThreadIndex& t, const kernels::TensorArgs<uint64_t>& p) { kernels::tensor_thread(t, p); });
    }
    void fold(const kernels::FoldArgs& a) {
        emulate_rows(a, [](const ThreadIndex& t, const kernels::FoldArgs& p) { kernels::fold_thread(t, p); });
    }
};

}  // namespace oboro::cuda
