// Hoisted key switching on the CPU (Halevi-Shoup; Bossuat et al.; Ishimaki-Yamana): many
// automorphisms of the SAME ciphertext share one decomposition (ModUp) of its c1.
//
// Why it works: in NTT form an automorphism X -> X^g is an index permutation that is the same
// for every prime, and it commutes with reduction modulo each prime. So sigma_g of the ModUp'd
// digits of c1 is a valid decomposition of sigma_g(c1) (same digits, same size), and the key
// switch of sigma_g(c1) is <sigma_g(digits), key_g>: a permutation plus an inner product, no
// new ModUp. When the rotated ciphertexts are summed, the inner products are summed over Q*P
// and divided by P once ("lazy ModDown"), so a sum of r rotations costs 1 ModUp, r inner
// products and 1 ModDown instead of r of each.
#pragma once

#include <cstddef>
#include <cstdint>

#include "oboro/backend/key_switch_key.hpp"
#include "oboro/backend/ring.hpp"
#include "oboro/util/workspace.hpp"

namespace oboro::backend::cpu {

// The digits of one polynomial (level+1 limbs, NTT form) extended to Q_level*P (lc: the level and
// its special primes): the part of a key switch that does not depend on the automorphism or the
// key, for the keys over those special primes. The digits are taken from `ws`, so they live until
// the caller's Workspace::Scope ends (the Workspace of the key switches: a hoisted operation
// reuses the memory a key switch has grown, and repeating it allocates nothing).
class HoistedDigits {
public:
    HoistedDigits(const Ring& ring, const LevelConstants& lc, const uint64_t* c1, Workspace& ws);

    // acc0/acc1 (lc.ext_limbs() limbs each, NTT form) = (or +=, when `accumulate`) the key inner
    // product of sigma_g(digits) with `key`, where `perm` is the automorphism's NTT-form
    // permutation (nullptr: the identity). This is a key switch of sigma_g(c1) without its ModDown.
    void inner_product(const uint32_t* perm, const KeySwitchKeyView& key, uint64_t* acc0, uint64_t* acc1,
                       bool accumulate) const;
    // Several of them at once (key_inner_products: each limb of the digits read once for all):
    // product r with perms[r] and *keys[r] into (acc0s[r], acc1s[r]), or all summed into one
    // accumulator when every acc0s[r] is acc0s[0].
    void inner_products(size_t count, const uint32_t* const* perms, const KeySwitchKeyView* const* keys,
                        uint64_t* const* acc0s, uint64_t* const* acc1s) const;

private:
    const Ring& ring_;
    const LevelConstants& lc_;
    const uint64_t* digits_;  // lc.digits.size() x lc.ext_limbs() x n words of the workspace
};

// Rotations of ONE ciphertext (c0, c1) at `level`: rotation r applies the automorphism with
// NTT-form permutation perms[r] and key switches with *keys[r] (none null; all over the same
// special primes), into (out0s[r], out1s[r]); one ModUp of c1 serves every rotation. The CPU queue
// runs it on each element. Outputs must not alias c0 or c1.
void rotate_hoisted_polys(const Ring& ring, int level, const uint64_t* c0, const uint64_t* c1, size_t rotations,
                          const uint32_t* const* perms, const KeySwitchKeyView* const* keys, uint64_t* const* out0s,
                          uint64_t* const* out1s);

// The same rotations kept over Q_level * P, without their ModDowns (double hoisting: the rotated
// ciphertexts are summed with plaintext weights in the extended basis and divided by P once):
// (out0s[r], out1s[r]) (level + 1 + p_count limbs each) = (P * sigma_r(c0) + <sigma_r(digits),
// b_r>, <sigma_r(digits), a_r>); the keys are over all the special primes. Outputs must not alias
// c0 or c1.
void rotate_hoisted_extended_polys(const Ring& ring, int level, const uint64_t* c0, const uint64_t* c1,
                                   size_t rotations, const uint32_t* const* perms,
                                   const KeySwitchKeyView* const* keys, uint64_t* const* out0s,
                                   uint64_t* const* out1s);

// The same rotations of a ciphertext that is itself over Q_level * P (c0, c1: level + 1 +
// p_count limbs each, as double hoisting sums them): c1 divided by P gives the digits, c0 is
// rotated as it is, (out0s[r], out1s[r]) = (sigma_r(c0) + <sigma_r(digits), b_r>,
// <sigma_r(digits), a_r>). The rotation of the ModDown of (c0, c1) lifted back by P, but for c0's
// rounding to a multiple of P, without c0's ModDown and lift. Outputs must not alias c0 or c1.
void rotate_hoisted_from_extended_polys(const Ring& ring, int level, const uint64_t* c0, const uint64_t* c1,
                                        size_t rotations, const uint32_t* const* perms,
                                        const KeySwitchKeyView* const* keys, uint64_t* const* out0s,
                                        uint64_t* const* out1s);

// The sum of rotations of ONE ciphertext with lazy ModDown (rotate_sum): out =
// sum_r sigma_r(c0, c1) + identities * (c0, c1), where rotation r has permutation perms[r] and
// key *keys[r] (rotations >= 1, none null, all over the same special primes): one ModUp,
// `rotations` inner products accumulated
// over Q*P, one ModDown. The CPU queue runs it on each element. Outputs
// must not alias c0 or c1.
void rotate_sum_polys(const Ring& ring, int level, const uint64_t* c0, const uint64_t* c1, size_t rotations,
                      const uint32_t* const* perms, const KeySwitchKeyView* const* keys, size_t identities, uint64_t* out0,
                      uint64_t* out1);

}  // namespace oboro::backend::cpu
