// Polynomial evaluation against double precision: power and Chebyshev bases, the edge degrees,
// odd and even polynomials, shared powers, exact target scales, levels consumed, operation counts,
// batches, the errors raised before any work, and the operation profile.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "ckks_test_util.hpp"
#include "oboro/algorithms/functions.hpp"
#include "oboro/algorithms/polynomial_evaluator.hpp"
#include "oboro/ckks/key_set.hpp"

namespace oboro::test {
namespace {

using algorithms::ceil_log2;
using algorithms::chebyshev_interpolant;
using algorithms::CountedOps;
using algorithms::OpCounts;
using algorithms::OpProfile;
using algorithms::plan_polynomials;
using algorithms::Polynomial;
using algorithms::PolynomialBasis;
using algorithms::PolynomialEvaluator;
using algorithms::polynomial_depth;

// 10 levels (deep_test_parameters): degree 255 plus a map fits, with primes far from 2^40 (the
// scale-exact evaluation must not drift).
struct Fixture {
    Keys keys{deep_test_parameters(10)};
    std::shared_ptr<const KeySet> key_set;
    Evaluator eval;
    Fixture()
        : key_set(std::make_shared<MemoryKeySet>(std::make_shared<RelinKey>(keys.rk), nullptr)),
          eval(keys.ctx, key_set) {}
    static Fixture& get() {
        static Fixture f;
        return f;
    }
};

std::vector<cplx> values_of(const Polynomial& p, const std::vector<cplx>& x) {
    std::vector<cplx> y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = p(x[i].real());
    return y;
}

// Uniform inputs on [lo, hi] with both ends among them.
std::vector<cplx> inputs(size_t n, double lo, double hi, uint64_t seed) {
    auto v = random_real(n, 1.0, seed);
    for (auto& x : v) x = cplx(lo + (x.real() + 1) * (hi - lo) / 2, 0);
    v[0] = lo;
    v[1] = hi;
    return v;
}

Polynomial random_polynomial(int degree, PolynomialBasis basis, uint64_t seed, int parity = -1) {
    auto c = random_real(size_t(degree + 1), 1.0, seed);
    Polynomial p{std::vector<double>(size_t(degree + 1)), basis};
    // Chebyshev coefficients of unit size keep |p| <= sum |c_i| on [-1, 1]; powers shrink as
    // 1/i so that |p| stays small too.
    for (int i = 0; i <= degree; ++i) {
        const bool keep = parity < 0 || i % 2 == parity;
        p.coeffs[size_t(i)] = keep ? c[size_t(i)].real() / (basis == PolynomialBasis::power ? 1.0 : 1.0 + i) : 0.0;
    }
    if (p.coeffs[size_t(degree)] == 0) p.coeffs[size_t(degree)] = 0.5;
    return p;
}

// The bound in bits for a polynomial evaluation: the fresh encryption's precision at N = 2^12,
// less the amplification of its noise by the coefficients (their absolute sum) and by the degree
// (about sqrt(d): the rounding of ~d terms and the slope of T_d near the interval's ends), less
// one bit for the products' own noise.
double bits_bound(const Polynomial& p) {
    double sum = 0;
    for (double c : p.coeffs) sum += std::abs(c);
    return public_key_fresh_bits_bound(1u << 12) - 0.5 * std::log2(p.degree() + 1.0) - std::log2(std::max(1.0, sum)) - 1;
}

void check_polynomial(const Polynomial& p, double lo, double hi, uint64_t seed) {
    auto& f = Fixture::get();
    const int top = f.keys.ctx->max_level();
    // The inputs fill the ciphertext's slots: every slot must lie in the interval (a slot left
    // at zero outside it would grow like T_d there and swamp the others).
    const auto x = inputs(64, lo, hi, seed);
    const Ciphertext ct = f.keys.encrypt(x, top, true, x.size());
    OpCounts counts;
    const PolynomialEvaluator pe(CountedOps(f.eval, &counts));
    const Ciphertext y = pe.evaluate(ct, p);
    const int depth = polynomial_depth(p);
    EXPECT_EQ(y.level(), top - depth) << p.describe();
    EXPECT_DOUBLE_EQ(y.scale(), f.keys.ctx->standard_scale(top - depth)) << p.describe();
    EXPECT_GE(precision_bits(f.keys.decrypt(y), values_of(p, x)), bits_bound(p)) << p.describe();
    const auto plan = plan_polynomials({p}, top, top - depth);
    EXPECT_EQ(counts.mult, plan.products) << p.describe();
    // the giant steps' products summed before one relinearization: the plan's key switches
    EXPECT_EQ(counts.relin, plan.relinearizations) << p.describe();
    EXPECT_LE(plan.relinearizations, plan.products) << p.describe();
}

// A profile (OpProfile) charges every call to its kind without changing the result: the products it
// records are the counted Mults, and the ciphertext is the unprofiled one, word for word.
TEST(Polynomial, ProfileRecordsEveryCallAndChangesNothing) {
    auto& f = Fixture::get();
    const int top = f.keys.ctx->max_level();
    const auto x = inputs(64, -1, 1, 3);
    const Ciphertext ct = f.keys.encrypt(x, top, true, x.size());
    const Polynomial p{{0.25, 1, -0.5, 0.125, 2, -1, 0.5, 0.75}, PolynomialBasis::chebyshev, -1, 1};
    OpCounts counts;
    OpProfile profile;
    const Ciphertext profiled = PolynomialEvaluator(CountedOps(f.eval, &counts, &profile)).evaluate(ct, p);
    const Ciphertext plain = PolynomialEvaluator(CountedOps(f.eval, nullptr)).evaluate(ct, p);
    EXPECT_TRUE(std::equal(profiled.data(), profiled.data() + profiled.word_count(), plain.data()));
    uint64_t products = 0, calls = 0;
    for (const auto& [op, e] : profile.ops) {
        EXPECT_GT(e.calls, 0u) << op;
        EXPECT_GE(e.seconds, 0.0) << op;
        calls += e.calls;
        if (op == "multiply" || op == "multiply_relin" || op == "multiply_relin_rescale" || op == "multiply_add_relin_rescale")
            products += e.calls;
    }
    EXPECT_EQ(products, counts.mult);
    EXPECT_GE(calls, counts.mult + counts.rescale / 2);
}

TEST(Polynomial, ValuesAndDepth) {
    const Polynomial cheb{{0.5, -1, 0.25, 2}, PolynomialBasis::chebyshev, -2, 6};
    for (double x : {-2.0, 0.0, 3.3, 6.0}) {
        const double u = (2 * x - 4) / 8;
        const double t2 = 2 * u * u - 1, t3 = 4 * u * u * u - 3 * u;
        EXPECT_NEAR(cheb(x), 0.5 - u + 0.25 * t2 + 2 * t3, 1e-12);
    }
    EXPECT_EQ(polynomial_depth(cheb), 2 + 1);  // degree 3 and the map of [-2, 6]
    const Polynomial pw{{1, 2, 3}};
    EXPECT_DOUBLE_EQ(pw(2.0), 17.0);
    EXPECT_EQ(polynomial_depth(pw), 2);
    EXPECT_EQ(polynomial_depth(Polynomial{{3.0}}), 0);
    EXPECT_EQ(polynomial_depth(Polynomial{{0, 1}}), 1);
    EXPECT_EQ(polynomial_depth(Polynomial{{0, 0, 0, 0, 0, 0, 0, 1}}), 3);
    EXPECT_EQ(polynomial_depth(Polynomial{{0, 0, 0, 0, 0, 0, 0, 0, 1}}), 4);
    EXPECT_TRUE((Polynomial{{0, 1, 0, 3}}).is_odd());
    EXPECT_TRUE((Polynomial{{1, 0, 3}}).is_even());
}

TEST(Polynomial, ChebyshevInterpolant) {
    const auto f = [](double x) { return std::exp(x); };
    const Polynomial p = chebyshev_interpolant(f, -1, 3, 20);
    EXPECT_LT(algorithms::max_error(p, f, -1, 3), 1e-13);
    // sin is odd: the even coefficients are exactly zero
    const Polynomial s = chebyshev_interpolant([](double x) { return std::sin(x); }, -3, 3, 15);
    EXPECT_TRUE(s.is_odd());
    EXPECT_THROW(chebyshev_interpolant(f, 1, 1, 3), ValueError);
    EXPECT_THROW(chebyshev_interpolant(f, 0, 1, -1), ValueError);
    EXPECT_THROW(chebyshev_interpolant([](double x) { return std::log(x); }, -1, 1, 2), ValueError);
}

// The plan: level-optimal for every degree, with O(sqrt(d)) products (about 2 sqrt(2d) at most:
// the baby steps are powers of two, and the leading chain takes log2 of their number more).
TEST(PolynomialPlan, LevelOptimalWithFewProducts) {
    for (int d : {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 63, 64, 127, 255, 256, 511}) {
        for (auto basis : {PolynomialBasis::power, PolynomialBasis::chebyshev}) {
            Polynomial p{std::vector<double>(size_t(d + 1)), basis};
            for (int i = 0; i <= d; ++i) p.coeffs[size_t(i)] = std::sin(1.0 + i * i);  // no cancellations
            const int depth = ceil_log2(d + 1);
            const auto plan = plan_polynomials({p}, 20, 20 - depth);
            EXPECT_EQ(plan.depth(), depth);
            EXPECT_LE(double(plan.products), 2 * std::sqrt(2.0 * d) + 1) << d;
        }
    }
    Polynomial full{std::vector<double>(64), PolynomialBasis::chebyshev};
    for (size_t i = 0; i < 64; ++i) full.coeffs[i] = std::sin(1.0 + double(i * i));
    // an odd polynomial needs fewer products than a full one of its degree
    Polynomial odd = full;
    for (size_t i = 0; i < odd.coeffs.size(); i += 2) odd.coeffs[i] = 0;
    const auto odd_plan = plan_polynomials({odd}, 20, 14), full_plan = plan_polynomials({full}, 20, 14);
    EXPECT_LE(odd_plan.products, full_plan.products);
    EXPECT_LT(odd_plan.powers.size(), full_plan.powers.size());
    EXPECT_LT(odd_plan.scalar_products, full_plan.scalar_products);
    // too low an output level is allowed (more room), too high is not
    EXPECT_NO_THROW(plan_polynomials({full}, 20, 3));
    EXPECT_THROW(plan_polynomials({full}, 20, 15), LevelMismatch);
    EXPECT_THROW(plan_polynomials({full}, 5, 0), LevelMismatch);
}

TEST(PolynomialEvaluator, PowerBasisEdgeDegrees) {
    for (int d : {0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 31, 32}) check_polynomial(random_polynomial(d, PolynomialBasis::power, 100 + d), -1, 1, d);
}

TEST(PolynomialEvaluator, ChebyshevEdgeDegrees) {
    for (int d : {0, 1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 31, 63, 64, 127, 255}) {
        Polynomial p = random_polynomial(d, PolynomialBasis::chebyshev, 200 + d);
        check_polynomial(p, -1, 1, d);
    }
}

TEST(PolynomialEvaluator, ChebyshevOnAnInterval) {
    for (int d : {1, 7, 31, 127}) {
        Polynomial p = random_polynomial(d, PolynomialBasis::chebyshev, 300 + d);
        p.lo = -8;
        p.hi = 8;
        check_polynomial(p, -8, 8, d);
        p.lo = 0.5;
        p.hi = 2.5;  // width 2: the map is an addition, no level
        EXPECT_EQ(polynomial_depth(p), ceil_log2(d + 1));
        check_polynomial(p, 0.5, 2.5, d);
    }
}

TEST(PolynomialEvaluator, OddAndEven) {
    for (int d : {7, 15, 63}) {
        check_polynomial(random_polynomial(d, PolynomialBasis::chebyshev, 400 + d, 1), -1, 1, d);
        check_polynomial(random_polynomial(d + 1, PolynomialBasis::chebyshev, 500 + d, 0), -1, 1, d);
        check_polynomial(random_polynomial(d, PolynomialBasis::power, 600 + d, 1), -1, 1, d);
    }
}

TEST(PolynomialEvaluator, FunctionsThroughInterpolants) {
    const auto sigmoid = [](double x) { return 1 / (1 + std::exp(-x)); };
    const Polynomial p = chebyshev_interpolant(sigmoid, -8, 8, 63);
    auto& f = Fixture::get();
    const auto x = inputs(128, -8, 8, 7);
    const Ciphertext ct = f.keys.encrypt(x, f.keys.ctx->max_level(), true, x.size());
    const Ciphertext y = PolynomialEvaluator(CountedOps(f.eval, nullptr)).evaluate(ct, p);
    std::vector<cplx> want(x.size());
    for (size_t i = 0; i < x.size(); ++i) want[i] = sigmoid(x[i].real());
    // the interpolant's own error at degree 63 is ~2^-22; the evaluation adds its noise
    EXPECT_GE(precision_bits(f.keys.decrypt(y), want), 18.0);
}

TEST(PolynomialEvaluator, SharedPowersAndExactTargets) {
    auto& f = Fixture::get();
    const int top = f.keys.ctx->max_level();
    const auto x = inputs(64, -1, 1, 11);
    const Ciphertext ct = f.keys.encrypt(x, top, true, x.size());
    const std::vector<Polynomial> ps = {random_polynomial(31, PolynomialBasis::chebyshev, 1),
                                        random_polynomial(20, PolynomialBasis::chebyshev, 2),
                                        random_polynomial(5, PolynomialBasis::chebyshev, 3)};
    OpCounts together, alone;
    const auto ys = PolynomialEvaluator(CountedOps(f.eval, &together)).evaluate(ct, ps, top - 6, 0x1.8p39);
    for (const auto& p : ps) PolynomialEvaluator(CountedOps(f.eval, &alone)).evaluate(ct, p, top - 6, 0x1.8p39);
    EXPECT_LT(together.mult, alone.mult);
    for (size_t k = 0; k < ps.size(); ++k) {
        EXPECT_EQ(ys[k].level(), top - 6);
        EXPECT_EQ(ys[k].scale(), 0x1.8p39);  // exactly the requested scale
        EXPECT_GE(precision_bits(f.keys.decrypt(ys[k]), values_of(ps[k], x)), bits_bound(ps[k]));
    }
}

// A level and a scale per polynomial (the overload EvalMod's series uses): each result exactly at
// its own, sharing one set of powers; a level above what a polynomial's depth allows, below 0, or
// counts that do not match the polynomials are refused before any work.
TEST(PolynomialEvaluator, OwnLevelsAndScales) {
    auto& f = Fixture::get();
    const int top = f.keys.ctx->max_level();
    const auto x = inputs(64, -1, 1, 12);
    const Ciphertext ct = f.keys.encrypt(x, top, true, x.size());
    const std::vector<Polynomial> ps = {random_polynomial(31, PolynomialBasis::chebyshev, 4),
                                        random_polynomial(7, PolynomialBasis::chebyshev, 5)};
    const PolynomialEvaluator pe(CountedOps(f.eval, nullptr));
    const std::vector<int> levels = {top - 5, top - 3};
    const std::vector<double> scales = {0x1.8p39, 0x1p43};
    const auto ys = pe.evaluate(ct, ps, levels, scales);
    for (size_t k = 0; k < ps.size(); ++k) {
        EXPECT_EQ(ys[k].level(), levels[k]);
        EXPECT_EQ(ys[k].scale(), scales[k]);
        EXPECT_GE(precision_bits(f.keys.decrypt(ys[k]), values_of(ps[k], x)), bits_bound(ps[k]));
    }
    EXPECT_EQ(plan_polynomials(ps, top, levels).output_level, top - 5);
    EXPECT_THROW(pe.evaluate(ct, ps, std::vector<int>{top - 4, top - 3}, scales), LevelMismatch);  // degree 31: 5 levels
    EXPECT_THROW(pe.evaluate(ct, ps, std::vector<int>{top - 5, -1}, scales), LevelMismatch);
    EXPECT_THROW(pe.evaluate(ct, ps, std::vector<int>{top - 5}, scales), ValueError);
    EXPECT_THROW(pe.evaluate(ct, ps, levels, std::vector<double>{0x1p40}), ValueError);
}

TEST(PolynomialEvaluator, BatchMatchesCiphertexts) {
    auto& f = Fixture::get();
    const int top = f.keys.ctx->max_level();
    const Polynomial p = random_polynomial(15, PolynomialBasis::chebyshev, 9);
    std::vector<Ciphertext> cts;
    std::vector<std::vector<cplx>> xs;
    for (int i = 0; i < 3; ++i) {
        xs.push_back(inputs(32, -1, 1, 40 + i));
        cts.push_back(f.keys.encrypt(xs.back(), top, true, 32));
    }
    const CiphertextBatch batch = CiphertextBatch::from_ciphertexts(*f.keys.ctx, cts);
    const PolynomialEvaluator pe(CountedOps(f.eval, nullptr));
    const CiphertextBatch y = pe.evaluate(batch, p);
    EXPECT_EQ(y.level(), top - 4);
    for (int i = 0; i < 3; ++i) {
        const Ciphertext alone = pe.evaluate(cts[size_t(i)], p);
        EXPECT_TRUE(same_words(y.at(size_t(i)), alone)) << "the batch's words are the ciphertext's";
        EXPECT_GE(precision_bits(f.keys.decrypt(alone), values_of(p, xs[size_t(i)])), bits_bound(p));
    }
}

TEST(PolynomialEvaluator, ErrorsBeforeAnyWork) {
    auto& f = Fixture::get();
    const Ciphertext low = f.keys.encrypt(inputs(8, -1, 1, 1), 5);
    const PolynomialEvaluator pe(CountedOps(f.eval, nullptr));
    Polynomial p = random_polynomial(63, PolynomialBasis::chebyshev, 5);
    p.lo = -4;
    p.hi = 4;
    try {
        pe.evaluate(low, p);
        FAIL() << "no error";
    } catch (const LevelMismatch& e) {
        EXPECT_NE(std::string(e.what()).find("needs 7 levels (6 for the degree and 1 for the map"), std::string::npos)
            << e.what();
    }
    EXPECT_THROW(pe.evaluate(low, random_polynomial(3, PolynomialBasis::power, 1), 4), LevelMismatch);
    // no relinearization key
    const PolynomialEvaluator keyless(CountedOps(*f.keys.eval, nullptr));
    EXPECT_THROW(keyless.evaluate(low, random_polynomial(3, PolynomialBasis::power, 1)), MissingKey);
    // a linear polynomial needs no product, hence no key
    EXPECT_NO_THROW(keyless.evaluate(low, random_polynomial(1, PolynomialBasis::power, 1)));
    // mixed bases or intervals
    Polynomial q = p;
    q.hi = 5;
    EXPECT_THROW(pe.evaluate(f.keys.encrypt(inputs(8, -1, 1, 1), 10), std::vector<Polynomial>{p, q}), ValueError);
    EXPECT_THROW(pe.evaluate(f.keys.encrypt(inputs(8, -1, 1, 1), 10),
                             std::vector<Polynomial>{p, random_polynomial(3, PolynomialBasis::power, 1)}),
                 ValueError);
    Polynomial nan = p;
    nan.coeffs[3] = std::nan("");
    EXPECT_THROW(pe.evaluate(f.keys.encrypt(inputs(8, -1, 1, 1), 10), nan), ValueError);
}

// Newton's iterations: 1/x, 1/sqrt(x) and sqrt(x) on intervals of one to three orders of
// magnitude, at the depth their plans state, within the plans' error plus the noise.
TEST(Functions, InverseAndSquareRoots) {
    auto& f = Fixture::get();
    const ckks::AutoEvaluator ae(f.eval);
    const int top = f.keys.ctx->max_level();
    for (auto [lo, hi] : {std::pair{0.5, 2.0}, std::pair{0.1, 10.0}, std::pair{1.0, 100.0}}) {
        const auto x = inputs(64, lo, hi, 17);
        const Ciphertext ct = f.keys.encrypt(x, top, true, x.size());
        const auto plan_inv = algorithms::plan_inverse(lo, hi, 20);
        const auto plan_sqrt = algorithms::plan_square_root(lo, hi, 20);
        SCOPED_TRACE(std::to_string(lo) + " .. " + std::to_string(hi));
        EXPECT_LE(plan_inv.final_error, 0x1p-20);
        if (plan_inv.depth() <= top) {
            const Ciphertext y = algorithms::inverse(ae, ct, plan_inv);
            EXPECT_EQ(y.level(), top - plan_inv.depth());
            std::vector<cplx> want(x.size());
            for (size_t i = 0; i < x.size(); ++i) want[i] = 1 / x[i].real();
            EXPECT_GE(precision_bits(f.keys.decrypt(y), want), 18 - std::log2(1 / lo)) << plan_inv.iterations;
        }
        EXPECT_LE(plan_sqrt.final_error, 0x1p-20);
        if (plan_sqrt.depth() <= top) {
            const Ciphertext r = algorithms::square_root(ae, ct, plan_sqrt);
            EXPECT_EQ(r.level(), top - plan_sqrt.depth());
            std::vector<cplx> want(x.size());
            for (size_t i = 0; i < x.size(); ++i) want[i] = std::sqrt(x[i].real());
            EXPECT_GE(precision_bits(f.keys.decrypt(r), want), 18 - std::log2(std::sqrt(hi)));
        }
    }
    // a polynomial alone where it is the shallowest, Newton's iterations on wider intervals
    EXPECT_EQ(algorithms::plan_inverse(0.5, 2, 20).iterations, 0);
    EXPECT_GE(algorithms::plan_inverse(0.1, 10, 20).iterations, 1);
    EXPECT_GE(algorithms::plan_inverse(0.001, 1, 20).iterations, 2);
    EXPECT_THROW(algorithms::plan_inverse(-1, 1), ValueError);
    EXPECT_THROW(algorithms::plan_inverse(0, 1), ValueError);
    EXPECT_THROW(algorithms::plan_inverse_sqrt(1, 2, 60), ValueError);
    // sqrt: its own interpolant on narrow intervals, x / sqrt(x) where that is shallower
    EXPECT_FALSE(algorithms::plan_square_root(1, 16, 20).times_x);
    EXPECT_TRUE(algorithms::plan_square_root(0.01, 100, 20).times_x);
    EXPECT_EQ(algorithms::plan_square_root(0.01, 100, 20).depth(), algorithms::plan_inverse_sqrt(0.01, 100, 20).depth() + 1);
    const Ciphertext low = f.keys.encrypt(inputs(8, 1, 2, 3), 2, true, 8);
    EXPECT_THROW(algorithms::inverse(ae, low, algorithms::plan_inverse(1, 2)), LevelMismatch);
}

TEST(Functions, IntegerPowersAreLevelOptimal) {
    auto& f = Fixture::get();
    const ckks::AutoEvaluator ae(f.eval);
    const int top = f.keys.ctx->max_level();
    const auto x = inputs(32, -1, 1, 23);
    const Ciphertext ct = f.keys.encrypt(x, top, true, x.size());
    for (int64_t k : {1, 2, 3, 4, 5, 7, 8, 9, 16, 31, 33}) {
        const Ciphertext y = algorithms::integer_power(ae, ct, k);
        EXPECT_EQ(y.level(), top - ceil_log2(long(k))) << k;
        std::vector<cplx> want(x.size());
        for (size_t i = 0; i < x.size(); ++i) want[i] = std::pow(x[i].real(), double(k));
        EXPECT_GE(precision_bits(f.keys.decrypt(y), want), public_key_fresh_bits_bound(1u << 12) - 0.5 * std::log2(double(k)) - 2) << k;
    }
    EXPECT_THROW(algorithms::integer_power(ae, ct, 0), ValueError);
    EXPECT_THROW(algorithms::integer_power(ae, f.keys.encrypt(x, 2, true, x.size()), 5), LevelMismatch);
}

}  // namespace
}  // namespace oboro::test
