// CUDA kernels and launchers of the key switching (hybrid key switching, relinearize, rotate,
// hoisted rotations), and the CudaLaunches the launch sequences run. The launch sequences are
// keyswitch_kernels.hpp's, the same functions the emulator runs; the per-thread bodies are
// host-device functions there too.
#include <cstdint>
#include <vector>

#include <cuda_runtime.h>

#include "oboro/backend/cuda/cuda_check.cuh"
#include "oboro/backend/cuda/cuda_launches.hpp"
#include "oboro/backend/cuda/elementwise.hpp"
#include "oboro/backend/cuda/keyswitch.hpp"

namespace oboro::cuda {

namespace {

__global__ void digit_copy_kernel(const kernels::DigitCopyArgs args) {
    kernels::digit_copy_thread(detail::this_thread(), args);
}
__global__ void inner_product_kernel(const kernels::InnerProductArgs args) {
    kernels::inner_product_thread(detail::this_thread(), args);
}
__global__ void strided_add_kernel(const kernels::StridedAddArgs args) {
    kernels::strided_add_thread(detail::this_thread(), args);
}
__global__ void fold_kernel(const kernels::FoldArgs args) { kernels::fold_thread(detail::this_thread(), args); }

cudaStream_t stream_of(const CudaLaunches& l) { return static_cast<cudaStream_t>(l.stream); }

}  // namespace

// ---- the launches of the key-switching sequences (CudaLaunches) --------------------------------

void CudaLaunches::ntt(const kernels::NttArgs& a, bool forward) {
    if (forward) launch_ntt_forward(a, stream);
    else launch_ntt_inverse(a, stream);
}
void CudaLaunches::digit_copy(const kernels::DigitCopyArgs& a) {
    detail::launch_rows(digit_copy_kernel, a, stream_of(*this), "key switch: digit copy");
}
void CudaLaunches::base_conversion(const kernels::BaseConvArgs& a) { launch_base_conversion(a, stream); }
void CudaLaunches::inner_product(const kernels::InnerProductArgs& a) {
    detail::launch_rows(inner_product_kernel, a, stream_of(*this), "key switch: inner product");
}
void CudaLaunches::divide_drop(const kernels::DivideDropArgs& a) { launch_divide_and_drop(a, stream); }
void CudaLaunches::permute(const kernels::PermuteArgs<uint64_t>& a) { launch_permute(a, stream); }
void CudaLaunches::strided_add(const kernels::StridedAddArgs& a) {
    detail::launch_rows(strided_add_kernel, a, stream_of(*this), "key switch: addition");
}
void CudaLaunches::tensor(const kernels::TensorArgs<uint64_t>& a) { launch_tensor(a, stream); }
void CudaLaunches::fold(const kernels::FoldArgs& a) {
    detail::launch_rows(fold_kernel, a, stream_of(*this), "multiply_relin_rescale: P (d0, d1)");
}

void launch_key_switch(const kernels::KeySwitchArgs& args, void* stream) {
    CudaLaunches ops{stream};
    kernels::for_each_key_switch_step(args, ops);
}

void launch_relinearize(const kernels::CiphertextKeySwitchArgs& args, void* stream) {
    CudaLaunches ops{stream};
    kernels::for_each_relinearize_step(args, ops);
}

void launch_rotate(const kernels::CiphertextKeySwitchArgs& args, void* stream) {
    CudaLaunches ops{stream};
    kernels::for_each_rotate_step(args, ops);
}

void launch_multiply_relin_rescale(const kernels::MultiplyRelinRescaleArgs& args, void* stream) {
    CudaLaunches ops{stream};
    kernels::for_each_multiply_relin_rescale_step(args, ops);
}

// ---- host-memory conveniences ------------------------------------------------------------------

namespace {

// Device copies of the operands of one host call: input, output, key, the per-element key
// pointers and the scratch.
struct HostCall {
    DeviceKeySwitchLevel level;
    DeviceBuffer in, out, key, key_ptrs, scratch;
    size_t out_words;

    HostCall(const backend::Ring& ring, int lvl, const uint64_t* host_in, size_t in_words, uint32_t count,
             const backend::KeySwitchKeyView& k)
        : level(ring, lvl), in(in_words * 8), out(size_t(count) * 2 * (lvl + 1) * ring.n() * 8),
          key(k.words() * 8), key_ptrs(count * sizeof(void*)),
          scratch(kernels::key_switch_scratch(level.get(), count).total() * 8),
          out_words(size_t(count) * 2 * (lvl + 1) * ring.n()) {
        in.upload(host_in, in_words * 8);
        key.upload(k.unpacked().data(), k.words() * 8);
        const std::vector<const uint64_t*> ptrs(count, key.as<const uint64_t>());
        key_ptrs.upload(ptrs.data(), count * sizeof(void*));
    }
    kernels::CiphertextKeySwitchArgs args(const backend::KeySwitchKeyView& k, uint32_t count) const {
        kernels::CiphertextKeySwitchArgs a;
        a.level = level.get();
        a.in = in.as<const uint64_t>();
        a.out = out.as<uint64_t>();
        a.keys = key_ptrs.as<const uint64_t* const>();
        a.key_qp_limbs = k.qp_limbs;
        a.count = count;
        a.scratch = scratch.as<uint64_t>();
        return a;
    }
    void finish(uint64_t* host_out) {
        synchronize();
        out.download(host_out, out_words * 8);
    }
};

}  // namespace

void key_switch_host(const backend::Ring& ring, int level, const uint64_t* in, uint32_t count,
                     const backend::KeySwitchKeyView& key, uint64_t* out) {
    const uint64_t nq_n = uint64_t(level + 1) * ring.n();
    HostCall call(ring, level, in, count * nq_n, count, key);
    kernels::KeySwitchArgs a;
    a.level = call.level.get();
    a.in = call.in.as<const uint64_t>();
    a.in_stride = nq_n;
    a.keys = call.key_ptrs.as<const uint64_t* const>();
    a.key_qp_limbs = key.qp_limbs;
    a.out = call.out.as<uint64_t>();
    a.count = count;
    a.scratch = call.scratch.as<uint64_t>();
    launch_key_switch(a);
    call.finish(out);
}

void relinearize_host(const backend::Ring& ring, int level, const uint64_t* in, uint32_t count,
                      const backend::KeySwitchKeyView& rk, uint64_t* out) {
    HostCall call(ring, level, in, size_t(count) * 3 * (level + 1) * ring.n(), count, rk);
    launch_relinearize(call.args(rk, count));
    call.finish(out);
}

void rotate_host(const backend::Ring& ring, int level, const uint64_t* in, uint32_t count, uint64_t galois,
                 const backend::KeySwitchKeyView& key, uint64_t* out) {
    HostCall call(ring, level, in, size_t(count) * 2 * (level + 1) * ring.n(), count, key);
    const auto& perm = ring.automorphism_permutation(galois);
    DeviceBuffer dperm(perm.size() * sizeof(uint32_t));
    dperm.upload(perm.data(), perm.size() * sizeof(uint32_t));
    kernels::CiphertextKeySwitchArgs a = call.args(key, count);
    a.perm = dperm.as<const uint32_t>();
    launch_rotate(a);
    call.finish(out);
}

}  // namespace oboro::cuda
