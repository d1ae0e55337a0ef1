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

KeyedRotations::KeyedRotations(const std::vector<const uint32_t*>& step_perms,
                               const std::vector<const KeySwitchKey*>& step_keys) {
    for (size_t r = 0; r < step_perms.size(); ++r) {
        if (!step_perms[r]) {
            ++identities;
            continue;
        }
        perms.push_back(step_perms[r]);
        keys.push_back(step_keys[r]);
    }
}

void rotate_hoisted_polys(const Context& ctx, int level, const uint64_t* c0, const uint64_t* c1, size_t rotations,
                          const uint32_t* const* perms, const KeySwitchKey* const* keys, uint64_t* const* out0s,
                          uint64_t* const* out1s) {
    const size_t n = ctx.n(), limbs = size_t(level + 1), ne = ext_limbs(ctx, level);
    HoistedDigits digits(ctx, level, c1);
    AlignedBuffer<uint64_t> acc(2 * ne * n), ks0(limbs * n);
    for (size_t r = 0; r < rotations; ++r) {
        digits.inner_product(perms[r], *keys[r], acc.data(), acc.data() + ne * n, false);
        mod_down(ctx, level, acc.data(), ks0.data());
        mod_down(ctx, level, acc.data() + ne * n, out1s[r]);
        cpu::permute(out0s[r], c0, perms[r], limbs, n);
        cpu::add(out0s[r], out0s[r], ks0.data(), ctx.moduli(), limbs, n);
    }
}

void rotate_sum_polys(const Context& ctx, int level, const uint64_t* c0, const uint64_t* c1, size_t rotations,
                      const uint32_t* const* perms, const KeySwitchKey* const* keys, size_t identities, uint64_t* out0,
                      uint64_t* out1) {
    const size_t n = ctx.n(), limbs = size_t(level + 1), ne = ext_limbs(ctx, level);
    // out = (sum_r sigma_r(c0), 0) + ModDown(sum_r <sigma_r(digits), key_r>) + identities * (c0, c1)
    AlignedBuffer<uint64_t> tmp(limbs * n), acc(2 * ne * n);
    for (size_t r = 0; r < rotations; ++r) {
        cpu::permute(r == 0 ? out0 : tmp.data(), c0, perms[r], limbs, n);
        if (r > 0) cpu::add(out0, out0, tmp.data(), ctx.moduli(), limbs, n);
    }
    HoistedDigits digits(ctx, level, c1);
    for (size_t r = 0; r < rotations; ++r)
        digits.inner_product(perms[r], *keys[r], acc.data(), acc.data() + ne * n, r > 0);
    mod_down(ctx, level, acc.data(), tmp.data());
    mod_down(ctx, level, acc.data() + ne * n, out1);
    cpu::add(out0, out0, tmp.data(), ctx.moduli(), limbs, n);
    for (size_t i = 0; i < identities; ++i) {
        cpu::add(out0, out0, c0, ctx.moduli(), limbs, n);
        cpu::add(out1, out1, c1, ctx.moduli(), limbs, n);
    }
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

namespace {
// The per-step permutations and keys of checked Galois elements (element 1, a step 0: null).
void galois_of_elements(const Context& ctx, const std::vector<uint64_t>& elements, const GaloisKeys& keys,
                               std::vector<const uint32_t*>& perms, std::vector<const KeySwitchKey*>& key_of) {
    perms.assign(elements.size(), nullptr);
    key_of.assign(elements.size(), nullptr);
    for (size_t i = 0; i < elements.size(); ++i) {
        if (elements[i] == 1) continue;
        perms[i] = ctx.automorphism_permutation(elements[i]).data();
        key_of[i] = &keys.keys.at(elements[i]);
    }
}
}  // namespace

std::vector<Ciphertext> Evaluator::rotate_many(const Ciphertext& a, const std::vector<int64_t>& steps,
                                               const GaloisKeys& keys, KeySwitchCounts* counts) const {
    const Context& ctx = *ctx_;
    std::vector<const uint32_t*> perms;
    std::vector<const KeySwitchKey*> key_of;
    galois_of_elements(ctx, check_rotations("rotate_many", a, steps, keys), keys, perms, key_of);
    const KeyedRotations keyed(perms, key_of);
    // outputs allocated up front: a copy for each step 0, a fresh ciphertext for each rotation
    std::vector<Ciphertext> out;
    out.reserve(steps.size());
    for (size_t i = 0; i < steps.size(); ++i) {
        if (perms[i]) out.emplace_back(ctx, 2, a.level(), a.scale(), a.slots());
        else out.push_back(a);
    }
    if (keyed.perms.empty()) return out;
    std::vector<uint64_t*> out0s, out1s;
    for (size_t i = 0; i < steps.size(); ++i)
        if (perms[i]) out0s.push_back(out[i].mutable_poly(0)), out1s.push_back(out[i].mutable_poly(1));
    rotate_hoisted_polys(ctx, a.level(), a.poly(0), a.poly(1), keyed.perms.size(), keyed.perms.data(),
                         keyed.keys.data(), out0s.data(), out1s.data());
    if (counts) counts->mod_ups++, counts->inner_products += keyed.perms.size(), counts->mod_downs += keyed.perms.size();
    return out;
}

Ciphertext Evaluator::rotate_sum(const Ciphertext& a, const std::vector<int64_t>& steps, const GaloisKeys& keys,
                                 KeySwitchCounts* counts) const {
    const std::vector<uint64_t> elements = check_rotations("rotate_sum", a, steps, keys);
    if (steps.empty()) raise<ValueError>("rotate_sum: no steps given for operand 'a' (", describe(a), ")");
    const Context& ctx = *ctx_;
    std::vector<const uint32_t*> perms;
    std::vector<const KeySwitchKey*> key_of;
    galois_of_elements(ctx, elements, keys, perms, key_of);
    const KeyedRotations keyed(perms, key_of);
    if (keyed.perms.empty()) return multiply_integer(a, int64_t(keyed.identities));  // only identities: exact
    Ciphertext out(ctx, 2, a.level(), a.scale(), a.slots());
    rotate_sum_polys(ctx, a.level(), a.poly(0), a.poly(1), keyed.perms.size(), keyed.perms.data(), keyed.keys.data(),
                     keyed.identities, out.mutable_poly(0), out.mutable_poly(1));
    if (counts) counts->mod_ups++, counts->inner_products += keyed.perms.size(), counts->mod_downs++;
    return out;
}

}  // namespace oboro::ckks
