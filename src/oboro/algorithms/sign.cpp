#include "oboro/algorithms/sign.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>
#include <sstream>

#include "oboro/algorithms/minimax_sign.hpp"
#include "oboro/algorithms/polynomial_evaluator.hpp"
#include "oboro/algorithms/requirements.hpp"
#include "oboro/util/error.hpp"

namespace oboro::algorithms {

namespace {

using ckks::AutoEvaluator;

// Samples in each half of the grid (log-spaced, then uniform) on which the plan's error is measured.
constexpr int kGridSamples = 8192;
// The finest error a stage is made for: 10 bits below the finest plan (2^-40), a few above what
// long double resolves.
constexpr double kFinestStageError = 0x1p-50;

struct Stage {
    Polynomial p;           // on [-1, 1], divided by its largest |value| there
    double resolved = 0;    // the smallest value of p on the stage's resolved [e, 1]
    uint64_t products = 0;  // the ciphertext products of its evaluation
};

// The minimax sign on [e, 1] of this degree, or, where its error would be below
// kFinestStageError, of the lowest degree that reaches it: beyond that the exchange cannot resolve
// the extra coefficients in long double, and they come out as wild values in the gap (which the
// stage's division by its peak would then pay for) and large coefficients (which multiply the
// CKKS noise).
MinimaxSign stage_approximation(double e, int degree) {
    MinimaxSign m = minimax_sign(e, degree);
    if (m.error >= kFinestStageError) return m;
    for (int lower = 1; lower < degree; lower += 2) {
        MinimaxSign l = minimax_sign(e, lower);
        if (l.error < kFinestStageError) return l;
    }
    return m;
}

// Stage i: the minimax sign on [e, 1], divided by its largest |value| on [-1, 1] (1 + its error,
// the gap included), so that it maps [e, 1] to [minimum / peak, 1].
Stage make_stage(double e, int degree) {
    const MinimaxSign m = stage_approximation(e, degree);
    Stage s{m.polynomial, m.minimum / m.peak};
    for (double& c : s.p.coeffs) c /= m.peak;
    s.products = plan_polynomials({s.p}, polynomial_depth(s.p)).products;
    return s;
}

// A sequence of stages from e_1: its resolved end, depth and products.
struct Candidate {
    double resolved = 0;
    uint64_t products = 0;
    std::vector<Stage> stages;
};

// Keeps the candidates (of one depth) that no other one beats in both resolved end and products:
// any continuation of a beaten one does at least as well after the one that beats it (a stage's
// result grows with its e).
void keep_pareto_front(std::vector<Candidate>& front) {
    std::sort(front.begin(), front.end(), [](const Candidate& a, const Candidate& b) {
        return a.resolved != b.resolved ? a.resolved > b.resolved : a.products < b.products;
    });
    std::vector<Candidate> kept;
    for (Candidate& c : front)
        if (kept.empty() || c.products < kept.back().products) kept.push_back(std::move(c));
    front = std::move(kept);
}

// max |composite(x) - 1| on [gap, bound] (the composite is odd: the negative side mirrors it, to
// rounding), on kGridSamples log-spaced points (the error is largest near the gap) and as many
// equally spaced ones.
double grid_error(const SignPlan& plan) {
    double worst = 0;
    const double ratio = plan.bound / plan.gap;
    for (int i = 0; i < kGridSamples; ++i) {
        const double t = double(i) / (kGridSamples - 1);
        for (double x : {plan.gap * std::pow(ratio, t), plan.gap + (plan.bound - plan.gap) * t})
            worst = std::max(worst, std::abs(plan(std::min(x, plan.bound)) - 1));
    }
    return worst;
}

void require_stages(const char* op, const SignPlan& plan) {
    if (plan.stages.empty()) raise<ValueError>(op, ": the sign plan has no stages; make one with plan_sign");
}

void require_relinearization_key(const char* op, const AutoEvaluator& ae, const SignPlan& plan) {
    const auto& eval = ae.evaluator();
    if (!(eval.keys() && eval.keys()->relin_key()))
        raise<MissingKey>(op, ": the ", plan.describe(), " takes ciphertext products and the evaluator has no "
                          "relinearization key");
}

// p_k o ... o p_1 (x), with p_k multiplied by last_factor (1/2 folds the halving of max, min and
// a > b into the last stage's coefficients: exact, and no level).
template <ckks::Encrypted T>
T composite(const AutoEvaluator& ae, const T& x, const SignPlan& plan, double last_factor) {
    const PolynomialEvaluator pe(CountedOps(ae.evaluator(), nullptr));
    const size_t k = plan.stages.size();
    T y;
    for (size_t i = 0; i < k; ++i) {
        Polynomial p = plan.stages[i];
        if (i + 1 == k)
            for (double& c : p.coeffs) c *= last_factor;
        y = pe.evaluate(i == 0 ? x : y, p);
    }
    return y;
}

// max (+1) or min (-1) of a and b: (a + b) / 2 +- (a - b) * sign(a - b) / 2.
template <ckks::Encrypted T>
T extremum(const char* op, const AutoEvaluator& ae, const T& a, const T& b, const SignPlan& plan, int side) {
    require_stages(op, plan);
    const std::string why = "|a - b| = (a - b) sign(a - b): the " + plan.describe() + " and one product";
    require_levels(op, a, "a", plan.depth() + 1, why.c_str());
    require_levels(op, b, "b", plan.depth() + 1, why.c_str());
    require_relinearization_key(op, ae, plan);
    const T difference = ae.sub(a, b);
    const T half_abs = ae.multiply(difference, composite(ae, difference, plan, 0.5));
    // (a + b) / 2 costs one level at the inputs' level, far above half_abs: no level overall.
    const T mean = ae.multiply(ae.add(a, b), std::complex<double>(0.5));
    return side > 0 ? ae.add(mean, half_abs) : ae.sub(mean, half_abs);
}

}  // namespace

int SignPlan::depth() const {
    int d = 0;
    for (const Polynomial& p : stages) d += polynomial_depth(p);
    return d;
}

std::vector<int> SignPlan::degrees() const {
    std::vector<int> d;
    for (const Polynomial& p : stages) d.push_back(p.degree());
    return d;
}

double SignPlan::operator()(double x) const {
    for (const Polynomial& p : stages) x = p(x);
    return x;
}

std::string SignPlan::describe() const {
    std::ostringstream s;
    s << "composite sign of degrees ";
    const auto d = degrees();
    for (size_t i = 0; i < d.size(); ++i) s << (i ? ", " : "") << d[i];
    s << " for |x| in [" << gap << ", " << bound << "]";
    return s.str();
}

SignPlan plan_sign(double bound, double gap, double bits) {
    const char* op = "plan_sign";
    if (!(std::isfinite(bound) && bound > 0))
        raise<ValueError>(op, ": the bound must be finite and positive, not ", bound);
    if (!(gap > 0 && gap < bound))
        raise<ValueError>(op, ": the gap must be in (0, bound) = (0, ", bound, "), not ", gap);
    if (!(bits >= 1 && bits <= 40)) raise<ValueError>(op, ": bits must be between 1 and 40, not ", bits);
    const double target = std::exp2(-bits);
    // The map x / bound is one level for every candidate (none when bound == 1).
    const int budget = kMaxSignDepth - (bound == 1 ? 0 : 1);
    // What no plan can do, at once: by Bernstein's inequality |p'(x)| <= d / sqrt(1 - x^2) for
    // |p| <= 1 on [-1, 1], a stage of degree d takes e to at most p(e) <= d arcsin(e) <= d (pi/2) e,
    // a factor of at most `growth` per level; the resolved end must grow from gap / bound to 1/2.
    double growth = 0;
    for (int d : kSignStageDegrees)
        growth = std::max(growth, std::pow(d * std::numbers::pi / 2, 1.0 / ceil_log2(d + 1)));
    if (std::log2(0.5 * bound / gap) > budget * std::log2(growth))
        raise<ValueError>(op, ": no composite of at most ", kMaxSignDepth, " levels can resolve the sign for |x| in [",
                          gap, ", ", bound, "]; the gap is too small a fraction of the bound");

    // Breadth first over the total depth: fronts[D] holds the sequences of depth D. The first
    // depth at which one reaches the target is the least; its candidate with the fewest products
    // wins (then the smallest error). A sequence that reached the target is not extended, nor by
    // a higher degree than the one that reached it: so a stage of degree 7 or more starts from
    // 1 - e > 2^-20 at least (degree 3 reaches 2^-40 from closer to 1), far from where the
    // exchange's system becomes singular.
    std::vector<std::vector<Candidate>> fronts(size_t(budget) + 1);
    fronts[0].push_back({gap / bound, 0, {}});
    for (int depth = 0; depth <= budget; ++depth) {
        std::vector<Candidate>& front = fronts[size_t(depth)];
        keep_pareto_front(front);
        const Candidate* best = nullptr;
        for (const Candidate& c : front)
            if (depth > 0 && 1 - c.resolved <= target &&
                (!best || c.products < best->products ||
                 (c.products == best->products && c.resolved > best->resolved)))
                best = &c;
        if (best) {
            SignPlan plan;
            plan.bound = bound;
            plan.gap = gap;
            plan.bits = bits;
            plan.resolved.push_back(gap / bound);
            for (const Stage& s : best->stages) {
                plan.stages.push_back(s.p);
                plan.resolved.push_back(s.resolved);
                plan.products += s.products;
            }
            plan.stages.front().lo = -bound;
            plan.stages.front().hi = bound;
            plan.error_bound = 1 - best->resolved;
            plan.error = grid_error(plan);
            return plan;
        }
        for (const Candidate& c : front) {
            for (int degree : kSignStageDegrees) {
                if (depth + ceil_log2(degree + 1) > budget) break;
                Candidate extended{0, 0, c.stages};
                extended.stages.push_back(make_stage(c.resolved, degree));
                const Stage& stage = extended.stages.back();
                extended.resolved = stage.resolved;
                extended.products = c.products + stage.products;
                const int next = depth + polynomial_depth(stage.p);  // a lower degree may take fewer
                const bool reached = 1 - extended.resolved <= target;
                fronts[size_t(next)].push_back(std::move(extended));
                if (reached) break;
            }
        }
        front.clear();
    }
    raise<ValueError>(op, ": no composite of at most ", kMaxSignDepth, " levels resolves the sign within 2^-", bits,
                      " for |x| in [", gap, ", ", bound, "]; the gap is too small a fraction of the bound");
}

template <ckks::Encrypted T> T sign(const AutoEvaluator& ae, const T& x, const SignPlan& plan) {
    const char* op = "sign";
    require_stages(op, plan);
    require_levels(op, x, "x", plan.depth(), plan.describe().c_str());
    require_relinearization_key(op, ae, plan);
    return composite(ae, x, plan, 1.0);
}

template <ckks::Encrypted T> T absolute(const AutoEvaluator& ae, const T& x, const SignPlan& plan) {
    const char* op = "absolute";
    require_stages(op, plan);
    const std::string why = "|x| = x sign(x): the " + plan.describe() + " and one product";
    require_levels(op, x, "x", plan.depth() + 1, why.c_str());
    require_relinearization_key(op, ae, plan);
    return ae.multiply(x, composite(ae, x, plan, 1.0));
}

template <ckks::Encrypted T> T maximum(const AutoEvaluator& ae, const T& a, const T& b, const SignPlan& plan) {
    return extremum("maximum", ae, a, b, plan, +1);
}

template <ckks::Encrypted T> T minimum(const AutoEvaluator& ae, const T& a, const T& b, const SignPlan& plan) {
    return extremum("minimum", ae, a, b, plan, -1);
}

template <ckks::Encrypted T> T greater_than(const AutoEvaluator& ae, const T& a, const T& b, const SignPlan& plan) {
    const char* op = "greater_than";
    require_stages(op, plan);
    const std::string why = "sign(a - b): the " + plan.describe();
    require_levels(op, a, "a", plan.depth(), why.c_str());
    require_levels(op, b, "b", plan.depth(), why.c_str());
    require_relinearization_key(op, ae, plan);
    // sign(a - b) / 2 with the halving in the last stage, then + 1/2
    return ae.add(composite(ae, ae.sub(a, b), plan, 0.5), std::complex<double>(0.5));
}

#define OBORO_SIGN_INSTANTIATE(T)                                                       \
    template T sign(const AutoEvaluator&, const T&, const SignPlan&);                    \
    template T absolute(const AutoEvaluator&, const T&, const SignPlan&);                \
    template T maximum(const AutoEvaluator&, const T&, const T&, const SignPlan&);       \
    template T minimum(const AutoEvaluator&, const T&, const T&, const SignPlan&);       \
    template T greater_than(const AutoEvaluator&, const T&, const T&, const SignPlan&);
OBORO_SIGN_INSTANTIATE(ckks::Ciphertext)
OBORO_SIGN_INSTANTIATE(ckks::CiphertextBatch)
#undef OBORO_SIGN_INSTANTIATE

}  // namespace oboro::algorithms
