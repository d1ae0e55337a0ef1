// The odd minimax approximation of sign(x) on [-1, -e] U [e, 1] at a given odd degree, by the
// Remez exchange algorithm: the building block of the composite comparison (sign.hpp).
//
// An odd p approximates sign on the symmetric set exactly as well as it approximates 1 on [e, 1],
// so the problem is the best approximation of 1 on [e, 1] from span{T_1, T_3, ..., T_d} (the
// Chebyshev polynomials on [-1, 1]: well conditioned, and what the encrypted evaluation takes).
// That span is a Haar space on [e, 1] for e > 0 (p(x) = x q(x^2) with q of degree (d - 1) / 2),
// so the best approximation is the unique p whose error p - 1 takes its largest magnitude with
// alternating signs at n + 1 points of [e, 1], n = (d + 1) / 2 coefficients (Chebyshev's
// equioscillation theorem). The exchange:
//
//   1. Solve sum_k c_k T_{2k+1}(x_j) + (-1)^j h = 1 at the reference x_0 < ... < x_n (the first
//      one: Chebyshev extrema of [e^2, 1] in t = x^2, which cluster towards e like the answer).
//   2. The error then has a zero between consecutive reference points; between consecutive zeros
//      (and the ends e and 1) it keeps one sign, and its extremum there is the new reference point
//      (all of them exchanged at once).
//   3. Stop when the largest error M on [e, 1] meets the levelled error |h| (de la Vallee
//      Poussin: |h| <= the minimax error <= M); then check the equioscillation.
//
// Everything is computed in long double (64-bit mantissa on x86-64) and the coefficients are
// rounded to double at the end. Convergence is to 2^-32 of the error, or of 1 - error when that is
// smaller (a tiny e, where the smallest value of p is what matters). Errors below about 2^-53 are
// at the arithmetic's own precision: there the exchange stops as converged, with p exact to double
// precision on [e, 1] but not the minimax, and then possibly wild in the gap (see `peak`).
#pragma once

#include <vector>

#include "oboro/algorithms/polynomial.hpp"

namespace oboro::algorithms {

struct MinimaxSign {
    Polynomial polynomial;        // sum_k c_k T_{2k+1}(x): odd, Chebyshev basis on [-1, 1]
    double e = 0;                 // the approximation holds on [-1, -e] U [e, 1]
    std::vector<double> extrema;  // the (d + 3) / 2 points of [e, 1] where |p - 1| = error, alternating
    double error = 0;             // max |p(x) - 1| on [e, 1], i.e. max |p - sign| on the set
    double levelled_error = 0;    // |h| of the last reference: the minimax error lies in [this, error]
    // The smallest and the largest p on [e, 1]: error = max(1 - minimum, maximum - 1), but the
    // minimum is p itself, to its own relative precision when e is tiny and p(e) close to 0.
    double minimum = 0, maximum = 0;
    // max |p| on [-1, 1], the gap (-e, e) included: `maximum` for a resolved minimax (p rises from
    // 0 to p(e) in the gap), more where the error is below what long double resolves.
    double peak = 0;
    int iterations = 0;           // exchanges until convergence
};

// The largest odd degree minimax_sign accepts.
inline constexpr int kMaxMinimaxSignDegree = 255;

// ValueError unless 0 < e < 1 and degree is odd in [1, 255]; ValueError as well when the exchange
// does not converge within max_iterations (>= 1), its result does not equioscillate, or its system
// is singular in long double (e so close to 1 that a lower degree is exact to that precision:
// 1 - e below about 2^-35 for degree 7).
MinimaxSign minimax_sign(double e, int degree, int max_iterations = 100);

}  // namespace oboro::algorithms
