// CUDA kernels of the fast base conversion. The per-thread logic lives in
// base_conversion_kernels.hpp (host and device code), run on the CPU by the tests through
// grid_emulator.hpp; the launch sequence is the same function here and there.
#include <cstdint>
#include <vector>

#include <cuda_runtime.h>

#include "oboro/backend/cuda/base_conversion.hpp"
#include "oboro/backend/cuda/cuda_check.cuh"

namespace oboro::cuda {

namespace {

__global__ void base_conversion_prepare_kernel(const kernels::BaseConvArgs args) {
    kernels::base_conversion_prepare_thread(detail::this_thread(), args);
}

__global__ void base_conversion_output_kernel(const kernels::BaseConvArgs args) {
    kernels::base_conversion_output_thread(detail::this_thread(), args);
}

}  // namespace

void launch_base_conversion(const kernels::BaseConvArgs& args, void* stream) {
    const cudaStream_t st = static_cast<cudaStream_t>(stream);
    kernels::for_each_base_conversion_launch(args, [&](int kernel, const LaunchShape& s) {
        const dim3 grid = detail::to_dim3(s.grid), block = detail::to_dim3(s.block);
        if (kernel == 1) base_conversion_prepare_kernel<<<grid, block, 0, st>>>(args);
        else base_conversion_output_kernel<<<grid, block, 0, st>>>(args);
        detail::check(cudaGetLastError(), "launch_base_conversion");
    });
}

void base_conversion_host(const math::BaseConverter& converter, bool centered, const uint64_t* in, uint64_t* out,
                          uint32_t polys, uint32_t n) {
    const DeviceBaseConverter dc(converter);
    const uint32_t k = uint32_t(converter.from().size()), m = uint32_t(converter.to().size());
    DeviceBuffer din(size_t(polys) * k * n * 8), dout(size_t(polys) * m * n * 8),
        scratch(kernels::base_conversion_scratch_words(polys, k, n) * 8);
    din.upload(in, size_t(polys) * k * n * 8);
    kernels::BaseConvArgs a;
    a.conv = dc.view();
    a.centered = centered;
    a.n = n;
    a.polys = polys;
    a.in = din.as<const uint64_t>();
    a.in_poly_stride = uint64_t(k) * n;
    a.out = dout.as<uint64_t>();
    a.out_poly_stride = uint64_t(m) * n;
    a.scratch = scratch.as<uint64_t>();
    launch_base_conversion(a);
    synchronize();
    dout.download(out, size_t(polys) * m * n * 8);
}

}  // namespace oboro::cuda
