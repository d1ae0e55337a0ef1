// Functions that a single polynomial approximates badly, built from polynomial evaluation and
// Newton's iterations, and integer powers: on a Ciphertext or a CiphertextBatch, any device, in
// automatic mode's scales (ckks/auto_evaluator.hpp; results at the standard scale of their level).
//
//   * inverse(x) = 1/x on [lo, hi] (0 < lo < hi): a Chebyshev approximation y_0 of 1/x on the
//     interval, then Newton's iterations y <- y (2 - x y), each squaring the relative error
//     (2 levels each).
//   * inverse_sqrt(x) = 1/sqrt(x) on [lo, hi]: y_0 likewise, then y <- y (3/2 - (x/2) y^2), each
//     squaring the relative error up to a factor 3/2 (3 levels each); square_root(x) = x * that
//     (one level more).
//   * integer_power(x, k) = x^k: x^(2^j) by squaring and x^k = x^a x^(k-a) with a the largest
//     power of two below k: ceil(log2 k) levels, the least possible.
//
// The plans choose the initial degree (2^j - 1, the level-efficient degrees) and the number of
// iterations with the fewest levels that reach `bits` bits of relative precision in double
// precision arithmetic (the CKKS noise adds to that). Outside [lo, hi] the iterations diverge for
// x > about 2 hi (inverse) or 3 hi (inverse_sqrt) and converge slowly below lo: the interval
// must contain every slot, unused slots included.
#pragma once

#include <cstdint>

#include "oboro/algorithms/polynomial.hpp"
#include "oboro/ckks/auto_evaluator.hpp"

namespace oboro::algorithms {

struct NewtonPlan {
    Polynomial initial;          // the Chebyshev approximation y_0 on [lo, hi]
    int iterations = 0;
    double initial_error = 0;    // max |y_0 / f - 1| on [lo, hi]
    double final_error = 0;      // the same after the iterations (exact arithmetic)
    int levels_per_iteration = 0;
    bool times_x = false;        // the result is x times the iterations' (sqrt(x) = x / sqrt(x)): one level
    int depth() const { return polynomial_depth(initial) + iterations * levels_per_iteration + (times_x ? 1 : 0); }
};

// The plans (no work). ValueError unless 0 < lo < hi are finite and 1 <= bits <= 50.
NewtonPlan plan_inverse(double lo, double hi, double bits = 24);
NewtonPlan plan_inverse_sqrt(double lo, double hi, double bits = 24);
// sqrt(x): the Chebyshev interpolant of sqrt itself where one of degree <= 63 reaches `bits` in no
// more levels (on narrow intervals: more precise and cheaper), else x * inverse_sqrt (times_x).
NewtonPlan plan_square_root(double lo, double hi, double bits = 24);

// LevelMismatch (saying how many levels are needed) before any work when x has too few; the
// products use the evaluator's relinearization key (MissingKey without one).
template <ckks::Encrypted T> T inverse(const ckks::AutoEvaluator& ae, const T& x, const NewtonPlan& plan);
template <ckks::Encrypted T> T inverse_sqrt(const ckks::AutoEvaluator& ae, const T& x, const NewtonPlan& plan);
// sqrt(x) by a plan of plan_square_root: plan.depth() levels.
template <ckks::Encrypted T> T square_root(const ckks::AutoEvaluator& ae, const T& x, const NewtonPlan& plan);

// x^k for k >= 1 (ValueError otherwise) in ceil(log2 k) levels.
template <ckks::Encrypted T> T integer_power(const ckks::AutoEvaluator& ae, const T& x, int64_t k);

}  // namespace oboro::algorithms
