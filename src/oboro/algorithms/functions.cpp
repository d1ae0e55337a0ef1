#include "oboro/algorithms/functions.hpp"

#include <cmath>
#include <functional>
#include <map>
#include <sstream>
#include <string>

#include "oboro/algorithms/polynomial_evaluator.hpp"
#include "oboro/algorithms/requirements.hpp"
#include "oboro/util/error.hpp"

namespace oboro::algorithms {

namespace {

using ckks::AutoEvaluator;

// The plan of least depth (then least initial degree) reaching 2^-bits: y_0 the Chebyshev
// interpolant of f, the relative error of y_0 measured on the interval, then `step` applied to
// the error bound per iteration.
NewtonPlan plan_newton(const char* op, double lo, double hi, double bits, const std::function<double(double)>& f,
                       const std::function<double(double)>& step, int levels_per_iteration, double converges_below) {
    if (!(std::isfinite(lo) && std::isfinite(hi) && 0 < lo && lo < hi))
        raise<ValueError>(op, ": the interval [", lo, ", ", hi, "] must be finite with 0 < lo < hi");
    if (!(bits >= 1 && bits <= 50)) raise<ValueError>(op, ": bits must be between 1 and 50, not ", bits);
    const double target = std::exp2(-bits);
    NewtonPlan best;
    bool found = false;
    for (int degree : {1, 3, 7, 15, 31, 63}) {
        NewtonPlan p;
        p.levels_per_iteration = levels_per_iteration;
        p.initial = chebyshev_interpolant(f, lo, hi, degree);
        for (int i = 0; i < 4097; ++i) {
            const double x = lo + (hi - lo) * i / 4096;
            p.initial_error = std::max(p.initial_error, std::abs(p.initial(x) / f(x) - 1));
        }
        if (!(p.initial_error < converges_below)) continue;
        double e = p.initial_error;
        while (e > target && p.iterations < 12) {
            e = step(e);
            ++p.iterations;
        }
        p.final_error = e;
        if (e > target) continue;
        if (!found || p.depth() < best.depth()) {
            best = p;
            found = true;
        }
    }
    if (!found)
        raise<ValueError>(op, ": no plan reaches ", bits, " bits on [", lo, ", ", hi,
                          "]; the interval spans too many orders of magnitude (scale x first)");
    return best;
}

std::string describe_plan(const NewtonPlan& p, const char* name) {
    std::ostringstream s;
    s << name << " on [" << p.initial.lo << ", " << p.initial.hi << "] (degree " << p.initial.degree() << " and "
      << p.iterations << " Newton iterations)";
    return s.str();
}

template <ckks::Encrypted T> T initial_approximation(const AutoEvaluator& ae, const T& x, const NewtonPlan& plan) {
    return PolynomialEvaluator(CountedOps(ae.evaluator(), nullptr)).evaluate(x, plan.initial);
}

}  // namespace

NewtonPlan plan_inverse(double lo, double hi, double bits) {
    // 1 - x y' = (1 - x y)^2
    return plan_newton("inverse", lo, hi, bits, [](double x) { return 1 / x; }, [](double e) { return e * e; }, 2, 1);
}

NewtonPlan plan_inverse_sqrt(double lo, double hi, double bits) {
    // y = (1 + e) / sqrt(x)  ->  y' = (1 + e') / sqrt(x) with |e'| <= 3/2 e^2 + 1/2 |e|^3
    return plan_newton(
        "inverse_sqrt", lo, hi, bits, [](double x) { return 1 / std::sqrt(x); },
        [](double e) { return 1.5 * e * e + 0.5 * e * e * e; }, 3, 0.5);
}

NewtonPlan plan_square_root(double lo, double hi, double bits) {
    NewtonPlan via_inverse = plan_inverse_sqrt(lo, hi, bits);
    via_inverse.times_x = true;
    // the interpolant of sqrt, no iterations: the plan of the least degree that reaches `bits`
    const NewtonPlan* best = &via_inverse;
    NewtonPlan direct;
    try {
        direct = plan_newton("sqrt", lo, hi, bits, [](double x) { return std::sqrt(x); },
                             [](double) { return 1.0; }, 0, 1);
        if (direct.iterations == 0 && direct.depth() <= via_inverse.depth()) best = &direct;
    } catch (const ValueError&) {
        // no interpolant of degree <= 63 reaches it: Newton's iterations do
    }
    return *best;
}

template <ckks::Encrypted T> T inverse(const AutoEvaluator& ae, const T& x, const NewtonPlan& plan) {
    require_levels("inverse", x, "x", plan.depth(), describe_plan(plan, "1/x").c_str());
    T y = initial_approximation(ae, x, plan);
    for (int i = 0; i < plan.iterations; ++i) {
        const T error = ae.rsub(ae.multiply(x, y), 2.0);  // 2 - x y
        y = ae.multiply(y, error);
    }
    return y;
}

template <ckks::Encrypted T> T inverse_sqrt(const AutoEvaluator& ae, const T& x, const NewtonPlan& plan) {
    require_levels("inverse_sqrt", x, "x", plan.depth(), describe_plan(plan, "1/sqrt(x)").c_str());
    T y = initial_approximation(ae, x, plan);
    // x/2 once, at x's level: off the critical path (y is deeper from the first iteration on)
    const T half_x = plan.iterations > 0 ? ae.multiply(x, std::complex<double>(0.5)) : T();
    for (int i = 0; i < plan.iterations; ++i) {
        const T t = ae.multiply(half_x, ae.square(y));  // x y^2 / 2
        y = ae.multiply(y, ae.rsub(t, 1.5));
    }
    return y;
}

template <ckks::Encrypted T> T square_root(const AutoEvaluator& ae, const T& x, const NewtonPlan& plan) {
    if (!plan.times_x) {  // the interpolant of sqrt
        require_levels("square_root", x, "x", plan.depth(), describe_plan(plan, "sqrt(x)").c_str());
        return initial_approximation(ae, x, plan);
    }
    require_levels("square_root", x, "x", plan.depth(), describe_plan(plan, "sqrt(x) = x / sqrt(x)").c_str());
    NewtonPlan inner = plan;
    inner.times_x = false;
    return ae.multiply(x, inverse_sqrt(ae, x, inner));
}

template <ckks::Encrypted T> T integer_power(const AutoEvaluator& ae, const T& x, int64_t k) {
    if (k < 1) raise<ValueError>("integer_power: the exponent must be at least 1, not ", k);
    require_levels("integer_power", x, "x", ceil_log2(long(k)), ("x^" + std::to_string(k)).c_str());
    std::map<int64_t, T> powers;
    powers.emplace(1, ae.relinearize(x));
    std::function<const T&(int64_t)> power = [&](int64_t i) -> const T& {
        auto it = powers.find(i);
        if (it != powers.end()) return it->second;
        const auto [a, b] = power_factors(long(i));
        T p = a == b ? ae.square(power(a)) : ae.multiply(power(a), power(b));
        return powers.emplace(i, std::move(p)).first->second;
    };
    return power(k);
}

#define OBORO_FUNCTIONS_INSTANTIATE(T)                                                            \
    template T inverse(const AutoEvaluator&, const T&, const NewtonPlan&);                         \
    template T inverse_sqrt(const AutoEvaluator&, const T&, const NewtonPlan&);                    \
    template T square_root(const AutoEvaluator&, const T&, const NewtonPlan&);                     \
    template T integer_power(const AutoEvaluator&, const T&, int64_t);
OBORO_FUNCTIONS_INSTANTIATE(ckks::Ciphertext)
OBORO_FUNCTIONS_INSTANTIATE(ckks::CiphertextBatch)
#undef OBORO_FUNCTIONS_INSTANTIATE

}  // namespace oboro::algorithms
