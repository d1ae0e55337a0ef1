// CUDA kernels of the batched NTT and the fused division by one dropped prime (rescale, ModDown).
// The per-phase logic lives in ntt_kernels.hpp (host and device code); the tests run exactly that
// code on the CPU through grid_emulator.hpp, and the pass sequence (for_each_ntt_launch) is the
// same function here and there.
#include <cstdint>
#include <vector>

#include <cuda_runtime.h>

#include "oboro/backend/cuda/cuda_check.cuh"
#include "oboro/backend/cuda/ntt.hpp"

namespace oboro::cuda {

namespace {

using kernels::NttArgs;
using kernels::NttPass;

// One pass: its stages, separated by barriers, on the block's tile in dynamic shared memory.
template <NttPass Pass>
__global__ void __launch_bounds__(kernels::ntt_block_threads) ntt_pass_kernel(const NttArgs args) {
    detail::run_block_phases(kernels::pass_group_log(args.plan, Pass),
                             [&](const ThreadIndex& t, uint64_t* shared, uint32_t phase) {
                                 kernels::ntt_phase<Pass>(t, shared, phase, args);
                             });
}

void launch_ntt(const NttArgs& args, bool forward, void* stream_ptr) {
    const cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
    kernels::for_each_ntt_launch(args, forward, [&](NttPass pass, const LaunchShape& shape, size_t words, uint32_t,
                                                    const NttArgs& part) {
        const dim3 grid = detail::to_dim3(shape.grid), block = detail::to_dim3(shape.block);
        const size_t bytes = words * sizeof(uint64_t);
        switch (pass) {
        case NttPass::forward_columns: ntt_pass_kernel<NttPass::forward_columns><<<grid, block, bytes, stream>>>(part); break;
        case NttPass::forward_chunks: ntt_pass_kernel<NttPass::forward_chunks><<<grid, block, bytes, stream>>>(part); break;
        case NttPass::inverse_chunks: ntt_pass_kernel<NttPass::inverse_chunks><<<grid, block, bytes, stream>>>(part); break;
        case NttPass::inverse_columns: ntt_pass_kernel<NttPass::inverse_columns><<<grid, block, bytes, stream>>>(part); break;
        }
        detail::check(cudaGetLastError(), forward ? "launch_ntt_forward" : "launch_ntt_inverse");
    });
}

}  // namespace

void launch_ntt_forward(const NttArgs& args, void* stream) { launch_ntt(args, true, stream); }
void launch_ntt_inverse(const NttArgs& args, void* stream) { launch_ntt(args, false, stream); }

void launch_divide_and_drop(const kernels::DivideDropArgs& args, void* stream) {
    kernels::for_each_divide_drop_transform(args, [&](const NttArgs& a, bool forward) { launch_ntt(a, forward, stream); });
}

namespace {
void ntt_host(uint64_t* data, const math::NttTables* tables, uint32_t limbs, uint32_t polys, bool forward,
              const kernels::NttPlan* plan) {
    DeviceNttTables dt(tables, limbs);
    const size_t words = size_t(polys) * limbs * dt.n();
    DeviceBuffer buf(words * sizeof(uint64_t));
    buf.upload(data, words * sizeof(uint64_t));
    NttArgs a;
    a.tables = dt.views();
    a.limbs = limbs;
    a.polys = polys;
    a.plan = plan ? *plan : kernels::make_ntt_plan(dt.log_n());
    a.src = a.mid = a.dst = kernels::RowSet{buf.as<uint64_t>(), uint64_t(limbs) * dt.n()};
    launch_ntt(a, forward, nullptr);
    synchronize();
    buf.download(data, words * sizeof(uint64_t));
}
}  // namespace

void ntt_forward_host(uint64_t* data, const math::NttTables* tables, uint32_t limbs, uint32_t polys,
                      const kernels::NttPlan* plan) {
    ntt_host(data, tables, limbs, polys, true, plan);
}
void ntt_inverse_host(uint64_t* data, const math::NttTables* tables, uint32_t limbs, uint32_t polys,
                      const kernels::NttPlan* plan) {
    ntt_host(data, tables, limbs, polys, false, plan);
}

void divide_and_drop_host(const uint64_t* in, uint64_t* out, const math::NttTables* tables, uint32_t kept,
                          uint32_t dropped_table, const uint64_t* inverses, uint32_t polys) {
    if (kept == 0) raise<ValueError>("divide_and_drop_host: no limb is kept");
    // the kept primes' tables and the dropped prime's, as views indexed 0 .. kept-1 and kept
    std::vector<math::NttTables> used(tables, tables + kept);
    used.push_back(tables[dropped_table]);
    DeviceNttTables dt(used.data(), used.size());
    std::vector<uint64_t> moduli(kept);
    for (uint32_t j = 0; j < kept; ++j) moduli[j] = tables[j].q;
    const uint64_t p = tables[dropped_table].q;
    DeviceDropLimbs limbs(moduli.data(), kept, p, inverses);
    const uint64_t n = dt.n();
    const size_t in_words = size_t(polys) * (kept + 1) * n, out_words = size_t(polys) * kept * n;
    DeviceBuffer din(in_words * 8), dout(out_words * 8),
        scratch(kernels::divide_drop_scratch_words(polys, kept, n) * 8);
    din.upload(in, in_words * 8);
    kernels::DivideDropArgs r;
    r.tables = dt.views();
    r.limbs = limbs.get();
    r.dropped_prime = p;
    r.dropped_table = kept;
    r.kept = kept;
    r.polys = polys;
    r.plan = kernels::make_ntt_plan(dt.log_n());
    r.in = kernels::RowSet{din.as<uint64_t>(), (kept + 1) * n};
    r.out = kernels::RowSet{dout.as<uint64_t>(), kept * n};
    r.scratch = scratch.as<uint64_t>();
    launch_divide_and_drop(r, nullptr);
    synchronize();
    dout.download(out, out_words * 8);
}

}  // namespace oboro::cuda
