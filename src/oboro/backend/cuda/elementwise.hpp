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
// The driver's and the runtime's CUDA versions, e.g. "driver 580.x supports CUDA 13.0, runtime 13.5".
// Never throws.
std::string version_summary();
// The peak memory bandwidth of `device` in GB/s (10^9 bytes), from its memory clock and bus width
// (two transfers per clock); 0 when unknown. Never throws.
double peak_memory_bandwidth_gbs(int device = 0);

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

template <typename W>
void launch_mod_op(kernels::ModOp op, const kernels::ModOpArgs<W>& args, void* stream = nullptr);
template <typename W> void launch_tensor(const kernels::TensorArgs<W>& args, void* stream = nullptr);
template <typename W> void launch_permute(const kernels::PermuteArgs<W>& args, void* stream = nullptr);

// out = a + b, a - b or -a (b unused) mod moduli[r % limbs], `rows x n`, host memory.
template <typename W>
void mod_op_host(kernels::ModOp op, W* out, const W* a, const W* b, const W* moduli, uint32_t limbs, uint32_t rows,
                 uint32_t n);
// d: count x 3 x limbs x n; a, b: count x 2 x limbs x n (batches of ciphertexts), host memory.
template <typename W>
void tensor_host(W* d, const W* a, const W* b, const W* moduli, uint32_t limbs, uint32_t count, uint32_t n);
// dst[r][k] = src[r][perm[k]], perm = perms + (r / rows_per_perm) * n (0: perms for every row);
// perms holds perm_count permutations of n entries. Host memory.
template <typename W>
void permute_host(W* dst, const W* src, const uint32_t* perms, uint32_t perm_count, uint32_t rows_per_perm,
                  uint32_t rows, uint32_t n);

}  // namespace oboro::cuda
