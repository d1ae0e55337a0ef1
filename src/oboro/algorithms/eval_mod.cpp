#include "oboro/algorithms/eval_mod.hpp"

#include <cmath>
#include <numbers>
#include <vector>

#include "oboro/algorithms/polynomial_evaluator.hpp"
#include "oboro/algorithms/requirements.hpp"
#include "oboro/util/error.hpp"

namespace oboro::algorithms {

namespace {

long double apply_double_angles(long double c, int r) {
    for (int i = 0; i < r; ++i) c = 2 * c * c - 1;
    return c;
}

// The interpolant of cos(2 pi (K' y - shift) / 2^r): shift 1/4 gives sin(2 pi t) after the double
// angles, shift 0 cos(2 pi t).
Polynomial cosine_interpolant(double interval, int r, int degree, long double shift = 0.25L) {
    const long double scale = 2 * std::numbers::pi_v<long double> / std::ldexp(1.0L, r);
    Polynomial p = chebyshev_interpolant_long([&](long double y) { return std::cos(scale * (interval * y - shift)); },
                                              -1, 1, degree);
    // sin(2 pi K' y) (r = 0, shift 1/4) is odd and cos(2 pi K' y / 2^r) even: the other parity's
    // coefficients are rounding residue (about 1e-19), which would make the evaluator compute
    // every power and a constant term for each of them. Below the degree only: a degree of the
    // other parity, asked for explicitly, stays the degree.
    const int odd = shift == 0 ? 0 : r == 0 && shift == 0.25L ? 1 : -1;
    if (odd >= 0)
        for (size_t i = size_t(1 - odd); i + 1 < p.coeffs.size(); i += 2) p.coeffs[i] = 0;
    return p;
}

// The two-term sine series' coefficients: (1/2 pi) sin(2 pi t) (kSeriesSine - kSeriesCosine cos(2 pi t)).
constexpr long double kSeriesSine = 4.0L / 3, kSeriesCosine = 1.0L / 3;

// max |double angles of p - sin(2 pi t)| / (2 pi) over t in [-K', K'], sampled densely; with
// `cosine`, max |double angles of p - cos(2 pi t)|.
double interpolation_error(const Polynomial& p, double interval, int r, bool cosine = false) {
    const int samples = 1 << 14;
    const long double two_pi = 2 * std::numbers::pi_v<long double>;
    long double worst = 0;
    for (int i = 0; i <= samples; ++i) {
        const long double y = -1 + 2.0L * i / samples, t = interval * y;
        const long double c = apply_double_angles(evaluate_long(p, y), r);
        worst = std::max(worst, cosine ? std::fabs(c - std::cos(two_pi * t)) : std::fabs(c - std::sin(two_pi * t)) / two_pi);
    }
    return double(worst);
}

// The least degree d in (lo, hi] with good(d), given good(hi) and an error that falls with the
// degree: a bisection.
template <typename Good> int least_good_degree(int lo, int hi, Good&& good) {
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        (good(mid) ? hi : lo) = mid;
    }
    return hi;
}

// The series' cosine multiplies the sine (about 2 pi e): its error d reaches the result as
// e d / 3, so 2^-40 is far below any bootstrap's noise.
constexpr double kSeriesCosineError = 0x1p-40;

// The interpolant of cos(2 pi t / 2^angles) of least degree, at most max_degree, within
// kSeriesCosineError of cos(2 pi t) after its double angles (nullopt: none is).
std::optional<Polynomial> least_degree_series_cosine(double interval, int angles, int max_degree) {
    const auto make = [&](int d) { return cosine_interpolant(interval, angles, d, 0); };
    const auto good = [&](int d) { return interpolation_error(make(d), interval, angles, true) <= kSeriesCosineError; };
    if (max_degree < 1 || !good(max_degree)) return std::nullopt;
    return make(least_good_degree(0, max_degree, good));
}

// The least degree within 2^-50 of the sine (about where double rounding, amplified 4^r by the
// double angles, leaves the interpolant), or within 1.5x of the best error up to degree 255. The
// error falls steeply with the degree once it passes the argument's range, so a doubling search
// finds the depth and a bisection the degree within it.
Polynomial least_degree_cosine(double interval, int r) {
    const auto error_at = [&](int d) { return interpolation_error(cosine_interpolant(interval, r, d), interval, r); };
    int hi = 7;
    double err = error_at(hi);
    while (hi < 255 && err > 0x1p-50) {
        hi = 2 * hi + 1;
        err = error_at(hi);
    }
    const double good_enough = std::max(0x1p-50, 1.5 * err);
    return cosine_interpolant(interval, r,
                              least_good_degree((hi - 1) / 2, hi, [&](int d) { return error_at(d) <= good_enough; }));
}

// Double angles beyond 3 multiply the interpolant's rounding by 4^r and never save a level here.
constexpr int kMaxAutomaticDoubleAngles = 3;
// An interpolant this close to the sine is exact for bootstrapping: EvalMod's noise is larger.
constexpr double kAcceptableError = 0x1p-45;

}  // namespace

EvalMod::EvalMod(double integer_bound, std::optional<int> double_angles, std::optional<int> degree, int terms)
    : k_(integer_bound), terms_(terms) {
    if (terms != 1 && terms != 2) raise<ValueError>("EvalMod: ", terms, " terms of the sine series (1 or 2)");
    if (!(integer_bound >= 0 && integer_bound <= 4096))
        raise<ValueError>("EvalMod: the integer bound ", integer_bound, " must be in [0, 4096]");
    if (double_angles && (*double_angles < 0 || *double_angles > 8))
        raise<ValueError>("EvalMod: ", *double_angles, " double angles (0..8)");
    if (degree && (*degree < 1 || *degree > 1023)) raise<ValueError>("EvalMod: cosine degree ", *degree, " (1..1023)");
    const auto make = [&](int r) {
        return degree ? cosine_interpolant(interval(), r, *degree) : least_degree_cosine(interval(), r);
    };
    if (double_angles) {
        r_ = *double_angles;
        cosine_ = make(r_);
    } else {
        // Automatic: among the interpolants close enough to the sine, the fewest levels, then the
        // fewest double angles (each amplifies the noise of the cosine's evaluation by up to 4); if
        // none is close enough, the closest. Once an acceptable candidate of depth d is known, a
        // larger r wins only with a polynomial of depth below d - r: one interpolant of the largest
        // such degree tells whether that can reach the sine, before any degree search (the error
        // falls with the degree, as the search assumes), which keeps the choice a fraction of the
        // bootstrapper's set-up.
        std::optional<int> best_depth;  // of the best acceptable candidate so far
        double best_error = 0;
        for (int r = 0; r <= kMaxAutomaticDoubleAngles; ++r) {
            if (best_depth) {
                const int depth_left = *best_depth - r - 1;  // the polynomial's, to beat best_depth
                if (depth_left < 1) break;
                const int largest = (1 << depth_left) - 1;
                if (degree ? *degree > largest
                           : interpolation_error(cosine_interpolant(interval(), r, largest), interval(), r) > kAcceptableError)
                    continue;
            }
            Polynomial p = make(r);
            const double err = interpolation_error(p, interval(), r);
            const int depth = polynomial_depth(p) + r;
            const bool take = err <= kAcceptableError ? !best_depth || depth < *best_depth
                                                      : !best_depth && (r == 0 || err < best_error);
            if (!take) continue;
            if (err <= kAcceptableError) best_depth = depth;
            r_ = r;
            cosine_ = std::move(p);
            best_error = err;
        }
    }
    if (terms_ == 2) choose_series_cosine(degree.has_value());
}

void EvalMod::choose_series_cosine(bool degree_given) {
    // cos(2 pi t) has the sine's error at the same degree (the same function, shifted), which an
    // explicit degree keeps. Otherwise it needs only kSeriesCosineError: an interpolant of
    // cos(2 pi t / 2^j) of a lower degree and j more double angles, in the sine's levels (its own
    // depth plus j at most the sine's), with the fewest key switches beside the sine (its
    // relinearized products and the double angles).
    second_ = cosine_interpolant(interval(), r_, cosine_.degree(), 0);
    second_angles_ = r_;
    if (degree_given) return;
    const int sine_depth = polynomial_depth(cosine_);
    const auto key_switches = [&](const Polynomial& p, int extra) {
        return plan_polynomials({cosine_, p}, sine_depth, std::vector<int>{0, extra}).relinearizations + uint64_t(extra);
    };
    uint64_t best = key_switches(second_, 0);
    for (int j = 1; j <= kMaxAutomaticDoubleAngles && sine_depth - j >= 1; ++j) {
        auto p = least_degree_series_cosine(interval(), r_ + j, (1 << (sine_depth - j)) - 1);
        if (!p) continue;
        const uint64_t cost = key_switches(*p, j);
        if (cost < best) {
            best = cost;
            second_ = std::move(*p);
            second_angles_ = r_ + j;
        }
    }
}

int EvalMod::depth() const { return polynomial_depth(cosine_) + r_ + (terms_ == 2 ? 1 : 0); }

long double EvalMod::value(long double t) const {
    const long double y = t / static_cast<long double>(interval());
    long double f = apply_double_angles(evaluate_long(cosine_, y), r_);
    if (terms_ == 2) f *= kSeriesSine - kSeriesCosine * apply_double_angles(evaluate_long(second_, y), second_angles_);
    return f / (2 * std::numbers::pi_v<long double>);
}

double EvalMod::model(double t) const { return double(value(t)); }

double EvalMod::approximation_error(double message_bound) const {
    long double worst = 0;
    const int per_integer = 64;
    for (int i = -int(k_); i <= int(k_); ++i)
        for (int j = -per_integer; j <= per_integer; ++j) {
            const long double e = message_bound * static_cast<long double>(j) / per_integer;
            worst = std::max(worst, std::fabs(value(i + e) - e));
        }
    return double(worst);
}

template <ckks::Encrypted T> T EvalMod::apply(const CountedOps& ops, const T& y, double scale) const {
    const char* op = "eval_mod";
    require_levels(op, y, "y", depth(), "EvalMod");
    const auto& q = ops.eval().context()->q();
    const int cosine_level = y.level() - polynomial_depth(cosine_);
    const int angles_level = cosine_level - r_;  // where the double angles leave sin and cos
    // Backwards from the output: the sine ends at scale / (2 pi). A polynomial evaluated at `level`
    // and followed by `angles` double angles, the last at `last`: the square that makes c_j at
    // level l - 1 from c_{j-1} at level l divides by q_l, so c_{j-1} is at sqrt(s_j q_l).
    // Two terms: (4 sin - sin cos) at the product's scale, rescaled by q_l, is the series times
    // 3 (2 pi). Sine at scale / (2 pi) as with one term and cos at q_l / 3 give exactly that: the
    // sine keeps the scale (and the noise) of one term, and cos, a factor near 1 whose noise only
    // reaches the result times sin (small), needs no more. (Both at sqrt(scale q_l / (6 pi)) would
    // put the sine about 7 bits lower at B1, whose q_l has 45 bits: 2 bits of the bootstrap's
    // precision at the message ratio 2^8, measured.)
    const auto chain = [&](double last, int level, int angles) {
        std::vector<double> scales(size_t(angles) + 1);
        scales[size_t(angles)] = last;
        for (int j = angles; j >= 1; --j)
            scales[size_t(j - 1)] = std::sqrt(scales[size_t(j)] * double(q[size_t(level - (j - 1))]));
        return scales;
    };
    // the series' cosine ends where the sine does, after its own double angles
    const int second_level = angles_level + second_angles_;
    std::vector<std::vector<double>> chains{chain(scale / (2 * M_PI), cosine_level, r_)};
    if (terms_ == 2) chains.push_back(chain(double(q[size_t(angles_level)]) / 3, second_level, second_angles_));
    std::vector<T> c = terms_ == 1
                           ? std::vector<T>{PolynomialEvaluator(ops).evaluate(y, cosine_, cosine_level, chains[0][0])}
                           : PolynomialEvaluator(ops).evaluate(y, {cosine_, second_},
                                                               std::vector<int>{cosine_level, second_level},
                                                               std::vector<double>{chains[0][0], chains[1][0]});
    for (size_t k = 0; k < c.size(); ++k)
        for (size_t j = 1; j < chains[k].size(); ++j) {
            c[k] = twice_product_minus(ops, c[k], c[k], static_cast<const T*>(nullptr));
            c[k].set_scale(chains[k][j]);  // equal to the product's up to double rounding
        }
    if (terms_ == 1) {
        c[0].set_scale(scale);  // sin(2 pi t) at scale / (2 pi) is (1/2 pi) sin(2 pi t) at scale
        return std::move(c[0]);
    }
    // sin (4 - cos): one product relinearized and rescaled in one call; 4 is added at cos's scale
    ops.eval().negate_inplace(c[1]);
    ops.eval().add_inplace(c[1], 4.0);
    T series = ops.multiply_relin_rescale(c[0], c[1]);
    series.set_scale(scale);  // (4 sin - sin cos) / (3 2 pi) is the series at scale
    return series;
}

template ckks::Ciphertext EvalMod::apply(const CountedOps&, const ckks::Ciphertext&, double) const;
template ckks::CiphertextBatch EvalMod::apply(const CountedOps&, const ckks::CiphertextBatch&, double) const;

}  // namespace oboro::algorithms
