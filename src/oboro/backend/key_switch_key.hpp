// A hybrid key-switching key as the kernels read it: a view of its words and their layout, with no
// CKKS types. ckks::KeySwitchKey (ckks/keys.hpp) owns the words and hands out this view.
//
// Layout: [digit][b, a][limb][n]: for each digit j the polynomials b_j then a_j, each of qp_limbs
// limbs in NTT form: the key's ciphertext primes q_0 .. q_{qp_limbs - special - 1} (all of Q, or
// the first ones for a key made at a lower level), then its `special` special primes p_0 ..
// p_{special-1} (all of the ring's, or the first ones for a key made over a part of P).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace oboro::backend {

struct KeySwitchKeyView {
    const uint64_t* data = nullptr;
    size_t digits = 0;
    size_t qp_limbs = 0;
    size_t n = 0;
    // Identifies the key's contents for caches (a device's copy of the key): two views with the
    // same non-zero uid have the same words. 0: unknown, never cached.
    uint64_t uid = 0;
    size_t special = 0;
    // Expires when every copy of the key is gone (ckks::KeySwitchKey::alive): a cache's copy of
    // the words may go then. Empty for a view without a uid.
    std::weak_ptr<const void> alive;

    const uint64_t* b(size_t digit) const { return data + (2 * digit) * qp_limbs * n; }
    const uint64_t* a(size_t digit) const { return data + (2 * digit + 1) * qp_limbs * n; }
    size_t words() const { return 2 * digits * qp_limbs * n; }
    // The key's ciphertext limbs (its level + 1).
    size_t q_limbs() const { return qp_limbs - special; }
    // The key limb that holds limb i of a polynomial extended to Q_level * P' (level + 1 ciphertext
    // limbs, then the key's special limbs).
    size_t key_limb(size_t i, int level) const {
        const size_t nq = size_t(level + 1);
        return i < nq ? i : q_limbs() + (i - nq);
    }
};

}  // namespace oboro::backend
