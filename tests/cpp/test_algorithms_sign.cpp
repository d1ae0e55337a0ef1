// Sign and comparison against double precision: the Remez exchange (equioscillation, better than
// interpolation), the composite plans (their depth is the least and their products the fewest,
// their error, every stage within [-1, 1]), and sign, abs, max, min and a > b encrypted, on
// ciphertexts and batches, with the errors they raise before any work.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <tuple>

#include "ckks_test_util.hpp"
#include "oboro/algorithms/minimax_sign.hpp"
#include "oboro/algorithms/polynomial_evaluator.hpp"
#include "oboro/algorithms/sign.hpp"
#include "oboro/ckks/auto_evaluator.hpp"
#include "oboro/ckks/key_set.hpp"

namespace oboro::test {
namespace {

using algorithms::ceil_log2;
using algorithms::minimax_sign;
using algorithms::MinimaxSign;
using algorithms::plan_sign;
using algorithms::Polynomial;
using algorithms::PolynomialBasis;
using algorithms::SignPlan;

double sign_of(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0; }

// ---- the Remez exchange ----------------------------------------------------------------------

// The error p - 1 at the extrema: alternating in sign, each as large as the largest error on a
// fine grid of [e, 1] (to the exchange's tolerance and double rounding), which the levelled error
// meets; and the negative side mirrors it.
void check_equioscillation(const MinimaxSign& m, double e, int degree) {
    SCOPED_TRACE("degree " + std::to_string(degree) + " on [" + std::to_string(e) + ", 1]");
    const Polynomial& p = m.polynomial;
    EXPECT_EQ(p.degree(), degree);
    EXPECT_TRUE(p.is_odd());
    EXPECT_EQ(p.basis, PolynomialBasis::chebyshev);
    EXPECT_EQ(p.lo, -1);
    EXPECT_EQ(p.hi, 1);
    ASSERT_EQ(m.extrema.size(), size_t(degree + 3) / 2);
    const double slack = 0x1p-20 * std::min(m.error, 1 - m.error) + 0x1p-46;
    double previous = -1;
    for (size_t j = 0; j < m.extrema.size(); ++j) {
        const double x = m.extrema[j], r = p(x) - 1;
        EXPECT_GE(x, e);
        EXPECT_LE(x, 1.0);
        EXPECT_GT(x, previous);
        previous = x;
        EXPECT_NEAR(std::abs(r), m.error, slack) << "extremum " << j << " at " << x;
        if (j > 0) EXPECT_LT(r * (p(m.extrema[j - 1]) - 1), 0) << "the signs alternate at " << x;
        EXPECT_NEAR(p(-x), -p(x), 1e-12) << "odd (to the rounding of Clenshaw's recurrence)";
    }
    EXPECT_LE(m.levelled_error, m.error);
    EXPECT_LE(m.error - m.levelled_error, slack);
    EXPECT_LE(algorithms::max_error(p, [](double) { return 1.0; }, e, 1, 20001), m.error + slack);
    EXPECT_NEAR(m.minimum, 1 - m.error, slack);
    EXPECT_NEAR(m.maximum, 1 + m.error, slack);
    // the largest |p| on [-1, 1] is on [e, 1]: in the gap p rises from 0
    EXPECT_EQ(m.peak, m.maximum);
    EXPECT_LE(algorithms::max_error(p, [](double) { return 0.0; }, -1, 1, 40001), m.peak + 0x1p-46);
    for (int k = 0; k <= 1000; ++k) EXPECT_GE(p(e * k / 1000), 0.0);
}

TEST(MinimaxSign, Equioscillates) {
    // degree 1 in closed form: c x with c e - 1 = -(c - 1), so c = 2 / (1 + e), error (1 - e) / (1 + e)
    const MinimaxSign line = minimax_sign(0.25, 1);
    EXPECT_NEAR(line.polynomial.coeffs[1], 2 / 1.25, 1e-15);
    EXPECT_NEAR(line.error, 0.75 / 1.25, 1e-15);
    check_equioscillation(line, 0.25, 1);
    for (auto [e, d] : {std::pair{0x1p-4, 7}, std::pair{0x1p-8, 15}, std::pair{0.3, 31}, std::pair{0x1p-6, 63},
                        std::pair{0x1p-12, 63}, std::pair{0.9, 7}})
        check_equioscillation(minimax_sign(e, d), e, d);
}

// The minimax error is the least possible: below that of the Chebyshev interpolant of sign of
// the same degree (odd too: its nodes avoid 0), measured on the same set.
TEST(MinimaxSign, BeatsTheChebyshevInterpolant) {
    for (auto [e, d] : {std::pair{0x1p-2, 7}, std::pair{0x1p-4, 15}, std::pair{0x1p-6, 31}, std::pair{0x1p-6, 63}}) {
        const MinimaxSign m = minimax_sign(e, d);
        const Polynomial interpolant = algorithms::chebyshev_interpolant(sign_of, -1, 1, d);
        const double interpolant_error = algorithms::max_error(interpolant, sign_of, e, 1, 20001);
        EXPECT_LT(m.error, interpolant_error) << "degree " << d << " on [" << e << ", 1]";
        // the minimax error is also sign's error on the negative side (the grid just misses the extrema)
        EXPECT_NEAR(algorithms::max_error(m.polynomial, sign_of, -1, -e, 20001), m.error, 1e-9);
    }
}

TEST(MinimaxSign, Errors) {
    for (double e : {0.0, 1.0, -0.5, 2.0, std::nan("")}) EXPECT_THROW(minimax_sign(e, 7), ValueError) << e;
    for (int d : {0, 2, -1, 8, 257}) EXPECT_THROW(minimax_sign(0.1, d), ValueError) << d;
    EXPECT_THROW(minimax_sign(0.1, 7, 0), ValueError);
    // an interval so narrow that degree 15 is singular in long double (degree 3 is exact there)
    EXPECT_LT(minimax_sign(1 - 0x1p-40, 3).error, 0x1p-60);
    try {
        minimax_sign(1 - 0x1p-40, 15);
        FAIL() << "no error";
    } catch (const ValueError& e) {
        EXPECT_NE(std::string(e.what()).find("is singular in long double"), std::string::npos) << e.what();
    }
    // the iteration limit: one exchange does not converge from the first reference
    try {
        minimax_sign(0x1p-8, 15, 1);
        FAIL() << "no error";
    } catch (const ValueError& e) {
        EXPECT_NE(std::string(e.what()).find("did not converge in 1 iterations"), std::string::npos) << e.what();
    }
}

// ---- plans ------------------------------------------------------------------------------------

// The plans of the encrypted tests, made once (each takes tens of milliseconds).
const SignPlan& cached_plan(double bound, double gap, double bits) {
    static std::map<std::tuple<double, double, double>, SignPlan> plans;
    auto it = plans.find({bound, gap, bits});
    if (it == plans.end()) it = plans.emplace(std::tuple{bound, gap, bits}, plan_sign(bound, gap, bits)).first;
    return it->second;
}

TEST(SignPlan, ReachesItsPrecisionWithinRange) {
    for (auto [bound, gap, bits] : {std::tuple{1.0, 0x1p-6, 8.0}, std::tuple{1.0, 0x1p-8, 10.0},
                                    std::tuple{4.0, 0x1p-4, 10.0}, std::tuple{1.0, 0x1p-8, 12.0},
                                    std::tuple{1.0, 0x1p-10, 40.0}}) {
        const SignPlan& plan = cached_plan(bound, gap, bits);
        SCOPED_TRACE(plan.describe());
        EXPECT_LE(plan.error, std::exp2(-bits));
        EXPECT_LE(plan.error, plan.error_bound + 0x1p-45);
        EXPECT_EQ(plan.resolved.size(), plan.stages.size() + 1);
        EXPECT_EQ(plan.resolved.front(), gap / bound);
        int depth = bound == 1 ? 0 : 1;  // the map x / bound
        uint64_t products = 0;
        for (size_t i = 0; i < plan.stages.size(); ++i) {
            Polynomial p = plan.stages[i];
            const int d = p.degree();
            // a level-efficient degree, or a lower one for a stage finer than 2^-50 (the last one
            // of the 40-bit plan)
            if (bits < 40) EXPECT_TRUE(d == 3 || d == 7 || d == 15 || d == 31 || d == 63) << d;
            else EXPECT_TRUE(d % 2 == 1 && d <= 63) << d;
            EXPECT_TRUE(p.is_odd());
            EXPECT_EQ(p.lo, i == 0 ? -bound : -1.0);
            EXPECT_EQ(p.hi, i == 0 ? bound : 1.0);
            depth += ceil_log2(d + 1);
            products += algorithms::plan_polynomials({p}, algorithms::polynomial_depth(p)).products;
            // on [-1, 1] (in u): within [-1, 1], the gap included; non-negative on [0, 1], and at
            // least e_{i+1} on [e_i, 1]
            p.lo = -1;
            p.hi = 1;
            const double e = plan.resolved[i], next = plan.resolved[i + 1];
            double top = 0, bottom = 1, lowest_resolved = 1;
            for (int k = 0; k <= 40000; ++k) {
                const double u = double(k) / 40000, v = e + (1 - e) * u;
                top = std::max(top, std::abs(p(u)));
                bottom = std::min(bottom, p(u));
                lowest_resolved = std::min(lowest_resolved, p(v));
            }
            EXPECT_LE(top, 1 + 0x1p-45) << "stage " << i;
            EXPECT_GE(bottom, 0.0) << "stage " << i;
            EXPECT_GE(lowest_resolved, next - 0x1p-45) << "stage " << i;
            EXPECT_GT(next, e);
        }
        EXPECT_EQ(plan.depth(), depth);
        EXPECT_EQ(plan.products, products);
        // the composite itself: sign within the error on the resolved set, in [0, 1] on [0, bound]
        // (gap included: abs errs by at most |x| there), odd
        for (int k = 0; k <= 20000; ++k) {
            const double x = bound * k / 20000.0, y = plan(x);
            EXPECT_GE(y, 0.0);
            EXPECT_LE(y, 1 + 0x1p-45);
            if (x >= gap) EXPECT_LE(std::abs(y - 1), plan.error + 0x1p-45) << x;
            EXPECT_NEAR(plan(-x), -y, 1e-11);  // the rounding, times the slope in the gap
        }
    }
}

// No sequence of the allowed degrees of less depth reaches the precision, and none of the same
// depth with fewer products: every sequence of depth <= the plan's, built independently (each
// stage the minimax sign on [e, 1] divided by its maximum, e' = its minimum over that maximum).
TEST(SignPlan, LeastDepthThenFewestProducts) {
    const double bound = 1, gap = 0x1p-6, bits = 8;
    const SignPlan& plan = cached_plan(bound, gap, bits);
    ASSERT_EQ(plan.depth(), 9) << plan.describe();
    uint64_t fewest = std::numeric_limits<uint64_t>::max();
    int sequences = 0;
    std::function<void(double, int, uint64_t)> extend = [&](double e, int depth, uint64_t products) {
        for (int d : {3, 7, 15, 31, 63}) {
            const int next = depth + ceil_log2(d + 1);
            if (next > plan.depth()) break;
            const MinimaxSign m = minimax_sign(e, d);
            Polynomial p = m.polynomial;
            for (double& c : p.coeffs) c /= m.maximum;
            const double e_next = m.minimum / m.maximum;
            const uint64_t total = products + algorithms::plan_polynomials({p}, next - depth).products;
            ++sequences;
            if (1 - e_next <= std::exp2(-bits)) {
                EXPECT_EQ(next, plan.depth()) << "a shallower sequence reaches 2^-" << bits;
                fewest = std::min(fewest, total);
            } else {
                extend(e_next, next, total);
            }
        }
    };
    extend(gap / bound, 0, 0);
    EXPECT_GT(sequences, 20);
    EXPECT_EQ(plan.products, fewest);
}

TEST(SignPlan, Examples) {
    const SignPlan& a = cached_plan(1, 0x1p-8, 10);
    EXPECT_EQ(a.degrees(), (std::vector<int>{15, 15, 15}));
    EXPECT_EQ(a.depth(), 12);
    EXPECT_EQ(a.products, 24u);
    EXPECT_NE(a.describe().find("composite sign of degrees 15, 15, 15"), std::string::npos) << a.describe();
    // a bound other than 1: the map x / bound is one level more
    const SignPlan& b = cached_plan(4, 0x1p-4, 10);
    EXPECT_EQ(b.stages.front().lo, -4);
    EXPECT_TRUE(b.stages.front().needs_scaling());
    // the same relative gap and precision: the same stages
    EXPECT_EQ(b.degrees(), cached_plan(1, 0x1p-6, 10).degrees());
    EXPECT_EQ(b.depth(), cached_plan(1, 0x1p-6, 10).depth() + 1);
}

TEST(SignPlan, Errors) {
    const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
    for (double bound : {0.0, -1.0, inf, nan}) EXPECT_THROW(plan_sign(bound, 0.01, 8), ValueError) << bound;
    for (double gap : {0.0, -0.01, 1.0, 2.0, nan}) EXPECT_THROW(plan_sign(1, gap, 8), ValueError) << gap;
    for (double bits : {0.5, 40.5, nan}) EXPECT_THROW(plan_sign(1, 0.01, bits), ValueError) << bits;
    // more than 64 levels: refused at once
    try {
        plan_sign(1, 0x1p-90, 20);
        FAIL() << "no error";
    } catch (const ValueError& e) {
        EXPECT_NE(std::string(e.what()).find("no composite of at most 64 levels"), std::string::npos) << e.what();
    }
}

// ---- encrypted ----------------------------------------------------------------------------------

// 14 levels (deep_test_parameters): the deepest plan here takes 12, abs, max and min one more.
struct Fixture {
    Keys keys{deep_test_parameters(14)};
    std::shared_ptr<const KeySet> key_set;
    ckks::AutoEvaluator ae;
    Fixture()
        : key_set(std::make_shared<MemoryKeySet>(std::make_shared<RelinKey>(keys.rk), nullptr)),
          ae(Evaluator(keys.ctx, key_set)) {}
    static Fixture& get() {
        static Fixture f;
        return f;
    }
    int top() const { return keys.ctx->max_level(); }
};

// Random inputs of [-bound, bound] with the edge cases first: +-bound, +-gap, 0 and inputs in the gap.
std::vector<cplx> edge_inputs(size_t n, double bound, double gap, uint64_t seed) {
    auto v = random_real(n, bound, seed);
    const double edges[] = {bound, -bound, gap, -gap, 0, gap / 2, -gap / 4, 2 * gap, -2 * gap};
    for (size_t i = 0; i < std::size(edges); ++i) v[i] = edges[i];
    return v;
}

// The amplification of the input's noise by the composite: its largest slope at the inputs.
double largest_slope(const SignPlan& plan, const std::vector<cplx>& x) {
    double slope = 1;
    const double h = 0x1p-24 * plan.bound;
    for (const cplx& v : x) slope = std::max(slope, std::abs(plan(v.real() + h) - plan(v.real() - h)) / (2 * h));
    return slope;
}

// Bits of agreement with the double composite: the fresh encryption's precision, less the
// amplification of its noise by the composite's slope, less 2 bits for the products' own noise.
double composite_bits(const SignPlan& plan, const std::vector<cplx>& x) {
    return public_key_fresh_bits_bound(1u << 12) - std::log2(largest_slope(plan, x)) - 2;
}

std::vector<cplx> map_values(const std::vector<cplx>& x, const std::function<double(double)>& f) {
    std::vector<cplx> y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = f(x[i].real());
    return y;
}

// The entries of x and y whose |x| is at least gap (the resolved ones).
std::pair<std::vector<cplx>, std::vector<cplx>> resolved_only(const std::vector<cplx>& x, const std::vector<cplx>& y,
                                                              double gap) {
    std::pair<std::vector<cplx>, std::vector<cplx>> r;
    for (size_t i = 0; i < x.size(); ++i)
        if (std::abs(x[i].real()) >= gap) {
            r.first.push_back(x[i]);
            r.second.push_back(y[i]);
        }
    return r;
}

TEST(Sign, AgainstDouble) {
    auto& f = Fixture::get();
    for (auto [bound, gap, bits] : {std::tuple{1.0, 0x1p-8, 10.0}, std::tuple{4.0, 0x1p-4, 10.0}}) {
        const SignPlan& plan = cached_plan(bound, gap, bits);
        SCOPED_TRACE(plan.describe());
        const auto x = edge_inputs(64, bound, gap, 5);
        const Ciphertext ct = f.keys.encrypt(x, f.top(), true, x.size());
        const Ciphertext s = algorithms::sign(f.ae, ct, plan);
        EXPECT_EQ(s.level(), f.top() - plan.depth());
        EXPECT_EQ(s.scale(), f.keys.ctx->standard_scale(s.level()));
        const auto got = f.keys.decrypt(s);
        const double vs_composite = precision_bits(got, map_values(x, [&](double v) { return plan(v); }));
        EXPECT_GE(vs_composite, composite_bits(plan, x));
        // sign itself on the resolved inputs (+-bound and +-gap among them), within 2^-bits
        const auto [rx, rgot] = resolved_only(x, got, gap);
        EXPECT_GE(precision_bits(rgot, map_values(rx, sign_of)), bits);
        // zero stays near zero, the gap between -1 and 1
        EXPECT_LE(std::abs(got[4].real()), std::exp2(-composite_bits(plan, x)));
        for (const cplx& v : got) EXPECT_LE(std::abs(v.real()), 1 + std::exp2(-composite_bits(plan, x)));
    }
}

TEST(Sign, AbsMaxMinGreater) {
    auto& f = Fixture::get();
    const double bound = 1, gap = 0x1p-8, bits = 10;
    const SignPlan& plan = cached_plan(bound, gap, bits);
    const int top = f.top();
    // |x|
    const auto x = edge_inputs(64, bound, gap, 9);
    const Ciphertext ct = f.keys.encrypt(x, top, true, x.size());
    const Ciphertext abs = algorithms::absolute(f.ae, ct, plan);
    EXPECT_EQ(abs.level(), top - plan.depth() - 1);
    const auto got_abs = f.keys.decrypt(abs);
    EXPECT_GE(precision_bits(got_abs, map_values(x, [&](double v) { return v * plan(v); })), composite_bits(plan, x));
    EXPECT_GE(precision_bits(got_abs, map_values(x, [](double v) { return std::abs(v); })), std::log2(1 / gap) - 0.01)
        << "at most |x| < gap in the gap";
    const auto [rx, rabs] = resolved_only(x, got_abs, gap);
    EXPECT_GE(precision_bits(rabs, map_values(rx, [](double v) { return std::abs(v); })), bits - std::log2(bound));

    // max, min and a > b: a - b over [-1, 1], with a - b = +-1, +-gap, 0 and in the gap first
    auto a = random_real(64, 0.5, 21), b = random_real(64, 0.5, 22);
    const double differences[] = {1, -1, gap, -gap, 0, gap / 2, -gap / 3};
    for (size_t i = 0; i < std::size(differences); ++i) {
        b[i] *= 0.5;
        a[i] = b[i] + differences[i];
    }
    std::vector<cplx> d(64);
    for (size_t i = 0; i < 64; ++i) d[i] = a[i] - b[i];
    const Ciphertext ca = f.keys.encrypt(a, top, true, 64), cb = f.keys.encrypt(b, top, true, 64);
    const Ciphertext mx = algorithms::maximum(f.ae, ca, cb, plan), mn = algorithms::minimum(f.ae, ca, cb, plan);
    const Ciphertext gt = algorithms::greater_than(f.ae, ca, cb, plan);
    EXPECT_EQ(mx.level(), top - plan.depth() - 1);
    EXPECT_EQ(mn.level(), top - plan.depth() - 1);
    EXPECT_EQ(gt.level(), top - plan.depth());
    const auto got_max = f.keys.decrypt(mx), got_min = f.keys.decrypt(mn), got_gt = f.keys.decrypt(gt);
    std::vector<cplx> want_max(64), want_min(64), want_gt(64), exact_max(64), exact_min(64), exact_gt(64);
    for (size_t i = 0; i < 64; ++i) {
        const double ai = a[i].real(), bi = b[i].real(), di = ai - bi, s = plan(di);
        want_max[i] = ((ai + bi) + di * s) / 2;
        want_min[i] = ((ai + bi) - di * s) / 2;
        want_gt[i] = (s + 1) / 2;
        exact_max[i] = std::max(ai, bi);
        exact_min[i] = std::min(ai, bi);
        exact_gt[i] = di > 0 ? 1.0 : di < 0 ? 0.0 : 0.5;
    }
    const double composite = composite_bits(plan, d);
    EXPECT_GE(precision_bits(got_max, want_max), composite);
    EXPECT_GE(precision_bits(got_min, want_min), composite);
    EXPECT_GE(precision_bits(got_gt, want_gt), composite);
    // against the exact functions: within bound 2^-bits / 2 where |a - b| >= gap, gap / 2 in the gap
    EXPECT_GE(precision_bits(got_max, exact_max), std::log2(2 / gap) - 0.01);
    EXPECT_GE(precision_bits(got_min, exact_min), std::log2(2 / gap) - 0.01);
    const auto [rd, rmax] = resolved_only(d, got_max, gap);
    const auto [rd2, rgt] = resolved_only(d, got_gt, gap);
    std::vector<cplx> exact_rmax, exact_rgt;
    for (size_t i = 0; i < 64; ++i)
        if (std::abs(d[i].real()) >= gap) {
            exact_rmax.push_back(exact_max[i]);
            exact_rgt.push_back(exact_gt[i]);
        }
    EXPECT_GE(precision_bits(rmax, exact_rmax), bits + 1);
    EXPECT_GE(precision_bits(rgt, exact_rgt), bits + 1);
}

TEST(Sign, BatchMatchesCiphertexts) {
    auto& f = Fixture::get();
    const SignPlan& plan = cached_plan(1, 0x1p-6, 8);
    std::vector<Ciphertext> xs, ys;
    for (int i = 0; i < 2; ++i) {
        const auto x = edge_inputs(32, 1, 0x1p-6, 30 + i);
        const auto y = random_real(32, 1, 40 + i);
        xs.push_back(f.keys.encrypt(x, f.top(), true, 32));
        ys.push_back(f.keys.encrypt(y, f.top() - 1, true, 32));  // b one level below a: aligned exactly
    }
    const auto bx = CiphertextBatch::from_ciphertexts(*f.keys.ctx, xs);
    const auto by = CiphertextBatch::from_ciphertexts(*f.keys.ctx, ys);
    const CiphertextBatch s = algorithms::sign(f.ae, bx, plan);
    const CiphertextBatch m = algorithms::maximum(f.ae, bx, by, plan);
    for (size_t i = 0; i < 2; ++i) {
        EXPECT_TRUE(same_words(s.at(i), algorithms::sign(f.ae, xs[i], plan))) << "sign, element " << i;
        EXPECT_TRUE(same_words(m.at(i), algorithms::maximum(f.ae, xs[i], ys[i], plan))) << "max, element " << i;
    }
}

TEST(Sign, ErrorsBeforeAnyWork) {
    auto& f = Fixture::get();
    const SignPlan& plan = cached_plan(1, 0x1p-8, 10);  // 12 levels
    const auto x = edge_inputs(16, 1, 0x1p-8, 3);
    const Ciphertext low = f.keys.encrypt(x, 12, true, 16), high = f.keys.encrypt(x, f.top(), true, 16);
    EXPECT_NO_THROW(algorithms::sign(f.ae, low, plan));
    try {
        algorithms::absolute(f.ae, low, plan);
        FAIL() << "no error";
    } catch (const LevelMismatch& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("absolute: operand 'x'"), std::string::npos) << m;
        EXPECT_NE(m.find("needs 13 levels (|x| = x sign(x): the composite sign of degrees 15, 15, 15"),
                  std::string::npos)
            << m;
    }
    const Ciphertext lower = f.keys.encrypt(x, 11, true, 16);
    EXPECT_THROW(algorithms::sign(f.ae, lower, plan), LevelMismatch);
    EXPECT_THROW(algorithms::greater_than(f.ae, high, lower, plan), LevelMismatch);
    try {
        algorithms::maximum(f.ae, high, low, plan);
        FAIL() << "no error";
    } catch (const LevelMismatch& e) {
        EXPECT_NE(std::string(e.what()).find("maximum: operand 'b'"), std::string::npos) << e.what();
    }
    EXPECT_THROW(algorithms::minimum(f.ae, low, high, plan), LevelMismatch);
    // no relinearization key
    const ckks::AutoEvaluator keyless(*f.keys.eval);
    EXPECT_THROW(algorithms::sign(keyless, high, plan), MissingKey);
    EXPECT_THROW(algorithms::maximum(keyless, high, high, plan), MissingKey);
    EXPECT_THROW(algorithms::greater_than(keyless, high, high, plan), MissingKey);
    // a plan without stages
    EXPECT_THROW(algorithms::sign(f.ae, high, SignPlan{}), ValueError);
    EXPECT_THROW(algorithms::absolute(f.ae, high, SignPlan{}), ValueError);
}

}  // namespace
}  // namespace oboro::test
