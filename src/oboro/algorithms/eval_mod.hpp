// EvalMod, the step of bootstrapping that removes the multiple of q_0 that ModRaise added: on
// slots holding t = I + e (I an integer with |I| <= k, e the message, |e| small), it computes
// (1/2 pi) sin(2 pi t), which is e up to (2 pi)^2 e^3 / 6.
//
// The sine is evaluated as a scaled cosine and double angles (Han and Ki, "Better bootstrapping
// for approximate HE", CT-RSA 2020): the input arrives as y = t / K' (K' = k + 1/2, so y is in
// [-1, 1]); the Chebyshev interpolant of cos(2 pi (K' y - 1/4) / 2^r) on [-1, 1], then r times
// c -> 2 c^2 - 1, gives cos(2 pi (t - 1/4)) = sin(2 pi t); the factor 1/(2 pi) is a change of the
// declared scale (free). Every step lands on an exact scale planned backwards from the requested
// output scale, so the result is at exactly that scale (to double rounding).
//
// Errors, in units of t: the interpolant's (amplified by 4 per double angle: d(2c^2-1)/dc = 4c)
// and the sine's own, (2 pi)^2 e^3 / 6, which depends on the message size only. Both are computed
// in double precision by approximation_error().
//
// With two terms (Jutla and Manohar, "Sine series approximation of the mod function for
// bootstrapping of approximate HE", Eurocrypt 2022), EvalMod computes the sine series
// (1/2 pi) (4/3 sin(2 pi t) - 1/6 sin(4 pi t)) = (1/2 pi) sin(2 pi t) (4/3 - 1/3 cos(2 pi t)),
// whose cubic term cancels: e - (2 pi)^4 e^5 / 30 + ..., so a large message keeps its precision.
// The cosine cos(2 pi t) comes from a second interpolant of the same degree on the same powers,
// through the same double angles, and the product takes one more level; the sine keeps the scale
// it has alone and the cosine takes the rest (apply()), so the series has the sine's noise. (One
// interpolant of the series itself, of about twice the sine's degree for the same level, measured
// 7 bits noisier.)
#pragma once

#include <optional>

#include "oboro/algorithms/op_counts.hpp"
#include "oboro/algorithms/polynomial.hpp"

namespace oboro::algorithms {

class EvalMod {
public:
    // integer_bound: k, the largest |I| (bootstrap.hpp derives it from the secret's Hamming weight);
    // double_angles: r in 0..8 (nullopt: the r in 0..3 with the fewest levels, then the fewest
    // double angles, among the interpolants within 2^-45 of the sine: r = 0 and a degree of 151 for
    // K' = 16.5, the same 8 levels as r = 2 and degree 58 but with about a bit less noise, because
    // no double angle amplifies the cosine's rounding); degree: the cosine interpolant's (nullopt:
    // the least degree whose error after the double angles is at most 2^-50, or the best one of at
    // most 255).
    // terms: 1 (the sine) or 2 (the two-term sine series, one level more).
    EvalMod(double integer_bound, std::optional<int> double_angles = std::nullopt,
            std::optional<int> degree = std::nullopt, int terms = 1);

    double integer_bound() const { return k_; }
    // K': the input is y = t / K'.
    double interval() const { return k_ + 0.5; }
    int double_angles() const { return r_; }
    int terms() const { return terms_; }
    const Polynomial& cosine() const { return cosine_; }
    // Levels consumed: the cosine's ceil(log2(degree + 1)), one per double angle, and one for the
    // product of the two-term series.
    int depth() const;

    // (1/2 pi) sin(2 pi t), or the two-term series, as the homomorphic evaluation computes it, in
    // double precision.
    double model(double t) const;
    // max |model(t) - e| over t = I + e, |I| <= k integer, |e| <= message_bound: the error of the
    // approximation (the interpolant's and the sine's), in units of t.
    double approximation_error(double message_bound) const;

    // y (= t / K', any scale) -> (1/2 pi) sin(2 pi t) (or the series) at level y.level() - depth()
    // and exactly `scale`. LevelMismatch when y has fewer levels than depth().
    template <ckks::Encrypted T> T apply(const CountedOps& ops, const T& y, double scale) const;

    // The series' cosine (two terms): its interpolant and the double angles that follow it.
    const Polynomial& series_cosine() const { return second_; }
    int series_cosine_double_angles() const { return second_angles_; }

private:
    // model(t) in long double (approximation_error's samples)
    long double value(long double t) const;
    void choose_series_cosine(bool degree_given);

    double k_;
    int r_;
    int terms_;
    Polynomial cosine_;
    Polynomial second_;     // two terms: the interpolant whose double angles give cos(2 pi t)
    int second_angles_ = 0;  // and their number (r or more)
};

}  // namespace oboro::algorithms
