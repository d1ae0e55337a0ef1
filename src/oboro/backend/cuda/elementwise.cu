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

template <kernels::ModOp Op, typename W> __global__ void mod_op_kernel(const kernels::ModOpArgs<W> args) {
    kernels::mod_op_thread<Op>(detail::this_thread(), args);
}

template <typename W> __global__ void tensor_kernel(const kernels::TensorArgs<W> args) {
    kernels::tensor_thread(detail::this_thread(), args);
}

template <typename W> __global__ void permute_kernel(const kernels::PermuteArgs<W> args) {
    kernels::permute_thread(detail::this_thread(), args);
}

}  // namespace

template <typename W> void launch_mod_op(kernels::ModOp op, const kernels::ModOpArgs<W>& args, void* stream) {
    if (args.n == 0 || args.rows == 0) return;
    const LaunchShape s = kernels::elementwise_shape(args.n, args.rows);
    const dim3 grid = detail::to_dim3(s.grid), block = detail::to_dim3(s.block);
    const cudaStream_t st = static_cast<cudaStream_t>(stream);
    switch (op) {
    case kernels::ModOp::add: mod_op_kernel<kernels::ModOp::add, W><<<grid, block, 0, st>>>(args); break;
    case kernels::ModOp::sub: mod_op_kernel<kernels::ModOp::sub, W><<<grid, block, 0, st>>>(args); break;
    case kernels::ModOp::negate: mod_op_kernel<kernels::ModOp::negate, W><<<grid, block, 0, st>>>(args); break;
    }
    detail::check(cudaGetLastError(), "launch_mod_op");
}

template <typename W> void launch_tensor(const kernels::TensorArgs<W>& args, void* stream) {
    detail::launch_rows(tensor_kernel<W>, args, static_cast<cudaStream_t>(stream), "launch_tensor");
}

template <typename W> void launch_permute(const kernels::PermuteArgs<W>& args, void* stream) {
    detail::launch_rows(permute_kernel<W>, args, static_cast<cudaStream_t>(stream), "launch_permute");
}

template <typename W>
void mod_op_host(kernels::ModOp op, W* out, const W* a, const W* b, const W* moduli, uint32_t limbs, uint32_t rows,
                 uint32_t n) {
    if (limbs == 0) raise<ValueError>("mod_op_host: limbs must be positive");
    const size_t total = size_t(rows) * n;
    detail::DeviceArray<W> da(a, total), db(op == kernels::ModOp::negate ? a : b, total), dq(moduli, limbs), dout(total);
    kernels::ModOpArgs<W> args;
    args.out = dout.get();
    args.a = da.get();
    args.b = db.get();
    args.moduli = dq.get();
    args.n = n;
    args.rows = rows;
    args.limbs = limbs;
    launch_mod_op(op, args);
    detail::check(cudaDeviceSynchronize(), "mod_op_host (kernel)");
    dout.copy_to(out);
}

template <typename W>
void tensor_host(W* d, const W* a, const W* b, const W* moduli, uint32_t limbs, uint32_t count, uint32_t n) {
    if (limbs == 0) raise<ValueError>("tensor_host: limbs must be positive");
    const size_t poly = size_t(limbs) * n;
    std::vector<math::Barrett<W>> br;
    for (uint32_t l = 0; l < limbs; ++l) br.emplace_back(moduli[l]);
    detail::DeviceArray<W> da(a, 2 * poly * count), db(b, 2 * poly * count), dd(3 * poly * count);
    detail::DeviceArray<math::Barrett<W>> dbr(br.data(), br.size());
    kernels::TensorArgs<W> args;
    args.out = dd.get();
    args.out_stride = 3 * poly;
    args.a = da.get();
    args.a_stride = 2 * poly;
    args.b = db.get();
    args.b_stride = 2 * poly;
    args.moduli = dbr.get();
    args.n = n;
    args.limbs = limbs;
    args.count = count;
    launch_tensor(args);
    detail::check(cudaDeviceSynchronize(), "tensor_host (kernel)");
    dd.copy_to(d);
}

template <typename W>
void permute_host(W* dst, const W* src, const uint32_t* perms, uint32_t perm_count, uint32_t rows_per_perm,
                  uint32_t rows, uint32_t n) {
    const size_t total = size_t(rows) * n;
    detail::DeviceArray<W> ds(src, total), dd(total);
    detail::DeviceArray<uint32_t> dp(perms, size_t(perm_count) * n);
    std::vector<const uint32_t*> table;
    for (uint32_t g = 0; g < perm_count; ++g) table.push_back(dp.get() + size_t(g) * n);
    detail::DeviceArray<const uint32_t*> dt(table.data(), table.size());
    kernels::PermuteArgs<W> args;
    args.dst = dd.get();
    args.src = ds.get();
    args.perm = dp.get();
    if (rows_per_perm) args.perm_table = dt.get();
    args.rows_per_perm = rows_per_perm;
    args.n = n;
    args.rows = rows;
    launch_permute(args);
    detail::check(cudaDeviceSynchronize(), "permute_host (kernel)");
    dd.copy_to(dst);
}

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
                                             uint32_t, uint32_t);                                 \
    template void launch_mod_op<W>(kernels::ModOp, const kernels::ModOpArgs<W>&, void*);         \
    template void launch_tensor<W>(const kernels::TensorArgs<W>&, void*);                        \
    template void launch_permute<W>(const kernels::PermuteArgs<W>&, void*);                      \
    template void mod_op_host<W>(kernels::ModOp, W*, const W*, const W*, const W*, uint32_t, uint32_t, uint32_t); \
    template void tensor_host<W>(W*, const W*, const W*, const W*, uint32_t, uint32_t, uint32_t); \
    template void permute_host<W>(W*, const W*, const uint32_t*, uint32_t, uint32_t, uint32_t, uint32_t);
OBORO_INSTANTIATE(uint32_t)
OBORO_INSTANTIATE(uint64_t)
#undef OBORO_INSTANTIATE

}  // namespace oboro::cuda
