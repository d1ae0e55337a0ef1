#include "oboro/backend/cpu/poly_ops.hpp"

#include <algorithm>

#include "oboro/backend/cpu/eltwise.hpp"
#include "oboro/backend/cpu/ntt_simd.hpp"

#include "oboro/math/modarith.hpp"
#include "oboro/util/parallel.hpp"

namespace oboro::backend::cpu {

using namespace oboro::math;

namespace {
// Run body(limb) for every limb; element-wise kernels are cheap, so small inputs stay inline.
template <typename F> void for_each_limb(size_t limbs, size_t n, F&& body) {
    if (limbs * n < kParallelWords) {
        for (size_t i = 0; i < limbs; ++i) body(i);
    } else {
        parallel_for(limbs, body);
    }
}
}  // namespace

// Each operation runs the element-wise table chosen for this CPU (eltwise.hpp), limb by limb.

bool use_streaming_stores(size_t output_bytes, const void* dst, const void* a, const void* b) {
    return output_bytes >= kStreamingBytes && dst != a && dst != b;
}

void add(uint64_t* dst, const uint64_t* a, const uint64_t* b, const Modulus* mods, size_t limbs, size_t n) {
    const EltwiseKernels& kn = eltwise_active();
    const auto op = use_streaming_stores(limbs * n * sizeof(uint64_t), dst, a, b) ? kn.add_stream : kn.add;
    for_each_limb(limbs, n, [&](size_t i) { op(dst + i * n, a + i * n, b + i * n, mods[i].value, n); });
}

void sub(uint64_t* dst, const uint64_t* a, const uint64_t* b, const Modulus* mods, size_t limbs, size_t n) {
    const EltwiseKernels& kn = eltwise_active();
    const auto op = use_streaming_stores(limbs * n * sizeof(uint64_t), dst, a, b) ? kn.sub_stream : kn.sub;
    for_each_limb(limbs, n, [&](size_t i) { op(dst + i * n, a + i * n, b + i * n, mods[i].value, n); });
}

void negate(uint64_t* dst, const uint64_t* a, const Modulus* mods, size_t limbs, size_t n) {
    const EltwiseKernels& kn = eltwise_active();
    for_each_limb(limbs, n, [&](size_t i) { kn.negate(dst + i * n, a + i * n, mods[i].value, n); });
}

void mul(uint64_t* dst, const uint64_t* a, const uint64_t* b, const Modulus* mods, size_t limbs, size_t n) {
    const EltwiseKernels& kn = eltwise_active();
    for_each_limb(limbs, n, [&](size_t i) { kn.mul(dst + i * n, a + i * n, b + i * n, mods[i], n); });
}

void mul_add(uint64_t* dst, const uint64_t* a, const uint64_t* b, const Modulus* mods, size_t limbs, size_t n) {
    const EltwiseKernels& kn = eltwise_active();
    for_each_limb(limbs, n, [&](size_t i) { kn.mul_add(dst + i * n, a + i * n, b + i * n, mods[i], n); });
}

void mul_scalar(uint64_t* dst, const uint64_t* a, const uint64_t* s, const Modulus* mods, size_t limbs, size_t n) {
    const EltwiseKernels& kn = eltwise_active();
    for_each_limb(limbs, n, [&](size_t i) {
        const uint64_t q = mods[i].value;
        kn.mul_scalar(dst + i * n, a + i * n, s[i], shoup_precompute(s[i], q), q, n);
    });
}

void mul_scalar_add(uint64_t* acc, const uint64_t* a, const uint64_t* s, const Modulus* mods, size_t limbs, size_t n) {
    const EltwiseKernels& kn = eltwise_active();
    for_each_limb(limbs, n, [&](size_t i) {
        const uint64_t q = mods[i].value;
        kn.mul_scalar_add(acc + i * n, a + i * n, s[i], shoup_precompute(s[i], q), q, n);
    });
}

void add_scalar(uint64_t* dst, const uint64_t* a, const uint64_t* s, const Modulus* mods, size_t limbs, size_t n) {
    const EltwiseKernels& kn = eltwise_active();
    for_each_limb(limbs, n, [&](size_t i) { kn.add_scalar(dst + i * n, a + i * n, s[i], mods[i].value, n); });
}

void sub_mul_scalar(uint64_t* dst, const uint64_t* a, const uint64_t* b, const uint64_t* s, const Modulus* mods,
                    size_t limbs, size_t n) {
    const EltwiseKernels& kn = eltwise_active();
    for_each_limb(limbs, n, [&](size_t i) {
        const uint64_t q = mods[i].value;
        kn.sub_mul_scalar(dst + i * n, a + i * n, b + i * n, s[i], shoup_precompute(s[i], q), q, n);
    });
}

void tensor(uint64_t* d0, uint64_t* d1, uint64_t* d2, const uint64_t* a0, const uint64_t* a1, const uint64_t* b0,
            const uint64_t* b1, const Modulus* mods, size_t limbs, size_t n) {
    const EltwiseKernels& kn = eltwise_active();
    for_each_limb(limbs, n, [&](size_t i) {
        const size_t off = i * n;
        kn.tensor(d0 + off, d1 + off, d2 + off, a0 + off, a1 + off, b0 + off, b1 + off, mods[i], n);
    });
}

NttFunctions ntt_functions(Isa isa, uint64_t q) {
    switch (isa) {
    case Isa::scalar: return {math::ntt_forward, math::ntt_inverse};
    case Isa::avx2: return {ntt_forward_avx2, ntt_inverse_avx2};
    case Isa::avx512: return {ntt_forward_avx512, ntt_inverse_avx512};
    case Isa::avx512ifma:
        if ((q >> kIfmaModulusBits) == 0) return {ntt_forward_ifma, ntt_inverse_ifma};
        return {ntt_forward_avx512, ntt_inverse_avx512};
    }
    return {};
}

namespace {
// The instruction set whose NTT runs on this CPU (set_simd_enabled(false): the scalar code).
Isa cpu_ntt_isa() {
    if (!simd_requested()) return Isa::scalar;
    if (simd_available()) return ifma_available() ? Isa::avx512ifma : Isa::avx512;
    return avx2_available() ? Isa::avx2 : Isa::scalar;
}

// ... and for this table (tiny rings: the scalar code).
Isa active_ntt_isa(const NttTables& table) { return table.n < 16 ? Isa::scalar : cpu_ntt_isa(); }
}  // namespace

const char* ntt_implementation() {
    switch (cpu_ntt_isa()) {
    case Isa::scalar: return "scalar";
    case Isa::avx2: return "avx2";
    case Isa::avx512: return "avx512";
    case Isa::avx512ifma: return "avx512+ifma";
    }
    return "scalar";
}

void ntt_forward_limb(uint64_t* a, const NttTables& table) {
    ntt_functions(active_ntt_isa(table), table.q).forward(a, table);
}

void ntt_inverse_limb(uint64_t* a, const NttTables& table) {
    ntt_functions(active_ntt_isa(table), table.q).inverse(a, table);
}

void ntt_forward(uint64_t* data, const NttTables* tables, size_t limbs) {
    if (limbs == 0) return;
    const size_t n = tables[0].n;
    parallel_for(limbs, [&](size_t i) { ntt_forward_limb(data + i * n, tables[i]); });
}

void ntt_inverse(uint64_t* data, const NttTables* tables, size_t limbs) {
    if (limbs == 0) return;
    const size_t n = tables[0].n;
    parallel_for(limbs, [&](size_t i) { ntt_inverse_limb(data + i * n, tables[i]); });
}

void permute(uint64_t* dst, const uint64_t* src, const uint32_t* perm, size_t limbs, size_t n) {
    const EltwiseKernels& kn = eltwise_active();
    for_each_limb(limbs, n, [&](size_t i) { kn.permute_automorphism(dst + i * n, src + i * n, perm, n); });
}

void base_convert_prepare(const math::BaseConverter& converter, const uint64_t* in, size_t in_stride, size_t n,
                          uint64_t* scratch, bool centered) {
    const EltwiseKernels& kn = eltwise_active();
    const math::RnsBase& from = converter.from();
    const size_t k = from.size();
    if (k == 1) return;
    // The steps of BaseConverter::convert_impl with the SIMD kernels: y_i = [x_i * (Q/q_i)^{-1}]_{q_i}
    // and the centred overflow counts v here, then per target prime
    // sum_i y_i * (Q/q_i mod t_j) - v * (Q mod t_j) in base_convert_limb.
    for (size_t i = 0; i < k; ++i)
        kn.mul_scalar(scratch + i * n, in + i * in_stride, from.punctured_inv(i), from.punctured_inv_shoup(i), from[i],
                      n);
    if (centered)
        kn.overflow_counts(reinterpret_cast<uint8_t*>(scratch + k * n), scratch, n, k, converter.inverse_sources(), n);
}

void base_convert_limb(const math::BaseConverter& converter, size_t j, const uint64_t* in, const uint64_t* scratch,
                       uint64_t* out, size_t n, bool centered) {
    const EltwiseKernels& kn = eltwise_active();
    const math::RnsBase &from = converter.from(), &to = converter.to();
    const size_t k = from.size();
    if (k == 1) {
        kn.convert_single(out, in, from[0], centered, to.modulus(j), n);
        return;
    }
    const uint64_t u = converter.q_mod_target(j);
    uint64_t y_bound = 0;  // the y_i are residues of the source primes (base_convert_prepare)
    for (size_t i = 0; i < k; ++i) y_bound = std::max(y_bound, from[i]);
    kn.weighted_sum(out, scratch, n, k, y_bound, converter.punctured_mod_target(j),
                    centered ? reinterpret_cast<const uint8_t*>(scratch + k * n) : nullptr, u,
                    shoup_precompute(u, to[j]), to.modulus(j), n);
}

void base_convert(const math::BaseConverter& converter, const uint64_t* in, size_t in_stride, uint64_t* const* outs,
                  size_t n, uint64_t* scratch, bool centered) {
    base_convert_prepare(converter, in, in_stride, n, scratch, centered);
    for (size_t j = 0; j < converter.to().size(); ++j) base_convert_limb(converter, j, in, scratch, outs[j], n, centered);
}

void broadcast_reduce(uint64_t* dst, const uint64_t* src, const Modulus* mods, size_t limbs, size_t n) {
    for_each_limb(limbs, n, [&](size_t i) {
        const Barrett<uint64_t>& br = mods[i].barrett;
        uint64_t* d = dst + i * n;
        for (size_t k = 0; k < n; ++k) d[k] = br.reduce_word(src[k]);
    });
}

}  // namespace oboro::backend::cpu
