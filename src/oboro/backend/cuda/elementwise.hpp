// Host API of the CUDA element-wise kernels. Plain C++: no CUDA headers needed to include it.
// Defined in elementwise.cu / runtime.cu, available when liboboro is built with the CUDA backend
// (targets linking `oboro_cuda` get the macro OBORO_WITH_CUDA_RUNTIME).
//
// Two forms per kernel:
//  - launch_*: asynchronous, on device pointers (the args struct), on `stream` (a cudaStream_t, or
//    nullptr for the default stream). No synchronisation; errors of the launch itself throw.
//  - *_host: a convenience for tests and examples on host memory: copies in, launches, waits,
//    copies out. Not for performance.
// CUDA errors throw oboro::Error naming the operation.
#pragma once

#include <cstdint>
#include <string>

#include "oboro/backend/cuda/elementwise_kernels.hpp"

namespace oboro::cuda {

// Number of CUDA devices usable by this process; 0 when there is no GPU or no driver. Never throws.
int device_count();
// A one-line description of the CUDA runtime state, e.g. "2 device(s): NVIDIA H100 ..." or the
// cudaGetDeviceCount error ("CUDA driver version is insufficient ..."). Never throws.
std::string device_summary();

template <typename W> void launch_mul_add_mod(const kernels::MulAddModArgs<W>& args, void* stream = nullptr);
template <typename W>
void launch_scalar_mul_add_mod(const kernels::ScalarMulAddModArgs<W>& args, void* stream = nullptr);

// out[r][i] = a[r][i] * b[r][i] + c[r][i] mod moduli[r % limbs], all arrays `rows x n` in host memory.
template <typename W>
void mul_add_mod_host(W* out, const W* a, const W* b, const W* c, const W* moduli, uint32_t limbs,
                      uint32_t rows, uint32_t n);
// out[r][i] = a[r][i] * scalar[l] + c[r][i] mod moduli[l], l = r % limbs, host memory.
template <typename W>
void scalar_mul_add_mod_host(W* out, const W* a, const W* c, const W* scalar, const W* moduli,
                             uint32_t limbs, uint32_t rows, uint32_t n);

}  // namespace oboro::cuda
