#include "oboro/algorithms/minimax_sign.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <utility>

#include "oboro/util/error.hpp"

namespace oboro::algorithms {

namespace {

using Real = long double;

// Convergence: the largest error within 2^-32 (relative) of the levelled one, or both at the
// arithmetic's noise (evaluating p rounds to a few units of the last place; 1024 of them is 2^-53
// with x86's long double). Relative to 1 - error as well where that is the smaller: for a tiny e
// the error is close to 1 and what the composite needs is the smallest value of p, 1 - error, to
// 2^-32 of itself.
constexpr Real kRelativeTolerance = 0x1p-32L;
constexpr Real kAbsoluteTolerance = 1024 * std::numeric_limits<Real>::epsilon();
// Samples per interval between zeros of the error: enough to bracket its one extremum there.
constexpr int kSegmentSamples = 24;
constexpr int kGoldenSteps = 64;

Real tolerance(Real error) {
    return kRelativeTolerance * std::max(Real(0), std::min(error, 1 - error)) + kAbsoluteTolerance;
}

// sum_k c_k T_{2k+1}(x) by Clenshaw's recurrence in y = T_2(x): T_{2k+3} = 2y T_{2k+1} - T_{2k-1},
// so with b_k = c_k + 2y b_{k+1} - b_{k+2} the sum is T_1 b_0 + (T_3 - 2y T_1) b_1 = x (b_0 - b_1).
Real odd_series(const std::vector<Real>& c, Real x) {
    const Real two_y = 2 * (2 * x * x - 1);
    Real b1 = 0, b2 = 0;
    for (size_t k = c.size(); k-- > 0;) {
        const Real b0 = c[k] + two_y * b1 - b2;
        b2 = b1;
        b1 = b0;
    }
    return x * (b1 - b2);
}

// The coefficients c_0 .. c_{n-1} and h of sum_k c_k T_{2k+1}(x_j) + (-1)^j h = 1 (j = 0 .. n), by
// Gaussian elimination with partial pivoting; false when the system is singular.
bool solve_reference(const std::vector<Real>& x, std::vector<Real>& c, Real& h) {
    const size_t n = x.size() - 1, m = n + 1;
    std::vector<std::vector<Real>> a(m, std::vector<Real>(m + 1));
    for (size_t j = 0; j < m; ++j) {
        // T_1, T_3, ... by T_{2k+3} = 2 T_2 T_{2k+1} - T_{2k-1} (T_{-1} = T_1)
        const Real two_y = 2 * (2 * x[j] * x[j] - 1);
        Real previous = x[j], current = x[j];
        for (size_t k = 0; k < n; ++k) {
            a[j][k] = current;
            const Real next = two_y * current - previous;
            previous = current;
            current = next;
        }
        a[j][n] = j % 2 == 0 ? 1 : -1;
        a[j][m] = 1;
    }
    for (size_t col = 0; col < m; ++col) {
        size_t pivot = col;
        for (size_t r = col + 1; r < m; ++r)
            if (std::abs(a[r][col]) > std::abs(a[pivot][col])) pivot = r;
        if (a[pivot][col] == 0) return false;
        std::swap(a[col], a[pivot]);
        for (size_t r = col + 1; r < m; ++r) {
            const Real f = a[r][col] / a[col][col];
            for (size_t k = col; k <= m; ++k) a[r][k] -= f * a[col][k];
        }
    }
    std::vector<Real> s(m);
    for (size_t r = m; r-- > 0;) {
        Real v = a[r][m];
        for (size_t k = r + 1; k < m; ++k) v -= a[r][k] * s[k];
        s[r] = v / a[r][r];
    }
    c.assign(s.begin(), s.begin() + long(n));
    h = s[n];
    return true;
}

struct Extremum {
    Real x = 0, value = 0;  // value: sign * (p(x) - 1), the error in the segment's direction
};

// The smallest and the largest value of p seen (every evaluation, extrema of either sign).
struct Range {
    Real lowest = std::numeric_limits<Real>::infinity(), highest = -std::numeric_limits<Real>::infinity();
    Real error() const { return std::max(highest - 1, 1 - lowest); }
};

// The largest sign * (p(x) - 1) on [lo, hi]: the best of kSegmentSamples samples (the ends
// included), refined by golden-section search between the samples beside it.
Extremum segment_extremum(const std::vector<Real>& c, Real lo, Real hi, Real sign, Range& range) {
    const auto f = [&](Real x) {
        const Real p = odd_series(c, x);
        range.lowest = std::min(range.lowest, p);
        range.highest = std::max(range.highest, p);
        return sign * (p - 1);
    };
    Extremum best{lo, f(lo)};
    int best_i = 0;
    for (int i = 1; i < kSegmentSamples; ++i) {
        const Real x = i == kSegmentSamples - 1 ? hi : lo + (hi - lo) * i / (kSegmentSamples - 1);
        const Real v = f(x);
        if (v > best.value) {
            best = {x, v};
            best_i = i;
        }
    }
    const Real step = (hi - lo) / (kSegmentSamples - 1);
    Real a = std::max(lo, lo + step * (best_i - 1)), b = std::min(hi, lo + step * (best_i + 1));
    const Real g = std::numbers::phi_v<Real> - 1;  // 1 / phi
    Real u = b - g * (b - a), v = a + g * (b - a);
    Real fu = f(u), fv = f(v);
    for (int i = 0; i < kGoldenSteps; ++i) {
        if (fu > fv) {
            b = v;
            v = u;
            fv = fu;
            u = b - g * (b - a);
            fu = f(u);
        } else {
            a = u;
            u = v;
            fu = fv;
            v = a + g * (b - a);
            fv = f(v);
        }
    }
    if (fu > best.value) best = {u, fu};
    if (fv > best.value) best = {v, fv};
    return best;
}

// The zero of p - 1 between a and b, where it has opposite signs, by bisection to the last bit.
Real zero_between(const std::vector<Real>& c, Real a, Real b) {
    const bool a_negative = odd_series(c, a) - 1 < 0;
    for (;;) {
        const Real m = (a + b) / 2;
        if (m <= a || m >= b) return m;
        if ((odd_series(c, m) - 1 < 0) == a_negative) a = m;
        else b = m;
    }
}

}  // namespace

MinimaxSign minimax_sign(double e, int degree, int max_iterations) {
    const char* op = "minimax_sign";
    if (!(e > 0 && e < 1)) raise<ValueError>(op, ": the gap end e must be in (0, 1), not ", e);
    if (degree < 1 || degree > kMaxMinimaxSignDegree || degree % 2 == 0)
        raise<ValueError>(op, ": the degree must be odd, from 1 to ", kMaxMinimaxSignDegree, ", not ", degree);
    if (max_iterations < 1) raise<ValueError>(op, ": max_iterations must be at least 1, not ", max_iterations);

    const size_t n = size_t(degree + 1) / 2;  // coefficients; the reference has n + 1 points
    const Real lo = e;
    std::vector<Real> reference(n + 1);
    for (size_t j = 0; j <= n; ++j) {
        const Real t = (1 + lo * lo) / 2 - (1 - lo * lo) / 2 * std::cos(std::numbers::pi_v<Real> * Real(j) / Real(n));
        reference[j] = std::sqrt(t);
    }
    reference.front() = lo;
    reference.back() = 1;

    std::vector<Real> c;
    Real h = 0;
    for (int iteration = 1; iteration <= max_iterations; ++iteration) {
        if (!solve_reference(reference, c, h))
            raise<ValueError>(op, ": the degree ", degree, " system for e = 1 - ", 1 - e, " is singular in long "
                              "double: the interval is too narrow for that degree (a lower one reaches the "
                              "arithmetic's precision)");
        // p - 1 = -(-1)^j h at x_j: one zero between consecutive points, one sign between zeros.
        std::vector<Real> bounds{lo};
        for (size_t j = 1; j <= n; ++j) bounds.push_back(zero_between(c, reference[j - 1], reference[j]));
        bounds.push_back(1);
        Range range;
        std::vector<Extremum> extrema(n + 1);
        for (size_t j = 0; j <= n; ++j) {
            const Real sign = (j % 2 == 0) == (h < 0) ? 1 : -1;
            extrema[j] = segment_extremum(c, bounds[j], bounds[j + 1], sign, range);
        }
        const Real levelled = std::abs(h), largest = range.error();
        if (largest - levelled <= tolerance(levelled)) {
            // Equioscillation: every point within the tolerance of the largest error, with the
            // signs alternating (each value is the error in its segment's alternating direction).
            for (size_t j = 0; j <= n; ++j)
                if (extrema[j].value < largest - 2 * tolerance(largest))
                    raise<ValueError>(op, ": the degree ", degree, " approximation on [", e, ", 1] does not "
                                      "equioscillate: its error at x = ", double(extrema[j].x), " is ",
                                      double(extrema[j].value), " against a largest error of ", double(largest));
            MinimaxSign result;
            result.e = e;
            result.polynomial = Polynomial{std::vector<double>(size_t(degree) + 1), PolynomialBasis::chebyshev, -1, 1};
            for (size_t k = 0; k < n; ++k) result.polynomial.coeffs[2 * k + 1] = double(c[k]);
            for (const Extremum& x : extrema) result.extrema.push_back(double(x.x));
            result.minimum = double(range.lowest);
            result.maximum = double(range.highest);
            // The gap [0, e]: p rises from p(0) = 0 to p(e) (its critical points in (0, 1) are the
            // interior extrema above), which the search there confirms rather than assumes.
            Range gap;
            segment_extremum(c, 0, lo, 1, gap);
            result.peak = double(std::max({range.highest, gap.highest, -gap.lowest}));
            result.error = double(largest);
            result.levelled_error = double(levelled);
            result.iterations = iteration;
            return result;
        }
        for (size_t j = 0; j <= n; ++j) reference[j] = extrema[j].x;
    }
    raise<ValueError>(op, ": the Remez exchange for degree ", degree, " on [", e, ", 1] did not converge in ",
                      max_iterations, " iterations (levelled error ", double(std::abs(h)), ")");
}

}  // namespace oboro::algorithms
