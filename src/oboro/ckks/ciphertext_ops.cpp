#include "oboro/ckks/ciphertext_ops.hpp"

#include "oboro/backend/cpu/poly_ops.hpp"
#include "oboro/ckks/keyswitch.hpp"

namespace oboro::ckks {

namespace cpu = backend::cpu;

void relinearize_polys(const Context& ctx, int level, const uint64_t* d0, const uint64_t* d1, const uint64_t* d2,
                       const RelinKey& rk, uint64_t* out0, uint64_t* out1, Workspace& ws) {
    const size_t n = ctx.n(), limbs = size_t(level + 1);
    Workspace::Scope scope(ws);
    uint64_t* ks = ws.take(2 * limbs * n);
    key_switch(ctx, level, d2, rk, ks, ks + limbs * n, ws);
    cpu::add(out0, d0, ks, ctx.moduli(), limbs, n);
    cpu::add(out1, d1, ks + limbs * n, ctx.moduli(), limbs, n);
}

void multiply_relin_rescale_polys(const Context& ctx, int level, const uint64_t* a0, const uint64_t* a1,
                                  const uint64_t* b0, const uint64_t* b1, const RelinKey& rk, uint64_t* out0,
                                  uint64_t* out1, Workspace& ws) {
    const size_t n = ctx.n(), nq = size_t(level + 1), ne = ext_limbs(ctx, level);
    Workspace::Scope scope(ws);
    uint64_t* prod = ws.take(3 * nq * n);
    uint64_t* digits = ws.take(digits_at(ctx, level) * ne * n);
    uint64_t* acc = ws.take(2 * ne * n);
    cpu::tensor(prod, prod + nq * n, prod + 2 * nq * n, a0, a1, b0, b1, ctx.moduli(), nq, n);
    mod_up(ctx, level, prod + 2 * nq * n, digits, ws);
    key_inner_product(ctx, level, digits, rk, acc, acc + ne * n);
    uint64_t* outs[2] = {out0, out1};
    for (size_t t = 0; t < 2; ++t) {
        uint64_t* ext = acc + t * ne * n;
        // ext += P * d_t on the ciphertext limbs: then one division by P*q_level does the ModDown
        // and the rescale together.
        cpu::mul_scalar_add(ext, prod + t * nq * n, ctx.p_mod_q().data(), ctx.moduli(), nq, n);
        mod_down_rescale(ctx, level, ext, outs[t], ws);
    }
}

void apply_galois_polys(const Context& ctx, int level, const uint64_t* c0, const uint64_t* c1,
                        const uint32_t* perm, const KeySwitchKey& key, uint64_t* out0, uint64_t* out1,
                        Workspace& ws) {
    const size_t n = ctx.n(), limbs = size_t(level + 1);
    Workspace::Scope scope(ws);
    uint64_t* c1_perm = ws.take(limbs * n);
    uint64_t* ks0 = ws.take(limbs * n);
    cpu::permute(c1_perm, c1, perm, limbs, n);
    key_switch(ctx, level, c1_perm, key, ks0, out1, ws);
    cpu::permute(out0, c0, perm, limbs, n);
    cpu::add(out0, out0, ks0, ctx.moduli(), limbs, n);
}

}  // namespace oboro::ckks
