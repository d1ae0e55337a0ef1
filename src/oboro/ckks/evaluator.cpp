#include "oboro/ckks/evaluator.hpp"

#include <cmath>
#include <cstring>
#include <sstream>

#include "oboro/backend/cpu/poly_ops.hpp"
#include "oboro/ckks/ciphertext_ops.hpp"
#include "oboro/ckks/keyswitch.hpp"
#include "oboro/math/modarith.hpp"
#include "oboro/util/error.hpp"
#include "oboro/util/parallel.hpp"
#include "oboro/util/workspace.hpp"

namespace oboro::ckks {

namespace cpu = backend::cpu;

bool same_scale(double a, double b) { return std::fabs(a - b) <= 0x1p-40 * std::max(std::fabs(a), std::fabs(b)); }

std::string describe(const PolyArray& x) {
    std::ostringstream os;
    os.setf(std::ios::fixed);
    os.precision(10);  // enough to tell 2^40 from 2^80/q for a q near 2^40
    os << "level " << x.level() << ", scale 2^" << std::log2(x.scale());
    return os.str();
}

Evaluator::Evaluator(ContextPtr ctx) : ctx_(std::move(ctx)) {}

void Evaluator::check_context(const char* op, const PolyArray& x, const char* name) const {
    if (x.empty()) raise<ValueError>(op, ": operand '", name, "' is empty");
    if (x.context_id() != ctx_->id())
        raise<ContextMismatch>(op, ": operand '", name, "' (", describe(x), ") belongs to another parameter set");
}

void Evaluator::check_same_level_scale(const char* op, const PolyArray& a, const PolyArray& b) const {
    check_context(op, a, "a");
    check_context(op, b, "b");
    if (a.level() != b.level())
        raise<LevelMismatch>(op, ": operand 'a' is at ", describe(a), " but operand 'b' is at ", describe(b),
                             "; bring both to the same level first (drop_to_level or rescale)");
    if (!same_scale(a.scale(), b.scale()))
        raise<ScaleMismatch>(op, ": operand 'a' has ", describe(a), " but operand 'b' has ", describe(b),
                             "; the scales must match");
}

void Evaluator::multiply_polys_by(Ciphertext& a, const std::vector<uint64_t>& per_limb) const {
    for (size_t j = 0; j < a.size(); ++j)
        cpu::mul_scalar(a.mutable_poly(j), a.mutable_poly(j), per_limb.data(), ctx_->moduli(), a.limbs(), ctx_->n());
}

void Evaluator::check_relin_key(const char* op, const RelinKey& rk, const Ciphertext& a) const {
    if (rk.empty())
        raise<MissingKey>(op, ": no relinearization key was given for operand 'a' (", describe(a),
                          "); generate one with relin_key()");
    if (rk.context_id != ctx_->id())
        raise<ContextMismatch>(op, ": the relinearization key belongs to another parameter set (operand 'a' at ",
                               describe(a), ")");
}

void Evaluator::check_size2(const char* op, const Ciphertext& a, const char* name) const {
    if (a.size() != 2)
        raise<ValueError>(op, ": operand '", name, "' (", describe(a), ") has ", a.size(),
                          " polynomials; relinearize it first");
}

std::vector<uint64_t> scaled_constant(const Context& ctx, const char* op, double c, double scale, int level) {
    const double v = std::round(c * scale);
    if (!std::isfinite(v)) raise<ValueError>(op, ": the constant ", c, " is not finite");
    if (v != 0 && std::log2(std::fabs(v)) >= ctx.log2_q(level) - 1)
        raise<ValueError>(op, ": the constant ", c, " at scale 2^", std::log2(scale), " does not fit the modulus 2^",
                          ctx.log2_q(level), " at level ", level);
    std::vector<uint64_t> out(size_t(level + 1));
    for (size_t i = 0; i < out.size(); ++i) out[i] = math::reduce_integral_double(v, ctx.moduli()[i].barrett);
    return out;
}

std::vector<uint64_t> integer_residues(const Context& ctx, int64_t c, int level) {
    std::vector<uint64_t> s(size_t(level + 1));
    for (size_t i = 0; i < s.size(); ++i) {
        const uint64_t q = ctx.q()[i];
        const uint64_t mag = c >= 0 ? uint64_t(c) % q : uint64_t(-(c + 1)) % q + 1;  // |c| mod q without overflow
        s[i] = c >= 0 ? mag : (q - mag % q) % q;
    }
    return s;
}

void check_product_scale(const Context& ctx, const char* op, int level, double scale_a, double scale_b) {
    const double log2_scale = std::log2(scale_a) + std::log2(scale_b);
    if (log2_scale >= ctx.log2_q(level) - 1)
        raise<ScaleMismatch>(op, ": the product of the scales, 2^", log2_scale, ", exceeds the modulus 2^",
                             ctx.log2_q(level), " at level ", level, "; rescale first or use smaller scales");
}

std::vector<uint64_t> Evaluator::scaled_constant(const char* op, double c, double scale, int level) const {
    return ckks::scaled_constant(*ctx_, op, c, scale, level);
}

// ---- addition and subtraction ----------------------------------------------------------------

void Evaluator::add_inplace(Ciphertext& a, const Ciphertext& b) const {
    check_same_level_scale("add", a, b);
    if (a.size() < b.size()) {
        a = add(a, b);
        return;
    }
    for (size_t j = 0; j < b.size(); ++j)
        cpu::add(a.mutable_poly(j), a.mutable_poly(j), b.poly(j), ctx_->moduli(), a.limbs(), ctx_->n());
}

Ciphertext Evaluator::add(const Ciphertext& a, const Ciphertext& b) const {
    check_same_level_scale("add", a, b);
    const Ciphertext& big = a.size() >= b.size() ? a : b;
    const Ciphertext& small = a.size() >= b.size() ? b : a;
    Ciphertext out(*ctx_, big.size(), a.level(), a.scale(), std::max(a.slots(), b.slots()));
    for (size_t j = 0; j < big.size(); ++j) {
        if (j < small.size())
            cpu::add(out.mutable_poly(j), big.poly(j), small.poly(j), ctx_->moduli(), a.limbs(), ctx_->n());
        else
            std::memcpy(out.mutable_poly(j), big.poly(j), a.limbs() * ctx_->n() * sizeof(uint64_t));
    }
    return out;
}

void Evaluator::sub_inplace(Ciphertext& a, const Ciphertext& b) const {
    check_same_level_scale("sub", a, b);
    if (a.size() < b.size()) {
        a = sub(a, b);
        return;
    }
    for (size_t j = 0; j < b.size(); ++j)
        cpu::sub(a.mutable_poly(j), a.mutable_poly(j), b.poly(j), ctx_->moduli(), a.limbs(), ctx_->n());
}

Ciphertext Evaluator::sub(const Ciphertext& a, const Ciphertext& b) const {
    check_same_level_scale("sub", a, b);
    const size_t size = std::max(a.size(), b.size()), limbs = a.limbs(), n = ctx_->n();
    Ciphertext out(*ctx_, size, a.level(), a.scale(), std::max(a.slots(), b.slots()));
    for (size_t j = 0; j < size; ++j) {
        if (j < a.size() && j < b.size()) cpu::sub(out.mutable_poly(j), a.poly(j), b.poly(j), ctx_->moduli(), limbs, n);
        else if (j < a.size()) std::memcpy(out.mutable_poly(j), a.poly(j), limbs * n * sizeof(uint64_t));
        else cpu::negate(out.mutable_poly(j), b.poly(j), ctx_->moduli(), limbs, n);
    }
    return out;
}

void Evaluator::add_inplace(Ciphertext& a, const Plaintext& b) const {
    check_same_level_scale("add", a, b);
    cpu::add(a.mutable_poly(0), a.mutable_poly(0), b.poly(0), ctx_->moduli(), a.limbs(), ctx_->n());
}

Ciphertext Evaluator::add(const Ciphertext& a, const Plaintext& b) const {
    Ciphertext out = a;
    add_inplace(out, b);
    return out;
}

void Evaluator::sub_inplace(Ciphertext& a, const Plaintext& b) const {
    check_same_level_scale("sub", a, b);
    cpu::sub(a.mutable_poly(0), a.mutable_poly(0), b.poly(0), ctx_->moduli(), a.limbs(), ctx_->n());
}

Ciphertext Evaluator::sub(const Ciphertext& a, const Plaintext& b) const {
    Ciphertext out = a;
    sub_inplace(out, b);
    return out;
}

void Evaluator::add_constant(const char* op, Ciphertext& a, double c, bool subtract) const {
    check_context(op, a, "a");
    // A constant polynomial is the same value in every NTT slot.
    auto s = scaled_constant(op, c, a.scale(), a.level());
    if (subtract)
        for (size_t i = 0; i < s.size(); ++i) s[i] = math::neg_mod(s[i], ctx_->q()[i]);
    cpu::add_scalar(a.mutable_poly(0), a.mutable_poly(0), s.data(), ctx_->moduli(), a.limbs(), ctx_->n());
}

void Evaluator::add_inplace(Ciphertext& a, double c) const { add_constant("add", a, c, false); }

Ciphertext Evaluator::add(const Ciphertext& a, double c) const {
    Ciphertext out = a;
    add_inplace(out, c);
    return out;
}

void Evaluator::sub_inplace(Ciphertext& a, double c) const { add_constant("sub", a, c, true); }

Ciphertext Evaluator::sub(const Ciphertext& a, double c) const {
    Ciphertext out = a;
    sub_inplace(out, c);
    return out;
}

void Evaluator::negate_inplace(Ciphertext& a) const {
    check_context("negate", a, "a");
    for (size_t j = 0; j < a.size(); ++j) cpu::negate(a.mutable_poly(j), a.mutable_poly(j), ctx_->moduli(), a.limbs(), ctx_->n());
}

Ciphertext Evaluator::negate(const Ciphertext& a) const {
    Ciphertext out = a;
    negate_inplace(out);
    return out;
}

// ---- multiplication ----------------------------------------------------------------------------

namespace {
void check_product_scale(const Context& ctx, const char* op, const PolyArray& a, double scale_b) {
    ckks::check_product_scale(ctx, op, a.level(), a.scale(), scale_b);
}
}  // namespace

void Evaluator::check_multiply(const char* op, const Ciphertext& a, const Ciphertext& b) const {
    check_context(op, a, "a");
    check_context(op, b, "b");
    if (a.level() != b.level())
        raise<LevelMismatch>(op, ": operand 'a' is at ", describe(a), " but operand 'b' is at ", describe(b),
                             "; bring both to the same level first");
    check_size2(op, a, "a");
    check_size2(op, b, "b");
    check_product_scale(*ctx_, op, a, b.scale());
}

void Evaluator::check_output(const char* op, const Ciphertext& out, const Ciphertext& a, const Ciphertext& b) const {
    if (&out == &a || &out == &b)
        raise<ValueError>(op, ": the output must not be an operand (use the _inplace form)");
}

Ciphertext Evaluator::multiply(const Ciphertext& a, const Ciphertext& b) const {
    Ciphertext out;
    multiply_into(a, b, out);
    return out;
}

void Evaluator::multiply_into(const Ciphertext& a, const Ciphertext& b, Ciphertext& out) const {
    check_multiply("multiply", a, b);
    check_output("multiply", out, a, b);
    out.prepare_output(*ctx_, 3, a.level(), a.scale() * b.scale(), std::max(a.slots(), b.slots()));
    cpu::tensor(out.mutable_poly(0), out.mutable_poly(1), out.mutable_poly(2), a.poly(0), a.poly(1), b.poly(0), b.poly(1), ctx_->moduli(),
                a.limbs(), ctx_->n());
}

void Evaluator::add_into(const Ciphertext& a, const Ciphertext& b, Ciphertext& out) const {
    check_same_level_scale("add", a, b);
    check_output("add", out, a, b);
    if (a.size() != b.size()) {
        out = add(a, b);
        return;
    }
    out.prepare_output(*ctx_, a.size(), a.level(), a.scale(), std::max(a.slots(), b.slots()));
    for (size_t j = 0; j < a.size(); ++j)
        cpu::add(out.mutable_poly(j), a.poly(j), b.poly(j), ctx_->moduli(), a.limbs(), ctx_->n());
}

void Evaluator::multiply_inplace(Ciphertext& a, const Ciphertext& b) const { a = multiply(a, b); }

Ciphertext Evaluator::square(const Ciphertext& a) const { return multiply(a, a); }

void Evaluator::multiply_inplace(Ciphertext& a, const Plaintext& b) const {
    check_context("multiply", a, "a");
    check_context("multiply", b, "b");
    if (a.level() != b.level())
        raise<LevelMismatch>("multiply: ciphertext 'a' is at ", describe(a), " but plaintext 'b' is at ", describe(b),
                             "; encode the plaintext at the ciphertext's level");
    check_product_scale(*ctx_, "multiply", a, b.scale());
    for (size_t j = 0; j < a.size(); ++j) cpu::mul(a.mutable_poly(j), a.mutable_poly(j), b.poly(0), ctx_->moduli(), a.limbs(), ctx_->n());
    a.set_scale(a.scale() * b.scale());
}

Ciphertext Evaluator::multiply(const Ciphertext& a, const Plaintext& b) const {
    Ciphertext out = a;
    multiply_inplace(out, b);
    return out;
}

void Evaluator::multiply_inplace(Ciphertext& a, double c) const {
    check_context("multiply", a, "a");
    const double const_scale = double(ctx_->q()[size_t(a.level())]);
    check_product_scale(*ctx_, "multiply", a, const_scale);
    const auto s = scaled_constant("multiply", c, const_scale, a.level());
    multiply_polys_by(a, s);
    a.set_scale(a.scale() * const_scale);
}

Ciphertext Evaluator::multiply(const Ciphertext& a, double c) const {
    Ciphertext out = a;
    multiply_inplace(out, c);
    return out;
}

void Evaluator::multiply_integer_inplace(Ciphertext& a, int64_t c) const {
    check_context("multiply_integer", a, "a");
    multiply_polys_by(a, integer_residues(*ctx_, c, a.level()));
}

Ciphertext Evaluator::multiply_integer(const Ciphertext& a, int64_t c) const {
    Ciphertext out = a;
    multiply_integer_inplace(out, c);
    return out;
}

// ---- relinearization, rescaling, levels --------------------------------------------------------

void Evaluator::relinearize_inplace(Ciphertext& a, const RelinKey& rk) const {
    check_context("relinearize", a, "a");
    check_relin_key("relinearize", rk, a);
    if (a.size() == 2) return;
    if (a.size() != 3) raise<ValueError>("relinearize: a ciphertext of size ", a.size(), " is not supported");
    auto ws = scratch_pool().acquire();
    relinearize_polys(*ctx_, a.level(), a.poly(0), a.poly(1), a.poly(2), rk, a.mutable_poly(0), a.mutable_poly(1), *ws);
    a.reshape(2, a.level());
}

Ciphertext Evaluator::relinearize(const Ciphertext& a, const RelinKey& rk) const {
    Ciphertext out = a;
    relinearize_inplace(out, rk);
    return out;
}

void Evaluator::rescale_inplace(Ciphertext& a) const {
    check_context("rescale", a, "a");
    const int l = a.level();
    if (l == 0)
        raise<LevelMismatch>("rescale: the ciphertext (", describe(a), ") is at level 0; no prime is left to divide by");
    for (size_t j = 0; j < a.size(); ++j) rescale_poly(*ctx_, l, a.mutable_poly(j));
    a.reshape(a.size(), l - 1);
    a.set_scale(a.scale() / double(ctx_->q()[size_t(l)]));
}

Ciphertext Evaluator::rescale(const Ciphertext& a) const {
    Ciphertext out = a;
    rescale_inplace(out);
    return out;
}

void Evaluator::check_multiply_relin_rescale(const Ciphertext& a, const Ciphertext& b, const RelinKey& rk) const {
    check_context("multiply_relin_rescale", a, "a");
    check_relin_key("multiply_relin_rescale", rk, a);
    if (a.level() == 0)
        raise<LevelMismatch>("multiply_relin_rescale: operand 'a' (", describe(a),
                             ") is at level 0; no prime is left to rescale by");
    check_multiply("multiply_relin_rescale", a, b);
}

Ciphertext Evaluator::multiply_relin_rescale(const Ciphertext& a, const Ciphertext& b, const RelinKey& rk) const {
    Ciphertext out;
    multiply_relin_rescale_into(a, b, rk, out);
    return out;
}

void Evaluator::multiply_relin_rescale_into(const Ciphertext& a, const Ciphertext& b, const RelinKey& rk,
                                            Ciphertext& out) const {
    check_multiply_relin_rescale(a, b, rk);
    check_output("multiply_relin_rescale", out, a, b);
    const int l = a.level();
    out.prepare_output(*ctx_, 2, l - 1, a.scale() * b.scale() / double(ctx_->q()[size_t(l)]),
                       std::max(a.slots(), b.slots()));
    auto ws = scratch_pool().acquire();
    multiply_relin_rescale_polys(*ctx_, l, a.poly(0), a.poly(1), b.poly(0), b.poly(1), rk, out.mutable_poly(0), out.mutable_poly(1),
                                 *ws);
}

void Evaluator::rescale_to_inplace(Ciphertext& a, int level, double scale) const {
    check_context("rescale_to", a, "a");
    if (level < 0 || level >= a.level())
        raise<LevelMismatch>("rescale_to: the target level ", level, " must be below the operand's (", describe(a), ")");
    const double ql = double(ctx_->q()[size_t(a.level())]);
    const double factor = std::round(scale * ql / a.scale());
    if (!(factor >= 1) || !std::isfinite(factor))
        raise<ScaleMismatch>("rescale_to: cannot reach scale 2^", std::log2(scale), " from ", describe(a),
                             " with one rescale by 2^", std::log2(ql));
    check_product_scale(*ctx_, "rescale_to", a, factor);
    const auto s = scaled_constant("rescale_to", 1.0, factor, a.level());
    multiply_polys_by(a, s);
    a.set_scale(a.scale() * factor);
    rescale_inplace(a);
    a.reshape(a.size(), level);
}

Ciphertext Evaluator::rescale_to(const Ciphertext& a, int level, double scale) const {
    Ciphertext out = a;
    rescale_to_inplace(out, level, scale);
    return out;
}

void Evaluator::drop_to_level_inplace(Ciphertext& a, int level) const {
    check_context("drop_to_level", a, "a");
    if (level < 0 || level > a.level())
        raise<LevelMismatch>("drop_to_level: cannot go from ", describe(a), " to level ", level,
                             " (only down, to 0.. ", a.level(), ")");
    a.reshape(a.size(), level);
}

Ciphertext Evaluator::drop_to_level(const Ciphertext& a, int level) const {
    Ciphertext out = a;
    drop_to_level_inplace(out, level);
    return out;
}

// ---- rotations and conjugation -----------------------------------------------------------------

const KeySwitchKey& Evaluator::galois_key(const char* op, const GaloisKeys& keys, uint64_t galois, int64_t steps,
                                          const Ciphertext& a) const {
    if (keys.context_id != 0 && keys.context_id != ctx_->id())
        raise<ContextMismatch>(op, ": the Galois keys belong to another parameter set (operand 'a' at ", describe(a), ")");
    auto it = keys.keys.find(galois);
    if (it == keys.keys.end()) {
        if (galois == ctx_->conjugation_element())
            raise<MissingKey>(op, ": no conjugation key for operand 'a' (", describe(a),
                              "); generate Galois keys with conjugation = true");
        raise<MissingKey>(op, ": no Galois key for a rotation by ", steps, " (Galois element ", galois,
                          ") of operand 'a' (", describe(a), "); generate it with galois_keys({", steps, "})");
    }
    return it->second;
}

Ciphertext Evaluator::apply_galois(const Ciphertext& a, uint64_t galois, const GaloisKeys& keys, const char* op) const {
    check_context(op, a, "a");
    check_size2(op, a, "a");
    const KeySwitchKey& key = galois_key(op, keys, galois, 0, a);
    const uint32_t* perm = ctx_->automorphism_permutation(galois).data();
    Ciphertext out(*ctx_, 2, a.level(), a.scale(), a.slots());
    auto ws = scratch_pool().acquire();
    apply_galois_polys(*ctx_, a.level(), a.poly(0), a.poly(1), perm, key, out.mutable_poly(0), out.mutable_poly(1), *ws);
    return out;
}

void Evaluator::check_step(const char* op, const Ciphertext& a, int64_t step) const {
    const int64_t slots = int64_t(a.slots());
    if (step <= -slots || step >= slots)
        raise<ValueError>(op, ": step ", step, " is out of range for operand 'a' (", describe(a), ") with ", slots,
                          " slots (allowed: ", -(slots - 1), " .. ", slots - 1, ")");
}

Ciphertext Evaluator::rotate(const Ciphertext& a, int64_t steps, const GaloisKeys& keys) const {
    check_context("rotate", a, "a");
    check_step("rotate", a, steps);
    if (steps == 0) return a;
    const uint64_t g = ctx_->galois_element(steps);
    galois_key("rotate", keys, g, steps, a);  // the clear error message, with the step
    return apply_galois(a, g, keys, "rotate");
}

void Evaluator::rotate_inplace(Ciphertext& a, int64_t steps, const GaloisKeys& keys) const { a = rotate(a, steps, keys); }

Ciphertext Evaluator::conjugate(const Ciphertext& a, const GaloisKeys& keys) const {
    return apply_galois(a, ctx_->conjugation_element(), keys, "conjugate");
}

void Evaluator::conjugate_inplace(Ciphertext& a, const GaloisKeys& keys) const { a = conjugate(a, keys); }

}  // namespace oboro::ckks
