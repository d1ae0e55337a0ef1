// Host API of the CUDA NTT and rescale kernels (ntt_kernels.hpp). Plain C++: no CUDA headers.
// Defined in ntt.cu; available to targets linking `oboro_cuda` (OBORO_WITH_CUDA_RUNTIME).
//
// launch_*: asynchronous on `stream` (a cudaStream_t, nullptr = default stream), on device memory
// described by the args structs; no synchronisation. *_host: copy in, launch, wait, copy out, for
// tests and examples only.
#pragma once

#include <cstddef>
#include <cstdint>

#include "oboro/backend/cuda/device_buffer.hpp"
#include "oboro/backend/cuda/ntt_kernels.hpp"
#include "oboro/math/ntt.hpp"

namespace oboro::cuda {

// The NTT tables of `count` primes (all of degree n) in device memory, as the kernels read them:
// views() is a device array of `count` NttTableView pointing into one allocation of 4*n*count words.
class DeviceNttTables {
public:
    DeviceNttTables(const math::NttTables* tables, size_t count);
    const kernels::NttTableView* views() const { return views_.as<const kernels::NttTableView>(); }
    size_t size() const { return count_; }
    uint32_t n() const { return n_; }
    uint32_t log_n() const { return log_n_; }

private:
    DeviceBuffer words_, views_;
    size_t count_ = 0;
    uint32_t n_ = 0, log_n_ = 0;
};

// The rescale constants of one level (kernels::make_rescale_limbs) in device memory.
class DeviceRescaleLimbs {
public:
    // moduli: q_0 .. q_level; inv_last: q_level^{-1} mod q_j, j < level
    DeviceRescaleLimbs(const uint64_t* moduli, uint32_t level, const uint64_t* inv_last);
    const kernels::RescaleLimb* get() const { return buf_.as<const kernels::RescaleLimb>(); }

private:
    DeviceBuffer buf_;
};

// Forward / inverse transform of every row of args (two launches per 65535 rows).
void launch_ntt_forward(const kernels::NttArgs& args, void* stream = nullptr);
void launch_ntt_inverse(const kernels::NttArgs& args, void* stream = nullptr);
// The fused rescale of args.polys polynomials: four launches.
void launch_rescale(const kernels::RescaleArgs& args, void* stream = nullptr);

// In place on host memory: polys x limbs rows of tables[0].n words, row r with tables[r % limbs].
void ntt_forward_host(uint64_t* data, const math::NttTables* tables, uint32_t limbs, uint32_t polys);
void ntt_inverse_host(uint64_t* data, const math::NttTables* tables, uint32_t limbs, uint32_t polys);
// in: polys polynomials of level+1 limbs in NTT form (tables of q_0 .. q_level); out: polys x level
// limbs, round(in / q_level) in NTT form (ckks::rescale_poly's result, bit for bit).
void rescale_host(const uint64_t* in, uint64_t* out, const math::NttTables* tables, const uint64_t* inv_last,
                  uint32_t level, uint32_t polys);

}  // namespace oboro::cuda
