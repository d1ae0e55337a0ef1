#include "oboro/ckks/auto_evaluator.hpp"

#include <cmath>
#include <string>

#include "oboro/ckks/batch_encoder.hpp"
#include "oboro/util/error.hpp"

namespace oboro::ckks {

namespace {

void check_level_for_multiply(int level, const std::string& operand, const char* op) {
    if (level == 0)
        raise<LevelMismatch>(op, ": the operand is at ", operand,
                             "; no level is left for the rescale after a multiplication (use parameters with more "
                             "levels, or fewer multiplications)");
}

// round(c) when c is an integer that a 64-bit multiplication takes exactly.
std::optional<int64_t> integer_value(std::complex<double> c) {
    const double r = c.real();
    if (c.imag() != 0 || !std::isfinite(r) || r != std::round(r) || std::fabs(r) >= 0x1p62) return std::nullopt;
    return int64_t(r);
}

// A plaintext (batch) without its limbs above `level`.
Plaintext dropped_to(const Plaintext& p, int level, const Evaluator&) {
    Plaintext out = p;
    out.drop_to_level(level);
    return out;
}
PlaintextBatch dropped_to(const PlaintextBatch& p, int level, const Evaluator& eval) {
    PlaintextBatch out(*eval.context(), p.count(), level, p.scale(), p.slots(), p.device_queue());
    eval.queue().drop_limbs(span_of(out), span_of(p));
    return out;
}

}  // namespace

AutoEvaluator::AutoEvaluator(Evaluator eval)
    : eval_(std::move(eval)), encoder_(std::make_shared<const Encoder>(eval_.context())) {}

AutoEvaluator::AutoEvaluator(Evaluator eval, std::shared_ptr<const Encoder> encoder)
    : eval_(std::move(eval)), encoder_(std::move(encoder)) {
    if (!encoder_ || encoder_->context()->id() != eval_.context()->id())
        raise<ContextMismatch>("AutoEvaluator: the encoder belongs to another parameter set");
}

AutoEvaluator AutoEvaluator::with_refresher(std::shared_ptr<const LevelRefresher> refresher) const {
    AutoEvaluator out = *this;
    out.refresher_ = std::move(refresher);
    return out;
}

// ---- the pieces --------------------------------------------------------------------------------

std::optional<int64_t> AutoEvaluator::keyed_step(int64_t step, size_t slots) const {
    const Context& ctx = *context();
    const KeySet* keys = eval_.keys().get();
    const int64_t s = int64_t(slots);
    step %= s;
    if (step == 0) return int64_t(0);
    if (keys && keys->galois_key(ctx.galois_element(step))) return step;
    const int64_t alt = step > 0 ? step - s : step + s;
    if (keys && keys->galois_key(ctx.galois_element(alt))) return alt;
    return std::nullopt;
}

namespace {
// The non-adjacent form of k: signed powers of two, at most one of any two neighbours non-zero
// (the shortest signed binary decomposition).
std::vector<int64_t> naf(int64_t k) {
    std::vector<int64_t> out;
    int64_t p = 1;
    while (k != 0) {
        if (k & 1) {
            const int64_t z = 2 - (((k % 4) + 4) % 4);
            out.push_back(z * p);
            k -= z;
        }
        k /= 2;
        p *= 2;
    }
    return out;
}
}  // namespace

std::vector<int64_t> AutoEvaluator::rotation_plan(int64_t k, size_t slots) const {
    const int64_t s = int64_t(slots);
    const int64_t r = canonical_step(k, slots);
    if (r == 0) return {};
    if (auto d = keyed_step(r, slots)) return {*d};
    // Decompose into signed powers of two (NAF) that have keys, e.g. 3 = 4 - 1.
    std::optional<std::vector<int64_t>> best;
    for (int64_t cand : {r, r - s}) {
        std::vector<int64_t> steps;
        bool ok = true;
        for (int64_t digit : naf(cand)) {
            auto d = keyed_step(digit, slots);
            if (!d) {
                ok = false;
                break;
            }
            if (*d != 0) steps.push_back(*d);
        }
        if (ok && (!best || steps.size() < best->size())) best = steps;
    }
    if (!best)
        raise<MissingKey>("rotate: no Galois key for a rotation by ", k, " (", r, " modulo the ", slots,
                          " slots), nor for a decomposition into rotations by signed powers of two; generate it "
                          "(galois_keys({", k, "}), or keygen(rotations=[", k, "]) in Python)");
    return *best;
}

double AutoEvaluator::product_scale(int level, double scale, const std::string& operand, const char* op) const {
    const Context& ctx = *context();
    check_level_for_multiply(level, operand, op);
    const double t = ctx.standard_scale(level - 1) * double(ctx.q()[size_t(level)]) / scale;
    if (!(t >= 0x1p20))
        raise<ScaleMismatch>(op, ": the operand's scale (", operand,
                             ") is too large for an automatic multiplication (a constant would be encoded at scale ",
                             power_of_two(t), "); rescale it first");
    check_product_scale(ctx, op, level, scale, t);
    return t;
}

template <Encrypted T> PlaintextOf<T> AutoEvaluator::encode(const T& like, SlotValues values, double scale) const {
    if constexpr (std::same_as<T, Ciphertext>) {
        if (values.rows != 1)
            raise<ValueError>("encode: ", values.rows, " rows of values were given for one ciphertext");
        return encoder_->encode(std::vector<std::complex<double>>(values.values.begin(), values.values.end()),
                                like.level(), scale, like.slots());
    } else {
        return encode_batch(*encoder_, values.values, values.rows, like.level(), scale, like.slots(),
                            like.device_queue());
    }
}

template <Encrypted T> T AutoEvaluator::relinearized(const T& a, const char* op) const {
    if (!eval_.keys() || !eval_.keys()->relin_key())
        raise<MissingKey>(op, ": the operand (", describe(a), ") has ", a.size(),
                          " polynomials and there is no relinearization key (generate one: relin_key(), or "
                          "keygen(relin=True) in Python)");
    return eval_.relinearize(a);
}

template <Encrypted T> T AutoEvaluator::bring_to(const T& x, int level, double scale, const char* op) const {
    if (same_scale(x.scale(), scale)) return x.level() > level ? eval_.drop_to_level(x, level) : x;
    if (x.level() <= level)
        raise<ScaleMismatch>(op, ": operand at ", describe(x), " cannot be brought to scale ", power_of_two(scale),
                             " at level ", level, " (that needs a rescale, i.e. a level above ", level, ")");
    // The integer correction factor is exact to 2^-41 once it is at least 2^41. One rescale by
    // q_{level+1} is enough between nearby scales; from a much larger scale (the standard scale of
    // a level of 60-bit primes, down to one of 40 bits) the factor over one prime is too small, so
    // r rescales by q_{level+1} .. q_{level+r} are taken: the first lands on scale times the other
    // r - 1 primes, and each plain rescale then divides by one of them exactly.
    const std::vector<uint64_t>& q = context()->q();
    int r = 1;
    double primes = double(q[size_t(level) + 1]);
    while (scale * primes / x.scale() < 0x1p41 && level + r < x.level()) {
        ++r;
        primes *= double(q[size_t(level + r)]);
    }
    const double factor = std::round(scale * primes / x.scale());
    if (!(factor >= 1) || !std::isfinite(factor) || std::fabs(x.scale() * factor / primes - scale) > 0x1p-41 * scale)
        raise<ScaleMismatch>(op, ": operand at ", describe(x), " cannot be brought to scale ", power_of_two(scale),
                             " at level ", level, " exactly (the correction factor ", power_of_two(scale * primes / x.scale()),
                             " over the primes between is too small to be exact); rescale it first or use matching scales");
    const double first_target = scale * primes / double(q[size_t(level + r)]);  // at level + r - 1
    T y = eval_.rescale_to(x.level() > level + r ? eval_.drop_to_level(x, level + r) : x, level + r - 1, first_target);
    for (int i = 1; i < r; ++i) eval_.rescale_inplace(y);
    return y;
}

template <Encrypted T> void AutoEvaluator::align(T& a, T& b, bool match_scales, const char* op) const {
    const Context& ctx = *context();
    if (a.level() == b.level()) {
        if (!match_scales || same_scale(a.scale(), b.scale())) return;
        const int l = a.level();
        if (l == 0)
            raise<ScaleMismatch>(op, ": operand 'a' has ", describe(a), " but operand 'b' has ", describe(b),
                                 "; aligning the scales needs a rescale and no level is left");
        a = bring_to(a, l - 1, ctx.standard_scale(l - 1), op);
        b = bring_to(b, l - 1, ctx.standard_scale(l - 1), op);
        return;
    }
    T& hi = a.level() > b.level() ? a : b;
    const T& lo = a.level() > b.level() ? b : a;
    if (match_scales) {
        hi = bring_to(hi, lo.level(), lo.scale(), op);
        return;
    }
    try {  // a product only needs one level; keep the scales standard where that is exact
        hi = bring_to(hi, lo.level(), lo.scale(), op);
    } catch (const ScaleMismatch&) {
        hi = eval_.drop_to_level(hi, lo.level());
    }
}

// ---- sums ----------------------------------------------------------------------------------------

namespace {
// Whether a + b needs nothing from the policy: one level and scale, and no broadcast operand
// larger than the ciphertexts it is combined with.
template <typename T> bool summable_as_is(const T& a, const T& b) {
    return a.level() == b.level() && same_scale(a.scale(), b.scale()) &&
           (b.size() <= a.size() || element_count(b) == element_count(a));
}
}  // namespace

template <Encrypted T> T AutoEvaluator::sum(const T& a, const T& b, bool subtract) const {
    const char* op = subtract ? "sub" : "add";
    if (summable_as_is(a, b)) return subtract ? eval_.sub(a, b) : eval_.add(a, b);
    T x = a, y = b;
    if (y.size() > x.size() && element_count(y) != element_count(x)) y = relinearized(y, op);
    align(x, y, true, op);
    subtract ? eval_.sub_inplace(x, y) : eval_.add_inplace(x, y);
    return x;
}

template <Encrypted T> T AutoEvaluator::add(const T& a, const T& b) const { return sum(a, b, false); }
template <Encrypted T> T AutoEvaluator::sub(const T& a, const T& b) const { return sum(a, b, true); }

template <Encrypted T> T AutoEvaluator::rsub(const T& a, const T& b) const {
    T x = eval_.negate(a);
    add_inplace(x, b);
    return x;
}

template <Encrypted T> void AutoEvaluator::add_inplace(T& a, const T& b) const {
    if (summable_as_is(a, b)) eval_.add_inplace(a, b);
    else a = add(a, b);
}

template <Encrypted T> void AutoEvaluator::sub_inplace(T& a, const T& b) const {
    if (summable_as_is(a, b)) eval_.sub_inplace(a, b);
    else a = sub(a, b);
}

template <Encrypted T, typename P>
requires PlainOperandOf<P, T> void AutoEvaluator::plain_at_one_level(T& a, const P& b, std::optional<P>& dropped) const {
    if (b.level() > a.level()) dropped = dropped_to(b, a.level(), eval_);
    else if (a.level() > b.level()) eval_.drop_to_level_inplace(a, b.level());
}

template <Encrypted T, typename P> requires PlainOperandOf<P, T> T AutoEvaluator::add(const T& a, const P& b) const {
    T x = a;
    std::optional<P> dropped;
    plain_at_one_level(x, b, dropped);
    eval_.add_inplace(x, dropped ? *dropped : b);
    return x;
}

template <Encrypted T, typename P> requires PlainOperandOf<P, T> T AutoEvaluator::sub(const T& a, const P& b) const {
    T x = a;
    std::optional<P> dropped;
    plain_at_one_level(x, b, dropped);
    eval_.sub_inplace(x, dropped ? *dropped : b);
    return x;
}

template <Encrypted T, typename P> requires PlainOperandOf<P, T> T AutoEvaluator::rsub(const T& a, const P& b) const {
    T x = eval_.negate(a);
    std::optional<P> dropped;
    plain_at_one_level(x, b, dropped);
    eval_.add_inplace(x, dropped ? *dropped : b);
    return x;
}

template <Encrypted T>
T AutoEvaluator::add_constant(const T& a, std::complex<double> c, std::optional<size_t> count) const {
    const size_t used = count ? *count : a.slots();
    if (c.imag() == 0 && used == a.slots()) return eval_.add(a, c.real());  // a constant polynomial
    // Only the `used` slots get the constant (the padding slots stay zero for rotations).
    const std::vector<std::complex<double>> row(used, c);
    return eval_.add(a, encode(a, SlotValues{row, 1}, a.scale()));
}

template <Encrypted T> T AutoEvaluator::add(const T& a, std::complex<double> c, std::optional<size_t> count) const {
    return add_constant(a, c, count);
}
template <Encrypted T> T AutoEvaluator::sub(const T& a, std::complex<double> c, std::optional<size_t> count) const {
    return add_constant(a, -c, count);
}
template <Encrypted T> T AutoEvaluator::rsub(const T& a, std::complex<double> c, std::optional<size_t> count) const {
    return add_constant(eval_.negate(a), c, count);
}

template <Encrypted T> T AutoEvaluator::add(const T& a, SlotValues values) const {
    return eval_.add(a, encode(a, values, a.scale()));
}
template <Encrypted T> T AutoEvaluator::sub(const T& a, SlotValues values) const {
    return eval_.sub(a, encode(a, values, a.scale()));
}
template <Encrypted T> T AutoEvaluator::rsub(const T& a, SlotValues values) const {
    T x = eval_.negate(a);
    eval_.add_inplace(x, encode(x, values, x.scale()));
    return x;
}

// ---- products ------------------------------------------------------------------------------------

template <Encrypted T> T AutoEvaluator::multiply(const T& a, const T& b) const {
    const char* op = "multiply";
    if (!eval_.keys() || !eval_.keys()->relin_key())
        raise<MissingKey>(op, ": there is no relinearization key for the product (generate one: relin_key(), or "
                              "keygen(relin=True) in Python; manual mode keeps the size-3 product instead)");
    std::optional<T> ra, rb;
    if (a.size() > 2) ra = relinearized(a, op);
    if (b.size() > 2) rb = relinearized(b, op);
    if (refreshes(a)) ra = refresher_->refresh(eval_, ra ? *ra : a);
    if (refreshes(b)) rb = &a == &b ? *ra : refresher_->refresh(eval_, rb ? *rb : b);
    const T& pa = ra ? *ra : a;
    const T& pb = rb ? *rb : b;
    if (pa.level() == pb.level()) {
        check_level_for_multiply(pa.level(), describe(pa), op);
        return eval_.multiply_relin_rescale(pa, pb);
    }
    T x = pa, y = pb;
    align(x, y, false, op);
    check_level_for_multiply(x.level(), describe(x), op);
    return eval_.multiply_relin_rescale(x, y);
}

template <Encrypted T> void AutoEvaluator::multiply_inplace(T& a, const T& b) const { a = multiply(a, b); }
template <Encrypted T> T AutoEvaluator::square(const T& a) const { return multiply(a, a); }

template <Encrypted T, typename P>
requires PlainOperandOf<P, T> T AutoEvaluator::multiply(const T& a, const P& b) const {
    T x = refreshes(a) ? refresher_->refresh(eval_, a) : a;
    std::optional<P> dropped;
    plain_at_one_level(x, b, dropped);
    check_level_for_multiply(x.level(), describe(x), "multiply");
    eval_.multiply_inplace(x, dropped ? *dropped : b);
    return eval_.rescale(x);
}

template <Encrypted T> T AutoEvaluator::multiply(const T& a, int64_t c) const { return eval_.multiply_integer(a, c); }

template <Encrypted T> T AutoEvaluator::multiply(const T& a, std::complex<double> c) const {
    if (const auto k = integer_value(c)) return eval_.multiply_integer(a, *k);  // exact: no level
    if (refreshes(a)) return multiply(refresher_->refresh(eval_, a), c);
    const double t = product_scale(a.level(), a.scale(), describe(a), "multiply");
    const double v = std::round(c.real() * t);
    if (c.imag() == 0 && std::isfinite(v) && std::fabs(v) < 0x1p62) {
        // The constant encoded at scale t is the integer round(c * t): multiply by it and label.
        T x = eval_.multiply_integer(a, int64_t(v));
        x.set_scale(a.scale() * t);
        return eval_.rescale(x);
    }
    const std::vector<std::complex<double>> row(a.slots(), c);
    return eval_.rescale(eval_.multiply(a, encode(a, SlotValues{row, 1}, t)));
}

template <Encrypted T> T AutoEvaluator::multiply(const T& a, SlotValues values) const {
    if (refreshes(a)) return multiply(refresher_->refresh(eval_, a), values);
    const double t = product_scale(a.level(), a.scale(), describe(a), "multiply");
    return eval_.rescale(eval_.multiply(a, encode(a, values, t)));
}

// ---- rotations, conjugation, levels --------------------------------------------------------------

template <Encrypted T> T AutoEvaluator::rotate(const T& a, int64_t k) const {
    std::optional<T> r;
    if (a.size() > 2) r = relinearized(a, "rotate");
    const T& x = r ? *r : a;
    const std::vector<int64_t> plan = rotation_plan(k, x.slots());
    if (plan.empty()) return x;
    T out = eval_.rotate(x, plan[0]);
    for (size_t i = 1; i < plan.size(); ++i) out = eval_.rotate(out, plan[i]);
    return out;
}

// Each element's step becomes its rotation plan, and round r rotates every element by the r-th
// step of its plan (0, a copy, once its plan is done): the same rotations as on each element
// alone, one call of the queue per round.
template <Encrypted T> T AutoEvaluator::rotate(const T& a, const std::vector<int64_t>& steps) const {
    if (steps.size() != element_count(a))
        raise<ValueError>("rotate: ", steps.size(), " steps were given for a ", describe(a), "; give one per element");
    std::vector<std::vector<int64_t>> plans;
    size_t rounds = 0;
    for (int64_t k : steps) {
        plans.push_back(rotation_plan(k, a.slots()));
        rounds = std::max(rounds, plans.back().size());
    }
    T out = a.size() > 2 ? relinearized(a, "rotate") : a;
    for (size_t r = 0; r < rounds; ++r) {
        std::vector<int64_t> round(plans.size(), 0);
        for (size_t c = 0; c < plans.size(); ++c)
            if (r < plans[c].size()) round[c] = plans[c][r];
        out = eval_.rotate(out, round);
    }
    return out;
}

template <Encrypted T> T AutoEvaluator::conjugate(const T& a) const {
    if (a.size() > 2) return eval_.conjugate(relinearized(a, "conjugate"));
    return eval_.conjugate(a);
}

template <Encrypted T> T AutoEvaluator::relinearize(const T& a) const {
    return a.size() > 2 ? relinearized(a, "relinearize") : a;
}

template <Encrypted T> T AutoEvaluator::drop_to_level(const T& a, int level) const {
    const Context& ctx = *context();
    if (level >= 0 && level < a.level() && same_scale(a.scale(), ctx.standard_scale(a.level()))) {
        try {
            return bring_to(a, level, ctx.standard_scale(level), "drop_to_level");
        } catch (const ScaleMismatch&) {
        }
    }
    return eval_.drop_to_level(a, level);
}

// ---- the two operand types -------------------------------------------------------------------

#define OBORO_AUTO_FOR(T)                                                                                   \
    template PlaintextOf<T> AutoEvaluator::encode(const T&, SlotValues, double) const;                     \
    template T AutoEvaluator::bring_to(const T&, int, double, const char*) const;                          \
    template T AutoEvaluator::add(const T&, const T&) const;                                               \
    template T AutoEvaluator::sub(const T&, const T&) const;                                               \
    template T AutoEvaluator::rsub(const T&, const T&) const;                                              \
    template void AutoEvaluator::add_inplace(T&, const T&) const;                                          \
    template void AutoEvaluator::sub_inplace(T&, const T&) const;                                          \
    template T AutoEvaluator::add(const T&, std::complex<double>, std::optional<size_t>) const;            \
    template T AutoEvaluator::sub(const T&, std::complex<double>, std::optional<size_t>) const;            \
    template T AutoEvaluator::rsub(const T&, std::complex<double>, std::optional<size_t>) const;           \
    template T AutoEvaluator::add(const T&, SlotValues) const;                                             \
    template T AutoEvaluator::sub(const T&, SlotValues) const;                                             \
    template T AutoEvaluator::rsub(const T&, SlotValues) const;                                            \
    template T AutoEvaluator::multiply(const T&, const T&) const;                                          \
    template void AutoEvaluator::multiply_inplace(T&, const T&) const;                                     \
    template T AutoEvaluator::square(const T&) const;                                                      \
    template T AutoEvaluator::multiply(const T&, int64_t) const;                                           \
    template T AutoEvaluator::multiply(const T&, std::complex<double>) const;                              \
    template T AutoEvaluator::multiply(const T&, SlotValues) const;                                        \
    template T AutoEvaluator::rotate(const T&, int64_t) const;                                             \
    template T AutoEvaluator::rotate(const T&, const std::vector<int64_t>&) const;                         \
    template T AutoEvaluator::conjugate(const T&) const;                                                   \
    template T AutoEvaluator::relinearize(const T&) const;                                                 \
    template T AutoEvaluator::drop_to_level(const T&, int) const;

OBORO_AUTO_FOR(Ciphertext)
OBORO_AUTO_FOR(CiphertextBatch)
#undef OBORO_AUTO_FOR

#define OBORO_AUTO_PLAIN(T, P)                                          \
    template T AutoEvaluator::add(const T&, const P&) const;           \
    template T AutoEvaluator::sub(const T&, const P&) const;           \
    template T AutoEvaluator::rsub(const T&, const P&) const;          \
    template T AutoEvaluator::multiply(const T&, const P&) const;

OBORO_AUTO_PLAIN(Ciphertext, Plaintext)
OBORO_AUTO_PLAIN(CiphertextBatch, Plaintext)
OBORO_AUTO_PLAIN(CiphertextBatch, PlaintextBatch)
#undef OBORO_AUTO_PLAIN

}  // namespace oboro::ckks
