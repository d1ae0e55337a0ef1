// Automatic mode: the policy that turns arithmetic on encrypted arrays into the Evaluator's exact
// operations, so that a user writes `a * b + 2.0 * a` and never thinks about levels, scales,
// relinearization or keys. It works on a Ciphertext and on a CiphertextBatch alike (the same rules,
// the same words), on any device, and it is what the Python operators run.
//
// The rules:
//  * Standard scales. Level l has the standard scale D_l of the context (Context::standard_scale):
//    D_{l-1} = D_l^2 / q_l exactly. Fresh ciphertexts are encrypted at D_level, and every
//    automatic operation lands on the standard scale of its output level: ct * ct ->
//    D_l * D_l / q_l = D_{l-1}; ct * constant or ct * values encodes the operand at
//    t = D_{l-1} * q_l / scale, so that the rescale gives D_{l-1} again. Additions of operands at
//    the same level therefore never need a fix-up.
//  * Exact alignment. Before a sum or a product, an operand at a higher level is brought down to
//    the other one's level AND scale in one step (Evaluator::rescale_to: multiply by the integer
//    round(target * q / scale), rescale by q, drop the rest), which costs no level beyond the drop
//    itself and leaves the scales equal to 2^-41 relative. Where one prime's factor is too small
//    to be exact (from 2^58, the standard scale of a level of 60-bit primes, to 2^40), the factor
//    spans two or more primes, rescaled one after the other (bring_to). Operands at one level with different
//    scales (only possible with user-chosen scales or manual results) are both moved to the
//    standard scale of the level below, which consumes one level. Products only need one level:
//    the higher operand's scale is still matched when that is exact, else it is just dropped.
//  * Products are relinearized and rescaled (fused: Evaluator::multiply_relin_rescale); a size-3
//    operand is relinearized first. ct * constant is rescaled, except for an integer (or a real
//    number with an integer value, such as 2.0): an exact integer multiplication that consumes
//    no level and keeps the scale.
//  * Plaintext operands at another level: the higher of the two is dropped (exact: limbs are
//    removed, the scale stays).
//  * Rotations are by any step: reduced modulo the slots, and composed from the keyed steps (the
//    shortest signed binary decomposition) when the key set has no key for the step itself.
//
//  * Automatic bootstrapping (off unless a LevelRefresher is given, with_refresher): an operand
//    at level 0 of a product (ct * ct, ct * plaintext, ct * non-integer constant or values) is
//    refreshed first, and the product proceeds from the levels it gets back; at the refresher's
//    refresh_level and below when its inputs need levels (SlotsToCoeffs-first bootstrapping).
//
// Errors are the Evaluator's typed errors, plus MissingKey for a product without a
// relinearization key or a rotation no keyed steps can make, and LevelMismatch / ScaleMismatch
// when no level is left for a rescale or a scale cannot be reached exactly.
//
// Thread safety: immutable; share one between threads.
#pragma once

#include <complex>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "oboro/ckks/encoder.hpp"
#include "oboro/ckks/evaluator.hpp"
#include "oboro/ckks/level_refresher.hpp"

namespace oboro::ckks {

// Slot values as an operand: `rows` rows of values.size() / rows values each; one row is the
// same for every element of a batch, else there is one row per element. A row of fewer values than
// slots leaves the remaining slots alone (they are zero in what it is encoded to).
struct SlotValues {
    std::span<const std::complex<double>> values;
    size_t rows = 1;
    size_t row_length() const { return rows ? values.size() / rows : 0; }
};

// The plaintext operand type of T: a Plaintext for a Ciphertext, a PlaintextBatch for a batch.
template <Encrypted T> using PlaintextOf = std::conditional_t<std::same_as<T, Ciphertext>, Plaintext, PlaintextBatch>;

class AutoEvaluator {
public:
    // eval: the context, keys (relinearization key for products, Galois keys for rotations and
    // conjugation) and queue of every operation.
    explicit AutoEvaluator(Evaluator eval);
    // The same with an encoder of the evaluator's context to share (an encoder holds tables of N
    // roots: made once per context, not per evaluator).
    AutoEvaluator(Evaluator eval, std::shared_ptr<const Encoder> encoder);

    // The same evaluator with automatic bootstrapping by `refresher` (nullptr: none).
    AutoEvaluator with_refresher(std::shared_ptr<const LevelRefresher> refresher) const;

    const Evaluator& evaluator() const { return eval_; }
    const ContextPtr& context() const { return eval_.context(); }
    const Encoder& encoder() const { return *encoder_; }

    // ---- sums (sizes, levels and scales aligned as needed) ----
    template <Encrypted T> T add(const T& a, const T& b) const;
    template <Encrypted T> T sub(const T& a, const T& b) const;
    template <Encrypted T> void add_inplace(T& a, const T& b) const;
    template <Encrypted T> void sub_inplace(T& a, const T& b) const;
    // b - a (Python's reflected subtraction).
    template <Encrypted T> T rsub(const T& a, const T& b) const;
    template <Encrypted T, typename P> requires PlainOperandOf<P, T> T add(const T& a, const P& b) const;
    template <Encrypted T, typename P> requires PlainOperandOf<P, T> T sub(const T& a, const P& b) const;
    template <Encrypted T, typename P> requires PlainOperandOf<P, T> T rsub(const T& a, const P& b) const;
    // c added to the first `count` slots (default: all); c - a for rsub.
    template <Encrypted T> T add(const T& a, std::complex<double> c, std::optional<size_t> count = std::nullopt) const;
    template <Encrypted T> T sub(const T& a, std::complex<double> c, std::optional<size_t> count = std::nullopt) const;
    template <Encrypted T> T rsub(const T& a, std::complex<double> c, std::optional<size_t> count = std::nullopt) const;
    // Values added slot by slot (encoded at a's level and scale).
    template <Encrypted T> T add(const T& a, SlotValues values) const;
    template <Encrypted T> T sub(const T& a, SlotValues values) const;
    template <Encrypted T> T rsub(const T& a, SlotValues values) const;

    // ---- products (relinearized and rescaled; land on the standard scale of the level below) ----
    template <Encrypted T> T multiply(const T& a, const T& b) const;
    template <Encrypted T> void multiply_inplace(T& a, const T& b) const;
    template <Encrypted T> T square(const T& a) const;
    template <Encrypted T, typename P> requires PlainOperandOf<P, T> T multiply(const T& a, const P& b) const;
    // An integer, or a real constant with an integer value: exact, no level consumed.
    template <Encrypted T> T multiply(const T& a, int64_t c) const;
    template <Encrypted T> T multiply(const T& a, std::complex<double> c) const;
    template <Encrypted T> T multiply(const T& a, SlotValues values) const;

    // ---- rotations, conjugation, levels ----
    // Left rotation by k slots (any k: reduced modulo the slots, composed from keyed steps).
    template <Encrypted T> T rotate(const T& a, int64_t k) const;
    // Element c rotated by steps[c]: one call of the queue per step of the longest composition.
    template <Encrypted T> T rotate(const T& a, const std::vector<int64_t>& steps) const;
    template <Encrypted T> T conjugate(const T& a) const;
    template <Encrypted T> T relinearize(const T& a) const;
    // The same values at a lower level. At the standard scale of its level, `a` moves to the
    // standard scale of the new level (an integer multiplication and a rescale on the way down, no
    // extra level) where that is exact; otherwise its limbs are dropped and its scale kept.
    template <Encrypted T> T drop_to_level(const T& a, int level) const;

    // ---- the pieces, for callers that build their own steps ----
    // x brought to exactly (level, scale) (to 2^-41 relative): a drop when the scale already
    // matches, else a drop to level + r and Evaluator::rescale_to followed by r - 1 rescales, r
    // the fewest rescales whose integer correction factor is exact (usually 1; 2 from a scale of
    // 2^58 down to one of 2^40). ScaleMismatch when even all the levels between cannot reach it.
    template <Encrypted T> T bring_to(const T& x, int level, double scale, const char* op) const;
    // The keyed steps whose rotations, one after the other, rotate by k modulo `slots`: the step
    // itself (or its equivalent k -+ slots) when it has a key, else its shortest decomposition into
    // signed powers of two that have keys; empty for a multiple of the slots. MissingKey when there
    // is none.
    std::vector<int64_t> rotation_plan(int64_t k, size_t slots) const;
    // The step (reduced modulo `slots`) or its equivalent step -+ slots that has a Galois key; 0
    // for a multiple of the slots; nullopt when neither has a key.
    std::optional<int64_t> keyed_step(int64_t step, size_t slots) const;
    // The plaintext scale t that makes a product with a ciphertext at (level, scale) land on the
    // standard scale of the level below after the rescale (`operand` names it in errors).
    double product_scale(int level, double scale, const std::string& operand, const char* op) const;
    // The encoding of `values` at like's level and slots, at `scale`, in like's memory (a batch
    // on a device gets its plaintexts encoded there).
    template <Encrypted T> PlaintextOf<T> encode(const T& like, SlotValues values, double scale) const;

private:
    template <Encrypted T> T sum(const T& a, const T& b, bool subtract) const;
    template <Encrypted T> T relinearized(const T& a, const char* op) const;
    // a and b at one level (and one scale if match_scales); both are the caller's copies.
    template <Encrypted T> void align(T& a, T& b, bool match_scales, const char* op) const;
    template <Encrypted T, typename P>
    requires PlainOperandOf<P, T> void plain_at_one_level(T& a, const P& b, std::optional<P>& dropped) const;
    template <Encrypted T> T add_constant(const T& a, std::complex<double> c, std::optional<size_t> count) const;
    // Whether a product operand is refreshed first: with a refresher, at its refresh_level and
    // below (level 0, or a SlotsToCoeffs-first bootstrap's min_input_level).
    template <Encrypted T> bool refreshes(const T& a) const {
        return refresher_ && a.level() <= refresher_->refresh_level(a.slots());
    }

    Evaluator eval_;
    std::shared_ptr<const Encoder> encoder_;
    std::shared_ptr<const LevelRefresher> refresher_;
};

}  // namespace oboro::ckks
