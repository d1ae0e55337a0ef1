// Compiling part of a file for a wider instruction set than the build's baseline (the SIMD
// kernels, chosen at run time for the CPU):
//
//   #include "...every header with inline code..."   // first: see below
//   OBORO_SIMD_TARGET_BEGIN("avx512f,avx512dq")
//   ... kernels ...
//   OBORO_SIMD_TARGET_END
//
// Every function defined between the two macros gets __attribute__((target(isa))), the one
// mechanism both compilers define for this; the macros only spell the region for each of them:
// GCC's `#pragma GCC target` (documented as that attribute on every function that follows) and
// Clang's `#pragma clang attribute push(..., apply_to = function)` (Clang ignores the GCC
// pragma). A function left out of the region that used a wider intrinsic would not compile under
// Clang (its intrinsics are always_inline with their own target), so a gap cannot go unnoticed.
//
// Why a region of attributes and not the whole file compiled with -mavx512f (per-source compile
// options): such a file would also compile the inline functions of every header it includes (the
// standard library's, math::, word_barrett.hpp...) for AVX-512, and the linker keeps one copy of
// each inline function for the whole program, possibly that one: the scalar path would then
// execute AVX-512 on a CPU without it. Here, headers with inline code come before the BEGIN, so
// their functions keep the baseline target; what the region defines has internal linkage (an
// anonymous namespace, or templates over its types) or is an entry point called only after the
// run-time check (ntt_simd.hpp, eltwise.hpp).
//
// Inside, GCC 12's AVX-512 intrinsics start from _mm512_undefined_*, which -Wmaybe-uninitialized
// (and, for some of them, such as _mm512_rol_epi32, -Wuninitialized) reports as uninitialised
// once inlined (GCC bug 105593, fixed in GCC 13): those warnings are off between the two macros.
#pragma once

#define OBORO_SIMD_PRAGMA(x) _Pragma(#x)
#if defined(__clang__)
#define OBORO_SIMD_TARGET_BEGIN(isa) \
    OBORO_SIMD_PRAGMA(clang attribute push(__attribute__((target(isa))), apply_to = function))
#define OBORO_SIMD_TARGET_END OBORO_SIMD_PRAGMA(clang attribute pop)
#else
#define OBORO_SIMD_TARGET_BEGIN(isa)                                \
    OBORO_SIMD_PRAGMA(GCC push_options)                             \
    OBORO_SIMD_PRAGMA(GCC target(isa))                              \
    OBORO_SIMD_PRAGMA(GCC diagnostic push)                          \
    OBORO_SIMD_PRAGMA(GCC diagnostic ignored "-Wmaybe-uninitialized") \
    OBORO_SIMD_PRAGMA(GCC diagnostic ignored "-Wuninitialized")
#define OBORO_SIMD_TARGET_END                \
    OBORO_SIMD_PRAGMA(GCC diagnostic pop)    \
    OBORO_SIMD_PRAGMA(GCC pop_options)
#endif
