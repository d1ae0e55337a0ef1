// Compiling part of a file for a wider instruction set than the build's baseline (the SIMD
// kernels, chosen at run time for the CPU):
//
//   #include "...every header with inline code..."   // first: see below
//   OBORO_SIMD_TARGET_BEGIN("avx512f,avx512dq")
//   ... kernels ...
//   OBORO_SIMD_TARGET_END
//
// Headers with inline code come before the BEGIN: an inline function compiled for the wider ISA
// could otherwise be the copy the linker keeps for the whole program. Inside, GCC 12's AVX-512
// intrinsics start from _mm512_undefined_*, which -Wmaybe-uninitialized reports as uninitialised
// once inlined (GCC bug 105593, fixed in GCC 13): that warning is off between the two macros.
#pragma once

#define OBORO_SIMD_PRAGMA(...) _Pragma(#__VA_ARGS__)
#if defined(__clang__)
// Clang has no `#pragma GCC target`: the target attribute is pushed onto every function declared
// between the two macros instead (the fuzz build, scripts/fuzz.sh, compiles with Clang).
#define OBORO_SIMD_TARGET_BEGIN(isa) \
    OBORO_SIMD_PRAGMA(clang attribute push(__attribute__((target(isa))), apply_to = function))
#define OBORO_SIMD_TARGET_END OBORO_SIMD_PRAGMA(clang attribute pop)
#else
#define OBORO_SIMD_TARGET_BEGIN(isa)                                \
    OBORO_SIMD_PRAGMA(GCC push_options)                             \
    OBORO_SIMD_PRAGMA(GCC target(isa))                              \
    OBORO_SIMD_PRAGMA(GCC diagnostic push)                          \
    OBORO_SIMD_PRAGMA(GCC diagnostic ignored "-Wmaybe-uninitialized")
#define OBORO_SIMD_TARGET_END                \
    OBORO_SIMD_PRAGMA(GCC diagnostic pop)    \
    OBORO_SIMD_PRAGMA(GCC pop_options)
#endif
