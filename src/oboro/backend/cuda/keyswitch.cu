// CUDA kernels and launchers of the key switching (hybrid key switching, relinearize, rotate,
// hoisted rotations). The launch sequences are keyswitch_kernels.hpp's, the same functions the
// emulated tests run; the per-thread bodies are host-device functions there too.
#include <cstdint>
#include <vector>

#include <cuda_runtime.h>

#include "oboro/backend/cuda/cuda_check.cuh"
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

// The operations of the launch sequences, as CUDA launches on one stream.
struct CudaKeySwitchOps {
    cudaStream_t stream;

    template <typename Args, typename Kernel> void elementwise(Kernel kernel, const Args& a, uint32_t rows, const char* what) {
        if (a.n == 0 || rows == 0) return;
        const LaunchShape s = kernels::elementwise_shape(a.n, rows);
        kernel<<<detail::to_dim3(s.grid), detail::to_dim3(s.block), 0, stream>>>(a);
        detail::check(cudaGetLastError(), what);
    }
    void ntt(const kernels::NttArgs& a, bool forward) {
        if (forward) launch_ntt_forward(a, stream);
        else launch_ntt_inverse(a, stream);
    }
    void digit_copy(const kernels::DigitCopyArgs& a) { elementwise(digit_copy_kernel, a, a.count * a.nq, "key switch: digit copy"); }
    void base_conversion(const kernels::BaseConvArgs& a) { launch_base_conversion(a, stream); }
    void inner_product(const kernels::InnerProductArgs& a) {
        elementwise(inner_product_kernel, a, a.count * a.ne, "key switch: inner product");
    }
    void divide_drop(const kernels::DivideDropArgs& a) { launch_divide_and_drop(a, stream); }
    void permute(const kernels::PermuteArgs<uint64_t>& a) { launch_permute(a, stream); }
    void strided_add(const kernels::StridedAddArgs& a) {
        elementwise(strided_add_kernel, a, a.count * a.polys * a.limbs, "key switch: addition");
    }
    void tensor(const kernels::TensorArgs<uint64_t>& a) { launch_tensor(a, stream); }
    void fold(const kernels::FoldArgs& a) { elementwise(fold_kernel, a, a.count * 2 * a.nq, "multiply_relin_rescale: P (d0, d1)"); }
};

template <typename T> DeviceBuffer to_device(const std::vector<T>& v) {
    DeviceBuffer b(v.size() * sizeof(T));
    b.upload(v.data(), v.size() * sizeof(T));
    return b;
}

}  // namespace

DeviceKeySwitchLevel::DeviceKeySwitchLevel(const backend::Ring& ring, int level) {
    const kernels::KeySwitchHostData h(ring, level);
    std::vector<math::NttTables> ext(ring.ntt_tables(), ring.ntt_tables() + h.level.nq);
    ext.insert(ext.end(), ring.p_ntt_tables(), ring.p_ntt_tables() + h.level.k);
    tables_ = std::make_unique<DeviceNttTables>(ext.data(), ext.size());
    moduli_ = to_device(h.ext_moduli);
    drop_ = to_device(h.drop);
    q_values_ = to_device(h.q_values);
    std::vector<uint64_t> p_mod_q = h.p_mod_q;
    p_mod_q.insert(p_mod_q.end(), h.p_mod_q_shoup.begin(), h.p_mod_q_shoup.end());
    p_mod_q_ = to_device(p_mod_q);
    if (!h.rescale_drop.empty()) rescale_drop_ = to_device(h.rescale_drop);
    std::vector<uint32_t> all_limbs;  // the digits' target lists, one after the other
    for (const auto& l : h.out_limbs) all_limbs.insert(all_limbs.end(), l.begin(), l.end());
    out_limbs_ = to_device(all_limbs);
    size_t offset = 0;
    for (size_t j = 0; j < h.steps.size(); ++j) {
        converters_.push_back(std::make_unique<DeviceBaseConverter>(ring.level(level).digits[j].to_others));
        kernels::DigitStep s = h.steps[j];
        s.conv = converters_.back()->view();
        s.out_limbs = out_limbs_.as<const uint32_t>() + offset;
        offset += h.out_limbs[j].size();
        steps_.push_back(s);
    }
    level_ = h.level;
    level_.ext_tables = tables_->views();
    level_.ext_moduli = moduli_.as<const math::Barrett<uint64_t>>();
    level_.drop = drop_.as<const kernels::DropLimb>();
    level_.q_values = q_values_.as<const uint64_t>();
    level_.digit_steps = steps_.data();
    if (h.level.k > 1) {
        converters_.push_back(std::make_unique<DeviceBaseConverter>(ring.level(level).p_to_q));
        level_.p_to_q = converters_.back()->view();
    }
    level_.p_mod_q = p_mod_q_.as<const uint64_t>();
    level_.p_mod_q_shoup = level_.p_mod_q + h.level.nq;
    if (level >= 1) {
        converters_.push_back(std::make_unique<DeviceBaseConverter>(ring.level(level).qlp_to_q));
        level_.qlp_to_q = converters_.back()->view();
        level_.rescale_drop = rescale_drop_.as<const kernels::DropLimb>();
    }
}

void launch_key_switch(const kernels::KeySwitchArgs& args, void* stream) {
    CudaKeySwitchOps ops{static_cast<cudaStream_t>(stream)};
    kernels::for_each_key_switch_step(args, ops);
}

void launch_relinearize(const kernels::CiphertextKeySwitchArgs& args, void* stream) {
    CudaKeySwitchOps ops{static_cast<cudaStream_t>(stream)};
    kernels::for_each_relinearize_step(args, ops);
}

void launch_rotate(const kernels::CiphertextKeySwitchArgs& args, void* stream) {
    CudaKeySwitchOps ops{static_cast<cudaStream_t>(stream)};
    kernels::for_each_rotate_step(args, ops);
}

void launch_multiply_relin_rescale(const kernels::MultiplyRelinRescaleArgs& args, void* stream) {
    if (args.level.nq < 2) raise<LevelMismatch>("launch_multiply_relin_rescale: level 0 cannot be rescaled");
    CudaKeySwitchOps ops{static_cast<cudaStream_t>(stream)};
    kernels::for_each_multiply_relin_rescale_step(args, ops);
}

void launch_hoisted_rotations(const kernels::CiphertextKeySwitchArgs& args, const uint32_t* const* perms,
                              const uint64_t* const* const* keys_per_rotation, uint64_t* const* outs,
                              uint32_t rotations, void* stream) {
    CudaKeySwitchOps ops{static_cast<cudaStream_t>(stream)};
    kernels::for_each_hoisted_rotation_step(args, perms, keys_per_rotation, outs, rotations, ops);
}

void launch_hoisted_sum(const kernels::CiphertextKeySwitchArgs& args, const uint32_t* const* perms,
                        const uint64_t* const* const* keys_per_rotation, uint32_t rotations, uint32_t identities,
                        uint64_t* tmp, void* stream) {
    CudaKeySwitchOps ops{static_cast<cudaStream_t>(stream)};
    kernels::for_each_hoisted_sum_step(args, perms, keys_per_rotation, rotations, identities, tmp, ops);
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
        key.upload(k.data, k.words() * 8);
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
