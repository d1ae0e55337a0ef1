#include "oboro/backend/cpu/hoisting.hpp"

#include <algorithm>
#include <vector>

#include "oboro/backend/cpu/keyswitch.hpp"
#include "oboro/backend/cpu/poly_ops.hpp"

namespace oboro::backend::cpu {

HoistedDigits::HoistedDigits(const Ring& ring, const LevelConstants& lc, const uint64_t* c1, Workspace& ws)
    : ring_(ring), lc_(lc) {
    uint64_t* digits = ws.take(lc.digits.size() * lc.ext_limbs() * ring.n());
    mod_up(ring, lc, c1, digits, ws);
    digits_ = digits;
}

void HoistedDigits::inner_product(const uint32_t* perm, const KeySwitchKeyView& key, uint64_t* acc0, uint64_t* acc1,
                                  bool accumulate) const {
    // accumulate: the key's products are added to acc0/acc1 inside the inner product's single
    // reduction (no separate sum and add pass); perm: every limb of every digit is permuted the
    // same way (the NTT-form permutation does not depend on the prime), limb by limb inside it
    key_inner_product(ring_, lc_, digits_, key, acc0, acc1, accumulate, perm);
}

void HoistedDigits::inner_products(size_t count, const uint32_t* const* perms, const KeySwitchKeyView* const* keys,
                                   uint64_t* const* acc0s, uint64_t* const* acc1s) const {
    key_inner_products(ring_, lc_, digits_, count, perms, keys, acc0s, acc1s);
}

void rotate_hoisted_polys(const Ring& ring, int level, const uint64_t* c0, const uint64_t* c1, size_t rotations,
                          const uint32_t* const* perms, const KeySwitchKeyView* const* keys, uint64_t* const* out0s,
                          uint64_t* const* out1s) {
    const LevelConstants& lc = switch_level(ring, level, *keys[0]);
    const size_t n = ring.n(), limbs = size_t(level + 1), ne = lc.ext_limbs();
    auto ws = scratch_pool().acquire();
    Workspace::Scope scope(*ws);
    const HoistedDigits digits(ring, lc, c1, *ws);  // first, as a key switch takes its digits
    uint64_t* acc = ws->take(2 * ne * n);
    uint64_t* ks0 = ws->take(limbs * n);
    for (size_t r = 0; r < rotations; ++r) {
        digits.inner_product(perms[r], *keys[r], acc, acc + ne * n, false);
        mod_down(ring, lc, acc, ks0, *ws);
        mod_down(ring, lc, acc + ne * n, out1s[r], *ws);
        permute(out0s[r], c0, perms[r], limbs, n);
        add(out0s[r], out0s[r], ks0, ring.moduli(), limbs, n);
    }
}

void rotate_hoisted_extended_polys(const Ring& ring, int level, const uint64_t* c0, const uint64_t* c1,
                                   size_t rotations, const uint32_t* const* perms,
                                   const KeySwitchKeyView* const* keys, uint64_t* const* out0s,
                                   uint64_t* const* out1s) {
    const size_t n = ring.n(), limbs = size_t(level + 1);
    auto ws = scratch_pool().acquire();
    Workspace::Scope scope(*ws);
    const HoistedDigits digits(ring, ring.level(level), c1, *ws);
    uint64_t* rotated = ws->take(limbs * n);
    digits.inner_products(rotations, perms, keys, out0s, out1s);
    for (size_t r = 0; r < rotations; ++r) {
        permute(rotated, c0, perms[r], limbs, n);
        mul_scalar_add(out0s[r], rotated, ring.p_mod_q().data(), ring.moduli(), limbs, n);
    }
}

void rotate_hoisted_from_extended_polys(const Ring& ring, int level, const uint64_t* c0, const uint64_t* c1,
                                        size_t rotations, const uint32_t* const* perms,
                                        const KeySwitchKeyView* const* keys, uint64_t* const* out0s,
                                        uint64_t* const* out1s) {
    const LevelConstants& lc = ring.level(level);
    const size_t n = ring.n(), limbs = size_t(level + 1), special = ring.p_count(), ne = lc.ext_limbs();
    auto ws = scratch_pool().acquire();
    Workspace::Scope scope(*ws);
    // mod_down takes the special limbs as scratch: a copy of c1's, the input stays unchanged
    uint64_t* c1_special = ws->take(special * n);
    std::copy_n(c1 + limbs * n, special * n, c1_special);
    uint64_t* c1_down = ws->take(limbs * n);
    mod_down(ring, lc, c1, c1_special, c1_down, *ws);
    const HoistedDigits digits(ring, lc, c1_down, *ws);
    digits.inner_products(rotations, perms, keys, out0s, out1s);
    uint64_t* rotated = ws->take(ne * n);
    for (size_t r = 0; r < rotations; ++r) {
        permute(rotated, c0, perms[r], ne, n);
        add(out0s[r], out0s[r], rotated, ring.moduli(), limbs, n);
        add(out0s[r] + limbs * n, out0s[r] + limbs * n, rotated + limbs * n, ring.p_moduli(), special, n);
    }
}

void rotate_sum_polys(const Ring& ring, int level, const uint64_t* c0, const uint64_t* c1, size_t rotations,
                      const uint32_t* const* perms, const KeySwitchKeyView* const* keys, size_t identities, uint64_t* out0,
                      uint64_t* out1) {
    const LevelConstants& lc = switch_level(ring, level, *keys[0]);
    const size_t n = ring.n(), limbs = size_t(level + 1), ne = lc.ext_limbs();
    // out = (sum_r sigma_r(c0), 0) + ModDown(sum_r <sigma_r(digits), key_r>) + identities * (c0, c1)
    auto ws = scratch_pool().acquire();
    Workspace::Scope scope(*ws);
    const HoistedDigits digits(ring, lc, c1, *ws);
    uint64_t* acc = ws->take(2 * ne * n);
    uint64_t* tmp = ws->take(limbs * n);
    for (size_t r = 0; r < rotations; ++r) {
        permute(r == 0 ? out0 : tmp, c0, perms[r], limbs, n);
        if (r > 0) add(out0, out0, tmp, ring.moduli(), limbs, n);
    }
    const std::vector<uint64_t*> acc0s(rotations, acc), acc1s(rotations, acc + ne * n);  // one sum
    digits.inner_products(rotations, perms, keys, acc0s.data(), acc1s.data());
    mod_down(ring, lc, acc, tmp, *ws);
    mod_down(ring, lc, acc + ne * n, out1, *ws);
    add(out0, out0, tmp, ring.moduli(), limbs, n);
    for (size_t i = 0; i < identities; ++i) {
        add(out0, out0, c0, ring.moduli(), limbs, n);
        add(out1, out1, c1, ring.moduli(), limbs, n);
    }
}

}  // namespace oboro::backend::cpu
