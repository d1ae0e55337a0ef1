// CUDA element-wise modular kernels. The per-thread logic lives in elementwise_kernels.hpp (host
// and device code), so that the tests run exactly this code on the CPU through grid_emulator.hpp.
#include <cstdint>
#include <vector>

#include <cuda_runtime.h>

#include "oboro/backend/cuda/cuda_check.cuh"
#include "oboro/backend/cuda/elementwise.hpp"
#include "oboro/backend/cuda/elementwise_kernels.hpp"

namespace oboro::cuda {

namespace {

template <typename W> __global__ void mul_add_mod_kernel(const kernels::MulAddModArgs<W> args) {
    kernels::mul_add_mod_thread(detail::this_thread(), args);
}

template <typename W>
__global__ void scalar_mul_add_mod_kernel(const kernels::ScalarMulAddModArgs<W> args) {
    kernels::scalar_mul_add_mod_thread(detail::this_thread(), args);
}

}  // namespace

template <typename W> void launch_mul_add_mod(const kernels::MulAddModArgs<W>& args, void* stream) {
    if (args.n == 0 || args.rows == 0) return;
    const LaunchShape s = kernels::elementwise_shape(args.n, args.rows);
    mul_add_mod_kernel<W><<<detail::to_dim3(s.grid), detail::to_dim3(s.block), 0,
                            static_cast<cudaStream_t>(stream)>>>(args);
    detail::check(cudaGetLastError(), "launch_mul_add_mod");
}

template <typename W>
void launch_scalar_mul_add_mod(const kernels::ScalarMulAddModArgs<W>& args, void* stream) {
    if (args.n == 0 || args.rows == 0) return;
    const LaunchShape s = kernels::elementwise_shape(args.n, args.rows);
    scalar_mul_add_mod_kernel<W><<<detail::to_dim3(s.grid), detail::to_dim3(s.block), 0,
                                   static_cast<cudaStream_t>(stream)>>>(args);
    detail::check(cudaGetLastError(), "launch_scalar_mul_add_mod");
}

template <typename W>
void mul_add_mod_host(W* out, const W* a, const W* b, const W* c, const W* moduli, uint32_t limbs,
                      uint32_t rows, uint32_t n) {
    if (limbs == 0) raise<ValueError>("mul_add_mod_host: limbs must be positive");
    const size_t total = size_t(rows) * n;
    std::vector<math::Barrett<W>> br;
    br.reserve(limbs);
    for (uint32_t l = 0; l < limbs; ++l) br.emplace_back(moduli[l]);
    detail::DeviceArray<W> da(a, total), db(b, total), dc(c, total), dout(total);
    detail::DeviceArray<math::Barrett<W>> dbr(br.data(), br.size());
    kernels::MulAddModArgs<W> args;
    args.out = dout.get();
    args.a = da.get();
    args.b = db.get();
    args.c = dc.get();
    args.moduli = dbr.get();
    args.n = n;
    args.rows = rows;
    args.limbs = limbs;
    launch_mul_add_mod(args);
    detail::check(cudaDeviceSynchronize(), "mul_add_mod_host (kernel)");
    dout.copy_to(out);
}

template <typename W>
void scalar_mul_add_mod_host(W* out, const W* a, const W* c, const W* scalar, const W* moduli,
                             uint32_t limbs, uint32_t rows, uint32_t n) {
    if (limbs == 0) raise<ValueError>("scalar_mul_add_mod_host: limbs must be positive");
    const size_t total = size_t(rows) * n;
    std::vector<W> shoup(limbs);
    for (uint32_t l = 0; l < limbs; ++l) shoup[l] = math::shoup_precompute(scalar[l], moduli[l]);
    detail::DeviceArray<W> da(a, total), dc(c, total), dout(total);
    detail::DeviceArray<W> ds(scalar, limbs), dss(shoup.data(), limbs), dq(moduli, limbs);
    kernels::ScalarMulAddModArgs<W> args;
    args.out = dout.get();
    args.a = da.get();
    args.c = dc.get();
    args.scalar = ds.get();
    args.scalar_shoup = dss.get();
    args.moduli = dq.get();
    args.n = n;
    args.rows = rows;
    args.limbs = limbs;
    launch_scalar_mul_add_mod(args);
    detail::check(cudaDeviceSynchronize(), "scalar_mul_add_mod_host (kernel)");
    dout.copy_to(out);
}

#define OBORO_INSTANTIATE(W)                                                                     \
    template void launch_mul_add_mod<W>(const kernels::MulAddModArgs<W>&, void*);                \
    template void launch_scalar_mul_add_mod<W>(const kernels::ScalarMulAddModArgs<W>&, void*);   \
    template void mul_add_mod_host<W>(W*, const W*, const W*, const W*, const W*, uint32_t,      \
                                      uint32_t, uint32_t);                                       \
    template void scalar_mul_add_mod_host<W>(W*, const W*, const W*, const W*, const W*, uint32_t, \
                                             uint32_t, uint32_t);
OBORO_INSTANTIATE(uint32_t)
OBORO_INSTANTIATE(uint64_t)
#undef OBORO_INSTANTIATE

}  // namespace oboro::cuda
