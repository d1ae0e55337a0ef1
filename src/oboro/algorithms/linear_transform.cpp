#include "oboro/algorithms/linear_transform.hpp"

#include <algorithm>
#include <set>
#include <type_traits>

#include "oboro/algorithms/requirements.hpp"
#include "oboro/ckks/trace.hpp"
#include "oboro/util/error.hpp"

namespace oboro::algorithms {

namespace {
size_t nonzero(const std::vector<int64_t>& steps) {
    return size_t(std::count_if(steps.begin(), steps.end(), [](int64_t k) { return k != 0; }));
}
}  // namespace

size_t BsgsPlan::rotations() const { return nonzero(baby_steps) + nonzero(giant_steps); }

std::vector<int64_t> BsgsPlan::rotation_steps() const {
    std::set<int64_t> s;
    for (int64_t b : baby_steps)
        if (b) s.insert(b);
    for (int64_t g : giant_steps)
        if (g) s.insert(g);
    return {s.begin(), s.end()};
}

BsgsPlan plan_for(const ckks::Context& ctx, const std::vector<int64_t>& offsets, size_t slots, Hoisting hoisting) {
    if (hoisting == Hoisting::mod_up) return plan_bsgs(offsets, slots);
    return plan_bsgs_double_hoisted(offsets, slots, ckks::key_switch_cost(ctx, ctx.max_level()));
}

namespace {
int64_t signed_step(int64_t k, size_t slots) {
    const int64_t n = int64_t(slots);
    return k > n / 2 ? k - n : k;
}

// The plan of a power of two n1 with the fewest rotations (the fewest keys) among those whose
// cost(plan) is within `tolerance` of the least (ties: the cheaper, then the smaller n1).
template <typename Cost>
BsgsPlan cheapest_plan(const std::vector<int64_t>& offsets, size_t slots, double tolerance, Cost&& cost) {
    std::vector<std::pair<BsgsPlan, double>> plans;
    double lowest = 0;
    for (size_t n1 = 1; n1 <= slots; n1 *= 2) {
        std::set<int64_t> babies, giants;
        for (int64_t k : offsets) {
            babies.insert(k % int64_t(n1));
            giants.insert(k - k % int64_t(n1));
        }
        BsgsPlan p;
        p.baby_size = n1;
        p.baby_steps.assign(babies.begin(), babies.end());
        for (int64_t g : giants) p.giant_steps.push_back(signed_step(g, slots));
        const double c = cost(p);
        if (plans.empty() || c < lowest) lowest = c;
        plans.emplace_back(std::move(p), c);
    }
    const std::pair<BsgsPlan, double>* best = nullptr;
    for (const auto& candidate : plans) {
        if (candidate.second > lowest * (1 + tolerance)) continue;
        if (!best || candidate.first.rotations() < best->first.rotations() ||
            (candidate.first.rotations() == best->first.rotations() && candidate.second < best->second))
            best = &candidate;
    }
    return best->first;
}

}  // namespace

BsgsPlan plan_bsgs(const std::vector<int64_t>& offsets, size_t slots) {
    // fewest rotations; a giant step weighs a little more (not hoisted) to break ties
    return cheapest_plan(offsets, slots, 0.0, [&](const BsgsPlan& p) {
        return double(p.rotations()) + double(p.giant_steps.size()) / double(2 * slots + 2);
    });
}

BsgsPlan plan_bsgs_double_hoisted(const std::vector<int64_t>& offsets, size_t slots, const ckks::KeySwitchCost& cost) {
    // a flat optimum: fewer keys for at most kKeySavingTolerance more (as rotate-and-sum's h)
    return cheapest_plan(offsets, slots, ckks::kKeySavingTolerance, [&](const BsgsPlan& p) {
        const size_t babies = nonzero(p.baby_steps), giants = nonzero(p.giant_steps);
        return (babies ? cost.mod_up : 0) + double(babies) * cost.hoisted_rotation +
               double(p.giant_steps.size()) * cost.mod_down + double(giants) * cost.rotation;
    });
}

LinearTransform::LinearTransform(ckks::ContextPtr ctx, const Diagonals& diags, size_t slots, Hoisting hoisting,
                                 PlaintextScale scale)
    : ctx_(std::move(ctx)), slots_(slots), hoisting_(hoisting) {
    build(diags, scale, 1.0);
}

LinearTransform::LinearTransform(ckks::ContextPtr ctx, const ComplexDiagonals& diags, size_t slots, Hoisting hoisting,
                                 PlaintextScale scale, double scale_factor)
    : ctx_(std::move(ctx)), slots_(slots), hoisting_(hoisting) {
    build(diags, scale, scale_factor);
}

template <typename V>
void LinearTransform::build(const std::map<int64_t, std::vector<V>>& diags, PlaintextScale scale,
                            double scale_factor) {
    const size_t slots = slots_;
    if (diags.empty()) raise<ValueError>("LinearTransform: no diagonals");
    for (const auto& [k, diag] : diags) {
        if (k < 0 || size_t(k) >= slots || diag.size() != slots)
            raise<ValueError>("LinearTransform: diagonal ", k, " of ", diag.size(), " values for ", slots, " slots");
        offsets_.push_back(k);
    }
    plan_ = plan_for(*ctx_, offsets_, slots, hoisting_);
    const int64_t n = int64_t(slots);
    std::vector<std::vector<V>> vectors;
    group_babies_.resize(plan_.giant_steps.size());
    group_diags_.resize(plan_.giant_steps.size());
    for (size_t gi = 0; gi < plan_.giant_steps.size(); ++gi) {
        const int64_t g = (plan_.giant_steps[gi] + n) % n;
        for (size_t bi = 0; bi < plan_.baby_steps.size(); ++bi) {
            auto it = diags.find(g + plan_.baby_steps[bi]);
            if (it == diags.end()) continue;
            // rot(diag, -g)[l] = diag[l - g]
            std::vector<V> v(slots);
            for (int64_t l = 0; l < n; ++l) v[size_t(l)] = it->second[size_t(((l - g) % n + n) % n)];
            group_babies_[gi].push_back(bi);
            group_diags_[gi].push_back(vectors.size());
            vectors.push_back(std::move(v));
        }
    }
    const ckks::Basis basis = hoisting_ == Hoisting::mod_up_and_mod_down ? ckks::Basis::qp : ckks::Basis::q;
    if constexpr (std::is_same_v<V, double>)
        diagonals_ = std::make_unique<LevelPlaintexts>(ctx_, std::move(vectors), slots, basis, scale);
    else
        diagonals_ = std::make_unique<LevelPlaintexts>(ctx_, std::move(vectors), slots, basis, scale, scale_factor);
}

std::vector<int64_t> LinearTransform::rotation_steps() const { return plan_.rotation_steps(); }

OpCounts LinearTransform::cost() const {
    OpCounts c;
    c.rot = plan_.rotations();
    c.cmult = offsets_.size();
    c.add = offsets_.size() - 1;
    c.rescale = 1;
    const size_t babies = nonzero(plan_.baby_steps), giants = nonzero(plan_.giant_steps);
    c.key_switch.mod_ups = uint64_t(babies != 0) + giants;  // the babies share one
    c.key_switch.inner_products = c.rot;
    // one ModDown per rotation, or (double hoisting) per giant group and giant rotation
    c.key_switch.mod_downs = hoisting_ == Hoisting::mod_up ? c.rot : plan_.giant_steps.size() + giants;
    return c;
}

template <ckks::Encrypted T, typename P>
T LinearTransform::group_sum(const CountedOps& ops, size_t group, const std::vector<T>& babies,
                             const std::vector<P>& pts) const {
    const std::vector<size_t>& members = group_babies_[group];
    T sum = ops.multiply_plain(babies[members[0]], pts[group_diags_[group][0]]);
    for (size_t j = 1; j < members.size(); ++j)
        ops.multiply_accumulate(sum, babies[members[j]], pts[group_diags_[group][j]]);
    return hoisting_ == Hoisting::mod_up_and_mod_down ? ops.mod_down(sum) : sum;
}

template <ckks::Encrypted T>
T LinearTransform::apply(const CountedOps& ops, const T& x, const ckks::GaloisKeys& keys) const {
    T y = accumulate(ops, x, keys);
    ops.rescale_inplace(y);
    return y;
}

template <ckks::Encrypted T>
T LinearTransform::accumulate(const CountedOps& ops, const T& x, const ckks::GaloisKeys& keys) const {
    const char* op = "linear_transform";
    require_layout(op, x, "x", slots_, "transform's");
    require_levels(op, x, "x", 1, "one cMult");
    require_rotation_keys(op, *ctx_, keys, rotation_steps(), "LinearTransform::rotation_steps");
    const auto& pts = diagonals_->operands_for(x);
    const std::vector<T> babies = hoisting_ == Hoisting::mod_up_and_mod_down
                                      ? ops.rotate_many_extended(x, plan_.baby_steps, keys)
                                      : ops.rotate_many(x, plan_.baby_steps, keys);
    T y;
    for (size_t gi = 0; gi < plan_.giant_steps.size(); ++gi) {
        T inner = group_sum(ops, gi, babies, pts);
        if (plan_.giant_steps[gi] != 0) inner = ops.rotate(inner, plan_.giant_steps[gi], keys);
        if (gi == 0) y = std::move(inner);
        else ops.add_inplace(y, inner);
    }
    return y;
}

template ckks::Ciphertext LinearTransform::apply(const CountedOps&, const ckks::Ciphertext&,
                                                 const ckks::GaloisKeys&) const;
template ckks::CiphertextBatch LinearTransform::apply(const CountedOps&, const ckks::CiphertextBatch&,
                                                      const ckks::GaloisKeys&) const;
template ckks::Ciphertext LinearTransform::accumulate(const CountedOps&, const ckks::Ciphertext&,
                                                      const ckks::GaloisKeys&) const;
template ckks::CiphertextBatch LinearTransform::accumulate(const CountedOps&, const ckks::CiphertextBatch&,
                                                           const ckks::GaloisKeys&) const;

}  // namespace oboro::algorithms
