#include "oboro/algorithms/polynomial.hpp"

#include <cmath>
#include <type_traits>
#include <numbers>
#include <sstream>

#include "oboro/util/error.hpp"

namespace oboro::algorithms {

int degree_of(const std::vector<double>& coeffs) {
    for (int i = int(coeffs.size()) - 1; i >= 0; --i)
        if (coeffs[size_t(i)] != 0) return i;
    return -1;
}

bool Polynomial::is_odd() const {
    for (size_t i = 0; i < coeffs.size(); i += 2)
        if (coeffs[i] != 0) return false;
    return true;
}

bool Polynomial::is_even() const {
    for (size_t i = 1; i < coeffs.size(); i += 2)
        if (coeffs[i] != 0) return false;
    return true;
}

bool Polynomial::needs_scaling() const { return basis == PolynomialBasis::chebyshev && hi - lo != 2 && degree() > 0; }

double Polynomial::operator()(double x) const {
    const int d = degree();
    if (d < 0) return 0;
    if (basis == PolynomialBasis::power) {
        double r = 0;
        for (int i = d; i >= 0; --i) r = r * x + coeffs[size_t(i)];
        return r;
    }
    // Clenshaw: b_k = c_k + 2u b_{k+1} - b_{k+2}; p = c_0 + u b_1 - b_2.
    const double u = (2 * x - lo - hi) / (hi - lo);
    double b1 = 0, b2 = 0;
    for (int k = d; k >= 1; --k) {
        const double b0 = coeffs[size_t(k)] + 2 * u * b1 - b2;
        b2 = b1;
        b1 = b0;
    }
    return coeffs[0] + u * b1 - b2;
}

std::string Polynomial::describe() const {
    std::ostringstream s;
    if (basis == PolynomialBasis::power) {
        s << "polynomial of degree " << degree() << " (power basis)";
    } else {
        s << "Chebyshev polynomial of degree " << degree() << " on [" << lo << ", " << hi << "]";
    }
    return s.str();
}

int ceil_log2(long k) {
    int r = 0;
    while ((1L << r) < k) ++r;
    return r;
}

std::pair<long, long> power_factors(long k) {
    const long a = 1L << (ceil_log2(k) - 1);
    return {a, k - a};
}

int polynomial_depth(const Polynomial& p) {
    const int d = p.degree();
    if (d <= 0) return 0;
    return ceil_log2(long(d) + 1) + (p.needs_scaling() ? 1 : 0);
}

namespace {
// The interpolant with the nodes, the function values and the sums in `Real`; the coefficients
// are rounded to double at the end.
template <typename Real>
Polynomial interpolant(const std::function<Real(Real)>& f, double lo, double hi, int degree) {
    const char* op = "chebyshev_interpolant";
    if (degree < 0) raise<ValueError>(op, ": the degree must be at least 0, not ", degree);
    if (!(std::isfinite(lo) && std::isfinite(hi) && lo < hi))
        raise<ValueError>(op, ": the interval [", lo, ", ", hi, "] must be finite and non-empty");
    // c_k = (2 / n) sum_j f(x_j) T_k(u_j) over the n = degree + 1 nodes u_j = cos(pi (j + 1/2) / n)
    // (c_0 halved), with T_k(u_j) = cos(k theta_j): the discrete orthogonality of the T_k there.
    const int n = degree + 1;
    const Real pi = std::numbers::pi_v<Real>;
    std::vector<Real> theta(static_cast<size_t>(n)), values(static_cast<size_t>(n));
    for (int j = 0; j < n; ++j) {
        theta[size_t(j)] = pi * (Real(j) + Real(0.5)) / Real(n);
        const Real u = std::cos(theta[size_t(j)]);
        const Real x = Real(0.5) * (Real(hi) - Real(lo)) * u + Real(0.5) * (Real(hi) + Real(lo));
        values[size_t(j)] = f(x);
        if (!std::isfinite(double(values[size_t(j)])))
            raise<ValueError>(op, ": the function is not finite at x = ", double(x), " in [", lo, ", ", hi, "]");
    }
    Polynomial p{std::vector<double>(size_t(n)), PolynomialBasis::chebyshev, lo, hi};
    for (int k = 0; k < n; ++k) {
        Real s = 0;
        for (int j = 0; j < n; ++j) s += values[size_t(j)] * std::cos(Real(k) * theta[size_t(j)]);
        p.coeffs[size_t(k)] = double((k == 0 ? Real(1) : Real(2)) * s / Real(n));
    }
    // Coefficients at the level of the sums' rounding are zero: an odd or even f then gives an
    // odd or even polynomial, which is evaluated at its lower cost.
    double largest = 0;
    for (double c : p.coeffs) largest = std::max(largest, std::abs(c));
    const double rounding = std::is_same_v<Real, double> ? 0x1p-50 : 0x1p-60;
    for (double& c : p.coeffs)
        if (std::abs(c) <= rounding * largest) c = 0;
    return p;
}
}  // namespace

Polynomial chebyshev_interpolant(const std::function<double(double)>& f, double lo, double hi, int degree) {
    return interpolant<double>(f, lo, hi, degree);
}

Polynomial chebyshev_interpolant_long(const std::function<long double(long double)>& f, double lo, double hi, int degree) {
    return interpolant<long double>(f, lo, hi, degree);
}

long double evaluate_long(const Polynomial& p, long double x) {
    if (p.basis == PolynomialBasis::power) {
        long double y = 0;
        for (size_t i = p.coeffs.size(); i-- > 0;) y = y * x + p.coeffs[i];
        return y;
    }
    const long double u = (2 * x - p.lo - p.hi) / (static_cast<long double>(p.hi) - p.lo);
    long double b1 = 0, b2 = 0;
    for (size_t k = p.coeffs.size(); k-- > 1;) {
        const long double b = 2 * u * b1 - b2 + p.coeffs[k];
        b2 = b1;
        b1 = b;
    }
    return p.coeffs.empty() ? 0 : u * b1 - b2 + p.coeffs[0];
}

double max_error(const Polynomial& p, const std::function<double(double)>& f, double lo, double hi, int samples) {
    double worst = 0;
    for (int i = 0; i < samples; ++i) {
        const double x = samples == 1 ? lo : lo + (hi - lo) * i / (samples - 1);
        worst = std::max(worst, std::abs(p(x) - f(x)));
    }
    return worst;
}

}  // namespace oboro::algorithms
