#include "oboro/ckks/hoisting.hpp"

#include <sstream>

#include "oboro/backend/cpu/poly_ops.hpp"
#include "oboro/ckks/evaluator.hpp"
#include "oboro/ckks/keyswitch.hpp"
#include "oboro/util/error.hpp"

namespace oboro::ckks {

namespace cpu = backend::cpu;

HoistedDigits::HoistedDigits(const Context& ctx, int level, const uint64_t* c1)
    : ctx_(ctx), level_(level), digits_(digits_at(ctx, level) * ext_limbs(ctx, level) * ctx.n()) {
    mod_up(ctx, level, c1, digits_.data());
}

void HoistedDigits::inner_product(const uint32_t* perm, const KeySwitchKey& key, uint64_t* acc0, uint64_t* acc1,
                                  bool accumulate) {
    const uint64_t* digits = digits_.data();
    if (perm) {
        // Every limb of every digit is permuted the same way: the NTT-form permutation does not
        // depend on the prime. (A permuted copy, then contiguous loads, measured faster than
        // gathering the digits inside the inner product.)
        const size_t n = ctx_.n(), digit_limbs = digits_at(ctx_, level_) * ext_limbs(ctx_, level_);
        if (scratch_.empty()) scratch_ = AlignedBuffer<uint64_t>(digit_limbs * n);
        cpu::permute(scratch_.data(), digits_.data(), perm, digit_limbs, n);
        digits = scratch_.data();
    }
    // accumulate: the key's products are added to acc0/acc1 inside the inner product's single
    // reduction (no separate sum and add pass)
    key_inner_product(ctx_, level_, digits, key, acc0, acc1, accumulate);
}

// ---- Evaluator: hoisted rotations ------------------------------------------------------------

std::vector<uint64_t> Evaluator::check_rotations(const char* op, const Ciphertext& a, const std::vector<int64_t>& steps,
                                                 const GaloisKeys& keys) const {
    check_context(op, a, "a");
    check_size2(op, a, "a");
    if (keys.context_id != 0 && keys.context_id != ctx_->id())
        raise<ContextMismatch>(op, ": the Galois keys belong to another parameter set (operand 'a' at ", describe(a), ")");
    std::vector<uint64_t> elements;
    std::ostringstream missing;
    size_t n_missing = 0;
    for (int64_t s : steps) {
        check_step(op, a, s);
        const uint64_t g = s == 0 ? 1 : ctx_->galois_element(s);
        if (g != 1 && !keys.has(g)) missing << (n_missing++ ? ", " : "") << s;
        elements.push_back(g);
    }
    if (n_missing)
        raise<MissingKey>(op, ": no Galois key for the rotation", n_missing > 1 ? "s" : "", " by ", missing.str(),
                          " of operand 'a' (", describe(a), "); generate them with galois_keys({", missing.str(), "})");
    return elements;
}

std::vector<Ciphertext> Evaluator::rotate_many(const Ciphertext& a, const std::vector<int64_t>& steps,
                                               const GaloisKeys& keys, KeySwitchCounts* counts) const {
    const std::vector<uint64_t> elements = check_rotations("rotate_many", a, steps, keys);
    const Context& ctx = *ctx_;
    const size_t n = ctx.n(), limbs = a.limbs(), ne = ext_limbs(ctx, a.level());
    std::vector<Ciphertext> out;
    out.reserve(steps.size());
    bool any_key = false;
    for (uint64_t g : elements) any_key |= g != 1;
    if (!any_key) {
        for (size_t i = 0; i < steps.size(); ++i) out.push_back(a);
        return out;
    }
    HoistedDigits digits(ctx, a.level(), a.poly(1));
    AlignedBuffer<uint64_t> acc(2 * ne * n), ks0(limbs * n);
    for (uint64_t g : elements) {
        if (g == 1) {
            out.push_back(a);
            continue;
        }
        const uint32_t* perm = ctx.automorphism_permutation(g).data();
        Ciphertext r(ctx, 2, a.level(), a.scale(), a.slots());
        digits.inner_product(perm, keys.keys.at(g), acc.data(), acc.data() + ne * n, false);
        mod_down(ctx, a.level(), acc.data(), ks0.data());
        mod_down(ctx, a.level(), acc.data() + ne * n, r.poly(1));
        cpu::permute(r.poly(0), a.poly(0), perm, limbs, n);
        cpu::add(r.poly(0), r.poly(0), ks0.data(), ctx.moduli(), limbs, n);
        out.push_back(std::move(r));
        if (counts) counts->inner_products++, counts->mod_downs++;
    }
    if (counts) counts->mod_ups++;
    return out;
}

Ciphertext Evaluator::rotate_sum(const Ciphertext& a, const std::vector<int64_t>& steps, const GaloisKeys& keys,
                                 KeySwitchCounts* counts) const {
    const std::vector<uint64_t> elements = check_rotations("rotate_sum", a, steps, keys);
    if (steps.empty()) raise<ValueError>("rotate_sum: no steps given for operand 'a' (", describe(a), ")");
    const Context& ctx = *ctx_;
    const size_t n = ctx.n(), limbs = a.limbs(), ne = ext_limbs(ctx, a.level());
    // out = (sum_g sigma_g(c0), 0) + ModDown(sum_g <sigma_g(digits), key_g>) + (identity terms)
    Ciphertext out(ctx, 2, a.level(), a.scale(), a.slots());
    AlignedBuffer<uint64_t> tmp(limbs * n);
    size_t identities = 0;
    bool first = true;
    for (uint64_t g : elements) {
        if (g == 1) {
            ++identities;
            continue;
        }
        cpu::permute(first ? out.poly(0) : tmp.data(), a.poly(0), ctx.automorphism_permutation(g).data(), limbs, n);
        if (!first) cpu::add(out.poly(0), out.poly(0), tmp.data(), ctx.moduli(), limbs, n);
        first = false;
    }
    if (first) {  // only identities: a times their number, exactly
        out = multiply_integer(a, int64_t(identities));
        return out;
    }
    HoistedDigits digits(ctx, a.level(), a.poly(1));
    AlignedBuffer<uint64_t> acc(2 * ne * n);
    first = true;
    for (uint64_t g : elements) {
        if (g == 1) continue;
        digits.inner_product(ctx.automorphism_permutation(g).data(), keys.keys.at(g), acc.data(), acc.data() + ne * n,
                             !first);
        first = false;
        if (counts) counts->inner_products++;
    }
    mod_down(ctx, a.level(), acc.data(), tmp.data());
    mod_down(ctx, a.level(), acc.data() + ne * n, out.poly(1));
    cpu::add(out.poly(0), out.poly(0), tmp.data(), ctx.moduli(), limbs, n);
    for (size_t i = 0; i < identities; ++i) {
        cpu::add(out.poly(0), out.poly(0), a.poly(0), ctx.moduli(), limbs, n);
        cpu::add(out.poly(1), out.poly(1), a.poly(1), ctx.moduli(), limbs, n);
    }
    if (counts) counts->mod_ups++, counts->mod_downs++;
    return out;
}

}  // namespace oboro::ckks
