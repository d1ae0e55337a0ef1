// Host API of the CUDA NTT and divide-and-drop (rescale, ModDown) kernels (ntt_kernels.hpp). No CUDA headers.
// Defined in ntt.cu; available to targets linking `oboro_cuda` (OBORO_WITH_CUDA_RUNTIME).
//
// launch_*: asynchronous on `stream` (a cudaStream_t, nullptr = default stream), on device memory
// described by the args structs; no synchronisation. *_host: copy in, launch, wait, copy out, for
// tests and examples only.
#pragma once

#include <cstddef>
#include <cstdint>

#include "oboro/backend/cuda/device_constants.hpp"
#include "oboro/backend/cuda/ntt_kernels.hpp"
#include "oboro/math/ntt.hpp"

namespace oboro::cuda {

// The NTT tables and the constants of a division by one dropped prime in GPU memory
// (device_constants.hpp).
using DeviceNttTables = BasicDeviceNttTables<CudaMemory>;
using DeviceDropLimbs = BasicDeviceDropLimbs<CudaMemory>;

// Forward / inverse transform of every row of args (two launches per 65535 rows).
void launch_ntt_forward(const kernels::NttArgs& args, void* stream = nullptr);
void launch_ntt_inverse(const kernels::NttArgs& args, void* stream = nullptr);
// The fused division by one dropped prime (rescale, ModDown with one special prime) of
// args.polys polynomials: four launches.
void launch_divide_and_drop(const kernels::DivideDropArgs& args, void* stream = nullptr);

// In place on host memory: polys x limbs rows of tables[0].n words, row r with tables[r % limbs].
// plan: the launch plan (nullptr: make_ntt_plan's).
void ntt_forward_host(uint64_t* data, const math::NttTables* tables, uint32_t limbs, uint32_t polys,
                      const kernels::NttPlan* plan = nullptr);
void ntt_inverse_host(uint64_t* data, const math::NttTables* tables, uint32_t limbs, uint32_t polys,
                      const kernels::NttPlan* plan = nullptr);
// in: polys polynomials of kept+1 limbs in NTT form (tables[0 .. kept-1], then the dropped prime
// with tables[dropped_table]); out: polys x kept limbs, round(in / p) in NTT form, host memory.
// Rescale from level l (backend::cpu::rescale_poly, bit for bit): tables = ring.ntt_tables(), kept = l,
// dropped_table = l, inverses = inv_last. ModDown with one special prime (backend::cpu::mod_down): kept =
// l+1, dropped_table = ring.q_count(), inverses = p_inv.
void divide_and_drop_host(const uint64_t* in, uint64_t* out, const math::NttTables* tables, uint32_t kept,
                          uint32_t dropped_table, const uint64_t* inverses, uint32_t polys);

}  // namespace oboro::cuda
