#include "oboro/algorithms/polynomial.hpp"

#include <cmath>
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

Polynomial chebyshev_interpolant(const std::function<double(double)>& f, double lo, double hi, int degree) {
    const char* op = "chebyshev_interpolant";
    if (degree < 0) raise<ValueError>(op, ": the degree must be at least 0, not ", degree);
    if (!(std::isfinite(lo) && std::isfinite(hi) && lo < hi))
        raise<ValueError>(op, ": the interval [", lo, ", ", hi, "] must be finite and non-empty");
    // c_k = (2 / n) sum_j f(x_j) T_k(u_j) over the n = degree + 1 nodes u_j = cos(pi (j + 1/2) / n)
    // (c_0 halved), with T_k(u_j) = cos(k theta_j): the discrete orthogonality of the T_k there.
    const int n = degree + 1;
    std::vector<double> theta(static_cast<size_t>(n)), values(static_cast<size_t>(n));
    for (int j = 0; j < n; ++j) {
        theta[size_t(j)] = std::numbers::pi * (j + 0.5) / n;
        const double u = std::cos(theta[size_t(j)]);
        const double x = 0.5 * (hi - lo) * u + 0.5 * (hi + lo);
        values[size_t(j)] = f(x);
        if (!std::isfinite(values[size_t(j)]))
            raise<ValueError>(op, ": the function is not finite at x = ", x, " in [", lo, ", ", hi, "]");
    }
    Polynomial p{std::vector<double>(size_t(n)), PolynomialBasis::chebyshev, lo, hi};
    for (int k = 0; k < n; ++k) {
        double s = 0;
        for (int j = 0; j < n; ++j) s += values[size_t(j)] * std::cos(k * theta[size_t(j)]);
        p.coeffs[size_t(k)] = (k == 0 ? 1.0 : 2.0) * s / n;
    }
    // Coefficients at the level of the sums' rounding are zero: an odd or even f then gives an
    // odd or even polynomial, which is evaluated at its lower cost.
    double largest = 0;
    for (double c : p.coeffs) largest = std::max(largest, std::abs(c));
    for (double& c : p.coeffs)
        if (std::abs(c) <= 0x1p-50 * largest) c = 0;
    return p;
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
