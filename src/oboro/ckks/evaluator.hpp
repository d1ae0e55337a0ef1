// Homomorphic operations: ONE evaluator for a single ciphertext and for a batch of ciphertexts
// (batch.hpp), on any device. Every operation is one call of the evaluator's device queue
// (backend/queue.hpp): one parallel loop over the batch on the CPU, one launch (or one short fixed
// sequence of launches) on a GPU; a Ciphertext is a batch of one. Results are therefore the same
// words whether a ciphertext is evaluated alone or as an element of a batch, on any device.
//
// Every operation has an allocating form that returns a new result (`add(a, b)`) and an in-place
// form that overwrites its first operand (`add_inplace(a, b)`), for a Ciphertext and for a
// CiphertextBatch alike (the member templates below take either; see the concept Encrypted).
// Operands are checked before anything is enqueued: a mismatch of context, level, scale, batch
// length or memory, a missing key or an impossible request throws a typed error (util/error.hpp)
// naming the operation and the operands, so an operation that throws leaves its in-place operand
// unchanged.
//
// Where things live: a Ciphertext is in host memory, so it is evaluated by an evaluator on the
// CPU queue (the default); a batch is evaluated by the evaluator of the queue whose memory holds
// it (CiphertextBatch::to_device). Operations never wait for the queue; synchronize() does (the
// CPU queue has finished each op when it returns).
//
// Keys: the overloads that take a RelinKey or GaloisKeys use those; the others use the key set
// the evaluator was made with (key_set.hpp; MissingKey when it has no such key). The evaluator
// never relinearizes, rescales or aligns on its own: that is the automatic mode's policy
// (auto_evaluator.hpp).
//
// Thread safety: an Evaluator is immutable; one may be used by several threads at once, on
// different outputs.
#pragma once

#include <complex>
#include <concepts>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "oboro/ckks/batch.hpp"
#include "oboro/ckks/ciphertext.hpp"
#include "oboro/ckks/key_switch_counts.hpp"
#include "oboro/ckks/key_set.hpp"
#include "oboro/ckks/keys.hpp"

namespace oboro::ckks {

// What the evaluator evaluates: one ciphertext (a batch of one) or a batch.
template <typename T>
concept Encrypted = std::same_as<T, Ciphertext> || std::same_as<T, CiphertextBatch>;

// A plaintext operand of T: a Plaintext (for a batch: the same plaintext for every element) or,
// for a batch, a PlaintextBatch (one plaintext per element, or one for all).
template <typename P, typename T>
concept PlainOperandOf = Encrypted<T> && (std::same_as<P, Plaintext> ||
                                          (std::same_as<T, CiphertextBatch> && std::same_as<P, PlaintextBatch>));

// A plaintext operand of multiply_plain_sum: those above, or a CompactPlaintext (ciphertext.hpp) in
// host memory, the same for every element of a batch.
template <typename P, typename T>
concept SumPlainOperandOf = PlainOperandOf<P, T> || (Encrypted<T> && std::same_as<P, CompactPlaintext>);

// The number of ciphertexts in x (1 for a Ciphertext).
inline size_t element_count(const Ciphertext&) { return 1; }
inline size_t element_count(const CiphertextBatch& x) { return x.count(); }

class Evaluator {
public:
    // queue: where the kernels run (nullptr: the CPU queue). keys: the evaluation keys of the
    // overloads without key arguments (nullptr: none).
    explicit Evaluator(ContextPtr ctx, QueuePtr queue = nullptr);
    Evaluator(ContextPtr ctx, std::shared_ptr<const KeySet> keys, QueuePtr queue = nullptr);

    const ContextPtr& context() const { return ctx_; }
    backend::Queue& queue() const { return *queue_; }
    const QueuePtr& queue_ptr() const { return queue_; }
    const std::shared_ptr<const KeySet>& keys() const { return keys_; }
    // The same evaluator (context, queue) with other evaluation keys; the second form borrows
    // `keys`, which must outlive the evaluator it returns (a call's local KeyRefs, for example).
    Evaluator with_keys(std::shared_ptr<const KeySet> keys) const { return Evaluator(ctx_, std::move(keys), queue_); }
    Evaluator with_keys(const KeySet& keys) const {
        return Evaluator(ctx_, std::shared_ptr<const KeySet>(std::shared_ptr<const void>(), &keys), queue_);
    }
    // The same evaluator (context, keys) on another queue (nullptr: the CPU queue).
    Evaluator on(QueuePtr queue) const { return Evaluator(ctx_, keys_, std::move(queue)); }
    // Blocks until every operation enqueued on the queue has finished.
    void synchronize() const { queue_->synchronize(); }

    // ---- addition and subtraction ----
    // Ciphertexts of equal level and scale (and, for batches, as many elements or one, which is
    // then combined with every element); sizes may differ (a size-3 product plus a size-2
    // ciphertext is a size-3 result).
    template <Encrypted T> T add(const T& a, const T& b) const;
    template <Encrypted T> void add_inplace(T& a, const T& b) const;
    template <Encrypted T> T sub(const T& a, const T& b) const;
    template <Encrypted T> void sub_inplace(T& a, const T& b) const;
    // Plaintext operands at the ciphertext's level and scale.
    template <Encrypted T, typename P> requires PlainOperandOf<P, T> T add(const T& a, const P& b) const;
    template <Encrypted T, typename P> requires PlainOperandOf<P, T> void add_inplace(T& a, const P& b) const;
    template <Encrypted T, typename P> requires PlainOperandOf<P, T> T sub(const T& a, const P& b) const;
    template <Encrypted T, typename P> requires PlainOperandOf<P, T> void sub_inplace(T& a, const P& b) const;
    // c added to (subtracted from) every slot.
    template <Encrypted T> T add(const T& a, double c) const;
    template <Encrypted T> void add_inplace(T& a, double c) const;
    template <Encrypted T> T sub(const T& a, double c) const;
    template <Encrypted T> void sub_inplace(T& a, double c) const;
    template <Encrypted T> T negate(const T& a) const;
    template <Encrypted T> void negate_inplace(T& a) const;

    // ---- into preallocated outputs ----
    // The same results as add / multiply / multiply_relin_rescale written into `out`, whose buffer
    // is reused when it has the right size (so a loop over many operands allocates once). `out`
    // must not be an operand.
    template <Encrypted T> void add_into(const T& a, const T& b, T& out) const;
    template <Encrypted T> void multiply_into(const T& a, const T& b, T& out) const;
    template <Encrypted T> void multiply_relin_rescale_into(const T& a, const T& b, const RelinKey& rk, T& out) const;

    // ---- multiplication ----
    // Ciphertext x ciphertext: a size-3 result at scale a.scale * b.scale (relinearize next).
    template <Encrypted T> T multiply(const T& a, const T& b) const;
    template <Encrypted T> void multiply_inplace(T& a, const T& b) const;
    template <Encrypted T> T square(const T& a) const;
    // Ciphertext x plaintext (at the ciphertext's level): scale a.scale * b.scale.
    template <Encrypted T, typename P> requires PlainOperandOf<P, T> T multiply(const T& a, const P& b) const;
    template <Encrypted T, typename P> requires PlainOperandOf<P, T> void multiply_inplace(T& a, const P& b) const;
    // Ciphertext x real constant, encoded at scale q_level so that a following rescale returns
    // the ciphertext to (almost exactly) its current scale.
    template <Encrypted T> T multiply(const T& a, double c) const;
    template <Encrypted T> void multiply_inplace(T& a, double c) const;
    // Ciphertext x integer: exact, consumes no level, keeps the scale.
    template <Encrypted T> T multiply_integer(const T& a, int64_t c) const;
    template <Encrypted T> void multiply_integer_inplace(T& a, int64_t c) const;

    // ---- multiply-accumulate: sums of products with no temporary ----
    // acc += a * b. acc is at a's level, with a's size (a size-3 accumulator for ciphertext
    // products: acc and a sized 3 and 2), at the scale of the products: acc.scale == a.scale *
    // b.scale (to 2^-40; ScaleMismatch otherwise). The products of a sum then share one
    // relinearization and one rescale.
    template <Encrypted T, typename P> requires PlainOperandOf<P, T>
    void multiply_accumulate(T& acc, const T& a, const P& b) const;
    template <Encrypted T> void multiply_accumulate(T& acc, const T& a, const T& b) const;
    // sum_j a[j] * b[j] in one pass over each limb (the products summed before they are reduced,
    // on the CPU): the words of multiply and multiply_accumulate term by term. The a[j] of one
    // level, basis, size and element count, each pair as multiply takes it, the products at one
    // scale (to 2^-40; ScaleMismatch otherwise); ValueError for no terms or unequal lists.
    // CompactPlaintexts multiply ciphertexts of 2 polynomials (ValueError otherwise) on a queue in
    // host memory (operands in host memory, as for every other operation).
    template <Encrypted T, typename P> requires SumPlainOperandOf<P, T>
    T multiply_plain_sum(const std::vector<const T*>& a, const std::vector<const P*>& b) const;
    // Several such sums at once, one output each: out[g] = multiply_plain_sum(a[g], b[g]) (the same
    // words), every operand of every sum in the shape of a[0][0] (level, basis, size, element
    // count; each sum's products at a scale of its own). The sums read their ciphertexts together
    // a piece of a limb at a time on the CPU, so that ciphertexts shared by the sums (a linear
    // transform's baby steps, summed by each of its giant groups) come from memory once, not once
    // per sum. ValueError for no sums, a sum without terms, or unequal lists.
    template <Encrypted T, typename P> requires SumPlainOperandOf<P, T>
    std::vector<T> multiply_plain_sums(const std::vector<std::vector<const T*>>& a,
                                       const std::vector<std::vector<const P*>>& b) const;
    // acc += a * c, with c encoded at the scale acc.scale / a.scale, so that the product lands
    // exactly on acc's scale (polynomial evaluation sums c_i * x_i at the scale it rescales to).
    // ValueError when that scale is below 2^20: c would be rounded to fewer than 20 bits. Unlike
    // the other accumulations, a may be above acc's level (over Q): its limbs above acc's are not
    // read, the words of drop_to_level(a, acc.level()) without that copy (a polynomial's terms,
    // summed at many levels from powers computed once).
    template <Encrypted T> void multiply_accumulate(T& acc, const T& a, double c) const;
    // acc += sum_j a[j] * c[j], each term as above, in one pass over acc where the queue can (the
    // CPU queue: each piece of acc in cache while every term adds to it): the words of the terms
    // one by one. Every term is checked before any is added; no terms add nothing.
    template <Encrypted T>
    void multiply_accumulate(T& acc, const std::vector<const T*>& a, const std::vector<double>& c) const;
    // A zero ciphertext (batch) like `like` (its element count, slots and memory) with `size`
    // polynomials at (level, scale), in `basis`: the start of an accumulation.
    template <Encrypted T>
    T zero_like(const T& like, size_t size, int level, double scale, Basis basis = Basis::q) const;

    // ---- double hoisting: the extended basis Q_level * P (ciphertext.hpp: Basis) ----
    // A linear transform sum_b w_b * rot(x, b) costs one ModDown instead of one per rotation when
    // the rotations stay over Q_level * P, are multiplied by plaintexts over Q_level * P
    // (Encoder::encode_extended) and summed there (multiply_accumulate, add), and the sum is
    // divided by P once (mod_down). Those operations, negate and sub take extended operands (all of
    // one basis); every other operation refuses them (ValueError: mod_down first).
    // The rotations of `a` by `steps`, kept over Q_level * P: ONE ModUp of each element's c1 for
    // all of them and no ModDown (a step 0 gives extend(a)). After mod_down, word for word
    // rotate_many's results. An `a` already over Q_level * P (a sum of such rotations) is rotated
    // as mod_down(a) would be, with only its c1 divided by P (for the decomposition; a ModDown
    // counted) and its c0 rotated as it is: the giant steps of a double-hoisted transform skip
    // c0's ModDown and lift (equal to rotating mod_down(a) up to c0's rounding to a multiple of P,
    // below one unit after the final mod_down).
    template <Encrypted T>
    std::vector<T> rotate_many_extended(const T& a, const std::vector<int64_t>& steps, const GaloisKeys& keys,
                                        KeySwitchCounts* counts = nullptr) const;
    template <Encrypted T>
    std::vector<T> rotate_many_extended(const T& a, const std::vector<int64_t>& steps,
                                        KeySwitchCounts* counts = nullptr) const;
    // a lifted into the extended basis: P * a on the ciphertext limbs, 0 on the special ones.
    template <Encrypted T> T extend(const T& a) const;
    // a over Q_level * P divided by P (with rounding) back to Q_level: the ModDown of key switching.
    template <Encrypted T> T mod_down(const T& a) const;

    // ---- bootstrapping ----
    // ModRaise: a (size 2, at level 0) lifted to the primes q_0 .. q_level (default: the top
    // level), each coefficient of c0 and c1 taken as its centred residue modulo q_0. The result
    // decrypts to m + q_0 * I for a small integer polynomial I (|I| <= (||s||_1 + 1) / 2); it keeps
    // a's scale and slots. LevelMismatch unless a is at level 0 and `level` is in 1..max_level.
    template <Encrypted T> T mod_raise(const T& a, std::optional<int> level = std::nullopt) const;

    // ---- exact target scales ----
    // a * c landing on exactly `scale` at `level` (below a's level): c is encoded at scale * q_l /
    // a.scale (l = a's level), the product rescaled by q_l and dropped to `level`, so the result's
    // scale is `scale` up to double rounding (2^-52 relative) however far the primes are from a
    // power of two. ValueError when c at that encoding scale does not fit the modulus or keeps
    // fewer than 20 bits.
    template <Encrypted T> T multiply_to(const T& a, double c, int level, double scale) const;

    // ---- relinearization, rescaling, levels ----
    // A size-3 ciphertext back to size 2 (a size-2 one is returned as it is).
    template <Encrypted T> T relinearize(const T& a, const RelinKey& rk) const;
    template <Encrypted T> void relinearize_inplace(T& a, const RelinKey& rk) const;
    template <Encrypted T> T relinearize(const T& a) const;  // with the key set's key
    template <Encrypted T> void relinearize_inplace(T& a) const;
    // Divides by the last prime q_l (with rounding) and drops it: level l -> l-1, scale / q_l. An
    // operand over Q_l * P is divided by q_l * P at once (mod_down and rescale in one division,
    // one rounding): the end of a double-hoisted transform.
    template <Encrypted T> T rescale(const T& a) const;
    template <Encrypted T> void rescale_inplace(T& a) const;
    // multiply + relinearize + rescale in one call, fused (one division by q_l * P).
    template <Encrypted T> T multiply_relin_rescale(const T& a, const T& b, const RelinKey& rk) const;
    template <Encrypted T> void multiply_relin_rescale_inplace(T& a, const T& b, const RelinKey& rk) const;
    template <Encrypted T> T multiply_relin_rescale(const T& a, const T& b) const;  // with the key set's key
    template <Encrypted T> void multiply_relin_rescale_inplace(T& a, const T& b) const;
    // a * b + c relinearized and rescaled in one call: c (size 2 or 3, at a's level, at the
    // product's scale a.scale * b.scale) joins the product before its one division by q_l, fused
    // like multiply_relin_rescale's. What a sum of a product and other terms rescaled once costs
    // without the rescale of its own (the Chebyshev step 2ab - c and the giant steps of polynomial
    // evaluation); a size-3 c (other products, not relinearized) shares the product's one key
    // switch (lazy relinearization).
    template <Encrypted T> T multiply_add_relin_rescale(const T& a, const T& b, const T& c, const RelinKey& rk) const;
    template <Encrypted T> T multiply_add_relin_rescale(const T& a, const T& b, const T& c) const;  // the key set's key
    // Brings `a` to a lower `level` at (almost exactly) the given `scale`, e.g. the level and scale
    // of a product, so that the two can be added: multiplies by the integer round(scale * q_l /
    // a.scale), rescales by q_l (the result's scale is then within 2^-40 of `scale`) and drops
    // any further limbs. Consumes one prime, exactly like the product it is matched to.
    template <Encrypted T> T rescale_to(const T& a, int level, double scale) const;
    template <Encrypted T> void rescale_to_inplace(T& a, int level, double scale) const;
    // Drops limbs down to `level` without changing the message or the scale.
    template <Encrypted T> T drop_to_level(const T& a, int level) const;
    template <Encrypted T> void drop_to_level_inplace(T& a, int level) const;

    // ---- rotations and conjugation ----
    // Left rotation by `steps` slots (negative: right), -slots < steps < slots.
    template <Encrypted T> T rotate(const T& a, int64_t steps, const GaloisKeys& keys) const;
    template <Encrypted T> void rotate_inplace(T& a, int64_t steps, const GaloisKeys& keys) const;
    template <Encrypted T> T rotate(const T& a, int64_t steps) const;  // with the key set's keys
    template <Encrypted T> void rotate_inplace(T& a, int64_t steps) const;
    // Element c rotated by steps[c] (one step per element, 0 allowed). MissingKey names every step
    // without a key.
    template <Encrypted T> T rotate(const T& a, const std::vector<int64_t>& steps, const GaloisKeys& keys) const;
    template <Encrypted T> T rotate(const T& a, const std::vector<int64_t>& steps) const;
    template <Encrypted T> T conjugate(const T& a, const GaloisKeys& keys) const;
    template <Encrypted T> void conjugate_inplace(T& a, const GaloisKeys& keys) const;
    template <Encrypted T> T conjugate(const T& a) const;
    template <Encrypted T> void conjugate_inplace(T& a) const;
    // The automorphism X -> X^galois followed by key switching (`op` names the caller in errors).
    template <Encrypted T> T apply_galois(const T& a, uint64_t galois, const GaloisKeys& keys, const char* op) const;
    // Key switching alone: a (size 2) decryptable under the key's source secret s' comes back
    // decryptable under its target s (KeyGenerator::switching_key; bootstrapping's switch to and
    // from an ephemeral sparse secret). LevelMismatch when the key was made below a's level.
    template <Encrypted T> T switch_key(const T& a, const KeySwitchKey& key, const char* op = "switch_key") const;

    // ---- hoisted rotations ----
    // out[i] = rotate(a, steps[i]) for every step (0 and repeats allowed), with ONE ModUp of each
    // element's c1 shared by all of them, in one call of the queue. Equal to the one-at-a-time
    // rotations up to key-switching noise. Every step is checked and every key looked up before
    // any work: a MissingKey names all the steps whose keys are missing.
    template <Encrypted T>
    std::vector<T> rotate_many(const T& a, const std::vector<int64_t>& steps, const GaloisKeys& keys,
                               KeySwitchCounts* counts = nullptr) const;
    template <Encrypted T>
    std::vector<T> rotate_many(const T& a, const std::vector<int64_t>& steps, KeySwitchCounts* counts = nullptr) const;
    // sum_i rotate(a, steps[i]) (a step 0 adds a itself, without a key) with one ModUp and one
    // ModDown per element: the key inner products are summed over Q*P and divided by P once (lazy
    // ModDown). ValueError for no steps.
    template <Encrypted T>
    T rotate_sum(const T& a, const std::vector<int64_t>& steps, const GaloisKeys& keys,
                 KeySwitchCounts* counts = nullptr) const;
    template <Encrypted T>
    T rotate_sum(const T& a, const std::vector<int64_t>& steps, KeySwitchCounts* counts = nullptr) const;

private:
    // The per-type work behind the public templates (evaluator.cpp); keys come as a KeySet.
    template <Encrypted T> T relinearize_with(const char* op, const T& a, const RelinKey* rk) const;
    template <Encrypted T> void multiply_relin_rescale_with(const T& a, const T& b, const RelinKey* rk, T& out) const;
    template <Encrypted T> T multiply_add_relin_rescale_with(const T& a, const T& b, const T& c, const RelinKey* rk) const;
    template <Encrypted T> T rotate_with(const char* op, const T& a, const std::vector<int64_t>& steps, const char* index_name,
                                         const KeySet& keys) const;
    template <Encrypted T> T conjugate_with(const T& a, const KeySet& keys) const;
    template <Encrypted T>
    T apply_galois_with(const T& a, uint64_t galois, const KeySet& keys, const char* op) const;
    // X -> X^galois (1: none) then key switching with `key`, already looked up and checked.
    template <Encrypted T> T permute_and_switch(const T& a, uint64_t galois, const KeySwitchKey& key) const;
    template <Encrypted T>
    std::vector<T> rotate_many_with(const T& a, const std::vector<int64_t>& steps, const KeySet& keys,
                                    KeySwitchCounts* counts) const;
    template <Encrypted T>
    T rotate_sum_with(const T& a, const std::vector<int64_t>& steps, const KeySet& keys, KeySwitchCounts* counts) const;
    template <Encrypted T>
    std::vector<T> rotate_many_extended_with(const T& a, const std::vector<int64_t>& steps, const KeySet& keys,
                                             KeySwitchCounts* counts) const;
    const KeySet& own_keys() const;

    ContextPtr ctx_;
    QueuePtr queue_;
    std::shared_ptr<const KeySet> keys_;
};

// Kept for code written before the evaluators were one: BatchEvaluator(ctx, queue) is
// Evaluator(ctx, queue).
using BatchEvaluator [[deprecated("use Evaluator: it evaluates batches and single ciphertexts")]] = Evaluator;

// Helpers shared with the automatic mode and the algorithms:
// round(c * scale) mod q_i for every limb of a level (ValueError when it does not fit).
std::vector<uint64_t> scaled_constant(const Context& ctx, const char* op, double c, double scale, int level);
// c mod q_i for every limb of a level.
std::vector<uint64_t> integer_residues(const Context& ctx, int64_t c, int level);
// ScaleMismatch when scale_a * scale_b does not fit the modulus at `level`.
void check_product_scale(const Context& ctx, const char* op, int level, double scale_a, double scale_b);

// Two scales are "the same" when they agree to 40 bits: adding messages whose scales differ
// more than that would silently distort the result beyond CKKS precision.
bool same_scale(double a, double b);

// x as a power of two for messages: "2^40.00" (`decimals` digits after the point).
std::string power_of_two(double x, int decimals = 2);

// How operands are named in error messages: "level 3, scale 2^40.0000000000" and "batch of 10,
// level 2, scale 2^40.0000000000".
std::string describe(const PolyArray& x);
std::string describe(const PolyBatch& x);

}  // namespace oboro::ckks
