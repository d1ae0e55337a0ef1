// AVX-512 element-wise kernels: 8 lanes of 64 bits (the vector operations are in
// eltwise_avx512_ops.hpp).
#include "oboro/backend/cpu/eltwise.hpp"

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>

// Every header with inline code comes before the target (simd_target.hpp).
#include "oboro/backend/cpu/word_barrett.hpp"

#include "oboro/backend/cpu/simd_target.hpp"

OBORO_SIMD_TARGET_BEGIN("avx512f,avx512dq")

#include "oboro/backend/cpu/eltwise_avx512_ops.hpp"
#include "oboro/backend/cpu/eltwise_simd.hpp"

namespace oboro::backend::cpu {
namespace {

constexpr EltwiseKernels kTable = simd::Kernels<Avx512Ops>::table("avx512");

}  // namespace
}  // namespace oboro::backend::cpu

OBORO_SIMD_TARGET_END

namespace oboro::backend::cpu {
const EltwiseKernels* avx512_kernels() { return &kTable; }
}  // namespace oboro::backend::cpu

#else

namespace oboro::backend::cpu {
const EltwiseKernels* avx512_kernels() { return nullptr; }
}  // namespace oboro::backend::cpu

#endif
