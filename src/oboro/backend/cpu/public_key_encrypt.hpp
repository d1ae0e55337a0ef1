// Public-key encryption over Q_l * P, one limb at a time: the work of
//   c_i = round((u * pk_i + e_i (+ P * m for c_0)) / P),  i = 0, 1,
// as key switching would do it (u's NTT over Q_l * P, two products, the errors added, two
// divisions by P: keyswitch.hpp, mod_down), but with each ciphertext limb's share done while the
// limb is in cache: u's limb and its NTT, both products, the conversions from P minus the errors
// (which so need no transforms), their NTTs and the divisions. Only the special limbs, which
// every ciphertext limb's conversion reads, are made first (base_convert_prepare). The same words
// as the step-by-step form; the caller's sampling of u, e_0 and e_1 is unchanged.
#pragma once

#include <cstddef>
#include <cstdint>

#include "oboro/backend/ring.hpp"

namespace oboro::backend::cpu {

// u: n ternary coefficients; e0, e1: n error coefficients of magnitude below error_bound;
// message: null, or level + 1 limbs of coefficients (canonical) added to c_0 as P * m before the
// division; pk_b, pk_a: the public key's halves, each over every ciphertext prime and then the
// special ones (pk_q_limbs ciphertext limbs); c0, c1: level + 1 limbs each, NTT form.
void public_key_encrypt(const Ring& ring, const LevelConstants& lc, const int8_t* u, const int64_t* e0,
                        const int64_t* e1, uint64_t error_bound, const uint64_t* message, const uint64_t* pk_b,
                        const uint64_t* pk_a, size_t pk_q_limbs, uint64_t* c0, uint64_t* c1);

}  // namespace oboro::backend::cpu
