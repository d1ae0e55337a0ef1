// Sign and comparison by composite minimax polynomials (Lee, Lee, Kim and No, "Minimax approximate
// comparison operation with optimal depth/time", 2021), and abs, max, min and a > b built on it, on
// a Ciphertext or a CiphertextBatch, any device, in automatic mode's scales (ckks/auto_evaluator.hpp).
//
// The method. sign(x) jumps at 0, so no polynomial of useful degree approximates it near 0; instead
// inputs closer than `gap` to 0 are left unresolved, and sign is approximated on
// [-bound, -gap] U [gap, bound] by a composition p_k o ... o p_1 of odd polynomials:
//
//   * u = x / bound, so the resolved set is [-1, -e_1] U [e_1, 1], e_1 = gap / bound.
//   * Stage i is the minimax approximation of sign on [-1, -e_i] U [e_i, 1] (minimax_sign.hpp: odd,
//     in the Chebyshev basis on [-1, 1]), divided by its largest |value| on [-1, 1] (1 + its
//     minimax error) so that it maps [-1, 1] into [-1, 1], the gap included, and [e_i, 1] into
//     [e_{i+1}, 1] with e_{i+1} = its smallest value on [e_i, 1] after the division.
//   * After k stages the resolved inputs are within 1 - e_{k+1} of +-1.
// The composite is a polynomial of degree prod d_i in about sum log2(d_i + 1) levels, like one
// minimax polynomial of that degree, but with O(sum sqrt(d_i)) ciphertext products instead of
// O(sqrt(prod d_i)), and with stages small enough for the Remez exchange.
//
// The plan chooses the stage degrees among the level-efficient odd degrees 3, 7, 15, 31, 63 (2 to 6
// levels each): the least total depth that reaches 2^-bits, and among those the fewest ciphertext
// products. A stage whose minimax error would be below 2^-50 (near what long double resolves,
// and 10 bits below the finest plan) is the minimax of the lowest odd degree that reaches 2^-50
// instead, which takes no more levels and fewer products. Everything in the plan is computed in
// double (the Remez exchange in long double) without any encrypted work.
//
// The CKKS noise adds to the plan's error, amplified by the composite's slope: small where the
// result is flat near +-1, of the order of 1 / gap in and near the gap, where it rises from 0 to 1.
// The gap must therefore be well above the inputs' noise.
//
// The gap and the bound. For gap <= |x| <= bound the result is sign(x) within the plan's error.
// For |x| < gap it is some value between 0 and sign(x) (every stage is non-negative on [0, 1]), so
// abs(x) errs by at most |x| < gap and max/min by gap / 2 there. Outside [-bound, bound] a
// composite polynomial grows like |x / bound|^(product of the degrees): one such slot returns a
// huge value, and since the slots share the ciphertext's modulus it can overflow it and corrupt
// every slot. Every slot must lie in [-bound, bound], unused (zero-padded) ones included, which
// zero is.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "oboro/algorithms/polynomial.hpp"
#include "oboro/ckks/auto_evaluator.hpp"

namespace oboro::algorithms {

struct SignPlan {
    double bound = 0;                // inputs in [-bound, bound]
    double gap = 0;                  // |x| >= gap is resolved
    double bits = 0;                 // the precision asked for: error <= 2^-bits there
    // p_1 on [-bound, bound] (the map u = x / bound is its Chebyshev interval's), p_2 .. p_k on
    // [-1, 1]; all odd, with |p_i| <= 1 on their interval.
    std::vector<Polynomial> stages;
    // e_1 = gap / bound .. e_{k+1}: p_i maps [e_i, 1] (in its u) into [e_{i+1}, 1].
    std::vector<double> resolved;
    double error_bound = 0;          // 1 - e_{k+1}: what the stages' ranges guarantee
    double error = 0;                // max |composite(x) - sign(x)| for gap <= |x| <= bound, on a fine grid
    uint64_t products = 0;           // ciphertext products of the evaluation (plan_polynomials)

    // The levels sign(x) consumes: each stage's polynomial_depth (the first one's includes the
    // map x / bound, one level unless bound == 1).
    int depth() const;
    std::vector<int> degrees() const;
    // p_k o ... o p_1 (x) in double precision.
    double operator()(double x) const;
    // "composite sign of degrees 7, 15, 15 for |x| in [0.0039, 1]", for messages.
    std::string describe() const;
};

// The odd degrees a stage may have (or less, for stages more precise than 2^-50).
inline constexpr int kSignStageDegrees[] = {3, 7, 15, 31, 63};
// The deepest plan plan_sign makes.
inline constexpr int kMaxSignDepth = 64;

// The plan (no encrypted work; milliseconds to a second for the deepest ones). ValueError unless
// bound is finite and positive, 0 < gap < bound and 1 <= bits <= 40, or when no plan within 64
// levels reaches 2^-bits (gap / bound too small).
SignPlan plan_sign(double bound, double gap, double bits);

// All of them: ValueError for a plan without stages; LevelMismatch (naming the levels needed)
// when an input has too few levels, and MissingKey without a relinearization key, before any work.

// sign(x): +-1 for gap <= |x| <= bound; plan.depth() levels.
template <ckks::Encrypted T> T sign(const ckks::AutoEvaluator& ae, const T& x, const SignPlan& plan);
// |x| = x sign(x): plan.depth() + 1 levels; error bound * plan.error for |x| >= gap, |x| below.
template <ckks::Encrypted T> T absolute(const ckks::AutoEvaluator& ae, const T& x, const SignPlan& plan);
// max(a, b) = ((a + b) + |a - b|) / 2 and min(a, b) = ((a + b) - |a - b|) / 2, where the plan's
// bound and gap apply to a - b: plan.depth() + 1 levels; error bound * plan.error / 2 where
// |a - b| >= gap, |a - b| / 2 below.
template <ckks::Encrypted T> T maximum(const ckks::AutoEvaluator& ae, const T& a, const T& b, const SignPlan& plan);
template <ckks::Encrypted T> T minimum(const ckks::AutoEvaluator& ae, const T& a, const T& b, const SignPlan& plan);
// a > b as (sign(a - b) + 1) / 2: 1 where a - b >= gap, 0 where a - b <= -gap (within
// plan.error / 2), between 0 and 1 in the gap; plan.depth() levels.
template <ckks::Encrypted T>
T greater_than(const ckks::AutoEvaluator& ae, const T& a, const T& b, const SignPlan& plan);

}  // namespace oboro::algorithms
