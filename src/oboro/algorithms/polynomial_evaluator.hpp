// Homomorphic evaluation of polynomials (polynomial.hpp) on a Ciphertext or a CiphertextBatch, on
// any device: the baby-step giant-step Paterson-Stockmeyer method, level-optimal and scale-exact
// (Bossuat, Mouchet, Troncoso-Pastoriza and Hubaux, Eurocrypt 2021, section 4).
//
//   * Powers. The baby steps B_1 .. B_{2^l} and the giant steps B_{2^l}, B_{2^(l+1)}, ... are
//     computed once, each B_i at depth ceil(log2 i): x^i = x^a x^b, T_i = 2 T_a T_b - T_{a-b}
//     with a = 2^(ceil(log2 i) - 1), b = i - a (twice_product_minus: one rescale, after the
//     doubling and the subtraction). Only the powers the polynomial uses are computed: an odd or
//     even polynomial needs only odd or even baby steps.
//   * Giant steps. p = q * B_G + r (G the largest power of two <= deg p; the Chebyshev division
//     uses T_{G+j} = 2 T_G T_j - T_{G-j}), recursively, down to leaves of degree < 2^l, which are
//     sums of constants times baby steps: no ciphertext product.
//   * Scale-exact. Each node is evaluated straight at the level and scale its parent needs: a
//     leaf at (level, scale) sums c_i B_i with c_i encoded at scale * q_{level+1} / scale(B_i), so
//     that every term lands on one scale and one rescale gives exactly `scale`; a quotient is
//     evaluated at scale * q_{level+1} / scale(B_G) one level up. A split node adds its
//     remainder's terms to q * B_G before its one rescale (as Lattigo's evaluator does), so a
//     remainder adds no rounding of its own, and before its one relinearization: the giant-step
//     products of a chain of remainders are summed as size-3 ciphertexts and key-switched once
//     (lazy relinearization; of the 23 products of EvalMod's degree-151 sine, 4 are key-switched
//     with another). The result is at exactly the requested scale (to
//     double rounding), however far the primes are from powers of two.
//   * Level-optimal. A polynomial of degree d consumes ceil(log2(d + 1)) levels (plus one for the
//     map of a Chebyshev interval other than [-1, 1] onto it). Where a leaf would need one level
//     more than its place in the tree leaves it (the leading chain of quotients), it is split
//     further with the baby steps as giant steps: log2 of the baby-step size more products, never
//     a level more. The baby-step size is the one with the fewest products (plan_polynomials).
//
// Several polynomials of one basis and interval evaluated on one input share the powers.
//
// Errors, all before any work: LevelMismatch when the input has fewer levels than the evaluation
// consumes (the message says how many it needs), MissingKey without a relinearization key,
// ValueError for polynomials of different bases or intervals evaluated together.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "oboro/algorithms/op_counts.hpp"
#include "oboro/algorithms/polynomial.hpp"
#include "oboro/ckks/evaluator.hpp"

namespace oboro::algorithms {

// What evaluating polynomials of one basis on an input at `input_level` down to `output_level`
// costs, with the baby-step size of least cost.
struct PolynomialPlan {
    int input_level = 0;
    int output_level = 0;
    bool scaling = false;               // the map of the interval onto [-1, 1] (one level)
    int baby_log = 0;                   // baby steps B_1 .. B_{2^baby_log}
    std::vector<int> powers;            // the B_i computed (i >= 2), ascending
    uint64_t products = 0;              // ciphertext products (powers and giant steps)
    uint64_t relinearizations = 0;      // their key switches: products summed before one share it
    uint64_t scalar_products = 0;       // constants times ciphertexts (leaf terms, the map)
    int depth() const { return input_level - output_level; }
};

// The plan (no work): the baby-step size with the fewest products (then scalar products) for
// these polynomials (one basis, one interval) from input_level to output_level (default: the
// lowest level their depth leaves). LevelMismatch when output_level is above input_level minus
// the depth they need; ValueError when they differ in basis or interval.
PolynomialPlan plan_polynomials(const std::vector<Polynomial>& ps, int input_level,
                                std::optional<int> output_level = std::nullopt);
// The same with an output level per polynomial (PolynomialEvaluator's levels overload).
PolynomialPlan plan_polynomials(const std::vector<Polynomial>& ps, int input_level, const std::vector<int>& levels);

// 2 a b - c relinearized and rescaled once (c: a ciphertext at a's and b's level or above, or null
// for the constant 1): the Chebyshev step T_{i+j} = 2 T_i T_j - T_{|i-j|}, and the double angle
// cos 2t = 2 cos^2 t - 1. The doubling and the subtraction happen at the product's scale, before
// its rescale: the rescale's rounding error enters once (doubled when the product was rescaled
// first) and c enters with a constant encoded at the product's scale over its own (about a prime),
// without a rescale of its own. The result's scale is scale(a) scale(b) / q_level.
template <ckks::Encrypted T>
T twice_product_minus(const CountedOps& ops, const T& a, const T& b, const T* c);

class PolynomialEvaluator {
public:
    // ops: the evaluator (with its key set's relinearization key) and the counts to add to.
    explicit PolynomialEvaluator(CountedOps ops) : ops_(ops) {}

    // p(x) slot by slot, at `level` (default: x's level minus polynomial_depth(p)) and `scale`
    // (default: the context's standard scale of that level), exactly.
    template <ckks::Encrypted T>
    T evaluate(const T& x, const Polynomial& p, std::optional<int> level = std::nullopt,
               std::optional<double> scale = std::nullopt) const;
    // Every polynomial of `ps` (one basis, one interval) at x, sharing one set of powers; all
    // results at one level (default: x's level minus the largest depth) and scale.
    template <ckks::Encrypted T>
    std::vector<T> evaluate(const T& x, const std::vector<Polynomial>& ps, std::optional<int> level = std::nullopt,
                            std::optional<double> scale = std::nullopt) const;
    // The same with a level and a scale per polynomial (levels[k] and scales[k] for ps[k]; ValueError
    // unless one each, LevelMismatch for a level below 0 or above x's level minus ps[k]'s depth), for
    // results that meet in a product planned as a whole (EvalMod's sine series: a cosine that takes
    // double angles after it, at its own scale).
    template <ckks::Encrypted T>
    std::vector<T> evaluate(const T& x, const std::vector<Polynomial>& ps, const std::vector<int>& levels,
                            const std::vector<double>& scales) const;

private:
    CountedOps ops_;
};

}  // namespace oboro::algorithms
