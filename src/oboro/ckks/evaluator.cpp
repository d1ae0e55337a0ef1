#include "oboro/ckks/evaluator.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include "oboro/math/modarith.hpp"
#include "oboro/util/error.hpp"

namespace oboro::ckks {

// ---- helpers shared with the automatic mode and the algorithms ---------------------------------

bool same_scale(double a, double b) { return std::fabs(a - b) <= 0x1p-40 * std::max(std::fabs(a), std::fabs(b)); }

std::string power_of_two(double x, int decimals) {
    std::ostringstream os;
    os.setf(std::ios::fixed);
    os.precision(decimals);
    os << "2^" << std::log2(x);
    return os.str();
}

// 10 decimals: enough to tell 2^40 from 2^80/q for a q near 2^40.
namespace {
std::string level_and_scale(int level, double scale, size_t special_limbs) {
    return "level " + std::to_string(level) + ", scale " + power_of_two(scale, 10) + (special_limbs ? ", over Q*P" : "");
}
}  // namespace

std::string describe(const PolyArray& x) { return level_and_scale(x.level(), x.scale(), x.special_limbs()); }

std::string describe(const PolyBatch& x) {
    return "batch of " + std::to_string(x.count()) + ", " + level_and_scale(x.level(), x.scale(), x.special_limbs());
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

// ---- how the evaluator sees its operands --------------------------------------------------------

namespace {

template <typename T> constexpr bool is_batch = std::same_as<T, CiphertextBatch> || std::same_as<T, PlaintextBatch>;

// A Ciphertext or Plaintext is a batch of one in host memory.
backend::BatchSpan span_of(Ciphertext& c) {
    return {c.mutable_data(), 1, c.size(), c.limbs(), c.n(), c.special_limbs()};
}
backend::ConstBatchSpan span_of(const Ciphertext& c) {
    return {c.data(), 1, c.size(), c.limbs(), c.n(), c.special_limbs()};
}
// One polynomial; a CompactPlaintext's n() is its n / block words per limb, which the queue reads
// as runs (Queue::mul_plain_sum).
template <typename P> requires std::same_as<P, Plaintext> || std::same_as<P, CompactPlaintext>
backend::ConstBatchSpan span_of(const P& p) {
    return {p.data(), 1, 1, p.limbs(), p.n(), p.special_limbs()};
}
using ckks::span_of;

size_t count_of(const PolyArray&) { return 1; }
size_t count_of(const PolyBatch& x) { return x.count(); }
backend::Queue* memory_of(const PolyArray&) { return nullptr; }
backend::Queue* memory_of(const PolyBatch& x) { return x.device(); }
const char* memory_name_of(const PolyArray&) { return "host"; }
const char* memory_name_of(const PolyBatch& x) { return memory_name(x); }

// A result of `count` ciphertexts of `size` polynomials (contents undefined), in `memory`.
template <Encrypted T>
T make_output(const Context& ctx, const QueuePtr& memory, size_t count, size_t size, int level, double scale,
              size_t slots, Basis basis = Basis::q) {
    if constexpr (is_batch<T>) return CiphertextBatch(ctx, count, size, level, scale, slots, memory, basis);
    else return Ciphertext(ctx, size, level, scale, slots, basis);
}

// The same into an existing object, keeping its allocation when it has the right size.
template <Encrypted T>
void prepare_output(T& out, const Context& ctx, const QueuePtr& memory, size_t count, size_t size, int level,
                    double scale, size_t slots, Basis basis = Basis::q) {
    if constexpr (is_batch<T>) out.prepare_output(ctx, count, size, level, scale, slots, memory, basis);
    else out.prepare_output(ctx, size, level, scale, slots, basis);
}

// Which bases an operation takes: Q_level only (most), or also Q_level * P (the operations of
// double hoisting: sums, plaintext products, multiply-accumulate, negate, mod_down).
enum class Bases { q_only, any };

// The checks every operation makes, before anything is enqueued.
class Checks {
public:
    Checks(const Context& ctx, const backend::Queue& queue) : ctx_(ctx), queue_(queue) {}

    // x is not empty, lives where the queue computes, belongs to this context and is in a basis
    // the operation takes (and this queue runs).
    template <typename X> void operand(const char* op, const X& x, const char* name, Bases bases = Bases::q_only) const {
        if (x.empty()) raise<ValueError>(op, ": operand '", name, "' is empty");
        const backend::Queue* want = queue_.host_memory() ? nullptr : &queue_;
        if (memory_of(x) != want)
            raise<ValueError>(op, ": operand '", name, "' is in ", memory_name_of(x), " memory but this evaluator runs on ",
                              queue_.device_name(), is_batch<X> ? "; move it with to_device / to_host"
                                                                : "; evaluate it as a batch of one on that device "
                                                                  "(CiphertextBatch::from_ciphertexts, to_device)");
        if (x.context_id() != ctx_.id())
            raise<ContextMismatch>(op, ": operand '", name, "' (", describe(x), ") belongs to another parameter set");
        if (x.special_limbs()) {
            if (bases == Bases::q_only)
                raise<ValueError>(op, ": operand '", name, "' (", describe(x),
                                  ") is over the extended basis of double hoisting; mod_down it first");
            extended_basis(op);
        }
    }
    // Error when this queue does not run the extended basis Q_level * P.
    void extended_basis(const char* op) const {
        if (!queue_.extended_basis())
            raise<Error>(op, ": the extended basis Q_level * P is not available on ", queue_.device_name(), " yet");
    }

    // Two operands of one operation: both valid, in one basis, b with as many elements as a or
    // one, at one level.
    template <typename A, typename B>
    void pair(const char* op, const A& a, const B& b, Bases bases = Bases::q_only) const {
        operand(op, a, "a", bases);
        operand(op, b, "b", bases);
        if (a.basis() != b.basis())
            raise<ValueError>(op, ": operand 'a' (", describe(a), ") and operand 'b' (", describe(b),
                              ") are in different bases; extend or mod_down one of them");
        if (count_of(b) != count_of(a) && count_of(b) != 1)
            raise<ValueError>(op, ": operand 'a' is a ", describe(a), " but operand 'b' a ", describe(b),
                              "; 'b' must hold as many elements as 'a', or one");
        if (a.level() != b.level())
            raise<LevelMismatch>(op, ": operand 'a' is at ", describe(a), " but operand 'b' is at ", describe(b),
                                 "; bring both to the same level first (drop_to_level or rescale)");
    }

    template <typename A, typename B> void same_scale(const char* op, const A& a, const B& b) const {
        if (!ckks::same_scale(a.scale(), b.scale()))
            raise<ScaleMismatch>(op, ": operand 'a' has ", describe(a), " but operand 'b' has ", describe(b),
                                 "; the scales must match");
    }

    template <typename X> void size2(const char* op, const X& x, const char* name) const {
        if (x.size() != 2)
            raise<ValueError>(op, ": operand '", name, "' (", describe(x), ") has ", x.size(),
                              " polynomials; relinearize it first");
    }

    template <typename X> void product_scale(const char* op, const X& a, double scale_b) const {
        check_product_scale(ctx_, op, a.level(), a.scale(), scale_b);
    }

    template <typename X> void output_not_operand(const char* op, const X& out, const X& a, const X& b) const {
        if (&out == &a || &out == &b) raise<ValueError>(op, ": the output must not be an operand (use the _inplace form)");
    }

    // A key-switching key that covers x's level (a key made at a lower level cannot switch it).
    // `what` names the key in messages (a string or a callable that makes one, called only on
    // failure: checks run per element of a batch and must not allocate).
    template <typename X, typename What>
    void key_covers(const char* op, const KeySwitchKey& key, const X& x, const What& what) const {
        if (key.context_id != ctx_.id())
            raise<ContextMismatch>(op, ": the ", name_of(what), " belongs to another parameter set (operand 'a' is at ",
                                   describe(x), ")");
        if (key.special < 1 || key.special > ctx_.p_count() || key.qp_limbs <= key.special)
            raise<ValueError>(op, ": the ", name_of(what), " has ", key.qp_limbs, " limbs of which ", key.special,
                              " special; these parameters have 1..", ctx_.p_count(), " special primes");
        const size_t key_q = key.qp_limbs - key.special;
        if (key_q < size_t(x.level() + 1) || key.digits < ctx_.ring().digits_at(x.level()))
            raise<LevelMismatch>(op, ": the ", name_of(what), " was generated up to level ", int(key_q) - 1,
                                 " but operand 'a' is at ", describe(x), "; generate it at level ", x.level(),
                                 " or above");
    }

    // The relinearization key, checked (MissingKey when there is none).
    template <typename X> const RelinKey& relin_key(const char* op, const RelinKey* rk, const X& a) const {
        if (!rk || rk->empty())
            raise<MissingKey>(op, ": no relinearization key for operand 'a' (", describe(a),
                              "); generate one with relin_key()");
        key_covers(op, *rk, a, "relinearization key");
        return *rk;
    }

    // -slots < step < slots; `index` (when not npos) names the step's place in a list of steps.
    template <typename X>
    void step(const char* op, const X& a, int64_t s, const char* index_name, size_t index) const {
        const int64_t slots = int64_t(a.slots());
        if (s <= -slots || s >= slots)
            raise<ValueError>(op, ": step ", s, " is out of range for operand 'a' (", describe(a), ") with ", slots,
                              " slots (allowed: ", -(slots - 1), " .. ", slots - 1, ")",
                              index == npos ? std::string()
                              : std::string_view(index_name) == "element"
                                  ? "; it is the step of element " + std::to_string(index)
                                  : "; it is " + std::string(index_name) + " " + std::to_string(index) + " of the list");
    }
    static constexpr size_t npos = size_t(-1);

private:
    static std::string name_of(const char* what) { return what; }
    template <typename F> static std::string name_of(const F& what) { return what(); }

    const Context& ctx_;
    const backend::Queue& queue_;
};

// The permutation and key of each step (nullptr for a step 0), checked before any work:
// ValueError for a step out of range (naming `index_name` and its index when there are several),
// MissingKey naming every step without a key, ContextMismatch / LevelMismatch for keys that do not
// fit.
template <typename X>
void galois_of_steps(const Context& ctx, const Checks& check, const char* op, const X& a,
                     const std::vector<int64_t>& steps, const char* index_name, const KeySet& keys,
                     std::vector<const uint32_t*>& perms, std::vector<backend::KeySwitchKeyView>& views) {
    check.size2(op, a, "a");
    if (keys.context_id() != 0 && keys.context_id() != ctx.id())
        raise<ContextMismatch>(op, ": the Galois keys belong to another parameter set (operand 'a' is at ", describe(a),
                               ")");
    perms.assign(steps.size(), nullptr);
    views.assign(steps.size(), {});
    std::vector<int64_t> missing;
    for (size_t c = 0; c < steps.size(); ++c) {
        const int64_t s = steps[c];
        check.step(op, a, s, index_name, steps.size() > 1 ? c : Checks::npos);
        if (s == 0) continue;
        const uint64_t g = ctx.galois_element(s);
        const KeySwitchKey* key = keys.galois_key(g);
        if (!key) {
            if (std::find(missing.begin(), missing.end(), s) == missing.end()) missing.push_back(s);
            continue;
        }
        check.key_covers(op, *key, a, [s] { return "Galois key of the rotation by " + std::to_string(s); });
        perms[c] = ctx.automorphism_permutation(g).data();
        views[c] = key->view();
    }
    if (!missing.empty()) {
        std::string list;
        for (size_t i = 0; i < missing.size(); ++i) list += (i ? ", " : "") + std::to_string(missing[i]);
        raise<MissingKey>(op, ": no Galois key for the rotation", missing.size() > 1 ? "s" : "", " by ", list,
                          " of operand 'a' (", describe(a), "); generate ", missing.size() > 1 ? "them" : "it",
                          " with galois_keys({", list, "})");
    }
}

}  // namespace

// ---- construction ------------------------------------------------------------------------------

Evaluator::Evaluator(ContextPtr ctx, QueuePtr queue)
    : ctx_(std::move(ctx)), queue_(queue ? std::move(queue) : backend::cpu_queue()) {}

Evaluator::Evaluator(ContextPtr ctx, std::shared_ptr<const KeySet> keys, QueuePtr queue)
    : ctx_(std::move(ctx)), queue_(queue ? std::move(queue) : backend::cpu_queue()), keys_(std::move(keys)) {}

const KeySet& Evaluator::own_keys() const {
    static const MemoryKeySet none;
    return keys_ ? *keys_ : none;
}

namespace {
// Where an evaluator's outputs live: nullptr (host memory) or its device queue.
QueuePtr output_memory(const QueuePtr& queue) { return queue->host_memory() ? nullptr : queue; }
}  // namespace

// ---- addition and subtraction ----------------------------------------------------------------

namespace {
// The checks of a ciphertext sum: pair, scale, and a broadcast 'b' no larger than 'a'.
template <typename T> void check_sum(const Checks& check, const char* op, const T& a, const T& b) {
    check.pair(op, a, b, Bases::any);
    check.same_scale(op, a, b);
    if (b.size() > a.size() && count_of(b) != count_of(a))
        raise<ValueError>(op, ": operand 'b' (", describe(b), ", combined with every element) has ", b.size(),
                          " polynomials but operand 'a' has ", a.size(), "; relinearize 'b' first");
}
}  // namespace

template <Encrypted T> void Evaluator::add_into(const T& a, const T& b, T& out) const {
    const Checks check(*ctx_, *queue_);
    check_sum(check, "add", a, b);
    check.output_not_operand("add", out, a, b);
    const bool a_larger = a.size() >= b.size();
    const T& big = a_larger ? a : b;
    const T& small = a_larger ? b : a;
    prepare_output(out, *ctx_, output_memory(queue_), count_of(a), big.size(), a.level(), a.scale(),
                   std::max(a.slots(), b.slots()), a.basis());
    queue_->add(ctx_->ring(), span_of(out), span_of(big), span_of(small));
}

template <Encrypted T> T Evaluator::add(const T& a, const T& b) const {
    T out;
    add_into(a, b, out);
    return out;
}

template <Encrypted T> void Evaluator::add_inplace(T& a, const T& b) const {
    const Checks check(*ctx_, *queue_);
    check_sum(check, "add", a, b);
    if (a.size() < b.size()) {
        a = add(a, b);
        return;
    }
    queue_->add(ctx_->ring(), span_of(a), span_of(std::as_const(a)), span_of(b));
}

template <Encrypted T> T Evaluator::sub(const T& a, const T& b) const {
    const Checks check(*ctx_, *queue_);
    check_sum(check, "sub", a, b);
    const size_t size = std::max(a.size(), b.size());
    T out = make_output<T>(*ctx_, output_memory(queue_), count_of(a), size, a.level(), a.scale(),
                           std::max(a.slots(), b.slots()), a.basis());
    if (a.size() >= b.size()) {
        queue_->sub(ctx_->ring(), span_of(out), span_of(a), span_of(b));
    } else {  // b - a, negated: a - b on a's polynomials and -b on the others
        queue_->sub(ctx_->ring(), span_of(out), span_of(b), span_of(a));
        queue_->negate(ctx_->ring(), span_of(out), span_of(std::as_const(out)));
    }
    return out;
}

template <Encrypted T> void Evaluator::sub_inplace(T& a, const T& b) const {
    const Checks check(*ctx_, *queue_);
    check_sum(check, "sub", a, b);
    if (a.size() < b.size()) {
        a = sub(a, b);
        return;
    }
    queue_->sub(ctx_->ring(), span_of(a), span_of(std::as_const(a)), span_of(b));
}

namespace {
// out = a + b (or a - b) for a plaintext b, checked first; out may be a.
template <typename T, typename P>
void plain_sum(const Context& ctx, const QueuePtr& queue, const char* op, T& out, const T& a, const P& b,
               bool subtract) {
    const Checks check(ctx, *queue);
    check.pair(op, a, b, Bases::any);
    check.same_scale(op, a, b);
    if (&out != &a)
        out = make_output<T>(ctx, output_memory(queue), count_of(a), a.size(), a.level(), a.scale(), a.slots(),
                             a.basis());
    subtract ? queue->sub(ctx.ring(), span_of(out), span_of(a), span_of(b))
             : queue->add(ctx.ring(), span_of(out), span_of(a), span_of(b));
}
}  // namespace

template <Encrypted T, typename P> requires PlainOperandOf<P, T> void Evaluator::add_inplace(T& a, const P& b) const {
    plain_sum(*ctx_, queue_, "add", a, std::as_const(a), b, false);
}

template <Encrypted T, typename P> requires PlainOperandOf<P, T> T Evaluator::add(const T& a, const P& b) const {
    T out;
    plain_sum(*ctx_, queue_, "add", out, a, b, false);
    return out;
}

template <Encrypted T, typename P> requires PlainOperandOf<P, T> void Evaluator::sub_inplace(T& a, const P& b) const {
    plain_sum(*ctx_, queue_, "sub", a, std::as_const(a), b, true);
}

template <Encrypted T, typename P> requires PlainOperandOf<P, T> T Evaluator::sub(const T& a, const P& b) const {
    T out;
    plain_sum(*ctx_, queue_, "sub", out, a, b, true);
    return out;
}

namespace {
// out = a + c (or a - c) for a constant c added to every slot, checked first; out may be a. A
// constant polynomial is the same value in every NTT slot: c at a's scale, per limb.
template <typename T>
void constant_sum(const Context& ctx, const QueuePtr& queue, const char* op, T& out, const T& a, double c,
                  bool subtract) {
    Checks(ctx, *queue).operand(op, a, "a");
    auto s = scaled_constant(ctx, op, c, a.scale(), a.level());
    if (subtract)
        for (size_t i = 0; i < s.size(); ++i) s[i] = math::neg_mod(s[i], ctx.q()[i]);
    if (&out != &a) out = make_output<T>(ctx, output_memory(queue), count_of(a), a.size(), a.level(), a.scale(), a.slots());
    queue->add_scalar(ctx.ring(), span_of(out), span_of(a), s.data());
}
}  // namespace

template <Encrypted T> void Evaluator::add_inplace(T& a, double c) const {
    constant_sum(*ctx_, queue_, "add", a, std::as_const(a), c, false);
}

template <Encrypted T> T Evaluator::add(const T& a, double c) const {
    T out;
    constant_sum(*ctx_, queue_, "add", out, a, c, false);
    return out;
}

template <Encrypted T> void Evaluator::sub_inplace(T& a, double c) const {
    constant_sum(*ctx_, queue_, "sub", a, std::as_const(a), c, true);
}

template <Encrypted T> T Evaluator::sub(const T& a, double c) const {
    T out;
    constant_sum(*ctx_, queue_, "sub", out, a, c, true);
    return out;
}

template <Encrypted T> void Evaluator::negate_inplace(T& a) const {
    Checks(*ctx_, *queue_).operand("negate", a, "a", Bases::any);
    queue_->negate(ctx_->ring(), span_of(a), span_of(std::as_const(a)));
}

template <Encrypted T> T Evaluator::negate(const T& a) const {
    Checks(*ctx_, *queue_).operand("negate", a, "a", Bases::any);
    T out = make_output<T>(*ctx_, output_memory(queue_), count_of(a), a.size(), a.level(), a.scale(), a.slots(),
                           a.basis());
    queue_->negate(ctx_->ring(), span_of(out), span_of(a));
    return out;
}

// ---- multiplication ----------------------------------------------------------------------------

namespace {
template <typename T> void check_multiply(const Checks& check, const char* op, const T& a, const T& b) {
    check.pair(op, a, b);
    check.size2(op, a, "a");
    check.size2(op, b, "b");
    check.product_scale(op, a, b.scale());
}
}  // namespace

template <Encrypted T> void Evaluator::multiply_into(const T& a, const T& b, T& out) const {
    const Checks check(*ctx_, *queue_);
    check_multiply(check, "multiply", a, b);
    check.output_not_operand("multiply", out, a, b);
    prepare_output(out, *ctx_, output_memory(queue_), count_of(a), 3, a.level(), a.scale() * b.scale(),
                   std::max(a.slots(), b.slots()));
    queue_->tensor(ctx_->ring(), span_of(out), span_of(a), span_of(b));
}

template <Encrypted T> T Evaluator::multiply(const T& a, const T& b) const {
    T out;
    multiply_into(a, b, out);
    return out;
}

template <Encrypted T> void Evaluator::multiply_inplace(T& a, const T& b) const { a = multiply(a, b); }

template <Encrypted T> T Evaluator::square(const T& a) const { return multiply(a, a); }

template <Encrypted T, typename P>
requires PlainOperandOf<P, T> void Evaluator::multiply_inplace(T& a, const P& b) const {
    const Checks check(*ctx_, *queue_);
    check.pair("multiply", a, b, Bases::any);
    check.product_scale("multiply", a, b.scale());
    queue_->mul_plain(ctx_->ring(), span_of(a), span_of(std::as_const(a)), span_of(b));
    a.set_scale(a.scale() * b.scale());
}

template <Encrypted T, typename P> requires PlainOperandOf<P, T> T Evaluator::multiply(const T& a, const P& b) const {
    const Checks check(*ctx_, *queue_);
    check.pair("multiply", a, b, Bases::any);
    check.product_scale("multiply", a, b.scale());
    T out = make_output<T>(*ctx_, output_memory(queue_), count_of(a), a.size(), a.level(), a.scale() * b.scale(),
                           a.slots(), a.basis());
    queue_->mul_plain(ctx_->ring(), span_of(out), span_of(a), span_of(b));
    return out;
}

template <Encrypted T> void Evaluator::multiply_inplace(T& a, double c) const {
    const Checks check(*ctx_, *queue_);
    check.operand("multiply", a, "a");
    const double const_scale = double(ctx_->q()[size_t(a.level())]);
    check.product_scale("multiply", a, const_scale);
    const auto s = scaled_constant(*ctx_, "multiply", c, const_scale, a.level());
    queue_->mul_scalar(ctx_->ring(), span_of(a), span_of(std::as_const(a)), s.data());
    a.set_scale(a.scale() * const_scale);
}

template <Encrypted T> T Evaluator::multiply(const T& a, double c) const {
    T out = a;
    multiply_inplace(out, c);
    return out;
}

template <Encrypted T> void Evaluator::multiply_integer_inplace(T& a, int64_t c) const {
    Checks(*ctx_, *queue_).operand("multiply_integer", a, "a");
    const auto s = integer_residues(*ctx_, c, a.level());
    queue_->mul_scalar(ctx_->ring(), span_of(a), span_of(std::as_const(a)), s.data());
}

template <Encrypted T> T Evaluator::multiply_integer(const T& a, int64_t c) const {
    Checks(*ctx_, *queue_).operand("multiply_integer", a, "a");
    const auto s = integer_residues(*ctx_, c, a.level());
    T out = make_output<T>(*ctx_, output_memory(queue_), count_of(a), a.size(), a.level(), a.scale(), a.slots());
    queue_->mul_scalar(ctx_->ring(), span_of(out), span_of(a), s.data());
    return out;
}

// ---- multiply-accumulate ------------------------------------------------------------------------

namespace {
// The checks of acc += a * (something at scale_b): acc valid, at a's level and element count,
// with `size` polynomials, at the product's scale.
template <typename T>
void check_accumulator(const Checks& check, const char* op, const T& acc, const T& a, size_t size, double scale_b,
                       bool a_may_be_above = false) {
    check.operand(op, acc, "acc", Bases::any);
    if (acc.basis() != a.basis())
        raise<ValueError>(op, ": the accumulator (", describe(acc), ") and operand 'a' (", describe(a),
                          ") are in different bases");
    if (element_count(acc) != element_count(a))
        raise<ValueError>(op, ": the accumulator is a ", describe(acc), " but operand 'a' a ", describe(a),
                          "; they must hold as many elements");
    if (a_may_be_above ? a.level() < acc.level() : a.level() != acc.level())
        raise<LevelMismatch>(op, ": the accumulator is at ", describe(acc), " but operand 'a' at ", describe(a),
                             a_may_be_above ? "; the operand must be at the accumulator's level or above"
                                            : "; accumulate at one level");
    if (a.level() != acc.level() && acc.basis() != Basis::q)
        raise<ValueError>(op, ": an operand above the accumulator's level must be over Q, not ", describe(a));
    if (acc.size() != size)
        raise<ValueError>(op, ": the accumulator (", describe(acc), ") has ", acc.size(), " polynomials; ", size,
                          " are needed for these products");
    if (!same_scale(acc.scale(), a.scale() * scale_b))
        raise<ScaleMismatch>(op, ": the product of operand 'a' (", describe(a), ") and a factor at scale 2^",
                             std::log2(scale_b), " is at scale 2^", std::log2(a.scale() * scale_b),
                             " but the accumulator is at ", describe(acc));
}
}  // namespace

template <Encrypted T, typename P>
requires PlainOperandOf<P, T> void Evaluator::multiply_accumulate(T& acc, const T& a, const P& b) const {
    const char* op = "multiply_accumulate";
    const Checks check(*ctx_, *queue_);
    check.pair(op, a, b, Bases::any);
    check_accumulator(check, op, acc, a, a.size(), b.scale());
    queue_->mul_plain_add(ctx_->ring(), span_of(acc), span_of(a), span_of(b));
}

namespace {
// One sum of multiply_plain_sum(s) checked, its operands' spans appended to as and bs: `term`
// numbers its terms in the errors from `first_term` (a sum of multiply_plain_sums counts on from
// the sums before it), whose shape every operand must have (the sum's own first term when null).
template <Encrypted T, typename P>
void check_plain_sum(const Checks& check, const char* op, const std::vector<const T*>& a, const std::vector<const P*>& b,
                     const T* shape, size_t first_term, std::vector<backend::ConstBatchSpan>& as,
                     std::vector<backend::ConstBatchSpan>& bs) {
    if (a.empty() || a.size() != b.size())
        raise<ValueError>(op, ": ", a.size(), " ciphertexts and ", b.size(), " plaintexts; give as many of each, at "
                          "least one");
    const T& first = shape ? *shape : *a[0];
    const double scale = a[0]->scale() * b[0]->scale();
    for (size_t j = 0; j < a.size(); ++j) {
        const size_t term = first_term + j;
        check.pair(op, *a[j], *b[j], Bases::any);
        check.product_scale(op, *a[j], b[j]->scale());
        if constexpr (std::same_as<P, CompactPlaintext>)
            if (a[j]->size() != 2)
                raise<ValueError>(op, ": term ", term, "'s operand has ", a[j]->size(), " polynomials; a compact "
                                  "plaintext multiplies ciphertexts of 2 (relinearize first)");
        if (term > 0) {
            const T& x = *a[j];
            if (x.level() != first.level())
                raise<LevelMismatch>(op, ": term ", term, "'s operand is at ", describe(x), " but term 0's at ",
                                     describe(first), "; sum products of one level");
            if (x.basis() != first.basis() || x.size() != first.size() || element_count(x) != element_count(first))
                raise<ValueError>(op, ": term ", term, "'s operand (", describe(x), ") and term 0's (", describe(first),
                                  ") differ in basis, size or element count");
        }
        if (j > 0 && !same_scale(a[j]->scale() * b[j]->scale(), scale))
            raise<ScaleMismatch>(op, ": term ", term, "'s product is at scale 2^", std::log2(a[j]->scale() * b[j]->scale()),
                                 " but term ", first_term, "'s at 2^", std::log2(scale));
        as.push_back(span_of(*a[j]));
        bs.push_back(span_of(*b[j]));
    }
}
}  // namespace

template <Encrypted T, typename P>
requires SumPlainOperandOf<P, T>
T Evaluator::multiply_plain_sum(const std::vector<const T*>& a, const std::vector<const P*>& b) const {
    const char* op = "multiply_plain_sum";
    const Checks check(*ctx_, *queue_);
    std::vector<backend::ConstBatchSpan> as, bs;
    check_plain_sum(check, op, a, b, static_cast<const T*>(nullptr), 0, as, bs);
    const T& first = *a[0];
    T out = make_output<T>(*ctx_, output_memory(queue_), count_of(first), first.size(), first.level(),
                           first.scale() * b[0]->scale(), first.slots(), first.basis());
    queue_->mul_plain_sum(ctx_->ring(), span_of(out), as.data(), bs.data(), as.size());
    return out;
}

template <Encrypted T, typename P>
requires SumPlainOperandOf<P, T>
std::vector<T> Evaluator::multiply_plain_sums(const std::vector<std::vector<const T*>>& a,
                                              const std::vector<std::vector<const P*>>& b) const {
    const char* op = "multiply_plain_sums";
    if (a.empty() || a.size() != b.size())
        raise<ValueError>(op, ": ", a.size(), " lists of ciphertexts and ", b.size(), " of plaintexts; give as many "
                          "of each, at least one");
    const Checks check(*ctx_, *queue_);
    std::vector<backend::ConstBatchSpan> as, bs;
    std::vector<size_t> ends;
    for (size_t g = 0; g < a.size(); ++g) {
        if (a[g].empty())
            raise<ValueError>(op, ": sum ", g, " has no terms; give each sum at least one");
        check_plain_sum(check, op, a[g], b[g], a[0][0], as.size(), as, bs);
        ends.push_back(as.size());
    }
    const T& first = *a[0][0];
    std::vector<T> out;
    std::vector<backend::BatchSpan> outs;
    out.reserve(a.size());
    for (size_t g = 0; g < a.size(); ++g)
        out.push_back(make_output<T>(*ctx_, output_memory(queue_), count_of(first), first.size(), first.level(),
                                     a[g][0]->scale() * b[g][0]->scale(), first.slots(), first.basis()));
    for (T& o : out) outs.push_back(span_of(o));
    queue_->mul_plain_sums(ctx_->ring(), outs.data(), outs.size(), as.data(), bs.data(), ends.data());
    return out;
}

template <Encrypted T> void Evaluator::multiply_accumulate(T& acc, const T& a, const T& b) const {
    const char* op = "multiply_accumulate";
    const Checks check(*ctx_, *queue_);
    check_multiply(check, op, a, b);
    check_accumulator(check, op, acc, a, 3, b.scale());
    if (&acc == &a || &acc == &b) raise<ValueError>(op, ": the accumulator must not be an operand");
    queue_->tensor_add(ctx_->ring(), span_of(acc), span_of(a), span_of(b));
}

template <Encrypted T> void Evaluator::multiply_accumulate(T& acc, const T& a, double c) const {
    multiply_accumulate(acc, std::vector<const T*>{&a}, std::vector<double>{c});
}

template <Encrypted T>
void Evaluator::multiply_accumulate(T& acc, const std::vector<const T*>& a, const std::vector<double>& c) const {
    const char* op = "multiply_accumulate";
    if (a.size() != c.size())
        raise<ValueError>(op, ": ", a.size(), " operands and ", c.size(), " constants; one constant per operand");
    const Checks check(*ctx_, *queue_);
    // every term checked before any is added: a bad one leaves acc as it was
    std::vector<std::vector<uint64_t>> constants(a.size());
    std::vector<backend::ConstBatchSpan> from(a.size());
    std::vector<const uint64_t*> per_limb(a.size());
    for (size_t j = 0; j < a.size(); ++j) {
        if (!a[j]) raise<ValueError>(op, ": operand ", j, " is a null pointer");
        check.operand(op, *a[j], "a");
        const double t = acc.scale() / a[j]->scale();
        if (!(t >= 0x1p20))
            raise<ValueError>(op, ": the constant would be encoded at scale 2^", std::log2(t), " (the accumulator's ",
                              describe(acc), " over operand 'a''s ", describe(*a[j]),
                              "); at least 2^20 is needed to keep 20 bits of it");
        check_accumulator(check, op, acc, *a[j], a[j]->size(), t, true);
        constants[j] = scaled_constant(*ctx_, op, c[j], t, acc.level());
        per_limb[j] = constants[j].data();
    }
    if (a.empty()) return;
    const backend::BatchSpan to = span_of(acc);
    for (size_t j = 0; j < a.size(); ++j) from[j] = span_of(*a[j]);
    // operands above acc's level: each polynomial's limbs up to it, the words of a dropped to it
    // without the copy
    queue_->mul_scalar_sum(ctx_->ring(), to, from.data(), per_limb.data(), a.size());
}

template <Encrypted T>
T Evaluator::zero_like(const T& like, size_t size, int level, double scale, Basis basis) const {
    const Checks check(*ctx_, *queue_);
    check.operand("zero_like", like, "like", Bases::any);
    if (size < 2 || size > 3) raise<ValueError>("zero_like: a ciphertext has 2 or 3 polynomials, not ", size);
    if (basis == Basis::qp) check.extended_basis("zero_like");
    T out = make_output<T>(*ctx_, output_memory(queue_), count_of(like), size, level, scale, like.slots(), basis);
    queue_->fill_zero(span_of(out));
    return out;
}

// ---- exact target scales -------------------------------------------------------------------------

template <Encrypted T> T Evaluator::multiply_to(const T& a, double c, int level, double scale) const {
    const char* op = "multiply_to";
    const Checks check(*ctx_, *queue_);
    check.operand(op, a, "a");
    if (level < 0 || level >= a.level())
        raise<LevelMismatch>(op, ": the target level ", level, " must be below the operand's (", describe(a), ")");
    const double ql = double(ctx_->q()[size_t(a.level())]);
    const double t = scale * ql / a.scale();
    if (!(t >= 0x1p20) || !std::isfinite(t))
        raise<ValueError>(op, ": reaching scale 2^", std::log2(scale), " from ", describe(a),
                          " encodes the constant at scale 2^", std::log2(t), "; at least 2^20 is needed");
    check.product_scale(op, a, t);
    const auto s = scaled_constant(*ctx_, op, c, t, a.level());
    T scaled = make_output<T>(*ctx_, output_memory(queue_), count_of(a), a.size(), a.level(), a.scale() * t, a.slots());
    queue_->mul_scalar(ctx_->ring(), span_of(scaled), span_of(a), s.data());
    T out = rescale(scaled);
    out.set_scale(scale);  // a.scale * t / q_l is `scale` up to the rounding of the two divisions
    if (level != out.level()) drop_to_level_inplace(out, level);
    return out;
}

// ---- relinearization, rescaling, levels --------------------------------------------------------

template <Encrypted T> T Evaluator::relinearize_with(const char* op, const T& a, const RelinKey* rk) const {
    const Checks check(*ctx_, *queue_);
    check.operand(op, a, "a");
    const RelinKey& key = check.relin_key(op, rk, a);
    if (a.size() == 2) return a;
    if (a.size() != 3)
        raise<ValueError>(op, ": operand 'a' (", describe(a), ") has ", a.size(),
                          " polynomials; only size-3 ciphertexts can be relinearized");
    T out = make_output<T>(*ctx_, output_memory(queue_), count_of(a), 2, a.level(), a.scale(), a.slots());
    queue_->relinearize(ctx_->ring(), span_of(out), span_of(a), key.view());
    return out;
}

template <Encrypted T> T Evaluator::relinearize(const T& a, const RelinKey& rk) const {
    return relinearize_with("relinearize", a, &rk);
}
template <Encrypted T> void Evaluator::relinearize_inplace(T& a, const RelinKey& rk) const {
    if (a.size() == 2) {
        Checks check(*ctx_, *queue_);
        check.operand("relinearize", a, "a");
        check.relin_key("relinearize", &rk, a);
        return;
    }
    a = relinearize_with("relinearize", a, &rk);
}
template <Encrypted T> T Evaluator::relinearize(const T& a) const {
    return relinearize_with("relinearize", a, own_keys().relin_key());
}
template <Encrypted T> void Evaluator::relinearize_inplace(T& a) const {
    if (a.size() == 2) {
        Checks check(*ctx_, *queue_);
        check.operand("relinearize", a, "a");
        check.relin_key("relinearize", own_keys().relin_key(), a);
        return;
    }
    a = relinearize_with("relinearize", a, own_keys().relin_key());
}

template <Encrypted T> T Evaluator::rescale(const T& a) const {
    Checks(*ctx_, *queue_).operand("rescale", a, "a", Bases::any);
    const int l = a.level();
    if (l == 0)
        raise<LevelMismatch>("rescale: operand 'a' (", describe(a), ") is at level 0; no prime is left to divide by");
    T out = make_output<T>(*ctx_, output_memory(queue_), count_of(a), a.size(), l - 1,
                           a.scale() / double(ctx_->q()[size_t(l)]), a.slots());
    if (a.basis() == Basis::qp) queue_->mod_down_rescale(ctx_->ring(), span_of(out), span_of(a));
    else queue_->rescale(ctx_->ring(), span_of(out), span_of(a));
    return out;
}

template <Encrypted T> void Evaluator::rescale_inplace(T& a) const { a = rescale(a); }

namespace {
// The checks of a product relinearized and rescaled (multiply_relin_rescale and
// multiply_add_relin_rescale); returns the key.
template <Encrypted T>
const RelinKey& check_relin_rescale(const Checks& check, const char* op, const T& a, const T& b, const RelinKey* rk) {
    check.operand(op, a, "a");
    const RelinKey& key = check.relin_key(op, rk, a);
    if (a.level() == 0)
        raise<LevelMismatch>(op, ": operand 'a' (", describe(a), ") is at level 0; no prime is left to rescale by");
    check_multiply(check, op, a, b);
    return key;
}
}  // namespace

template <Encrypted T>
void Evaluator::multiply_relin_rescale_with(const T& a, const T& b, const RelinKey* rk, T& out) const {
    const char* op = "multiply_relin_rescale";
    const Checks check(*ctx_, *queue_);
    const RelinKey& key = check_relin_rescale(check, op, a, b, rk);
    check.output_not_operand(op, out, a, b);
    const int l = a.level();
    prepare_output(out, *ctx_, output_memory(queue_), count_of(a), 2, l - 1,
                   a.scale() * b.scale() / double(ctx_->q()[size_t(l)]), std::max(a.slots(), b.slots()));
    queue_->multiply_relin_rescale(ctx_->ring(), span_of(out), span_of(a), span_of(b), key.view());
}

template <Encrypted T> void Evaluator::multiply_relin_rescale_into(const T& a, const T& b, const RelinKey& rk, T& out) const {
    multiply_relin_rescale_with(a, b, &rk, out);
}
template <Encrypted T> T Evaluator::multiply_relin_rescale(const T& a, const T& b, const RelinKey& rk) const {
    T out;
    multiply_relin_rescale_with(a, b, &rk, out);
    return out;
}
template <Encrypted T> void Evaluator::multiply_relin_rescale_inplace(T& a, const T& b, const RelinKey& rk) const {
    a = multiply_relin_rescale(a, b, rk);
}
template <Encrypted T> T Evaluator::multiply_relin_rescale(const T& a, const T& b) const {
    T out;
    multiply_relin_rescale_with(a, b, own_keys().relin_key(), out);
    return out;
}
template <Encrypted T> void Evaluator::multiply_relin_rescale_inplace(T& a, const T& b) const {
    a = multiply_relin_rescale(a, b);
}

template <Encrypted T>
T Evaluator::multiply_add_relin_rescale_with(const T& a, const T& b, const T& c, const RelinKey* rk) const {
    const char* op = "multiply_add_relin_rescale";
    const Checks check(*ctx_, *queue_);
    const RelinKey& key = check_relin_rescale(check, op, a, b, rk);
    check.operand(op, c, "c");
    if (c.size() != 2 && c.size() != 3)  // a third polynomial is key-switched with the product's
        raise<ValueError>(op, ": operand 'c' (", describe(c), ") has ", c.size(),
                          " polynomials; it must have 2 or 3");
    if (count_of(c) != count_of(a) && count_of(c) != 1)
        raise<ValueError>(op, ": operand 'a' is a ", describe(a), " but operand 'c' a ", describe(c),
                          "; 'c' must hold as many elements as 'a', or one");
    if (c.level() != a.level())
        raise<LevelMismatch>(op, ": operand 'a' is at ", describe(a), " but operand 'c' is at ", describe(c),
                             "; 'c' is added to the product before its rescale, at the operands' level");
    const double product_scale = a.scale() * b.scale();
    if (!same_scale(c.scale(), product_scale))
        raise<ScaleMismatch>(op, ": operand 'c' has ", describe(c), " but the product of 'a' and 'b' has scale ",
                             power_of_two(product_scale, 10), "; 'c' must be at the product's scale");
    const int l = a.level();
    T out = make_output<T>(*ctx_, output_memory(queue_), count_of(a), 2, l - 1,
                           product_scale / double(ctx_->q()[size_t(l)]),
                           std::max({a.slots(), b.slots(), c.slots()}));
    queue_->multiply_add_relin_rescale(ctx_->ring(), span_of(out), span_of(a), span_of(b), span_of(c), key.view());
    return out;
}
template <Encrypted T>
T Evaluator::multiply_add_relin_rescale(const T& a, const T& b, const T& c, const RelinKey& rk) const {
    return multiply_add_relin_rescale_with(a, b, c, &rk);
}
template <Encrypted T> T Evaluator::multiply_add_relin_rescale(const T& a, const T& b, const T& c) const {
    return multiply_add_relin_rescale_with(a, b, c, own_keys().relin_key());
}

template <Encrypted T> T Evaluator::rescale_to(const T& a, int level, double scale) const {
    const Checks check(*ctx_, *queue_);
    check.operand("rescale_to", a, "a");
    if (level < 0 || level >= a.level())
        raise<LevelMismatch>("rescale_to: the target level ", level, " must be below the operand's (", describe(a), ")");
    const double ql = double(ctx_->q()[size_t(a.level())]);
    const double factor = std::round(scale * ql / a.scale());
    if (!(factor >= 1) || !std::isfinite(factor))
        raise<ScaleMismatch>("rescale_to: cannot reach scale 2^", std::log2(scale), " from ", describe(a),
                             " with one rescale by 2^", std::log2(ql));
    check.product_scale("rescale_to", a, factor);
    const auto s = scaled_constant(*ctx_, "rescale_to", 1.0, factor, a.level());
    T scaled = make_output<T>(*ctx_, output_memory(queue_), count_of(a), a.size(), a.level(), a.scale() * factor,
                              a.slots());
    queue_->mul_scalar(ctx_->ring(), span_of(scaled), span_of(a), s.data());
    T out = rescale(scaled);
    if (level != out.level()) drop_to_level_inplace(out, level);
    return out;
}

template <Encrypted T> void Evaluator::rescale_to_inplace(T& a, int level, double scale) const {
    a = rescale_to(a, level, scale);
}

namespace {
template <typename X> void check_drop(const char* op, const X& a, int level) {
    if (level < 0 || level > a.level())
        raise<LevelMismatch>(op, ": cannot go from ", describe(a), " to level ", level, " (only down, to 0..",
                             a.level(), ")");
}
}  // namespace

template <Encrypted T> T Evaluator::drop_to_level(const T& a, int level) const {
    Checks(*ctx_, *queue_).operand("drop_to_level", a, "a");
    check_drop("drop_to_level", a, level);
    T out = make_output<T>(*ctx_, output_memory(queue_), count_of(a), a.size(), level, a.scale(), a.slots());
    queue_->drop_limbs(span_of(out), span_of(a));
    return out;
}

template <Encrypted T> void Evaluator::drop_to_level_inplace(T& a, int level) const {
    Checks(*ctx_, *queue_).operand("drop_to_level", a, "a");
    check_drop("drop_to_level", a, level);
    if constexpr (is_batch<T>) a = drop_to_level(a, level);
    else a.reshape(a.size(), level);  // host memory: the kept limbs move down in place
}

// ---- rotations and conjugation -----------------------------------------------------------------

template <Encrypted T>
T Evaluator::rotate_with(const char* op, const T& a, const std::vector<int64_t>& steps, const char* index_name,
                         const KeySet& keys) const {
    const Checks check(*ctx_, *queue_);
    check.operand(op, a, "a");
    if (steps.size() != count_of(a))
        raise<ValueError>(op, ": ", steps.size(), " steps were given for a ", describe(a), "; give one per element");
    std::vector<const uint32_t*> perms;
    std::vector<backend::KeySwitchKeyView> views;
    galois_of_steps(*ctx_, check, op, a, steps, index_name, keys, perms, views);
    if (std::all_of(perms.begin(), perms.end(), [](const uint32_t* p) { return !p; })) return a;
    std::vector<const backend::KeySwitchKeyView*> key_of(steps.size(), nullptr);
    for (size_t c = 0; c < steps.size(); ++c)
        if (perms[c]) key_of[c] = &views[c];
    T out = make_output<T>(*ctx_, output_memory(queue_), count_of(a), 2, a.level(), a.scale(), a.slots());
    queue_->apply_galois(ctx_->ring(), span_of(out), span_of(a), perms.data(), key_of.data());
    return out;
}

template <Encrypted T> T Evaluator::rotate(const T& a, int64_t steps, const GaloisKeys& keys) const {
    return rotate_with("rotate", a, std::vector<int64_t>(element_count(a), steps), "element", KeyRefs(keys));
}
template <Encrypted T> void Evaluator::rotate_inplace(T& a, int64_t steps, const GaloisKeys& keys) const {
    a = rotate(a, steps, keys);
}
template <Encrypted T> T Evaluator::rotate(const T& a, int64_t steps) const {
    return rotate_with("rotate", a, std::vector<int64_t>(element_count(a), steps), "element", own_keys());
}
template <Encrypted T> void Evaluator::rotate_inplace(T& a, int64_t steps) const { a = rotate(a, steps); }
template <Encrypted T> T Evaluator::rotate(const T& a, const std::vector<int64_t>& steps, const GaloisKeys& keys) const {
    return rotate_with("rotate", a, steps, "element", KeyRefs(keys));
}
template <Encrypted T> T Evaluator::rotate(const T& a, const std::vector<int64_t>& steps) const {
    return rotate_with("rotate", a, steps, "element", own_keys());
}

template <Encrypted T> T Evaluator::apply_galois(const T& a, uint64_t galois, const GaloisKeys& keys, const char* op) const {
    return apply_galois_with(a, galois, KeyRefs(keys), op);
}

template <Encrypted T>
T Evaluator::apply_galois_with(const T& a, uint64_t galois, const KeySet& keys, const char* op) const {
    const Checks check(*ctx_, *queue_);
    check.operand(op, a, "a");
    check.size2(op, a, "a");
    if (keys.context_id() != 0 && keys.context_id() != ctx_->id())
        raise<ContextMismatch>(op, ": the Galois keys belong to another parameter set (operand 'a' is at ", describe(a),
                               ")");
    const bool conjugation = galois == ctx_->conjugation_element();
    const KeySwitchKey* key = keys.galois_key(galois);
    if (!key) {
        if (conjugation)
            raise<MissingKey>(op, ": no conjugation key for operand 'a' (", describe(a),
                              "); generate Galois keys with conjugation = true");
        raise<MissingKey>(op, ": no Galois key for the Galois element ", galois, " (operand 'a' at ", describe(a), ")");
    }
    check.key_covers(op, *key, a, conjugation ? "conjugation key" : "Galois key");
    return permute_and_switch(a, galois, *key);
}

template <Encrypted T> T Evaluator::permute_and_switch(const T& a, uint64_t galois, const KeySwitchKey& key) const {
    // the Galois kernel with the identity permutation (galois = 1) is a plain key switch
    const std::vector<const uint32_t*> perms(element_count(a), ctx_->automorphism_permutation(galois).data());
    const backend::KeySwitchKeyView view = key.view();
    const std::vector<const backend::KeySwitchKeyView*> key_of(element_count(a), &view);
    T out = make_output<T>(*ctx_, output_memory(queue_), count_of(a), 2, a.level(), a.scale(), a.slots());
    queue_->apply_galois(ctx_->ring(), span_of(out), span_of(a), perms.data(), key_of.data());
    return out;
}

template <Encrypted T> T Evaluator::switch_key(const T& a, const KeySwitchKey& key, const char* op) const {
    const Checks check(*ctx_, *queue_);
    check.operand(op, a, "a");
    check.size2(op, a, "a");
    if (key.empty()) raise<MissingKey>(op, ": the switching key is empty");
    check.key_covers(op, key, a, "switching key");
    return permute_and_switch(a, 1, key);
}

template <Encrypted T> T Evaluator::conjugate_with(const T& a, const KeySet& keys) const {
    return apply_galois_with(a, ctx_->conjugation_element(), keys, "conjugate");
}

template <Encrypted T> T Evaluator::conjugate(const T& a, const GaloisKeys& keys) const {
    return conjugate_with(a, KeyRefs(keys));
}
template <Encrypted T> void Evaluator::conjugate_inplace(T& a, const GaloisKeys& keys) const { a = conjugate(a, keys); }
template <Encrypted T> T Evaluator::conjugate(const T& a) const { return conjugate_with(a, own_keys()); }
template <Encrypted T> void Evaluator::conjugate_inplace(T& a) const { a = conjugate(a); }

// ---- hoisted rotations ---------------------------------------------------------------------------

namespace {
// The steps that rotate, as the hoisted kernels take them. Their keys share one ModUp of the
// operand, so they must be over the same special primes (`special`, when given: exactly those).
struct Hoisted {
    std::vector<const uint32_t*> perms;
    std::vector<const backend::KeySwitchKeyView*> keys;
    size_t identities = 0;
    template <typename X>
    Hoisted(const char* op, const X& a, const std::vector<int64_t>& steps, const std::vector<const uint32_t*>& step_perms,
            const std::vector<backend::KeySwitchKeyView>& views, std::optional<size_t> special = std::nullopt) {
        const bool required = special.has_value();
        for (size_t r = 0; r < step_perms.size(); ++r) {
            if (!step_perms[r]) {
                ++identities;
                continue;
            }
            if (!special) special = views[r].special;
            if (views[r].special != *special)
                raise<ValueError>(op, ": the Galois key of the rotation by ", steps[r], " is over ", views[r].special,
                                  " special primes but ", required ? "this operation needs " : "the others are over ",
                                  *special, " (hoisted rotations of operand 'a' (", describe(a),
                                  ") share one decomposition over the special primes)");
            perms.push_back(step_perms[r]);
            keys.push_back(&views[r]);
        }
    }
};
}  // namespace

template <Encrypted T>
std::vector<T> Evaluator::rotate_many_with(const T& a, const std::vector<int64_t>& steps, const KeySet& keys,
                                           KeySwitchCounts* counts) const {
    const Checks check(*ctx_, *queue_);
    check.operand("rotate_many", a, "a");
    std::vector<const uint32_t*> perms;
    std::vector<backend::KeySwitchKeyView> views;
    galois_of_steps(*ctx_, check, "rotate_many", a, steps, "step", keys, perms, views);
    const Hoisted hoisted("rotate_many", a, steps, perms, views);
    // every output allocated before the one call; a step 0 is a copy of a
    std::vector<T> out;
    out.reserve(steps.size());
    std::vector<backend::BatchSpan> spans;
    for (size_t r = 0; r < steps.size(); ++r) {
        if (perms[r]) out.push_back(make_output<T>(*ctx_, output_memory(queue_), count_of(a), 2, a.level(), a.scale(), a.slots()));
        else out.push_back(a);
    }
    for (size_t r = 0; r < steps.size(); ++r)
        if (perms[r]) spans.push_back(span_of(out[r]));
    if (!spans.empty())
        queue_->rotate_hoisted(ctx_->ring(), spans.data(), spans.size(), span_of(a), hoisted.perms.data(),
                               hoisted.keys.data());
    if (counts && !spans.empty()) {
        const uint64_t d = count_of(a), r = spans.size();
        counts->mod_ups += d, counts->inner_products += d * r, counts->mod_downs += d * r;
    }
    return out;
}

template <Encrypted T>
T Evaluator::rotate_sum_with(const T& a, const std::vector<int64_t>& steps, const KeySet& keys,
                             KeySwitchCounts* counts) const {
    const Checks check(*ctx_, *queue_);
    check.operand("rotate_sum", a, "a");
    if (steps.empty()) raise<ValueError>("rotate_sum: no steps given for operand 'a' (", describe(a), ")");
    std::vector<const uint32_t*> perms;
    std::vector<backend::KeySwitchKeyView> views;
    galois_of_steps(*ctx_, check, "rotate_sum", a, steps, "step", keys, perms, views);
    const Hoisted hoisted("rotate_sum", a, steps, perms, views);
    if (hoisted.perms.empty()) return multiply_integer(a, int64_t(hoisted.identities));  // only identities: exact
    T out = make_output<T>(*ctx_, output_memory(queue_), count_of(a), 2, a.level(), a.scale(), a.slots());
    queue_->rotate_sum_hoisted(ctx_->ring(), span_of(out), span_of(a), hoisted.perms.size(), hoisted.perms.data(),
                               hoisted.keys.data(), hoisted.identities);
    if (counts) {
        const uint64_t d = count_of(a);
        counts->mod_ups += d, counts->inner_products += d * hoisted.perms.size(), counts->mod_downs += d;
    }
    return out;
}

template <Encrypted T>
std::vector<T> Evaluator::rotate_many(const T& a, const std::vector<int64_t>& steps, const GaloisKeys& keys,
                                      KeySwitchCounts* counts) const {
    return rotate_many_with(a, steps, KeyRefs(keys), counts);
}
template <Encrypted T>
std::vector<T> Evaluator::rotate_many(const T& a, const std::vector<int64_t>& steps, KeySwitchCounts* counts) const {
    return rotate_many_with(a, steps, own_keys(), counts);
}
template <Encrypted T>
T Evaluator::rotate_sum(const T& a, const std::vector<int64_t>& steps, const GaloisKeys& keys,
                        KeySwitchCounts* counts) const {
    return rotate_sum_with(a, steps, KeyRefs(keys), counts);
}
template <Encrypted T>
T Evaluator::rotate_sum(const T& a, const std::vector<int64_t>& steps, KeySwitchCounts* counts) const {
    return rotate_sum_with(a, steps, own_keys(), counts);
}

// ---- the extended basis Q_level * P (double hoisting) --------------------------------------------

template <Encrypted T> T Evaluator::extend(const T& a) const {
    const Checks check(*ctx_, *queue_);
    check.operand("extend", a, "a");
    check.extended_basis("extend");
    T out = make_output<T>(*ctx_, output_memory(queue_), count_of(a), a.size(), a.level(), a.scale(), a.slots(),
                           Basis::qp);
    queue_->extend(ctx_->ring(), span_of(out), span_of(a));
    return out;
}

template <Encrypted T> T Evaluator::mod_raise(const T& a, std::optional<int> level) const {
    const char* op = "mod_raise";
    Checks(*ctx_, *queue_).operand(op, a, "a");
    if (a.size() != 2) raise<ValueError>(op, ": operand 'a' (", describe(a), ") has ", a.size(), " polynomials; relinearize first");
    if (a.level() != 0)
        raise<LevelMismatch>(op, ": operand 'a' (", describe(a), ") must be at level 0 (drop_to_level(a, 0) first)");
    const int to = level.value_or(ctx_->max_level());
    if (to < 1 || to > ctx_->max_level())
        raise<LevelMismatch>(op, ": the target level ", to, " is outside 1..", ctx_->max_level());
    T out = make_output<T>(*ctx_, output_memory(queue_), count_of(a), 2, to, a.scale(), a.slots());
    queue_->mod_raise(ctx_->ring(), span_of(out), span_of(a));
    return out;
}

template <Encrypted T> T Evaluator::mod_down(const T& a) const {
    Checks(*ctx_, *queue_).operand("mod_down", a, "a", Bases::any);
    if (a.basis() != Basis::qp)
        raise<ValueError>("mod_down: operand 'a' (", describe(a), ") is not over the extended basis Q_level * P");
    T out = make_output<T>(*ctx_, output_memory(queue_), count_of(a), a.size(), a.level(), a.scale(), a.slots());
    queue_->mod_down(ctx_->ring(), span_of(out), span_of(a));
    return out;
}

template <Encrypted T>
std::vector<T> Evaluator::rotate_many_extended(const T& a, const std::vector<int64_t>& steps, const GaloisKeys& keys,
                                               KeySwitchCounts* counts) const {
    return rotate_many_extended_with(a, steps, KeyRefs(keys), counts);
}

template <Encrypted T>
std::vector<T> Evaluator::rotate_many_extended(const T& a, const std::vector<int64_t>& steps,
                                               KeySwitchCounts* counts) const {
    return rotate_many_extended_with(a, steps, own_keys(), counts);
}

template <Encrypted T>
std::vector<T> Evaluator::rotate_many_extended_with(const T& a, const std::vector<int64_t>& steps, const KeySet& keys,
                                                    KeySwitchCounts* counts) const {
    const char* op = "rotate_many_extended";
    const Checks check(*ctx_, *queue_);
    check.operand(op, a, "a", Bases::any);
    check.extended_basis(op);
    const bool extended = a.basis() == Basis::qp;  // a sum of double hoisting: c1 divided by P first
    std::vector<const uint32_t*> perms;
    std::vector<backend::KeySwitchKeyView> views;
    galois_of_steps(*ctx_, check, op, a, steps, "step", keys, perms, views);
    const Hoisted hoisted(op, a, steps, perms, views, ctx_->p_count());  // the extended basis is over all of P
    std::vector<T> out;
    out.reserve(steps.size());
    std::vector<backend::BatchSpan> spans;
    for (size_t r = 0; r < steps.size(); ++r) {
        if (perms[r]) {
            out.push_back(make_output<T>(*ctx_, output_memory(queue_), count_of(a), 2, a.level(), a.scale(),
                                         a.slots(), Basis::qp));
        } else {
            out.push_back(extended ? a : extend(a));  // a step 0: a itself (lifted)
        }
    }
    for (size_t r = 0; r < steps.size(); ++r)
        if (perms[r]) spans.push_back(span_of(out[r]));
    if (!spans.empty()) {
        if (extended)
            queue_->rotate_hoisted_from_extended(ctx_->ring(), spans.data(), spans.size(), span_of(a),
                                                 hoisted.perms.data(), hoisted.keys.data());
        else
            queue_->rotate_hoisted_extended(ctx_->ring(), spans.data(), spans.size(), span_of(a),
                                            hoisted.perms.data(), hoisted.keys.data());
    }
    if (counts && !spans.empty()) {
        const uint64_t d = count_of(a);
        counts->mod_ups += d, counts->inner_products += d * spans.size();
        if (extended) counts->mod_downs += d;  // c1's division by P before its decomposition
    }
    return out;
}

// ---- the two operand types -------------------------------------------------------------------

#define OBORO_EVALUATOR_FOR(T)                                                                                  \
    template T Evaluator::add(const T&, const T&) const;                                                       \
    template void Evaluator::add_inplace(T&, const T&) const;                                                  \
    template T Evaluator::sub(const T&, const T&) const;                                                       \
    template void Evaluator::sub_inplace(T&, const T&) const;                                                  \
    template T Evaluator::add(const T&, double) const;                                                         \
    template void Evaluator::add_inplace(T&, double) const;                                                    \
    template T Evaluator::sub(const T&, double) const;                                                         \
    template void Evaluator::sub_inplace(T&, double) const;                                                    \
    template T Evaluator::negate(const T&) const;                                                              \
    template void Evaluator::negate_inplace(T&) const;                                                         \
    template void Evaluator::add_into(const T&, const T&, T&) const;                                           \
    template void Evaluator::multiply_into(const T&, const T&, T&) const;                                      \
    template void Evaluator::multiply_relin_rescale_into(const T&, const T&, const RelinKey&, T&) const;       \
    template T Evaluator::multiply(const T&, const T&) const;                                                  \
    template void Evaluator::multiply_inplace(T&, const T&) const;                                             \
    template T Evaluator::square(const T&) const;                                                              \
    template T Evaluator::multiply(const T&, double) const;                                                    \
    template void Evaluator::multiply_inplace(T&, double) const;                                               \
    template T Evaluator::multiply_integer(const T&, int64_t) const;                                           \
    template void Evaluator::multiply_integer_inplace(T&, int64_t) const;                                      \
    template T Evaluator::relinearize(const T&, const RelinKey&) const;                                        \
    template void Evaluator::relinearize_inplace(T&, const RelinKey&) const;                                   \
    template T Evaluator::relinearize(const T&) const;                                                         \
    template void Evaluator::relinearize_inplace(T&) const;                                                    \
    template T Evaluator::rescale(const T&) const;                                                             \
    template void Evaluator::rescale_inplace(T&) const;                                                        \
    template T Evaluator::multiply_relin_rescale(const T&, const T&, const RelinKey&) const;                   \
    template void Evaluator::multiply_relin_rescale_inplace(T&, const T&, const RelinKey&) const;              \
    template T Evaluator::multiply_relin_rescale(const T&, const T&) const;                                    \
    template void Evaluator::multiply_relin_rescale_inplace(T&, const T&) const;                               \
    template T Evaluator::multiply_add_relin_rescale(const T&, const T&, const T&, const RelinKey&) const;     \
    template T Evaluator::multiply_add_relin_rescale(const T&, const T&, const T&) const;                      \
    template T Evaluator::rescale_to(const T&, int, double) const;                                             \
    template void Evaluator::rescale_to_inplace(T&, int, double) const;                                        \
    template T Evaluator::drop_to_level(const T&, int) const;                                                  \
    template void Evaluator::drop_to_level_inplace(T&, int) const;                                             \
    template T Evaluator::rotate(const T&, int64_t, const GaloisKeys&) const;                                  \
    template void Evaluator::rotate_inplace(T&, int64_t, const GaloisKeys&) const;                             \
    template T Evaluator::rotate(const T&, int64_t) const;                                                     \
    template void Evaluator::rotate_inplace(T&, int64_t) const;                                                \
    template T Evaluator::rotate(const T&, const std::vector<int64_t>&, const GaloisKeys&) const;              \
    template T Evaluator::rotate(const T&, const std::vector<int64_t>&) const;                                 \
    template T Evaluator::conjugate(const T&, const GaloisKeys&) const;                                        \
    template void Evaluator::conjugate_inplace(T&, const GaloisKeys&) const;                                   \
    template T Evaluator::conjugate(const T&) const;                                                           \
    template void Evaluator::conjugate_inplace(T&) const;                                                      \
    template T Evaluator::apply_galois(const T&, uint64_t, const GaloisKeys&, const char*) const;              \
    template T Evaluator::switch_key(const T&, const KeySwitchKey&, const char*) const;                       \
    template void Evaluator::multiply_accumulate(T&, const T&, const T&) const;                                \
    template void Evaluator::multiply_accumulate(T&, const T&, double) const;                                  \
    template void Evaluator::multiply_accumulate(T&, const std::vector<const T*>&, const std::vector<double>&) const; \
    template T Evaluator::zero_like(const T&, size_t, int, double, Basis) const;                              \
    template T Evaluator::extend(const T&) const;                                                             \
    template T Evaluator::mod_down(const T&) const;                                                           \
    template T Evaluator::mod_raise(const T&, std::optional<int>) const;                                      \
    template std::vector<T> Evaluator::rotate_many_extended(const T&, const std::vector<int64_t>&,            \
                                                            KeySwitchCounts*) const;                          \
    template std::vector<T> Evaluator::rotate_many_extended(const T&, const std::vector<int64_t>&,            \
                                                            const GaloisKeys&, KeySwitchCounts*) const;       \
    template T Evaluator::multiply_to(const T&, double, int, double) const;                                   \
    template std::vector<T> Evaluator::rotate_many(const T&, const std::vector<int64_t>&, const GaloisKeys&,   \
                                                   KeySwitchCounts*) const;                                    \
    template std::vector<T> Evaluator::rotate_many(const T&, const std::vector<int64_t>&, KeySwitchCounts*) const; \
    template T Evaluator::rotate_sum(const T&, const std::vector<int64_t>&, const GaloisKeys&, KeySwitchCounts*) const; \
    template T Evaluator::rotate_sum(const T&, const std::vector<int64_t>&, KeySwitchCounts*) const;

OBORO_EVALUATOR_FOR(Ciphertext)
OBORO_EVALUATOR_FOR(CiphertextBatch)
#undef OBORO_EVALUATOR_FOR

#define OBORO_EVALUATOR_PLAIN(T, P)                                  \
    template T Evaluator::add(const T&, const P&) const;            \
    template void Evaluator::add_inplace(T&, const P&) const;       \
    template T Evaluator::sub(const T&, const P&) const;            \
    template void Evaluator::sub_inplace(T&, const P&) const;       \
    template T Evaluator::multiply(const T&, const P&) const;       \
    template void Evaluator::multiply_inplace(T&, const P&) const;  \
    template void Evaluator::multiply_accumulate(T&, const T&, const P&) const; \
    template T Evaluator::multiply_plain_sum(const std::vector<const T*>&, const std::vector<const P*>&) const; \
    template std::vector<T> Evaluator::multiply_plain_sums(const std::vector<std::vector<const T*>>&,                 \
                                                           const std::vector<std::vector<const P*>>&) const;

OBORO_EVALUATOR_PLAIN(Ciphertext, Plaintext)
OBORO_EVALUATOR_PLAIN(CiphertextBatch, Plaintext)
OBORO_EVALUATOR_PLAIN(CiphertextBatch, PlaintextBatch)
#undef OBORO_EVALUATOR_PLAIN
template Ciphertext Evaluator::multiply_plain_sum(const std::vector<const Ciphertext*>&,
                                                  const std::vector<const CompactPlaintext*>&) const;
template CiphertextBatch Evaluator::multiply_plain_sum(const std::vector<const CiphertextBatch*>&,
                                                       const std::vector<const CompactPlaintext*>&) const;
template std::vector<Ciphertext> Evaluator::multiply_plain_sums(const std::vector<std::vector<const Ciphertext*>>&,
                                                                const std::vector<std::vector<const CompactPlaintext*>>&) const;
template std::vector<CiphertextBatch> Evaluator::multiply_plain_sums(
    const std::vector<std::vector<const CiphertextBatch*>>&, const std::vector<std::vector<const CompactPlaintext*>>&) const;

}  // namespace oboro::ckks
