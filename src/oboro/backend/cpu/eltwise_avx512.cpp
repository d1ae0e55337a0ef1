// AVX-512 element-wise kernels: 8 lanes of 64 bits (the vector operations are in
// eltwise_avx512_ops.hpp).
#include "oboro/backend/cpu/eltwise.hpp"

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>

// Every header with inline code comes before the target pragma: inline functions compiled for
// the wider ISA could otherwise be the copy the linker keeps for the whole program.
#include "oboro/backend/cpu/word_barrett.hpp"

#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq")
// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*, which -Wmaybe-uninitialized reports
// as uninitialised once inlined (GCC bug 105593, fixed in GCC 13).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "oboro/backend/cpu/eltwise_avx512_ops.hpp"
#include "oboro/backend/cpu/eltwise_simd.hpp"

namespace oboro::backend::cpu {
namespace {

constexpr EltwiseKernels kTable = simd::Kernels<Avx512Ops>::table("avx512");

}  // namespace
}  // namespace oboro::backend::cpu

#pragma GCC diagnostic pop
#pragma GCC pop_options

namespace oboro::backend::cpu {
const EltwiseKernels* avx512_kernels() { return &kTable; }
}  // namespace oboro::backend::cpu

#else

namespace oboro::backend::cpu {
const EltwiseKernels* avx512_kernels() { return nullptr; }
}  // namespace oboro::backend::cpu

#endif
