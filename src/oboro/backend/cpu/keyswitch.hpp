// Hybrid key switching (Han-Ki; Bossuat et al.), in three steps that later optimisations
// (hoisting, batching, GPU) reuse separately:
//   mod_up:         split c (NTT form over Q_l) into its digits and extend each digit to Q_l*P
//   inner_product:  (acc0, acc1) = sum_j digit_j * (b_j, a_j), one reduction per coefficient
//   mod_down:       divide by P with rounding, back to Q_l
// Extended polynomials ("ext") have l+1 ciphertext limbs followed by the special-prime limbs.
// The steps take the level's constants (ring.hpp: LevelConstants), which name the level and the
// special primes P of the basis: all of the ring's (Ring::level), or the first ones for a key made
// over a part of them (Ring::key_switch_level(level, key.special)).
//
// Each step takes its scratch memory from a Workspace (util/workspace.hpp), so that a loop of key
// switches over many ciphertexts allocates nothing once the workspace has grown; the overloads
// without one use a workspace lent by scratch_pool().
#pragma once

#include <cstddef>
#include <cstdint>

#include "oboro/backend/key_switch_key.hpp"
#include "oboro/backend/ring.hpp"
#include "oboro/util/workspace.hpp"

namespace oboro::backend::cpu {

// The constants of a key switch of a ciphertext at `level` with `key`: over its special primes.
inline const LevelConstants& switch_level(const Ring& ring, int level, const KeySwitchKeyView& key) {
    return ring.key_switch_level(level, key.special);
}

// c: level+1 limbs in NTT form. digits_out: lc.digits.size() extended polynomials (lc.ext_limbs()
// limbs each), NTT form.
void mod_up(const Ring& ring, const LevelConstants& lc, const uint64_t* c, uint64_t* digits_out, Workspace& ws);
void mod_up(const Ring& ring, const LevelConstants& lc, const uint64_t* c, uint64_t* digits_out);

// (acc0, acc1) = sum_j digit_j * (b_j, a_j) over the digits of `key` (lc.ext_limbs() limbs each,
// NTT form; the key's special primes are lc's), or acc += that sum when `accumulate` (acc
// canonical on entry): in both cases all products of a coefficient and the old value are summed
// in 128 bits and reduced once. With `perm` (an automorphism's NTT-form permutation), the digits
// are those of sigma(digits): each limb's digits are permuted into a buffer of one limb per digit
// just before its products, where they are still in cache (hoisted rotations, hoisting.hpp),
// instead of a permuted copy of all the digits written out and read back.
void key_inner_product(const Ring& ring, const LevelConstants& lc, const uint64_t* digits, const KeySwitchKeyView& key,
                       uint64_t* acc0, uint64_t* acc1, bool accumulate = false, const uint32_t* perm = nullptr);
// `count` such products of the same digits (hoisted rotations): product r with perms[r] (perms
// null, or an entry null: no permutation) and *keys[r] into (acc0s[r], acc1s[r]). Limb by limb,
// every product of a limb before the next limb, so that the digits' limbs are read from memory
// once for all the products instead of once per product. When acc0s[r] is acc0s[0] (and acc1s[r]
// acc1s[0]) for r > 0, the products are a sum: product 0 writes (or adds, when `accumulate`) and
// the later ones add.
void key_inner_products(const Ring& ring, const LevelConstants& lc, const uint64_t* digits, size_t count,
                        const uint32_t* const* perms, const KeySwitchKeyView* const* keys, uint64_t* const* acc0s,
                        uint64_t* const* acc1s, bool accumulate = false);

// ext: lc.ext_limbs() limbs in NTT form (its special limbs are used as scratch).
// out: level+1 limbs, NTT form, equal to round(ext / P) (exactly: the special part is taken as
// its centred representative). `out` may alias the front of `ext`.
void mod_down(const Ring& ring, const LevelConstants& lc, uint64_t* ext, uint64_t* out, Workspace& ws);
void mod_down(const Ring& ring, const LevelConstants& lc, uint64_t* ext, uint64_t* out);
// The same with ext's Q_level limbs at `q_limbs` (only read) and its special limbs at `special`
// (taken as scratch): an ext that must stay unchanged costs a copy of its special limbs alone.
void mod_down(const Ring& ring, const LevelConstants& lc, const uint64_t* q_limbs, uint64_t* special, uint64_t* out,
              Workspace& ws);
// ModDown fused with rescaling (level >= 1): out = round(ext / (q_level * P)) over Q_{level-1}.
// Used by multiply-relinearize-rescale: it saves the separate rescale's transforms.
void mod_down_rescale(const Ring& ring, const LevelConstants& lc, uint64_t* ext, uint64_t* out, Workspace& ws);
// The same with ext's first `level` limbs at `kept` (only read) and its dropped limbs, q_level
// then the special ones, at `dropped` (taken as scratch).
void mod_down_rescale(const Ring& ring, const LevelConstants& lc, const uint64_t* kept, uint64_t* dropped,
                      uint64_t* out, Workspace& ws);

// The rescale of one polynomial (level >= 1, level+1 limbs in NTT form, overwritten):
// round(poly / q_level) over Q_{level-1}, in its first `level` limbs. The same division by
// dropped primes as mod_down, with q_level as the only dropped prime.
void rescale_poly(const Ring& ring, int level, uint64_t* poly, Workspace& ws);
// The same from `in` (left unchanged) into `out` (`level` limbs; must not alias `in`).
void rescale_poly(const Ring& ring, int level, const uint64_t* in, uint64_t* out, Workspace& ws);
void rescale_poly(const Ring& ring, int level, uint64_t* poly);

// The whole key switch: (out0, out1) with out0 + out1*s ~ c*s' where key switches s' -> s.
void key_switch(const Ring& ring, int level, const uint64_t* c, const KeySwitchKeyView& key, uint64_t* out0,
                uint64_t* out1, Workspace& ws);
void key_switch(const Ring& ring, int level, const uint64_t* c, const KeySwitchKeyView& key, uint64_t* out0,
                uint64_t* out1);

}  // namespace oboro::backend::cpu
