// Real polynomials as CKKS evaluates them: coefficients in the power basis (x^i) or in the
// Chebyshev basis (T_i of the affine map of an interval [lo, hi] onto [-1, 1]), the depth their
// evaluation needs, their value in double precision (the reference of every test), and the
// Chebyshev interpolant of a function. The homomorphic evaluation is polynomial_evaluator.hpp.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace oboro::algorithms {

enum class PolynomialBasis { power, chebyshev };

// The index of the last non-zero coefficient of `coeffs`; -1 when all are zero.
int degree_of(const std::vector<double>& coeffs);

// p(x) = sum_i coeffs[i] * B_i(x): B_i(x) = x^i (power) or T_i(u(x)) (chebyshev), with
// u(x) = (2x - lo - hi) / (hi - lo) the map of [lo, hi] onto [-1, 1]. The interval is the
// Chebyshev basis's; a power-basis polynomial ignores it.
struct Polynomial {
    std::vector<double> coeffs;
    PolynomialBasis basis = PolynomialBasis::power;
    double lo = -1, hi = 1;

    // The index of the last non-zero coefficient; -1 for the zero polynomial.
    int degree() const { return degree_of(coeffs); }
    // Only odd (even) indices have non-zero coefficients (the zero polynomial is both). In the
    // Chebyshev basis this is p's parity in u, so odd or even in x when the interval is symmetric.
    bool is_odd() const;
    bool is_even() const;
    // Chebyshev on an interval other than [-1, 1]: the evaluation first computes u(x), which
    // costs one level unless hi - lo == 2 (then u is x plus a constant).
    bool needs_scaling() const;
    // p(x) in double precision (Clenshaw's recurrence for Chebyshev, Horner for powers).
    double operator()(double x) const;
    // "Chebyshev polynomial of degree 31 on [-8, 8]", for messages.
    std::string describe() const;
};

// ceil(log2(k)) for k >= 1 (0 for k = 1): the depth of the k-th power of x or of T_k.
int ceil_log2(long k);

// The powers x^k (T_k) is computed from at depth ceil(log2 k), for k >= 2: a = 2^(ceil(log2 k) - 1)
// and b = k - a <= a (x^k = x^a x^b, T_k = 2 T_a T_b - T_{a-b}).
std::pair<long, long> power_factors(long k);

// The levels the homomorphic evaluation of p consumes: ceil(log2(degree + 1)) (one product level
// per doubling of the degree, the least any method needs), plus one for the map u(x) when
// needs_scaling(). A constant consumes none.
int polynomial_depth(const Polynomial& p);

// The Chebyshev interpolant of f at the `degree + 1` Chebyshev nodes of [lo, hi] (the roots of
// T_{degree+1}): near-minimax for smooth f; its error on [lo, hi] is within a factor of
// 2 + (2/pi) log(degree + 1) of the best possible at that degree. f is called degree + 1 times.
// Coefficients below 2^-50 of the largest (rounding residue) are set to zero, so that an odd or an
// even f on a symmetric interval gives an odd or an even polynomial.
// ValueError for a negative degree, an empty or non-finite interval or a non-finite f value.
Polynomial chebyshev_interpolant(const std::function<double(double)>& f, double lo, double hi, int degree);
// The same computed in long double (nodes, f, sums; the coefficients rounded to double at the
// end): for functions whose interpolant must be accurate beyond what double arithmetic on the
// nodes leaves (bootstrapping's EvalMod, whose double angles amplify the error 4^r times).
Polynomial chebyshev_interpolant_long(const std::function<long double(long double)>& f, double lo, double hi, int degree);
// p(x) in long double (Clenshaw or Horner): p's value beyond the rounding of operator().
long double evaluate_long(const Polynomial& p, long double x);

// max |p(x) - f(x)| over `samples` equally spaced points of [lo, hi] (its ends included).
double max_error(const Polynomial& p, const std::function<double(double)>& f, double lo, double hi,
                 int samples = 4097);

}  // namespace oboro::algorithms
