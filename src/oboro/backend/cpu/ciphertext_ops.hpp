// The key-switching operations of ONE ciphertext, on raw polynomials (level+1 limbs each, NTT
// form), written into destinations the caller provides and with scratch from a Workspace. The CPU
// queue (queue.cpp) runs them on each element of a batch.
#pragma once

#include <cstdint>

#include "oboro/backend/key_switch_key.hpp"
#include "oboro/backend/ring.hpp"
#include "oboro/util/workspace.hpp"

namespace oboro::backend::cpu {

// (out0, out1) = (d0, d1) + key_switch(d2): a size-3 ciphertext relinearized. out0/out1 may
// alias d0/d1.
void relinearize_polys(const Ring& ring, int level, const uint64_t* d0, const uint64_t* d1, const uint64_t* d2,
                       const KeySwitchKeyView& rk, uint64_t* out0, uint64_t* out1, Workspace& ws);

// The product of (a0, a1) and (b0, b1), relinearized and rescaled in one go (level >= 1): the
// tensor product goes to scratch, d2 is key-switched, and (P*d_t + ks_t) / (P*q_level) is one
// fused ModDown+rescale per half. out0/out1: `level` limbs each; they must not alias the inputs.
// With an addend (c0, c1 at `level`; null: none), a * b + c: c joins d_0, d_1 before the division,
// which rescales it with the product (multiply_add_relin_rescale); c2 (null: none, a size-2
// addend) joins d_2 before its key switch.
void multiply_relin_rescale_polys(const Ring& ring, int level, const uint64_t* a0, const uint64_t* a1,
                                  const uint64_t* b0, const uint64_t* b1, const KeySwitchKeyView& rk, uint64_t* out0,
                                  uint64_t* out1, Workspace& ws, const uint64_t* c0 = nullptr,
                                  const uint64_t* c1 = nullptr, const uint64_t* c2 = nullptr);

// The automorphism with NTT-form permutation `perm` followed by key switching with `key`:
// (out0, out1) = (sigma(c0) + ks0, ks1) where (ks0, ks1) switches sigma(c1) back to s.
// out0/out1 must not alias c0/c1.
void apply_galois_polys(const Ring& ring, int level, const uint64_t* c0, const uint64_t* c1,
                        const uint32_t* perm, const KeySwitchKeyView& key, uint64_t* out0, uint64_t* out1,
                        Workspace& ws);

// ModRaise of bootstrapping on one polynomial: `in` (1 limb modulo q_0, NTT form) lifted to the
// `out_limbs` limbs q_0 .. q_{out_limbs-1} of `out` (NTT form): every coefficient is taken as its
// centred residue in (-q_0/2, q_0/2], so that a ciphertext raised this way decrypts to
// m + q_0 * I with |I| at most (||s||_1 + 1) / 2 coefficient-wise.
void mod_raise_poly(const Ring& ring, const uint64_t* in, uint64_t* out, size_t out_limbs);

}  // namespace oboro::backend::cpu
