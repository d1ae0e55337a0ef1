#include "oboro/algorithms/linear_transform.hpp"

#include <algorithm>
#include <map>
#include <optional>
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

// k in [0, slots) as a rotation step in (-slots/2, slots/2]
int64_t signed_step(int64_t k, size_t slots) {
    const int64_t n = int64_t(slots);
    return k > n / 2 ? k - n : k;
}

// g / n1 modulo slots / n1: where a chain of rotations by n1 finds the group at giant step g
size_t residue(int64_t g, const BsgsPlan& p) {
    const int64_t n = int64_t(p.slots);
    return size_t(((g % n + n) % n) / int64_t(p.baby_size));
}
}  // namespace

size_t BsgsPlan::giant_rotations() const {
    return giants == GiantRotations::chained ? forward + backward : nonzero(giant_steps);
}

int64_t BsgsPlan::forward_step() const { return signed_step(int64_t(baby_size), slots); }
int64_t BsgsPlan::backward_step() const { return signed_step(int64_t(slots - baby_size), slots); }

size_t BsgsPlan::rotations() const { return nonzero(baby_steps) + giant_rotations(); }

std::vector<int64_t> BsgsPlan::rotation_steps() const {
    std::set<int64_t> s;
    for (int64_t b : baby_steps)
        if (b) s.insert(b);
    if (giants == GiantRotations::keyed) {
        for (int64_t g : giant_steps)
            if (g) s.insert(g);
    } else {
        if (forward) s.insert(forward_step());
        if (backward) s.insert(backward_step());
    }
    return {s.begin(), s.end()};
}

std::vector<std::pair<int64_t, size_t>> BsgsPlan::key_uses() const {
    std::map<int64_t, size_t> uses;
    for (int64_t b : baby_steps)
        if (b) ++uses[b];
    if (giants == GiantRotations::keyed) {
        for (int64_t g : giant_steps)
            if (g) ++uses[g];
    } else {
        if (forward) uses[forward_step()] += forward;
        if (backward) uses[backward_step()] += backward;
    }
    return {uses.begin(), uses.end()};
}

BsgsPlan plan_for(const ckks::Context& ctx, const std::vector<int64_t>& offsets, size_t slots, Hoisting hoisting,
                  const MemoryPolicy& memory) {
    if (hoisting == Hoisting::mod_up) return plan_bsgs(offsets, slots);
    return plan_bsgs_double_hoisted(offsets, slots, ckks::key_switch_cost(ctx, ctx.max_level()),
                                    memory.key_saving_tolerance);
}

namespace {

BsgsPlan keyed_plan(const std::vector<int64_t>& offsets, size_t slots, size_t n1) {
    std::set<int64_t> babies, giants;
    for (int64_t k : offsets) {
        babies.insert(k % int64_t(n1));
        giants.insert(k - k % int64_t(n1));
    }
    BsgsPlan p;
    p.slots = slots;
    p.baby_size = n1;
    p.baby_steps.assign(babies.begin(), babies.end());
    for (int64_t g : giants) p.giant_steps.push_back(signed_step(g, slots));
    return p;
}

BsgsPlan chained(BsgsPlan p) {
    p.giants = GiantRotations::chained;
    const size_t m = p.slots / p.baby_size;
    std::set<size_t> at;  // the groups' non-zero residues
    for (int64_t g : p.giant_steps)
        if (size_t r = residue(g, p)) at.insert(r);
    p.forward = p.backward = 0;
    if (at.empty()) return p;
    // forward reaches 1 .. a, backward a + 1 .. m - 1, for a = 0 or a residue in use
    const auto keys = [](size_t f, size_t b) { return size_t(f != 0) + size_t(b != 0); };
    size_t best_f = 0, best_b = m - *at.begin();
    for (size_t a : at) {
        auto next = at.upper_bound(a);
        const size_t f = a, b = next == at.end() ? 0 : m - *next;
        if (f + b < best_f + best_b || (f + b == best_f + best_b && keys(f, b) < keys(best_f, best_b))) {
            best_f = f;
            best_b = b;
        }
    }
    p.forward = best_f;
    p.backward = best_b;
    return p;
}

}  // namespace

BsgsPlan bsgs_plan(const std::vector<int64_t>& offsets, size_t slots, size_t n1, GiantRotations giants) {
    BsgsPlan p = keyed_plan(offsets, slots, n1);
    return giants == GiantRotations::chained ? chained(std::move(p)) : p;
}

namespace {

// Among the candidate plans (every power of two n1, keyed, and chained when `chain`), the one
// with the fewest keys among those whose cost(plan) is within `tolerance` of the least (ties:
// the cheaper, then the smaller n1).
template <typename Cost>
BsgsPlan cheapest_plan(const std::vector<int64_t>& offsets, size_t slots, double tolerance, bool chain, Cost&& cost) {
    std::vector<std::pair<BsgsPlan, double>> plans;
    double lowest = 0;
    const auto consider = [&](BsgsPlan p) {
        const double c = cost(p);
        if (plans.empty() || c < lowest) lowest = c;
        plans.emplace_back(std::move(p), c);
    };
    for (size_t n1 = 1; n1 <= slots; n1 *= 2) {
        if (chain) consider(bsgs_plan(offsets, slots, n1, GiantRotations::chained));
        consider(bsgs_plan(offsets, slots, n1, GiantRotations::keyed));
    }
    const std::pair<BsgsPlan, double>* best = nullptr;
    for (const auto& candidate : plans) {
        if (candidate.second > lowest * (1 + tolerance)) continue;
        const size_t keys = candidate.first.rotation_steps().size();
        const size_t best_keys = best ? best->first.rotation_steps().size() : 0;
        if (!best || keys < best_keys || (keys == best_keys && candidate.second < best->second)) best = &candidate;
    }
    return best->first;
}

}  // namespace

BsgsPlan plan_bsgs(const std::vector<int64_t>& offsets, size_t slots) {
    // fewest rotations; a giant step weighs a little more (not hoisted) to break ties
    return cheapest_plan(offsets, slots, 0.0, false, [&](const BsgsPlan& p) {
        return double(p.rotations()) + double(p.giant_steps.size()) / double(2 * slots + 2);
    });
}

BsgsPlan plan_bsgs_double_hoisted(const std::vector<int64_t>& offsets, size_t slots, const ckks::KeySwitchCost& cost,
                                  double key_saving_tolerance) {
    // a flat optimum: fewer keys for at most kKeySavingTolerance more (as rotate-and-sum's h)
    return cheapest_plan(offsets, slots, key_saving_tolerance, true, [&](const BsgsPlan& p) {
        const size_t babies = nonzero(p.baby_steps);
        return (babies ? cost.mod_up : 0) + double(babies) * cost.hoisted_rotation +
               double(p.giant_rotations()) * cost.rotation + cost.mod_down;
    });
}

LinearTransform::LinearTransform(ckks::ContextPtr ctx, const Diagonals& diags, size_t slots, Hoisting hoisting,
                                 PlaintextScale scale, const MemoryPolicy& memory)
    : ctx_(std::move(ctx)), slots_(slots), hoisting_(hoisting), memory_(memory) {
    build(diags, scale, 1.0);
}

LinearTransform::LinearTransform(ckks::ContextPtr ctx, const ComplexDiagonals& diags, size_t slots, Hoisting hoisting,
                                 PlaintextScale scale, double scale_factor, const MemoryPolicy& memory)
    : ctx_(std::move(ctx)), slots_(slots), hoisting_(hoisting), memory_(memory) {
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
    plan_ = plan_for(*ctx_, offsets_, slots, hoisting_, memory_);
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

size_t LinearTransform::plaintext_bytes(int level) const {
    if (diagonals_->block() > 1) return diagonals_->bytes_at(level, true);
    return memory_.encode_on_use ? 0 : diagonals_->bytes_at(level, false);
}

void LinearTransform::encode_diagonals(int level) const {
    if (diagonals_->block() > 1) (void)diagonals_->compact_at(level);
    else if (!memory_.encode_on_use) (void)diagonals_->at(level);
}

OpCounts LinearTransform::cost() const {
    OpCounts c;
    c.rot = plan_.rotations();
    c.cmult = offsets_.size();
    c.add = offsets_.size() - 1;
    c.rescale = 1;
    const size_t giants = plan_.giant_rotations();
    c.key_switch.mod_ups = uint64_t(nonzero(plan_.baby_steps) != 0) + giants;  // the babies share one
    c.key_switch.inner_products = c.rot;
    // one ModDown per rotation, or (double hoisting) per giant rotation and one for the sum
    c.key_switch.mod_downs = hoisting_ == Hoisting::mod_up ? c.rot : giants + 1;
    return c;
}

template <ckks::Encrypted T>
std::vector<T> LinearTransform::group_sums(const CountedOps& ops, const std::vector<T>& babies) const {
    const size_t groups = group_babies_.size();
    const auto members = [&](size_t g) {  // group g's babies
        std::vector<const T*> xs;
        for (size_t b : group_babies_[g]) xs.push_back(&babies[b]);
        return xs;
    };
    // every group at once, with plaintexts pt(g, j) for member j of group g
    const auto sums = [&](const auto& pt) {
        using P = std::remove_cvref_t<decltype(pt(0, 0))>;
        std::vector<std::vector<const T*>> xs;
        std::vector<std::vector<const P*>> ps(groups);
        for (size_t g = 0; g < groups; ++g) {
            xs.push_back(members(g));
            for (size_t j = 0; j < xs[g].size(); ++j) ps[g].push_back(&pt(g, j));
        }
        return ops.multiply_plain_sums(xs, ps);
    };
    const T& x = babies[group_babies_[0][0]];
    // compact diagonals are kept whatever the policy: a fraction of the memory
    if (const std::vector<ckks::CompactPlaintext>* pts = diagonals_->compact_operands_for(x))
        return sums([&](size_t g, size_t j) -> const ckks::CompactPlaintext& { return (*pts)[group_diags_[g][j]]; });
    if (!memory_.encode_on_use) {
        const std::vector<PlainOf<T>>& pts = diagonals_->operands_for(x);
        return sums([&](size_t g, size_t j) -> const PlainOf<T>& { return pts[group_diags_[g][j]]; });
    }
    std::vector<T> out;
    for (size_t g = 0; g < groups; ++g) {
        const std::vector<PlainOf<T>> pts = diagonals_->encode_for(x, group_diags_[g]);
        std::vector<const PlainOf<T>*> ps;
        for (const PlainOf<T>& pt : pts) ps.push_back(&pt);
        out.push_back(ops.multiply_plain_sum(members(g), ps));
    }
    return out;
}

template <ckks::Encrypted T>
T LinearTransform::rotate_giant(const CountedOps& ops, const T& a, int64_t step, const ckks::GaloisKeys& keys) const {
    if (hoisting_ == Hoisting::mod_up) return ops.rotate(a, step, keys);
    return std::move(ops.rotate_many_extended(a, {step}, keys)[0]);  // a is over Q*P: its c1 alone divided by P
}

template <ckks::Encrypted T>
T LinearTransform::giant_sum(const CountedOps& ops, std::vector<T> babies, const ckks::GaloisKeys& keys) const {
    // sum += t, or sum = t for the first term
    const auto add_to = [&](std::optional<T>& sum, T t) {
        if (sum) ops.add_inplace(*sum, t);
        else sum = std::move(t);
    };
    std::optional<T> y;
    const size_t groups = plan_.giant_steps.size();
    std::vector<T> sums = group_sums(ops, babies);
    std::vector<T>().swap(babies);
    if (plan_.giants == GiantRotations::keyed) {
        for (size_t gi = 0; gi < groups; ++gi) {
            T& s = sums[gi];
            add_to(y, plan_.giant_steps[gi] ? rotate_giant(ops, s, plan_.giant_steps[gi], keys) : std::move(s));
            s = T();  // rotated: its memory goes back now
        }
        return std::move(*y);
    }
    // chained: the group at chain position p joins the chain there and is rotated p times
    const size_t m = slots_ / plan_.baby_size;
    std::vector<std::optional<size_t>> forward(plan_.forward + 1), backward(plan_.backward + 1);
    for (size_t gi = 0; gi < groups; ++gi) {
        const size_t r = residue(plan_.giant_steps[gi], plan_);
        if (r == 0) add_to(y, std::move(sums[gi]));
        else if (r <= plan_.forward) forward[r] = gi;
        else backward[m - r] = gi;
    }
    const auto chain = [&](const std::vector<std::optional<size_t>>& at, int64_t step) {
        std::optional<T> acc;  // the farthest position holds a group: set at the first step
        for (size_t p = at.size() - 1; p >= 1; --p) {
            if (at[p]) add_to(acc, std::move(sums[*at[p]]));
            acc = rotate_giant(ops, *acc, step, keys);
        }
        add_to(y, std::move(*acc));
    };
    if (plan_.forward) chain(forward, plan_.forward_step());
    if (plan_.backward) chain(backward, plan_.backward_step());
    return std::move(*y);
}

template <ckks::Encrypted T>
T LinearTransform::apply(const CountedOps& ops, const T& x, const ckks::GaloisKeys& keys) const {
    T y = sum(ops, x, keys);
    ops.rescale_inplace(y);  // over Q*P (double hoisting): divided by q_l * P at once
    return y;
}

template <ckks::Encrypted T>
T LinearTransform::accumulate(const CountedOps& ops, const T& x, const ckks::GaloisKeys& keys) const {
    T y = sum(ops, x, keys);
    if (y.basis() == ckks::Basis::qp) return ops.mod_down(y);
    return y;  // moved, not copied as a conditional expression would
}

template <ckks::Encrypted T>
T LinearTransform::sum(const CountedOps& ops, const T& x, const ckks::GaloisKeys& keys) const {
    const char* op = "linear_transform";
    require_layout(op, x, "x", slots_, "transform's");
    require_levels(op, x, "x", 1, "one cMult");
    require_rotation_keys(op, *ctx_, keys, rotation_steps(), "LinearTransform::rotation_steps");
    if (hoisting_ == Hoisting::mod_up) return giant_sum(ops, ops.rotate_many(x, plan_.baby_steps, keys), keys);
    return giant_sum(ops, ops.rotate_many_extended(x, plan_.baby_steps, keys), keys);
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
