#include "oboro/ckks/batch_evaluator.hpp"

#include <cmath>
#include <sstream>
#include <string>
#include <utility>

#include "oboro/ckks/evaluator.hpp"
#include "oboro/ckks/hoisting.hpp"
#include "oboro/math/modarith.hpp"
#include "oboro/util/error.hpp"

namespace oboro::ckks {

std::string describe(const PolyBatch& x) {
    std::ostringstream os;
    os.setf(std::ios::fixed);
    os.precision(10);
    os << "batch of " << x.count() << ", level " << x.level() << ", scale 2^" << std::log2(x.scale());
    return os.str();
}

BatchEvaluator::BatchEvaluator(ContextPtr ctx, BatchQueue* queue)
    : ctx_(std::move(ctx)), queue_(queue ? queue : &cpu_batch_queue()) {}

// ---- checks (all before any work) ---------------------------------------------------------------

BatchQueue* BatchEvaluator::memory() const { return queue_->host_memory() ? nullptr : queue_; }

void BatchEvaluator::check_batch(const char* op, const PolyBatch& x, const char* name) const {
    if (x.empty()) raise<ValueError>(op, ": operand '", name, "' is an empty batch");
    if (x.device() != memory())
        raise<ValueError>(op, ": operand '", name, "' is in ", memory_name(x),
                          " memory but this evaluator runs on ", queue_->device_name(),
                          "; move it with to_device / to_host");
    if (x.context_id() != ctx_->id())
        raise<ContextMismatch>(op, ": operand '", name, "' (", describe(x), ") belongs to another parameter set");
}

void BatchEvaluator::check_pair(const char* op, const PolyBatch& a, const PolyBatch& b) const {
    check_batch(op, a, "a");
    check_batch(op, b, "b");
    if (b.count() != a.count() && b.count() != 1)
        raise<ValueError>(op, ": operand 'a' is a ", describe(a), " but operand 'b' a ", describe(b),
                          "; 'b' must hold as many elements as 'a', or one");
    if (a.level() != b.level())
        raise<LevelMismatch>(op, ": operand 'a' is a ", describe(a), " but operand 'b' a ", describe(b),
                             "; bring both to the same level first (drop_to_level or rescale)");
    if (a.slots() != b.slots())
        raise<ValueError>(op, ": operand 'a' has ", a.slots(), " slots but operand 'b' ", b.slots());
}

void BatchEvaluator::check_sizes_equal(const char* op, const CiphertextBatch& a, const CiphertextBatch& b) const {
    if (a.size() != b.size())
        raise<ValueError>(op, ": operand 'a' (", describe(a), ") has ", a.size(), " polynomials but operand 'b' (",
                          describe(b), ") has ", b.size(), "; relinearize first");
}

void BatchEvaluator::check_size2(const char* op, const CiphertextBatch& a, const char* name) const {
    if (a.size() != 2)
        raise<ValueError>(op, ": operand '", name, "' (", describe(a), ") has ", a.size(),
                          " polynomials; relinearize it first");
}

void BatchEvaluator::check_product_scale(const char* op, const PolyBatch& a, double scale_b) const {
    ckks::check_product_scale(*ctx_, op, a.level(), a.scale(), scale_b);
}

void BatchEvaluator::check_relin_key(const char* op, const RelinKey& rk, const CiphertextBatch& a) const {
    if (rk.empty())
        raise<MissingKey>(op, ": no relinearization key was given for operand 'a' (", describe(a),
                          "); generate one with relin_key()");
    if (rk.context_id != ctx_->id())
        raise<ContextMismatch>(op, ": the relinearization key belongs to another parameter set (operand 'a' is a ",
                               describe(a), ")");
}

namespace {
void check_same_scale(const char* op, const PolyBatch& a, const PolyBatch& b) {
    if (!same_scale(a.scale(), b.scale()))
        raise<ScaleMismatch>(op, ": operand 'a' is a ", describe(a), " but operand 'b' a ", describe(b),
                             "; the scales must match");
}
}  // namespace

// ---- addition and subtraction ----------------------------------------------------------------

void BatchEvaluator::check_add(const char* op, const CiphertextBatch& a, const CiphertextBatch& b) const {
    check_pair(op, a, b);
    check_same_scale(op, a, b);
    check_sizes_equal(op, a, b);
}

void BatchEvaluator::check_output(const char* op, const CiphertextBatch& out, const CiphertextBatch& a,
                                  const CiphertextBatch& b) {
    if (&out == &a || &out == &b) raise<ValueError>(op, ": the output must not be an operand (use the _inplace form)");
}

CiphertextBatch BatchEvaluator::add(const CiphertextBatch& a, const CiphertextBatch& b) const {
    CiphertextBatch out;
    add_into(a, b, out);
    return out;
}

void BatchEvaluator::add_into(const CiphertextBatch& a, const CiphertextBatch& b, CiphertextBatch& out) const {
    check_add("add", a, b);
    check_output("add", out, a, b);
    out.prepare_output(*ctx_, a.count(), a.size(), a.level(), a.scale(), a.slots(), memory());
    queue_->add(*ctx_, span_of(out), span_of(a), span_of(b));
}

void BatchEvaluator::add_inplace(CiphertextBatch& a, const CiphertextBatch& b) const {
    check_add("add", a, b);
    queue_->add(*ctx_, span_of(a), span_of(std::as_const(a)), span_of(b));
}

CiphertextBatch BatchEvaluator::sub(const CiphertextBatch& a, const CiphertextBatch& b) const {
    check_add("sub", a, b);
    CiphertextBatch out(*ctx_, a.count(), a.size(), a.level(), a.scale(), a.slots(), memory());
    queue_->sub(*ctx_, span_of(out), span_of(a), span_of(b));
    return out;
}

void BatchEvaluator::sub_inplace(CiphertextBatch& a, const CiphertextBatch& b) const {
    check_add("sub", a, b);
    queue_->sub(*ctx_, span_of(a), span_of(std::as_const(a)), span_of(b));
}

CiphertextBatch BatchEvaluator::add(const CiphertextBatch& a, const PlaintextBatch& b) const {
    check_pair("add", a, b);
    check_same_scale("add", a, b);
    CiphertextBatch out(*ctx_, a.count(), a.size(), a.level(), a.scale(), a.slots(), memory());
    queue_->add(*ctx_, span_of(out), span_of(a), span_of(b));
    return out;
}

void BatchEvaluator::add_inplace(CiphertextBatch& a, const PlaintextBatch& b) const {
    check_pair("add", a, b);
    check_same_scale("add", a, b);
    queue_->add(*ctx_, span_of(a), span_of(std::as_const(a)), span_of(b));
}

CiphertextBatch BatchEvaluator::sub(const CiphertextBatch& a, const PlaintextBatch& b) const {
    check_pair("sub", a, b);
    check_same_scale("sub", a, b);
    CiphertextBatch out(*ctx_, a.count(), a.size(), a.level(), a.scale(), a.slots(), memory());
    queue_->sub(*ctx_, span_of(out), span_of(a), span_of(b));
    return out;
}

void BatchEvaluator::sub_inplace(CiphertextBatch& a, const PlaintextBatch& b) const {
    check_pair("sub", a, b);
    check_same_scale("sub", a, b);
    queue_->sub(*ctx_, span_of(a), span_of(std::as_const(a)), span_of(b));
}

CiphertextBatch BatchEvaluator::add(const CiphertextBatch& a, double c) const {
    check_batch("add", a, "a");
    const auto s = scaled_constant(*ctx_, "add", c, a.scale(), a.level());
    CiphertextBatch out(*ctx_, a.count(), a.size(), a.level(), a.scale(), a.slots(), memory());
    queue_->add_scalar(*ctx_, span_of(out), span_of(a), s.data());
    return out;
}

void BatchEvaluator::add_inplace(CiphertextBatch& a, double c) const {
    check_batch("add", a, "a");
    // A constant polynomial is the same value in every NTT slot.
    const auto s = scaled_constant(*ctx_, "add", c, a.scale(), a.level());
    queue_->add_scalar(*ctx_, span_of(a), span_of(std::as_const(a)), s.data());
}

void BatchEvaluator::sub_inplace(CiphertextBatch& a, double c) const {
    check_batch("sub", a, "a");
    auto s = scaled_constant(*ctx_, "sub", c, a.scale(), a.level());
    for (size_t i = 0; i < s.size(); ++i) s[i] = math::neg_mod(s[i], ctx_->q()[i]);
    queue_->add_scalar(*ctx_, span_of(a), span_of(std::as_const(a)), s.data());
}

CiphertextBatch BatchEvaluator::negate(const CiphertextBatch& a) const {
    check_batch("negate", a, "a");
    CiphertextBatch out(*ctx_, a.count(), a.size(), a.level(), a.scale(), a.slots(), memory());
    queue_->negate(*ctx_, span_of(out), span_of(a));
    return out;
}

void BatchEvaluator::negate_inplace(CiphertextBatch& a) const {
    check_batch("negate", a, "a");
    queue_->negate(*ctx_, span_of(a), span_of(std::as_const(a)));
}

// ---- multiplication ----------------------------------------------------------------------------

void BatchEvaluator::check_multiply(const char* op, const CiphertextBatch& a, const CiphertextBatch& b) const {
    check_pair(op, a, b);
    check_size2(op, a, "a");
    check_size2(op, b, "b");
    check_product_scale(op, a, b.scale());
}

CiphertextBatch BatchEvaluator::multiply(const CiphertextBatch& a, const CiphertextBatch& b) const {
    CiphertextBatch out;
    multiply_into(a, b, out);
    return out;
}

void BatchEvaluator::multiply_into(const CiphertextBatch& a, const CiphertextBatch& b, CiphertextBatch& out) const {
    check_multiply("multiply", a, b);
    check_output("multiply", out, a, b);
    out.prepare_output(*ctx_, a.count(), 3, a.level(), a.scale() * b.scale(), a.slots(), memory());
    queue_->tensor(*ctx_, span_of(out), span_of(a), span_of(b));
}

CiphertextBatch BatchEvaluator::multiply(const CiphertextBatch& a, const PlaintextBatch& b) const {
    check_pair("multiply", a, b);
    check_product_scale("multiply", a, b.scale());
    CiphertextBatch out(*ctx_, a.count(), a.size(), a.level(), a.scale() * b.scale(), a.slots(), memory());
    queue_->mul_plain(*ctx_, span_of(out), span_of(a), span_of(b));
    return out;
}

void BatchEvaluator::multiply_inplace(CiphertextBatch& a, const PlaintextBatch& b) const {
    check_pair("multiply", a, b);
    check_product_scale("multiply", a, b.scale());
    queue_->mul_plain(*ctx_, span_of(a), span_of(std::as_const(a)), span_of(b));
    a.set_scale(a.scale() * b.scale());
}

void BatchEvaluator::multiply_inplace(CiphertextBatch& a, double c) const {
    check_batch("multiply", a, "a");
    const double const_scale = double(ctx_->q()[size_t(a.level())]);
    check_product_scale("multiply", a, const_scale);
    const auto s = scaled_constant(*ctx_, "multiply", c, const_scale, a.level());
    queue_->mul_scalar(*ctx_, span_of(a), span_of(std::as_const(a)), s.data());
    a.set_scale(a.scale() * const_scale);
}

void BatchEvaluator::multiply_integer_inplace(CiphertextBatch& a, int64_t c) const {
    check_batch("multiply_integer", a, "a");
    const auto s = integer_residues(*ctx_, c, a.level());
    queue_->mul_scalar(*ctx_, span_of(a), span_of(std::as_const(a)), s.data());
}

// ---- relinearization, rescaling, levels --------------------------------------------------------

CiphertextBatch BatchEvaluator::relinearize(const CiphertextBatch& a, const RelinKey& rk) const {
    check_batch("relinearize", a, "a");
    check_relin_key("relinearize", rk, a);
    if (a.size() != 3) raise<ValueError>("relinearize: operand 'a' (", describe(a), ") has ", a.size(),
                                         " polynomials; only size-3 batches can be relinearized");
    CiphertextBatch out(*ctx_, a.count(), 2, a.level(), a.scale(), a.slots(), memory());
    queue_->relinearize(*ctx_, span_of(out), span_of(a), rk);
    return out;
}

CiphertextBatch BatchEvaluator::rescale(const CiphertextBatch& a) const {
    check_batch("rescale", a, "a");
    const int l = a.level();
    if (l == 0)
        raise<LevelMismatch>("rescale: operand 'a' (", describe(a), ") is at level 0; no prime is left to divide by");
    CiphertextBatch out(*ctx_, a.count(), a.size(), l - 1, a.scale() / double(ctx_->q()[size_t(l)]), a.slots(), memory());
    queue_->rescale(*ctx_, span_of(out), span_of(a));
    return out;
}

void BatchEvaluator::check_multiply_relin_rescale(const CiphertextBatch& a, const CiphertextBatch& b,
                                                  const RelinKey& rk) const {
    const char* op = "multiply_relin_rescale";
    check_batch(op, a, "a");
    check_relin_key(op, rk, a);
    if (a.level() == 0)
        raise<LevelMismatch>(op, ": operand 'a' (", describe(a), ") is at level 0; no prime is left to rescale by");
    check_multiply(op, a, b);
}

CiphertextBatch BatchEvaluator::multiply_relin_rescale(const CiphertextBatch& a, const CiphertextBatch& b,
                                                       const RelinKey& rk) const {
    CiphertextBatch out;
    multiply_relin_rescale_into(a, b, rk, out);
    return out;
}

void BatchEvaluator::multiply_relin_rescale_into(const CiphertextBatch& a, const CiphertextBatch& b,
                                                 const RelinKey& rk, CiphertextBatch& out) const {
    check_multiply_relin_rescale(a, b, rk);
    check_output("multiply_relin_rescale", out, a, b);
    const int l = a.level();
    out.prepare_output(*ctx_, a.count(), 2, l - 1, a.scale() * b.scale() / double(ctx_->q()[size_t(l)]), a.slots(), memory());
    queue_->multiply_relin_rescale(*ctx_, span_of(out), span_of(a), span_of(b), rk);
}

CiphertextBatch BatchEvaluator::drop_to_level(const CiphertextBatch& a, int level) const {
    check_batch("drop_to_level", a, "a");
    if (level < 0 || level > a.level())
        raise<LevelMismatch>("drop_to_level: cannot go from a ", describe(a), " to level ", level, " (only down, to 0..",
                             a.level(), ")");
    CiphertextBatch out(*ctx_, a.count(), a.size(), level, a.scale(), a.slots(), memory());
    queue_->drop_limbs(span_of(out), span_of(a));
    return out;
}

CiphertextBatch BatchEvaluator::rescale_to(const CiphertextBatch& a, int level, double scale) const {
    check_batch("rescale_to", a, "a");
    if (level < 0 || level >= a.level())
        raise<LevelMismatch>("rescale_to: the target level ", level, " must be below the operand's (", describe(a), ")");
    const double ql = double(ctx_->q()[size_t(a.level())]);
    const double factor = std::round(scale * ql / a.scale());
    if (!(factor >= 1) || !std::isfinite(factor))
        raise<ScaleMismatch>("rescale_to: cannot reach scale 2^", std::log2(scale), " from a ", describe(a),
                             " with one rescale by 2^", std::log2(ql));
    check_product_scale("rescale_to", a, factor);
    const auto s = scaled_constant(*ctx_, "rescale_to", 1.0, factor, a.level());
    CiphertextBatch scaled(*ctx_, a.count(), a.size(), a.level(), a.scale() * factor, a.slots(), memory());
    queue_->mul_scalar(*ctx_, span_of(scaled), span_of(a), s.data());
    CiphertextBatch out = rescale(scaled);
    return level == out.level() ? out : drop_to_level(out, level);
}

// ---- rotations ---------------------------------------------------------------------------------

CiphertextBatch BatchEvaluator::rotate(const CiphertextBatch& a, int64_t steps, const GaloisKeys& keys) const {
    check_batch("rotate", a, "a");
    return apply_rotations("rotate", a, std::vector<int64_t>(a.count(), steps), keys);
}

CiphertextBatch BatchEvaluator::rotate(const CiphertextBatch& a, const std::vector<int64_t>& steps,
                                       const GaloisKeys& keys) const {
    check_batch("rotate", a, "a");
    if (steps.size() != a.count())
        raise<ValueError>("rotate: ", steps.size(), " steps were given for a ", describe(a), "; give one per element");
    return apply_rotations("rotate", a, steps, keys);
}

void BatchEvaluator::check_galois_keys(const char* op, const CiphertextBatch& a, const GaloisKeys& keys) const {
    check_size2(op, a, "a");
    if (keys.context_id != 0 && keys.context_id != ctx_->id())
        raise<ContextMismatch>(op, ": the Galois keys belong to another parameter set (operand 'a' is a ", describe(a),
                               ")");
}

void BatchEvaluator::galois_of_steps(const char* op, const CiphertextBatch& a, const std::vector<int64_t>& steps,
                                     const char* index_name, const GaloisKeys& keys,
                                     std::vector<const uint32_t*>& perms, std::vector<const KeySwitchKey*>& key_of) const {
    check_galois_keys(op, a, keys);
    const int64_t slots = int64_t(a.slots());
    perms.assign(steps.size(), nullptr);
    key_of.assign(steps.size(), nullptr);
    std::string missing;
    for (size_t c = 0; c < steps.size(); ++c) {
        const int64_t s = steps[c];
        if (s <= -slots || s >= slots)
            raise<ValueError>(op, ": step ", s, " (", index_name, " ", c, ") is out of range for operand 'a' (",
                              describe(a), ") with ", slots, " slots (allowed: ", -(slots - 1), " .. ", slots - 1, ")");
        if (s == 0) continue;
        const uint64_t g = ctx_->galois_element(s);
        auto it = keys.keys.find(g);
        if (it == keys.keys.end()) {
            const std::string name = std::to_string(s);
            if (("," + missing + ",").find("," + name + ",") == std::string::npos)  // each step once
                missing += (missing.empty() ? "" : ",") + name;
            continue;
        }
        perms[c] = ctx_->automorphism_permutation(g).data();
        key_of[c] = &it->second;
    }
    if (!missing.empty())
        raise<MissingKey>(op, ": no Galois key for the rotation(s) by ", missing, " of operand 'a' (", describe(a),
                          "); generate them with galois_keys({", missing, "})");
}

CiphertextBatch BatchEvaluator::apply_rotations(const char* op, const CiphertextBatch& a,
                                                const std::vector<int64_t>& steps, const GaloisKeys& keys) const {
    std::vector<const uint32_t*> perms;
    std::vector<const KeySwitchKey*> key_of;
    galois_of_steps(op, a, steps, "element", keys, perms, key_of);
    return run_galois(a, perms, key_of);
}

std::vector<CiphertextBatch> BatchEvaluator::rotate_many(const CiphertextBatch& a, const std::vector<int64_t>& steps,
                                                         const GaloisKeys& keys) const {
    check_batch("rotate_many", a, "a");
    std::vector<const uint32_t*> perms;
    std::vector<const KeySwitchKey*> key_of;
    galois_of_steps("rotate_many", a, steps, "step", keys, perms, key_of);
    const KeyedRotations keyed(perms, key_of);
    // every output allocated before the one batched call; a step 0 is a copy of a
    std::vector<CiphertextBatch> out;
    out.reserve(steps.size());
    for (size_t r = 0; r < steps.size(); ++r) {
        if (perms[r]) out.emplace_back(*ctx_, a.count(), 2, a.level(), a.scale(), a.slots(), memory());
        else out.push_back(a);
    }
    std::vector<BatchSpan> spans;
    for (size_t r = 0; r < steps.size(); ++r)
        if (perms[r]) spans.push_back(span_of(out[r]));
    if (!spans.empty())
        queue_->rotate_hoisted(*ctx_, spans.data(), spans.size(), span_of(a), keyed.perms.data(), keyed.keys.data());
    return out;
}

CiphertextBatch BatchEvaluator::rotate_sum(const CiphertextBatch& a, const std::vector<int64_t>& steps,
                                           const GaloisKeys& keys) const {
    check_batch("rotate_sum", a, "a");
    if (steps.empty()) raise<ValueError>("rotate_sum: no steps given for operand 'a' (", describe(a), ")");
    std::vector<const uint32_t*> perms;
    std::vector<const KeySwitchKey*> key_of;
    galois_of_steps("rotate_sum", a, steps, "step", keys, perms, key_of);
    const KeyedRotations keyed(perms, key_of);
    if (keyed.perms.empty()) {  // only identities: a times their number, exactly (as Evaluator's)
        CiphertextBatch out = a;
        multiply_integer_inplace(out, int64_t(keyed.identities));
        return out;
    }
    CiphertextBatch out(*ctx_, a.count(), 2, a.level(), a.scale(), a.slots(), memory());
    queue_->rotate_sum_hoisted(*ctx_, span_of(out), span_of(a), keyed.perms.size(), keyed.perms.data(),
                               keyed.keys.data(), keyed.identities);
    return out;
}

CiphertextBatch BatchEvaluator::conjugate(const CiphertextBatch& a, const GaloisKeys& keys) const {
    check_batch("conjugate", a, "a");
    check_galois_keys("conjugate", a, keys);
    const uint64_t g = ctx_->conjugation_element();
    auto it = keys.keys.find(g);
    if (it == keys.keys.end())
        raise<MissingKey>("conjugate: no conjugation key for operand 'a' (", describe(a),
                          "); generate Galois keys with conjugation = true");
    return run_galois(a, std::vector<const uint32_t*>(a.count(), ctx_->automorphism_permutation(g).data()),
                      std::vector<const KeySwitchKey*>(a.count(), &it->second));
}

CiphertextBatch BatchEvaluator::run_galois(const CiphertextBatch& a, const std::vector<const uint32_t*>& perms,
                                           const std::vector<const KeySwitchKey*>& keys) const {
    CiphertextBatch out(*ctx_, a.count(), 2, a.level(), a.scale(), a.slots(), memory());
    queue_->apply_galois(*ctx_, span_of(out), span_of(a), perms.data(), keys.data());
    return out;
}

}  // namespace oboro::ckks
