// Hoisted key switching (Halevi-Shoup; Bossuat et al.; Ishimaki-Yamana): many automorphisms of
// the SAME ciphertext share one decomposition (ModUp) of its c1.
//
// Why it works: in NTT form an automorphism X -> X^g is an index permutation that is the same
// for every prime, and it commutes with reduction modulo each prime. So sigma_g of the ModUp'd
// digits of c1 is a valid decomposition of sigma_g(c1) (same digits, same size), and the key
// switch of sigma_g(c1) is <sigma_g(digits), key_g>: a permutation plus an inner product, no
// new ModUp. When the rotated ciphertexts are summed, the inner products are summed over Q*P
// and divided by P once ("lazy ModDown"), so a sum of r rotations costs 1 ModUp, r inner
// products and 1 ModDown instead of r of each.
//
// The Evaluator methods rotate_many and rotate_sum (evaluator.hpp) are the public API; this
// header has the building blocks and the operation counter.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "oboro/ckks/context.hpp"
#include "oboro/ckks/keys.hpp"
#include "oboro/util/buffer.hpp"

namespace oboro::ckks {

// What a key-switching call did, for tests and cost accounting. Functions that take a
// `KeySwitchCounts*` add to it (nullptr: not counted).
struct KeySwitchCounts {
    uint64_t mod_ups = 0;         // decompositions of a c1 (ModUp)
    uint64_t inner_products = 0;  // key inner products, one per automorphism = one per key used
    uint64_t mod_downs = 0;       // ModDowns of a key-switched pair (both halves count as one)

    KeySwitchCounts& operator+=(const KeySwitchCounts& o) {
        mod_ups += o.mod_ups;
        inner_products += o.inner_products;
        mod_downs += o.mod_downs;
        return *this;
    }
    bool operator==(const KeySwitchCounts&) const = default;
};

// The digits of one polynomial (level+1 limbs, NTT form) extended to Q_level*P: the part of a key
// switch that does not depend on the automorphism or the key.
class HoistedDigits {
public:
    HoistedDigits(const Context& ctx, int level, const uint64_t* c1);

    int level() const { return level_; }
    const uint64_t* data() const { return digits_.data(); }

    // acc0/acc1 (ext_limbs(level) limbs each, NTT form) = (or +=, when `accumulate`) the key inner
    // product of sigma_g(digits) with `key`, where `perm` is the automorphism's NTT-form
    // permutation (nullptr: the identity). This is a key switch of sigma_g(c1) without its ModDown.
    void inner_product(const uint32_t* perm, const KeySwitchKey& key, uint64_t* acc0, uint64_t* acc1,
                       bool accumulate);

private:
    const Context& ctx_;
    int level_;
    AlignedBuffer<uint64_t> digits_;           // digits_at(level) x ext_limbs(level) x n
    AlignedBuffer<uint64_t> scratch_;          // the permuted digits (so one HoistedDigits is not
                                               // for concurrent use)
};

// A list of rotation steps as the hoisted functions below take it: the permutations and keys of
// the steps that rotate, and how many identities (steps 0: null permutations in the per-step
// lists) there were.
struct KeyedRotations {
    std::vector<const uint32_t*> perms;
    std::vector<const KeySwitchKey*> keys;
    size_t identities = 0;
    KeyedRotations(const std::vector<const uint32_t*>& step_perms, const std::vector<const KeySwitchKey*>& step_keys);
};

// Rotations of ONE ciphertext (c0, c1) at `level`: rotation r applies the automorphism with
// NTT-form permutation perms[r] and key switches with *keys[r] (none null), into (out0s[r],
// out1s[r]); one ModUp of c1 serves every rotation. Evaluator::rotate_many and the CPU batch
// queue's hoisted rotations (batch_queue.hpp) both run this. Outputs must not alias c0 or c1.
void rotate_hoisted_polys(const Context& ctx, int level, const uint64_t* c0, const uint64_t* c1, size_t rotations,
                          const uint32_t* const* perms, const KeySwitchKey* const* keys, uint64_t* const* out0s,
                          uint64_t* const* out1s);

// The sum of rotations of ONE ciphertext with lazy ModDown (Evaluator::rotate_sum): out =
// sum_r sigma_r(c0, c1) + identities * (c0, c1), where rotation r has permutation perms[r] and
// key *keys[r] (rotations >= 1, none null): one ModUp, `rotations` inner products accumulated
// over Q*P, one ModDown. Evaluator::rotate_sum and the CPU batch queue both run this. Outputs
// must not alias c0 or c1.
void rotate_sum_polys(const Context& ctx, int level, const uint64_t* c0, const uint64_t* c1, size_t rotations,
                      const uint32_t* const* perms, const KeySwitchKey* const* keys, size_t identities, uint64_t* out0,
                      uint64_t* out1);

}  // namespace oboro::ckks
