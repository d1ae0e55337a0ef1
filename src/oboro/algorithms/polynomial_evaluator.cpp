#include "oboro/algorithms/polynomial_evaluator.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "oboro/util/error.hpp"

namespace oboro::algorithms {

namespace {

using Coeffs = std::vector<double>;

std::pair<int, int> factors(int i) {
    const auto [a, b] = power_factors(i);
    return {int(a), int(b)};
}

// c = q * B_G + r, deg r < G <= deg c < 2G. Chebyshev: T_{G+j} = 2 T_G T_j - T_{G-j}.
void divide(const Coeffs& c, int g, PolynomialBasis basis, Coeffs& q, Coeffs& r) {
    const int d = degree_of(c);
    q.assign(size_t(d - g + 1), 0.0);
    r.assign(c.begin(), c.begin() + g);
    for (int j = 0; j <= d - g; ++j) {
        const double cj = c[size_t(g + j)];
        if (basis == PolynomialBasis::power || j == 0) {
            q[size_t(j)] = cj;
        } else {
            q[size_t(j)] = 2 * cj;
            r[size_t(g - j)] -= cj;
        }
    }
}

// A node of the evaluation tree: a leaf sum_i c_i B_i, or q * B_G + r, produced at `level`.
struct Node {
    bool leaf = true;
    int level = 0;
    Coeffs coeffs;                  // leaf: c_0 .. c_deg
    int giant = 0;                  // split: G
    int quotient = -1;              // split: a node, or -1 for the constant quotient_constant
    double quotient_constant = 0;
    int remainder = -1;             // split: a node, or -1 for the constant remainder_constant
    double remainder_constant = 0;
};

struct Tree {
    std::vector<Node> nodes;
    int root = -1;  // -1: the polynomial is the constant `constant`
    double constant = 0;
};

// Builds the trees of polynomials for one baby-step size and adds up what they use.
class TreeBuilder {
public:
    TreeBuilder(PolynomialBasis basis, int top_level, int baby) : basis_(basis), top_(top_level), baby_(baby) {}

    Tree tree(const Coeffs& c, int level) {
        Tree t;
        if (degree_of(c) <= 0) t.constant = c.empty() ? 0.0 : c[0];
        else t.root = node(t, c, level);
        return t;
    }

    std::set<int> used;   // the B_i the trees multiply by
    uint64_t products = 0, scalars = 0;

private:
    int node(Tree& t, const Coeffs& c, int level) {
        const int d = degree_of(c);
        if (level >= top_) throw std::logic_error("polynomial evaluation: a node above the input's level");
        const int index = int(t.nodes.size());
        t.nodes.emplace_back();
        t.nodes[size_t(index)].level = level;
        // A leaf needs its highest baby step one level above it (the constants' rescale).
        if (d < baby_ && ceil_log2(d) <= top_ - level - 1) {
            for (int i = 1; i <= d; ++i)
                if (c[size_t(i)] != 0) {
                    used.insert(i);
                    ++scalars;
                }
            t.nodes[size_t(index)].coeffs.assign(c.begin(), c.begin() + d + 1);
            return index;
        }
        const int g = 1 << (ceil_log2(long(d) + 1) - 1);  // the largest power of two <= d
        used.insert(g);
        Coeffs q, r;
        divide(c, g, basis_, q, r);
        Node split;
        split.leaf = false;
        split.level = level;
        split.giant = g;
        if (degree_of(q) == 0) {
            split.quotient_constant = q[0];
            ++scalars;
        } else {
            ++products;
            split.quotient = node(t, q, level + 1);
        }
        if (degree_of(r) <= 0) split.remainder_constant = r.empty() ? 0.0 : r[0];
        else split.remainder = node(t, r, level);
        t.nodes[size_t(index)] = std::move(split);
        return index;
    }

    PolynomialBasis basis_;
    int top_, baby_;
};

// Whether node `index`, summed unrescaled, holds a ciphertext product (then it is not
// relinearized: size 3).
bool holds_product(const Tree& t, int index) {
    const Node& n = t.nodes[size_t(index)];
    return !n.leaf && (n.quotient >= 0 || (n.remainder >= 0 && holds_product(t, n.remainder)));
}

// The relinearizations evaluating node `index` takes (Runner): a node evaluated on its own
// (run: the root and the quotients) relinearizes its sum once if it holds a product; a remainder,
// summed into its parent unrescaled, leaves its products to the parent's one relinearization.
uint64_t relinearizations(const Tree& t, int index, bool on_its_own) {
    const Node& n = t.nodes[size_t(index)];
    if (n.leaf) return 0;
    uint64_t r = on_its_own && holds_product(t, index) ? 1 : 0;
    if (n.quotient >= 0) r += relinearizations(t, n.quotient, true);
    if (n.remainder >= 0) r += relinearizations(t, n.remainder, false);
    return r;
}

// The powers B_i (i >= 2) that computing `used` takes, ascending.
std::vector<int> power_closure(const std::set<int>& used, PolynomialBasis basis) {
    std::set<int> all;
    std::vector<int> todo(used.begin(), used.end());
    while (!todo.empty()) {
        const int i = todo.back();
        todo.pop_back();
        if (i <= 1 || !all.insert(i).second) continue;
        const auto [a, b] = factors(i);
        todo.push_back(a);
        todo.push_back(b);
        if (basis == PolynomialBasis::chebyshev && a != b) todo.push_back(a - b);
    }
    return {all.begin(), all.end()};
}

struct Planned {
    PolynomialPlan plan;
    std::vector<Tree> trees;
};

std::string depth_explanation(const Polynomial& p) {
    std::ostringstream s;
    s << polynomial_depth(p) << " levels";
    if (p.needs_scaling())
        s << " (" << ceil_log2(long(p.degree()) + 1) << " for the degree and 1 for the map of [" << p.lo << ", "
          << p.hi << "] onto [-1, 1])";
    return s.str();
}

// `own_levels` (empty, or one per polynomial): each polynomial's output level instead of one for
// all (requested_level, default: the input's level minus the largest depth); the plan's
// output_level is then the lowest of them.
Planned plan_trees(const char* op, const std::vector<Polynomial>& ps, int input_level,
                   std::optional<int> requested_level, const std::vector<int>& own_levels = {}) {
    if (ps.empty()) raise<ValueError>(op, ": no polynomials");
    const Polynomial& first = ps.front();
    const Polynomial* deepest = &first;
    int max_degree = 0;
    bool scaling = false;
    for (const Polynomial& p : ps) {
        if (p.basis != first.basis)
            raise<ValueError>(op, ": the polynomials evaluated together must be of one basis (", first.describe(),
                              ", ", p.describe(), ")");
        if (p.basis == PolynomialBasis::chebyshev) {
            if (!(std::isfinite(p.lo) && std::isfinite(p.hi) && p.lo < p.hi))
                raise<ValueError>(op, ": the interval [", p.lo, ", ", p.hi, "] must be finite and non-empty");
            if (p.lo != first.lo || p.hi != first.hi)
                raise<ValueError>(op, ": the polynomials evaluated together must share one interval (", first.describe(),
                                  ", ", p.describe(), ")");
        }
        for (double c : p.coeffs)
            if (!std::isfinite(c)) raise<ValueError>(op, ": a coefficient of the ", p.describe(), " is not finite");
        if (polynomial_depth(p) > polynomial_depth(*deepest)) deepest = &p;
        max_degree = std::max(max_degree, p.degree());
        scaling = scaling || p.needs_scaling();
    }
    const int depth = polynomial_depth(*deepest);
    const int output_level = requested_level.value_or(std::max(0, input_level - depth));
    if (input_level < depth)
        raise<LevelMismatch>(op, ": the ", deepest->describe(), " needs ", depth_explanation(*deepest),
                             " but the input is at level ", input_level, " (", input_level,
                             " levels left); encrypt at a higher level or bootstrap first");
    if (output_level < 0 || output_level > input_level - depth)
        raise<LevelMismatch>(op, ": the ", deepest->describe(), " needs ", depth_explanation(*deepest),
                             ": from level ", input_level, " its result is at level ", input_level - depth,
                             " or below, not ", output_level);
    std::vector<int> levels(ps.size(), output_level);
    if (!own_levels.empty()) {
        if (own_levels.size() != ps.size())
            raise<ValueError>(op, ": ", own_levels.size(), " output levels for ", ps.size(), " polynomials (one each)");
        for (size_t k = 0; k < ps.size(); ++k) {
            const int highest = input_level - polynomial_depth(ps[k]);
            if (own_levels[k] < 0 || own_levels[k] > highest)
                raise<LevelMismatch>(op, ": the ", ps[k].describe(), " needs ", depth_explanation(ps[k]), ": from level ",
                                     input_level, " its result is at level ", highest, " or below, not ", own_levels[k]);
        }
        levels = own_levels;
    }
    const int top = input_level - (scaling ? 1 : 0);
    Planned best;
    uint64_t best_cost = 0;
    for (int l = 1; l <= std::max(1, ceil_log2(long(max_degree) + 1)); ++l) {
        TreeBuilder builder(first.basis, top, 1 << l);
        std::vector<Tree> trees;
        for (size_t k = 0; k < ps.size(); ++k) trees.push_back(builder.tree(ps[k].coeffs, levels[k]));
        PolynomialPlan plan;
        plan.input_level = input_level;
        plan.output_level = *std::min_element(levels.begin(), levels.end());
        plan.scaling = scaling;
        plan.baby_log = l;
        plan.powers = power_closure(builder.used, first.basis);
        plan.products = builder.products + plan.powers.size();
        plan.scalar_products = builder.scalars + (scaling ? 1 : 0);
        plan.relinearizations = plan.powers.size();
        for (const Tree& t : trees)
            if (t.root >= 0) plan.relinearizations += relinearizations(t, t.root, true);
        // A relinearized product (a key switch) costs tens of constant multiplications, one summed
        // unrelinearized (its tensor product) about three.
        const uint64_t cost =
            32 * plan.relinearizations + 3 * (plan.products - plan.relinearizations) + plan.scalar_products;
        if (l == 1 || cost < best_cost) {
            best = {std::move(plan), std::move(trees)};
            best_cost = cost;
        }
    }
    return best;
}

// The powers of one input and the evaluation of trees over them.
//
// A leaf sums c_i B_i one level above its own, below most B_i's levels: multiply_accumulate
// reads B_i's limbs up to the leaf's, with no copy of B_i at that level (such copies, at every
// leaf level, were 66 ciphertexts, 1.1 GiB, for EvalMod's cosine of degree 151 at N = 2^16). A
// giant step's product needs B_G at its node's level: that copy is made at its first use and freed
// after its last, and each B_i after its last use at any level.
template <ckks::Encrypted T> class Runner {
public:
    Runner(const CountedOps& ops, T u, PolynomialBasis basis) : ops_(ops), basis_(basis) {
        natural_.emplace(1, std::move(u));
    }

    // The trees' uses of each B_i: one per nonzero leaf term, one per giant step at its level
    // (run() and unrescaled() take exactly these, each node once).
    void count_uses(const std::vector<Tree>& trees) {
        for (const Tree& t : trees)
            for (const Node& n : t.nodes) {
                const int up = n.level + 1;
                if (!n.leaf) {
                    ++uses_[{n.giant, up}];
                    ++uses_of_[n.giant];
                    continue;
                }
                for (size_t i = 1; i < n.coeffs.size(); ++i)
                    if (n.coeffs[i] != 0) ++uses_of_[int(i)];
            }
    }

    // The powers (ascending), then those the trees do not use freed (count_uses first).
    void compute_powers(const std::vector<int>& powers) {
        for (int i : powers) {
            const auto [a, b] = factors(i);
            const T& ta = natural_.at(a);
            std::optional<T> b_copy;  // a copy no tree uses: freed here
            const T& tb = operand(b, ta.level(), b_copy);
            if (basis_ == PolynomialBasis::chebyshev)  // T_{a-b} is read at ta's level where it is
                natural_.emplace(i, twice_product_minus(ops_, ta, tb, a == b ? nullptr : &natural_.at(a - b)));
            else
                natural_.emplace(i, ops_.multiply_relin_rescale(ta, tb));
        }
        std::erase_if(natural_, [&](const auto& e) { return e.first != 1 && !uses_of_.contains(e.first); });
    }

    // The node at (its level, scale): its sum before the rescale, then the one rescale. A node with
    // a quotient divides its product and its remainder's terms by q_{level+1} in the call that
    // relinearizes the product (one division by q_{level+1} P), not in a rescale of its own.
    T run(const Tree& t, int index, double scale) const {
        const Node& n = t.nodes[size_t(index)];
        T r;
        if (!n.leaf && n.quotient >= 0) {
            const int up = n.level + 1;
            const double up_scale = scale * double(ops_.eval().context()->q()[size_t(up)]);
            const T& giant = power(n.giant, up);
            const T quotient = run(t, n.quotient, up_scale / giant.scale());
            if (n.remainder < 0 && n.remainder_constant == 0) {
                r = ops_.multiply_relin_rescale(quotient, giant);
            } else {
                T rest = remainder_terms(n, t, scale, up, up_scale);
                rest.set_scale(quotient.scale() * giant.scale());  // up_scale, up to double rounding
                r = ops_.multiply_add_relin_rescale(quotient, giant, rest);
            }
            done(n.giant, up);
        } else {
            r = unrescaled(t, index, scale);
            if (r.size() == 3) ops_.relinearize_inplace(r, *ops_.eval().keys()->relin_key());
            ops_.rescale_inplace(r);
        }
        r.set_scale(scale);
        return r;
    }

    // A node's remainder at (up, up_scale), not rescaled: its terms, or its constant.
    T remainder_terms(const Node& n, const Tree& t, double scale, int up, double up_scale) const {
        if (n.remainder >= 0) return unrescaled(t, n.remainder, scale);
        return constant(n.remainder_constant, up, up_scale);
    }

    // The node one level above its own at scale * q_{level+1}: a leaf's terms, or the quotient
    // times B_G plus the remainder's terms, all summed before one rescale (a remainder rescaled
    // on its own added that rescale's rounding error to the result) and one relinearization (the
    // products are summed unrelinearized, size 3: their d2 parts share one key switch).
    T unrescaled(const Tree& t, int index, double scale) const {
        const auto& eval = ops_.eval();
        const Node& n = t.nodes[size_t(index)];
        const int up = n.level + 1;
        const double up_scale = scale * double(eval.context()->q()[size_t(up)]);
        if (n.leaf) {
            T acc = eval.zero_like(natural_.at(1), 2, up, up_scale);
            std::vector<const T*> powers;
            std::vector<double> coeffs;
            for (size_t i = 1; i < n.coeffs.size(); ++i)
                if (n.coeffs[i] != 0) {
                    powers.push_back(&natural_.at(int(i)));
                    coeffs.push_back(n.coeffs[i]);
                }
            ops_.multiply_accumulate(acc, powers, coeffs);  // the terms in one pass over acc
            // after the sum: a power's last use frees it
            for (size_t i = 1; i < n.coeffs.size(); ++i)
                if (n.coeffs[i] != 0) done(int(i));
            if (n.coeffs[0] != 0) eval.add_inplace(acc, n.coeffs[0]);
            return acc;
        }
        const T& giant = power(n.giant, up);
        T result;
        if (n.quotient < 0) {
            result = eval.zero_like(natural_.at(1), 2, up, up_scale);
            ops_.multiply_accumulate(result, giant, n.quotient_constant);
        } else {
            result = ops_.multiply(run(t, n.quotient, up_scale / giant.scale()), giant);
            result.set_scale(up_scale);  // equal to the product's up to double rounding
        }
        done(n.giant, up);
        if (n.remainder >= 0) ops_.add_inplace(result, unrescaled(t, n.remainder, scale));
        else if (n.remainder_constant != 0) eval.add_inplace(result, n.remainder_constant);
        return result;
    }

    T constant(double c, int level, double scale) const {
        const auto& eval = ops_.eval();
        T r = eval.zero_like(natural_.at(1), 2, level, scale);
        if (c != 0) eval.add_inplace(r, c);
        return r;
    }

private:
    // B_G at `level` (at or below its own) for a giant step count_uses() counted: B_G itself, or a
    // copy with the limbs above dropped, made at the first such use. done(G, level) after it.
    const T& power(int i, int level) const {
        const T& own = natural_.at(i);
        if (own.level() == level) return own;
        auto it = dropped_.find({i, level});
        if (it == dropped_.end()) it = dropped_.emplace(std::pair{i, level}, ops_.eval().drop_to_level(own, level)).first;
        return it->second;
    }

    // One counted use of B_i (at `level`, for a giant step) is over: B_G's copy at that level
    // goes after its last use there, B_i after its last use at any level (B_1 stays: the trees'
    // zero_like takes its shape).
    void done(int i, std::optional<int> level = std::nullopt) const {
        if (level) {
            const auto at = uses_.find({i, *level});
            if (--at->second == 0) {
                uses_.erase(at);
                dropped_.erase({i, *level});
            }
        }
        const auto all = uses_of_.find(i);
        if (--all->second == 0) {
            uses_of_.erase(all);
            if (i != 1) natural_.erase(i);
        }
    }

    // B_i at `level` for computing a power: a copy the trees use is kept for them, any other
    // goes to `copy`, the caller's.
    const T& operand(int i, int level, std::optional<T>& copy) const {
        if (natural_.at(i).level() == level || uses_.contains({i, level})) return power(i, level);
        copy = ops_.eval().drop_to_level(natural_.at(i), level);
        return *copy;
    }

    const CountedOps& ops_;
    PolynomialBasis basis_;
    mutable std::map<int, T> natural_;                  // B_i at its own level
    mutable std::map<std::pair<int, int>, T> dropped_;  // (i, level) -> B_i at that level
    mutable std::map<std::pair<int, int>, int> uses_;   // (G, level) -> the giant steps' uses still to come
    mutable std::map<int, int> uses_of_;                // i -> the trees' uses of B_i still to come
};

}  // namespace

template <ckks::Encrypted T>
T twice_product_minus(const CountedOps& ops, const T& a, const T& b, const T* c) {
    const auto& eval = ops.eval();
    // (2a) b + (-c), with -c at the product's scale, relinearized and rescaled in one call
    const T twice_a = eval.multiply_integer(a, 2);
    const double scale = a.scale() * b.scale();
    T minus_c;
    if (c) {
        minus_c = ops.multiply_constant_to(*c, -1.0, scale, a.level());
    } else {
        minus_c = eval.zero_like(a, 2, a.level(), scale);
        eval.sub_inplace(minus_c, 1.0);
    }
    return ops.multiply_add_relin_rescale(twice_a, b, minus_c);
}

template ckks::Ciphertext twice_product_minus(const CountedOps&, const ckks::Ciphertext&, const ckks::Ciphertext&,
                                              const ckks::Ciphertext*);
template ckks::CiphertextBatch twice_product_minus(const CountedOps&, const ckks::CiphertextBatch&,
                                                   const ckks::CiphertextBatch&, const ckks::CiphertextBatch*);

PolynomialPlan plan_polynomials(const std::vector<Polynomial>& ps, int input_level, std::optional<int> output_level) {
    return plan_trees("plan_polynomials", ps, input_level, output_level).plan;
}

PolynomialPlan plan_polynomials(const std::vector<Polynomial>& ps, int input_level, const std::vector<int>& levels) {
    return plan_trees("plan_polynomials", ps, input_level, std::nullopt, levels).plan;
}

namespace {

// ps at x sharing one set of powers, at `level` (default: x's level minus the largest depth), or
// at levels[k] for ps[k] when levels is not empty, and scales[k] for ps[k] (default: the standard
// scale of its level).
template <ckks::Encrypted T>
std::vector<T> evaluate_shared(const CountedOps& ops, const T& x, const std::vector<Polynomial>& ps,
                               std::optional<int> level, const std::vector<int>& levels,
                               std::vector<std::optional<double>> scales) {
    const char* op = "evaluate_polynomial";
    const auto& eval = ops.eval();
    const ckks::Context& ctx = *eval.context();
    Planned planned = plan_trees(op, ps, x.level(), level, levels);
    const PolynomialPlan& plan = planned.plan;
    if (scales.size() != ps.size())
        raise<ValueError>(op, ": ", scales.size(), " target scales for ", ps.size(), " polynomials (one each)");
    const auto out_level = [&](size_t k) { return levels.empty() ? plan.output_level : levels[k]; };
    std::vector<double> out_scales;
    for (size_t k = 0; k < ps.size(); ++k) {
        const auto& s = scales[k];
        out_scales.push_back(s.value_or(ctx.standard_scale(out_level(k))));
        if (!(std::isfinite(out_scales.back()) && out_scales.back() >= 1))
            raise<ValueError>(op, ": the target scale ", out_scales.back(), " must be finite and at least 1");
    }
    if (plan.products > 0 && !(eval.keys() && eval.keys()->relin_key()))
        raise<MissingKey>(op, ": the ", ps.front().describe(), " takes ciphertext products and the evaluator has no "
                          "relinearization key");

    T u = x.size() == 2 ? x : eval.relinearize(x);
    const Polynomial& p0 = ps.front();
    if (p0.basis == PolynomialBasis::chebyshev) {
        const double alpha = 2 / (p0.hi - p0.lo), beta = -(p0.hi + p0.lo) / (p0.hi - p0.lo);
        if (plan.scaling) u = ops.multiply_to(u, alpha, x.level() - 1, ctx.standard_scale(x.level() - 1));
        if (beta != 0 && (plan.scaling || alpha == 1)) eval.add_inplace(u, beta);
    }
    Runner<T> runner(ops, std::move(u), p0.basis);
    runner.count_uses(planned.trees);
    runner.compute_powers(plan.powers);
    std::vector<T> out;
    out.reserve(ps.size());
    for (size_t k = 0; k < planned.trees.size(); ++k) {
        const Tree& t = planned.trees[k];
        out.push_back(t.root < 0 ? runner.constant(t.constant, out_level(k), out_scales[k])
                                 : runner.run(t, t.root, out_scales[k]));
    }
    return out;
}

}  // namespace

template <ckks::Encrypted T>
std::vector<T> PolynomialEvaluator::evaluate(const T& x, const std::vector<Polynomial>& ps, std::optional<int> level,
                                             std::optional<double> scale) const {
    return evaluate_shared(ops_, x, ps, level, {}, std::vector<std::optional<double>>(ps.size(), scale));
}

template <ckks::Encrypted T>
std::vector<T> PolynomialEvaluator::evaluate(const T& x, const std::vector<Polynomial>& ps,
                                             const std::vector<int>& levels, const std::vector<double>& scales) const {
    return evaluate_shared(ops_, x, ps, std::nullopt, levels,
                           std::vector<std::optional<double>>(scales.begin(), scales.end()));
}

template <ckks::Encrypted T>
T PolynomialEvaluator::evaluate(const T& x, const Polynomial& p, std::optional<int> level,
                                std::optional<double> scale) const {
    return std::move(evaluate(x, std::vector<Polynomial>{p}, level, scale).front());
}

template ckks::Ciphertext PolynomialEvaluator::evaluate(const ckks::Ciphertext&, const Polynomial&, std::optional<int>,
                                                        std::optional<double>) const;
template ckks::CiphertextBatch PolynomialEvaluator::evaluate(const ckks::CiphertextBatch&, const Polynomial&,
                                                             std::optional<int>, std::optional<double>) const;
template std::vector<ckks::Ciphertext> PolynomialEvaluator::evaluate(const ckks::Ciphertext&,
                                                                     const std::vector<Polynomial>&,
                                                                     std::optional<int>, std::optional<double>) const;
template std::vector<ckks::CiphertextBatch> PolynomialEvaluator::evaluate(const ckks::CiphertextBatch&,
                                                                          const std::vector<Polynomial>&,
                                                                          std::optional<int>,
                                                                          std::optional<double>) const;
template std::vector<ckks::Ciphertext> PolynomialEvaluator::evaluate(const ckks::Ciphertext&,
                                                                     const std::vector<Polynomial>&,
                                                                     const std::vector<int>&,
                                                                     const std::vector<double>&) const;
template std::vector<ckks::CiphertextBatch> PolynomialEvaluator::evaluate(const ckks::CiphertextBatch&,
                                                                          const std::vector<Polynomial>&,
                                                                          const std::vector<int>&,
                                                                          const std::vector<double>&) const;

}  // namespace oboro::algorithms
