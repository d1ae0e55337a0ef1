// Host API of the CUDA fast base conversion (base_conversion_kernels.hpp). Plain C++: no CUDA
// headers. Defined in base_conversion.cu; available to targets linking `oboro_cuda`.
#pragma once

#include <cstddef>
#include <cstdint>

#include "oboro/backend/cuda/base_conversion_kernels.hpp"
#include "oboro/backend/cuda/device_constants.hpp"
#include "oboro/math/rns.hpp"

namespace oboro::cuda {

// A BaseConverter's constants in GPU memory (device_constants.hpp).
using DeviceBaseConverter = BasicDeviceBaseConverter<CudaMemory>;

// Asynchronous: one or two launches on `stream` (nullptr: the default stream).
void launch_base_conversion(const kernels::BaseConvArgs& args, void* stream = nullptr);

// Host memory: in = polys x from.size() limbs, out = polys x to.size() limbs, of n words each;
// the result of converter.convert (or convert_centered) on each polynomial, bit for bit.
void base_conversion_host(const math::BaseConverter& converter, bool centered, const uint64_t* in, uint64_t* out,
                          uint32_t polys, uint32_t n);

}  // namespace oboro::cuda
