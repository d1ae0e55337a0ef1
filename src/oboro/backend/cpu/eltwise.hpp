// Element-wise kernels on one limb (n words modulo one prime), in one table per instruction set:
// scalar (any CPU), AVX2 (4 lanes), AVX-512 (8 lanes) and AVX-512 with IFMA products. Every
// table gives bit for bit the same results: each kernel returns canonical residues, and a
// canonical residue is unique.
// The poly_ops functions run the table chosen once at run time for this CPU (eltwise_active),
// which set_simd_enabled(false) (ntt_simd.hpp) turns back to the scalar table.
//
// Input contracts (what the lazy reductions rely on; the tests cover their edges):
//  - x, y canonical (in [0, q)) unless stated; q < 2^62 and q >= 8.
//  - mul_add: acc in [0, 2q) (the sum acc + x*y is reduced once, paper 004 section 4.1).
//  - mul_scalar: x any 64-bit word (Shoup's bound holds for any word); w canonical, w_shoup =
//    math::shoup_precompute(w, q).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>  // eltwise_simd.hpp's chunk dispatch: standard headers come before a SIMD target

#include "oboro/math/rns.hpp"

namespace oboro::backend::cpu {

// avx512ifma: the AVX-512 table with IFMA products for primes below 2^50 (eltwise_avx512ifma.cpp).
enum class Isa { scalar, avx2, avx512, avx512ifma };

// One term of dot2: x times y0 and y1, element by element.
struct DotTerm {
    const uint64_t* x = nullptr;
    const uint64_t* y0 = nullptr;
    const uint64_t* y1 = nullptr;
};

// The portable permute_automorphism and overflow_counts (below), which the tables without a
// faster one keep.
void permute_automorphism_portable(uint64_t* d, const uint64_t* x, const uint32_t* perm, size_t n);
void overflow_counts_portable(uint8_t* v, const uint64_t* y, size_t stride, size_t terms, const double* inv,
                              size_t n);
void unpack_key_words_portable(uint64_t* d, const uint8_t* limb, size_t n, uint32_t width, size_t begin,
                               size_t count);

struct EltwiseKernels {
    const char* name;
    void (*add)(uint64_t* d, const uint64_t* x, const uint64_t* y, uint64_t q, size_t n);
    void (*sub)(uint64_t* d, const uint64_t* x, const uint64_t* y, uint64_t q, size_t n);
    // add, sub, mul and tensor (below) with non-temporal (streaming) stores, for outputs much
    // larger than the caches (poly_ops: kStreamingBytes): the output's lines are not read first
    // and do not evict the inputs. Same results; the outputs must not alias the inputs; ordinary
    // stores where an output is not aligned to the vector size (and in the scalar table).
    void (*add_stream)(uint64_t* d, const uint64_t* x, const uint64_t* y, uint64_t q, size_t n);
    void (*sub_stream)(uint64_t* d, const uint64_t* x, const uint64_t* y, uint64_t q, size_t n);
    void (*mul_stream)(uint64_t* d, const uint64_t* x, const uint64_t* y, const math::Modulus& m, size_t n);
    void (*tensor_stream)(uint64_t* d0, uint64_t* d1, uint64_t* d2, const uint64_t* x0, const uint64_t* x1,
                          const uint64_t* y0, const uint64_t* y1, const math::Modulus& m, size_t n);
    void (*negate)(uint64_t* d, const uint64_t* x, uint64_t q, size_t n);
    // d = x + w
    void (*add_scalar)(uint64_t* d, const uint64_t* x, uint64_t w, uint64_t q, size_t n);
    // d = x * y
    void (*mul)(uint64_t* d, const uint64_t* x, const uint64_t* y, const math::Modulus& m, size_t n);
    // acc = acc + x * y with one reduction
    void (*mul_add)(uint64_t* acc, const uint64_t* x, const uint64_t* y, const math::Modulus& m, size_t n);
    // d = x * w (Shoup)
    void (*mul_scalar)(uint64_t* d, const uint64_t* x, uint64_t w, uint64_t w_shoup, uint64_t q, size_t n);
    // d = (x - y) * w (Shoup)
    void (*sub_mul_scalar)(uint64_t* d, const uint64_t* x, const uint64_t* y, uint64_t w, uint64_t w_shoup,
                           uint64_t q, size_t n);
    // acc = acc + x * w (Shoup; acc canonical, x any word)
    void (*mul_scalar_add)(uint64_t* acc, const uint64_t* x, uint64_t w, uint64_t w_shoup, uint64_t q, size_t n);
    // d0 = x0*y0, d1 = x0*y1 + x1*y0, d2 = x1*y1 (Karatsuba: three products)
    void (*tensor)(uint64_t* d0, uint64_t* d1, uint64_t* d2, const uint64_t* x0, const uint64_t* x1,
                   const uint64_t* y0, const uint64_t* y1, const math::Modulus& m, size_t n);
    // Two inner products sharing their left operands (the key-switching inner product):
    // o0 = sum_j x_j*y0_j, o1 = sum_j x_j*y1_j over `count` <= kMaxDotTerms terms (DotTerm below),
    // plus the old o0 / o1 when `accumulate` (then o0, o1 canonical on entry), accumulated in 128
    // bits and reduced once (every lazy_product_terms(q) terms for the few primes that need it).
    void (*dot2)(uint64_t* o0, uint64_t* o1, const DotTerm* terms, size_t count, bool accumulate,
                 const math::Modulus& m, size_t n);
    // Base conversion from ONE prime p to the prime of m (hybrid key switching with one-prime
    // digits, ModDown with one special prime, rescale): d = x mod t for x in [0, p), or, when
    // `centered`, the centred representative (x - p if x > p/2) mod t.
    void (*convert_single)(uint64_t* d, const uint64_t* x, uint64_t p, bool centered, const math::Modulus& m,
                           size_t n);
    // The accumulation of fast base conversion into the prime t of m: d = sum_i y_i * w[i]
    // - v * u mod t, where y_i (limb i of y, `stride` words apart) are below y_bound <= 2^62 (the
    // largest source prime: residues), w[i] < t, and v (nullable: no subtraction) are small counts
    // with u < t, u_shoup its Shoup companion. The products are summed in 128 bits and reduced once
    // every 16 terms (the SIMD tables: in 30-bit halves where y_bound and t allow, dot2's form).
    void (*weighted_sum)(uint64_t* d, const uint64_t* y, size_t stride, size_t terms, uint64_t y_bound,
                         const uint64_t* w, const uint8_t* v, uint64_t u, uint64_t u_shoup, const math::Modulus& m,
                         size_t n);
    // The overflow counts of the centred fast base conversion (math::conversion_overflow):
    // v[c] = floor(0.5 + sum_i y_i[c] * inv[i]) in double precision, summed in the order of i
    // with no fused multiply-add, so that every table gives the same counts. y_i: `terms` limbs of
    // residues below 2^62, `stride` words apart; inv[i] = 1 / q_i.
    void (*overflow_counts)(uint8_t* v, const uint64_t* y, size_t stride, size_t terms, const double* inv,
                            size_t n) = overflow_counts_portable;
    // d[k] = x[perm[k]] for perm an automorphism's NTT-form permutation
    // (Ring::automorphism_permutation); d must not alias x. Such a permutation maps every aligned
    // group of 8 slots onto one aligned group of 8 (slot i holds the exponent 2*bitrev(i)+1: the
    // low 3 bits of i are the top 3 of the exponent, and multiplying by an odd g only mixes those
    // among themselves), so the SIMD tables load each source group whole and shuffle it in a
    // register instead of gathering word by word. n: a multiple of 8 for them.
    void (*permute_automorphism)(uint64_t* d, const uint64_t* x, const uint32_t* perm, size_t n) =
        permute_automorphism_portable;
    // d[k] = word begin + k of a switching key's limb of n words stored in `width` bytes each
    // (backend/key_switch_key.hpp, unpack_key_words), k < count: the key inner product unpacks
    // a block of each key limb before it multiplies it.
    void (*unpack_key_words)(uint64_t* d, const uint8_t* limb, size_t n, uint32_t width, size_t begin,
                             size_t count) = unpack_key_words_portable;
};

inline constexpr size_t kMaxDotTerms = 64;

// The table for an instruction set, or nullptr when this CPU (or this build) does not have it.
const EltwiseKernels* eltwise_kernels(Isa isa);

// The fastest table this CPU has, or the scalar one after set_simd_enabled(false).
const EltwiseKernels& eltwise_active();
// Its name: "avx512+ifma", "avx512", "avx2" or "scalar".
const char* eltwise_implementation();

// Per-ISA tables (defined in eltwise_<isa>.cpp; nullptr-returning where not compiled).
const EltwiseKernels& scalar_kernels();
const EltwiseKernels* avx2_kernels();
const EltwiseKernels* avx512_kernels();
const EltwiseKernels* avx512ifma_kernels();

}  // namespace oboro::backend::cpu
