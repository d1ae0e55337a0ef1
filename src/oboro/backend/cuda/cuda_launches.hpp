// The kernels of the CUDA backend as launches on one stream, one function per kernel kind: the
// `ops` the launch sequences take (keyswitch_kernels.hpp: for_each_key_switch_step, ...) and the
// launch half of the device policy of the batch queue (device_queue.hpp). Its counterpart in
// the CPU grid emulator is EmulatedLaunches (emulated_launches.hpp), with the same functions.
// Every launch is asynchronous on `stream`; empty launches are skipped; launch errors throw
// oboro::Error naming the kernel.
//
// Plain C++: no CUDA headers. Defined in keyswitch.cu (key switching, NTT, base conversion,
// permutation, tensor) and batch_queue.cu (the batch element-wise ops and encoding); available to
// targets linking `oboro_cuda`.
#pragma once

#include <cstdint>

#include "oboro/backend/cuda/base_conversion_kernels.hpp"
#include "oboro/backend/cuda/batch_kernels.hpp"
#include "oboro/backend/cuda/elementwise_kernels.hpp"
#include "oboro/backend/cuda/keyswitch_kernels.hpp"
#include "oboro/backend/cuda/ntt_kernels.hpp"

namespace oboro::cuda {

struct CudaLaunches {
    void* stream = nullptr;  // a cudaStream_t; nullptr: the default stream

    void elementwise(kernels::BatchOp op, const kernels::BatchEltArgs& a);
    void product_sum(const kernels::ProductSumArgs& a);
    void encode(const kernels::EncodeArgs& a);
    void ntt(const kernels::NttArgs& a, bool forward);
    void digit_copy(const kernels::DigitCopyArgs& a);
    void base_conversion(const kernels::BaseConvArgs& a);
    void inner_product(const kernels::InnerProductArgs& a);
    void divide_drop(const kernels::DivideDropArgs& a);
    void permute(const kernels::PermuteArgs<uint64_t>& a);
    void strided_add(const kernels::StridedAddArgs& a);
    void tensor(const kernels::TensorArgs<uint64_t>& a);
    void fold(const kernels::FoldArgs& a);
};

}  // namespace oboro::cuda
