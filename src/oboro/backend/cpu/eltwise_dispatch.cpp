// Run-time choice of the element-wise kernel table: once per process for the CPU (cpuid through
// __builtin_cpu_supports, which also checks that the OS saves the vector registers), and on
// every call for the set_simd_enabled switch, so that benchmarks can compare scalar and SIMD.
#include "oboro/backend/cpu/eltwise.hpp"

#include "oboro/backend/cpu/ntt_simd.hpp"

namespace oboro::backend::cpu {

namespace {
bool cpu_has(Isa isa) {
#if defined(__x86_64__) && defined(__GNUC__)
    switch (isa) {
        case Isa::scalar: return true;
        case Isa::avx2: return avx2_available();  // AVX2 and FMA: the table's double-precision products
        case Isa::avx512: return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
        case Isa::avx512ifma: return cpu_has(Isa::avx512) && __builtin_cpu_supports("avx512ifma");
    }
    return false;
#else
    return isa == Isa::scalar;
#endif
}

const EltwiseKernels& best_for_cpu() {
    static const EltwiseKernels* best = [] {
        if (const EltwiseKernels* k = eltwise_kernels(Isa::avx512ifma)) return k;
        if (const EltwiseKernels* k = eltwise_kernels(Isa::avx512)) return k;
        if (const EltwiseKernels* k = eltwise_kernels(Isa::avx2)) return k;
        return &scalar_kernels();
    }();
    return *best;
}
}  // namespace

const EltwiseKernels* eltwise_kernels(Isa isa) {
    if (!cpu_has(isa)) return nullptr;
    switch (isa) {
        case Isa::scalar: return &scalar_kernels();
        case Isa::avx2: return avx2_kernels();
        case Isa::avx512: return avx512_kernels();
        case Isa::avx512ifma: return avx512ifma_kernels();
    }
    return nullptr;
}

const EltwiseKernels& eltwise_active() { return simd_requested() ? best_for_cpu() : scalar_kernels(); }

const char* eltwise_implementation() { return eltwise_active().name; }

}  // namespace oboro::backend::cpu
