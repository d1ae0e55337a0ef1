// CPU kernels over RNS polynomials stored limb-major: limb i of a polynomial is the n words at
// data + i*n, reduced modulo mods[i]. Every kernel works on `limbs` limbs at once and spreads
// them over the thread pool; all inputs and outputs are canonical residues in [0, q) unless a
// kernel says otherwise. Output may alias an input.
#pragma once

#include <cstddef>
#include <cstdint>

#include "oboro/backend/cpu/eltwise.hpp"
#include "oboro/math/modarith.hpp"
#include "oboro/math/ntt.hpp"
#include "oboro/math/rns.hpp"

namespace oboro::backend::cpu {

using math::Modulus;
using math::NttTables;

// One limb of n signed words, each of magnitude at most `bound`: out[k] = in[k] mod q in [0, q),
// without a branch per word (the words are secret, or random signs that would defeat the branch
// predictor). With the bound below q a negative word only needs q added, which the compiler
// vectorizes; otherwise each word is reduced (math::reduce_signed).
template <typename T>
void signed_to_limb(const T* __restrict in, uint64_t bound, const Modulus& m, uint64_t* __restrict out, size_t n) {
    const uint64_t q = m.value;
    if (bound < q) {
        for (size_t k = 0; k < n; ++k) {
            const int64_t x = int64_t(in[k]);
            out[k] = uint64_t(x) + (q & uint64_t(x >> 63));
        }
    } else {
        for (size_t k = 0; k < n; ++k) out[k] = math::reduce_signed(int64_t(in[k]), m.barrett);
    }
}

void add(uint64_t* dst, const uint64_t* a, const uint64_t* b, const Modulus* mods, size_t limbs, size_t n);
void sub(uint64_t* dst, const uint64_t* a, const uint64_t* b, const Modulus* mods, size_t limbs, size_t n);
void negate(uint64_t* dst, const uint64_t* a, const Modulus* mods, size_t limbs, size_t n);
// Element-wise additions and subtractions whose output is at least this large, and does not
// alias an input, write it with streaming stores (EltwiseKernels::add_stream): such an output does
// not stay in the caches anyway, and ordinary stores would first read every line of it (a third
// more memory traffic for an operation bound by it: 1.6x slower at S4's 14 MiB ciphertexts).
inline constexpr size_t kStreamingBytes = size_t(8) << 20;
// Element-wise kernels on fewer words than this (all limbs together) run on the caller: cheaper
// than waking a thread of the pool.
inline constexpr size_t kParallelWords = size_t(1) << 15;
bool use_streaming_stores(size_t output_bytes, const void* dst, const void* a, const void* b);

// dst = a * b
void mul(uint64_t* dst, const uint64_t* a, const uint64_t* b, const Modulus* mods, size_t limbs, size_t n);
// dst += a * b
void mul_add(uint64_t* dst, const uint64_t* a, const uint64_t* b, const Modulus* mods, size_t limbs, size_t n);
// dst = a * s[i] on limb i (s[i] canonical mod q_i)
void mul_scalar(uint64_t* dst, const uint64_t* a, const uint64_t* s, const Modulus* mods, size_t limbs, size_t n);
// acc += a * s[i] on limb i (acc canonical)
void mul_scalar_add(uint64_t* acc, const uint64_t* a, const uint64_t* s, const Modulus* mods, size_t limbs, size_t n);
// dst = a + s[i] on limb i
void add_scalar(uint64_t* dst, const uint64_t* a, const uint64_t* s, const Modulus* mods, size_t limbs, size_t n);
// dst = (a - b) * s[i] on limb i
void sub_mul_scalar(uint64_t* dst, const uint64_t* a, const uint64_t* b, const uint64_t* s, const Modulus* mods,
                    size_t limbs, size_t n);

// Tensor product of two degree-1 ciphertexts in NTT form (Karatsuba: 3 multiplications):
// d0 = a0*b0, d1 = a0*b1 + a1*b0, d2 = a1*b1. Each operand is `limbs` limbs.
void tensor(uint64_t* d0, uint64_t* d1, uint64_t* d2, const uint64_t* a0, const uint64_t* a1, const uint64_t* b0,
            const uint64_t* b1, const Modulus* mods, size_t limbs, size_t n);

// In-place NTT of one limb, with the fastest implementation this CPU has (bit-for-bit the same
// result as math::ntt_forward / ntt_inverse).
void ntt_forward_limb(uint64_t* a, const NttTables& table);
void ntt_inverse_limb(uint64_t* a, const NttTables& table);

// The transforms instruction set `isa` (eltwise.hpp) runs for the prime q, which
// ntt_*_limb call for the active one: the scalar code; the AVX2 kernels for avx2; the 64-bit
// AVX-512 kernels for avx512, and for avx512ifma when q >= 2^kIfmaModulusBits; the IFMA kernels
// for avx512ifma below. The ISA must run on this CPU; benchmarks time each one.
struct NttFunctions {
    void (*forward)(uint64_t* a, const NttTables& table) = nullptr;
    void (*inverse)(uint64_t* a, const NttTables& table) = nullptr;
};
NttFunctions ntt_functions(Isa isa, uint64_t q);

// In-place NTTs of `limbs` limbs; tables[i] belongs to limb i.
void ntt_forward(uint64_t* data, const NttTables* tables, size_t limbs);
void ntt_inverse(uint64_t* data, const NttTables* tables, size_t limbs);

// dst[i][k] = src[i][perm[k]] for every limb: the automorphism X -> X^g in NTT form, perm from
// Ring::automorphism_permutation (EltwiseKernels::permute_automorphism relies on its structure).
// dst must not alias src.
void permute(uint64_t* dst, const uint64_t* src, const uint32_t* perm, size_t limbs, size_t n);

// Fast base conversion of coefficient-form limbs (math::BaseConverter; `centered` selects
// convert_centered) with this CPU's SIMD kernels: a conversion from one prime converts each word
// directly (the common case of one-prime digits and one special prime); from several, the inputs
// are scaled by the punctured inverses and (centred) their overflow counts found once, then each
// output limb is a weighted sum of the scaled inputs. Output limb j goes to outs[j]; scratch:
// base_convert_scratch_words(converter.from().size(), n) words (the caller's, so that a conversion
// allocates nothing: it runs per ciphertext inside key switching).
constexpr size_t base_convert_scratch_words(size_t from_limbs, size_t n) {
    return from_limbs * n + (n + 7) / 8;  // the scaled inputs, then one byte per coefficient (overflow counts)
}
void base_convert(const math::BaseConverter& converter, const uint64_t* in, size_t in_stride, uint64_t* const* outs,
                  size_t n, uint64_t* scratch, bool centered);
// base_convert in its two halves, for a caller that makes each output limb with its own other
// work while that limb is in cache (public-key encryption): base_convert_prepare fills scratch
// from `in` once (nothing for a conversion from one prime), then base_convert_limb makes output
// limb j from `in` and the prepared scratch, for any j in any order.
void base_convert_prepare(const math::BaseConverter& converter, const uint64_t* in, size_t in_stride, size_t n,
                          uint64_t* scratch, bool centered);
void base_convert_limb(const math::BaseConverter& converter, size_t j, const uint64_t* in, const uint64_t* scratch,
                       uint64_t* out, size_t n, bool centered);

// Every limb of dst gets src (a limb of coefficients < 2^62, reduced mod each dst modulus).
void broadcast_reduce(uint64_t* dst, const uint64_t* src, const Modulus* mods, size_t limbs, size_t n);

}  // namespace oboro::backend::cpu
