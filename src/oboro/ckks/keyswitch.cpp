#include "oboro/ckks/keyswitch.hpp"

#include <cstring>
#include <vector>

#include "oboro/backend/cpu/eltwise.hpp"
#include "oboro/backend/cpu/poly_ops.hpp"
#include "oboro/math/modarith.hpp"
#include "oboro/util/buffer.hpp"
#include "oboro/util/parallel.hpp"

namespace oboro::ckks {

namespace cpu = backend::cpu;

void mod_up(const Context& ctx, int level, const uint64_t* c, uint64_t* digits_out) {
    const size_t n = ctx.n(), nq = size_t(level + 1), ne = ext_limbs(ctx, level);
    const auto& digits = ctx.level(level).digits;

    // Coefficient form of every limb, shared by all digits.
    AlignedBuffer<uint64_t> coeff(nq * n);
    std::memcpy(coeff.data(), c, nq * n * sizeof(uint64_t));
    cpu::ntt_inverse(coeff.data(), ctx.ntt_tables(), nq);

    parallel_for(digits.size(), [&](size_t j) {
        const DigitConversion& d = digits[j];
        uint64_t* ext = digits_out + j * ne * n;
        // The digit's own limbs are c itself (already in NTT form).
        std::memcpy(ext + d.begin * n, c + d.begin * n, (d.end - d.begin) * n * sizeof(uint64_t));
        // Every other limb: base conversion of the digit's centred value, then NTT.
        std::vector<uint64_t*> targets;
        std::vector<const math::NttTables*> tables;
        for (size_t i = 0; i < ne; ++i) {
            if (i >= d.begin && i < d.end) continue;
            targets.push_back(ext + i * n);
            tables.push_back(i < nq ? &ctx.ntt_tables()[i] : &ctx.p_ntt_tables()[i - nq]);
        }
        AlignedBuffer<uint64_t> scratch((d.end - d.begin) * n);
        cpu::base_convert(d.to_others, coeff.data() + d.begin * n, n, targets.data(), n, scratch.data(), true);
        for (size_t t = 0; t < targets.size(); ++t) cpu::ntt_forward_limb(targets[t], *tables[t]);
    });
}

void key_inner_product(const Context& ctx, int level, const uint64_t* digits, const KeySwitchKey& key,
                       uint64_t* acc0, uint64_t* acc1, bool accumulate) {
    const size_t n = ctx.n(), nq = size_t(level + 1), ne = ext_limbs(ctx, level);
    const size_t beta = digits_at(ctx, level);
    const cpu::EltwiseKernels& kn = cpu::eltwise_active();
    parallel_for(ne, [&](size_t i) {
        // limb i of the extended basis is limb `ki` of the key (which spans all of Q*P)
        const size_t ki = i < nq ? i : ctx.q_count() + (i - nq);
        const math::Modulus& m = i < nq ? ctx.moduli()[i] : ctx.p_moduli()[i - nq];
        cpu::DotTerm terms[cpu::kMaxDotTerms];
        for (size_t j = 0; j < beta; ++j) terms[j] = {digits + (j * ne + i) * n, key.b(j) + ki * n, key.a(j) + ki * n};
        // beta <= 64 = kMaxDotTerms: the parameters allow at most 64 primes in the chain.
        // Fused multiply-add with a single reduction (paper 004): the beta products are summed
        // in 128 bits and reduced once, in the SIMD table of this CPU.
        kn.dot2(acc0 + i * n, acc1 + i * n, terms, beta, accumulate, m, n);
    });
}

namespace {
enum class Dropped { p, last_q_and_p, last_q };

// Divides x (NTT form over Q_level, followed by the special limbs when P is dropped) by the
// product D of the dropped primes with rounding: the dropped limbs, in coefficient form, are
// converted (centred, so the division rounds) to the kept primes and subtracted, then the
// difference is multiplied by D^{-1}. `out` may alias the front of x.
void divide_and_drop(const Context& ctx, int level, uint64_t* x, uint64_t* out, Dropped dropped) {
    const size_t n = ctx.n(), nq = size_t(level + 1), k = ctx.p_count();
    const LevelConstants& lc = ctx.level(level);
    const bool drop_q = dropped != Dropped::p, drop_p = dropped != Dropped::last_q;
    const size_t kept = drop_q ? nq - 1 : nq, dropped_limbs = (drop_q ? 1 : 0) + (drop_p ? k : 0);
    uint64_t* first_dropped = x + kept * n;
    if (drop_q) cpu::ntt_inverse_limb(first_dropped, ctx.ntt_tables()[level]);
    if (drop_p) cpu::ntt_inverse(x + nq * n, ctx.p_ntt_tables(), k);
    const math::BaseConverter& converter =
        dropped == Dropped::p ? lc.p_to_q : dropped == Dropped::last_q_and_p ? lc.qlp_to_q : lc.ql_to_q;
    const std::vector<uint64_t>& inverse =
        dropped == Dropped::p ? lc.p_inv : dropped == Dropped::last_q_and_p ? lc.qlp_inv : lc.inv_last;
    AlignedBuffer<uint64_t> conv(kept * n), scratch(dropped_limbs * n);
    std::vector<uint64_t*> conv_limbs(kept);
    for (size_t i = 0; i < kept; ++i) conv_limbs[i] = conv.data() + i * n;
    cpu::base_convert(converter, first_dropped, n, conv_limbs.data(), n, scratch.data(), true);
    cpu::ntt_forward(conv.data(), ctx.ntt_tables(), kept);
    cpu::sub_mul_scalar(out, x, conv.data(), inverse.data(), ctx.moduli(), kept, n);
}
}  // namespace

void mod_down(const Context& ctx, int level, uint64_t* ext, uint64_t* out) {
    divide_and_drop(ctx, level, ext, out, Dropped::p);
}

void mod_down_rescale(const Context& ctx, int level, uint64_t* ext, uint64_t* out) {
    divide_and_drop(ctx, level, ext, out, Dropped::last_q_and_p);
}

void rescale_poly(const Context& ctx, int level, uint64_t* poly) {
    divide_and_drop(ctx, level, poly, poly, Dropped::last_q);
}

void key_switch(const Context& ctx, int level, const uint64_t* c, const KeySwitchKey& key, uint64_t* out0,
                uint64_t* out1) {
    const size_t n = ctx.n(), ne = ext_limbs(ctx, level);
    AlignedBuffer<uint64_t> digits(digits_at(ctx, level) * ne * n);
    mod_up(ctx, level, c, digits.data());
    AlignedBuffer<uint64_t> acc(2 * ne * n);
    key_inner_product(ctx, level, digits.data(), key, acc.data(), acc.data() + ne * n);
    mod_down(ctx, level, acc.data(), out0);
    mod_down(ctx, level, acc.data() + ne * n, out1);
}

}  // namespace oboro::ckks
