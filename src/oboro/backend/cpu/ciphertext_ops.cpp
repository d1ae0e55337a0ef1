#include "oboro/backend/cpu/ciphertext_ops.hpp"

#include <vector>

#include "oboro/backend/cpu/poly_ops.hpp"
#include "oboro/backend/cpu/keyswitch.hpp"

namespace oboro::backend::cpu {

void relinearize_polys(const Ring& ring, int level, const uint64_t* d0, const uint64_t* d1, const uint64_t* d2,
                       const KeySwitchKeyView& rk, uint64_t* out0, uint64_t* out1, Workspace& ws) {
    const size_t n = ring.n(), limbs = size_t(level + 1);
    Workspace::Scope scope(ws);
    uint64_t* ks = ws.take(2 * limbs * n);
    key_switch(ring, level, d2, rk, ks, ks + limbs * n, ws);
    add(out0, d0, ks, ring.moduli(), limbs, n);
    add(out1, d1, ks + limbs * n, ring.moduli(), limbs, n);
}

void multiply_relin_rescale_polys(const Ring& ring, int level, const uint64_t* a0, const uint64_t* a1,
                                  const uint64_t* b0, const uint64_t* b1, const KeySwitchKeyView& rk, uint64_t* out0,
                                  uint64_t* out1, Workspace& ws, const uint64_t* c0, const uint64_t* c1,
                                  const uint64_t* c2) {
    const LevelConstants& lc = switch_level(ring, level, rk);
    const size_t n = ring.n(), nq = size_t(level + 1), ne = lc.ext_limbs();
    Workspace::Scope scope(ws);
    uint64_t* prod = ws.take(3 * nq * n);
    uint64_t* digits = ws.take(lc.digits.size() * ne * n);
    uint64_t* acc = ws.take(2 * ne * n);
    tensor(prod, prod + nq * n, prod + 2 * nq * n, a0, a1, b0, b1, ring.moduli(), nq, n);
    if (c2) add(prod + 2 * nq * n, prod + 2 * nq * n, c2, ring.moduli(), nq, n);
    mod_up(ring, lc, prod + 2 * nq * n, digits, ws);
    key_inner_product(ring, lc, digits, rk, acc, acc + ne * n);
    uint64_t* outs[2] = {out0, out1};
    const uint64_t* addends[2] = {c0, c1};
    for (size_t t = 0; t < 2; ++t) {
        uint64_t* ext = acc + t * ne * n;
        // ext += P * (d_t + c_t) on the ciphertext limbs: then one division by P*q_level does the
        // ModDown and the rescale together.
        uint64_t* d = prod + t * nq * n;
        if (addends[t]) add(d, d, addends[t], ring.moduli(), nq, n);
        mul_scalar_add(ext, d, lc.p_mod_q.data(), ring.moduli(), nq, n);
        mod_down_rescale(ring, lc, ext, outs[t], ws);
    }
}

void apply_galois_polys(const Ring& ring, int level, const uint64_t* c0, const uint64_t* c1,
                        const uint32_t* perm, const KeySwitchKeyView& key, uint64_t* out0, uint64_t* out1,
                        Workspace& ws) {
    const size_t n = ring.n(), limbs = size_t(level + 1);
    Workspace::Scope scope(ws);
    uint64_t* c1_perm = ws.take(limbs * n);
    uint64_t* ks0 = ws.take(limbs * n);
    permute(c1_perm, c1, perm, limbs, n);
    key_switch(ring, level, c1_perm, key, ks0, out1, ws);
    permute(out0, c0, perm, limbs, n);
    add(out0, out0, ks0, ring.moduli(), limbs, n);
}

void mod_raise_poly(const Ring& ring, const uint64_t* in, uint64_t* out, size_t out_limbs) {
    const size_t n = ring.n();
    const uint64_t q0 = ring.q()[0], half = q0 / 2;
    std::copy(in, in + n, out);  // limb 0 is unchanged
    if (out_limbs == 1) return;
    std::vector<uint64_t> coeffs(in, in + n);
    ntt_inverse_limb(coeffs.data(), ring.ntt_tables()[0]);
    for (size_t i = 1; i < out_limbs; ++i) {
        const uint64_t qi = ring.q()[i], q0_mod_qi = q0 % qi;
        uint64_t* limb = out + i * n;
        for (size_t k = 0; k < n; ++k) {
            const uint64_t x = coeffs[k];
            // x > q0/2 stands for x - q0: x mod qi minus q0 mod qi
            const uint64_t r = x % qi;
            limb[k] = x > half ? (r >= q0_mod_qi ? r - q0_mod_qi : r + qi - q0_mod_qi) : r;
        }
        ntt_forward_limb(limb, ring.ntt_tables()[i]);
    }
}

}  // namespace oboro::backend::cpu
