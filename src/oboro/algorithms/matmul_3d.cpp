#include "oboro/algorithms/matmul_3d.hpp"

#include <algorithm>
#include <set>

#include "oboro/algorithms/requirements.hpp"
#include "oboro/ckks/trace.hpp"
#include "oboro/util/error.hpp"

namespace oboro::algorithms {

namespace {
const char* kOp = "matmul_3d";
const char* kHelper = "Matmul3D::rotation_steps";
enum MaskIndex : size_t { kColumn0 = 0, kRow0 = 1, kSquare0 = 2 };

size_t checked_slots(const ckks::Context& ctx, size_t d, size_t slots) {
    const size_t cube = cube_slots(kOp, d, ctx.max_slots());
    if (slots == 0) return cube;
    if (slots < cube || slots > ctx.max_slots() || (slots & (slots - 1)) != 0)
        raise<ValueError>(kOp, ": ", slots, " slots for d = ", d, "; need a power of two from d^3 = ", cube, " to ",
                          ctx.max_slots());
    return slots;
}

int log2_exact(size_t d) {
    int l = 0;
    while ((size_t(1) << l) < d) ++l;
    return l;
}
}  // namespace

const char* to_string(Shifts3D s) {
    return s == Shifts3D::paper ? "paper" : s == Shifts3D::fused ? "fused" : "hoisted";
}

Matmul3D::Matmul3D(ckks::ContextPtr ctx, size_t d, size_t slots, Shifts3D shifts)
    : ctx_(ctx),
      d_(d),
      slots_(checked_slots(*ctx, d, slots)),
      shifts_(shifts),
      log_d_(log2_exact(d)),
      masks_(ctx, {column_mask(d, 0, slots_), row_mask(d, 0, slots_), square_mask(d, 0, slots_)}, slots_) {
    if (shifts_ == Shifts3D::hoisted) h_ = ckks::choose_iterations(*ctx, ctx->max_level(), log_d_);
}

std::vector<int64_t> Matmul3D::sum_strides() const {
    const int64_t d = int64_t(d_), sq = d * d;
    // ComputeAbar, ComputeBbar: ShiftSqrs(Shift(x, 1), -1) (fused), then Shift(x, -1); ComputeC: ShiftSqrs(x, 1)
    return {1 - sq, d - sq, -1, -d, sq};
}

std::vector<int64_t> Matmul3D::rotation_steps() const {
    std::set<int64_t> s;
    const int64_t d = int64_t(d_), sq = d * d;
    if (shifts_ == Shifts3D::hoisted) {
        for (int64_t stride : sum_strides())
            for (int64_t k : ckks::sum_rotation_steps(*ctx_, ckks::SumSpec{stride, log_d_}, slots_,
                                                      ckks::SumStrategy::hoisted, h_))
                s.insert(k);
        return {s.begin(), s.end()};
    }
    for (int i = 0; i < log_d_; ++i) {
        const int64_t p = int64_t(1) << i;
        for (int64_t unit : {int64_t(1), d}) {  // ComputeAbar (columns), ComputeBbar (rows)
            if (shifts_ == Shifts3D::fused) {
                s.insert(p * unit - p * sq);
            } else {
                s.insert(p * unit);
                s.insert(-p * sq);
            }
            s.insert(-p * unit);
        }
        s.insert(p * sq);  // ComputeC
    }
    return {s.begin(), s.end()};
}

template <ckks::Encrypted T>
T Matmul3D::shift_sum(const CountedOps& ops, T x, int64_t stride, const ckks::GaloisKeys& keys) const {
    if (shifts_ == Shifts3D::hoisted) return ops.rotate_and_sum(x, ckks::SumSpec{stride, log_d_}, keys, h_);
    for (int i = 0; i < log_d_; ++i) {
        T shifted = ops.rotate(x, (int64_t(1) << i) * stride, keys);
        ops.add_inplace(x, shifted);
    }
    return x;
}

MatmulCost Matmul3D::cost() const {
    const uint64_t log_d = uint64_t(log_d_);
    // one shift sum: log d rotations each feeding the next, or the hoisted iterations
    OpCounts sum;
    if (shifts_ == Shifts3D::hoisted) {
        for (int r : ckks::unrolled_rounds(log_d_, h_)) {
            const uint64_t terms = (uint64_t(1) << r) - 1;
            sum.rot += terms;
            sum.add += terms;
            sum.key_switch += ckks::KeySwitchCounts{1, terms, 1};
        }
    } else {
        sum.rot = sum.add = log_d;
        sum.key_switch = {log_d, log_d, log_d};
    }
    MatmulCost c;
    OpCounts bar = repeated(sum, 2);
    if (shifts_ == Shifts3D::paper) {  // the first loop's composed shifts take two rotations each
        bar.rot += log_d;
        bar.key_switch += ckks::KeySwitchCounts{log_d, log_d, log_d};
    }
    bar.cmult = 1;
    bar.rescale = 1;
    c.left = c.right = bar;
    c.product.mult = 1;
    c.product.add = 1;
    c.finish = sum;
    c.finish.relin = 1;
    c.finish.rescale = 2;
    c.finish.cmult = 1;
    c.finish.key_switch += ckks::KeySwitchCounts{1, 1, 1};
    return c;
}

template <ckks::Encrypted T>
T Matmul3D::compute_bar(const CountedOps& ops, const T& x, int64_t unit, size_t mask, const char* name,
                        const ckks::GaloisKeys& keys) const {
    require_layout(kOp, x, name, slots_, "3-D (slots >= d^3)");
    require_levels(kOp, x, name, 1, "one cMult");
    const int64_t sq = int64_t(d_ * d_);
    // ShiftSqrs(Shift(bar, 2^i), -2^i): square t gets bar shifted by 2^i more columns/rows
    T bar = x;
    if (shifts_ == Shifts3D::paper) {
        for (int i = 0; i < log_d_; ++i) {
            const int64_t p = int64_t(1) << i;
            T shifted = ops.rotate(ops.rotate(bar, p * unit, keys), -p * sq, keys);
            ops.add_inplace(bar, shifted);
        }
    } else {
        bar = shift_sum(ops, std::move(bar), unit - sq, keys);
    }
    const double scale = bar.scale();
    ops.multiply_plain_inplace(bar, masks_.operands_for(bar)[mask]);
    ops.rescale_inplace(bar);
    bar.set_scale(scale);  // the mask's scale is q_l exactly: the rescale restores the scale
    // copy column 0 (row 0) of every square into the other columns (rows)
    return shift_sum(ops, std::move(bar), -unit, keys);
}

template <ckks::Encrypted T>
T Matmul3D::compute_abar(const CountedOps& ops, const T& a, const ckks::GaloisKeys& keys) const {
    require_rotation_keys(kOp, *ctx_, keys, rotation_steps(), kHelper);
    return compute_bar(ops, a, 1, kColumn0, "A", keys);
}

template <ckks::Encrypted T>
T Matmul3D::compute_bbar(const CountedOps& ops, const T& b, const ckks::GaloisKeys& keys) const {
    require_rotation_keys(kOp, *ctx_, keys, rotation_steps(), kHelper);
    return compute_bar(ops, b, int64_t(d_), kRow0, "B", keys);
}

template <ckks::Encrypted T>
void Matmul3D::accumulate(const CountedOps& ops, const T& abar, const T& bbar, T& acc) const {
    require_layout(kOp, abar, "Abar", slots_, "3-D (slots >= d^3)");
    require_layout(kOp, bbar, "Bbar", slots_, "3-D (slots >= d^3)");
    const int level = std::min(abar.level(), bbar.level());
    T a_low, b_low;
    const T* a = &abar;
    const T* b = &bbar;
    if (a->level() > level) a = &(a_low = ops.eval().drop_to_level(*a, level));
    if (b->level() > level) b = &(b_low = ops.eval().drop_to_level(*b, level));
    T prod = ops.multiply(*a, *b);
    if (acc.size() == 0) acc = std::move(prod);
    else ops.add_inplace(acc, prod);
}

template <ckks::Encrypted T>
T Matmul3D::finish(const CountedOps& ops, T acc, const ckks::RelinKey& rk, const ckks::GaloisKeys& keys) const {
    require_levels(kOp, acc, "C", 2, "the product's rescale and the M_S(0) cMult");
    ops.relinearize_inplace(acc, rk);
    ops.rescale_inplace(acc);
    acc = shift_sum(ops, std::move(acc), int64_t(d_ * d_), keys);  // sum the squares into square 0
    const double scale = acc.scale();
    ops.multiply_plain_inplace(acc, masks_.operands_for(acc)[kSquare0]);
    ops.rescale_inplace(acc);
    acc.set_scale(scale);
    return acc;
}

template <ckks::Encrypted T>
T Matmul3D::compute_c(const CountedOps& ops, const T& abar, const T& bbar, const ckks::RelinKey& rk,
                      const ckks::GaloisKeys& keys) const {
    require_rotation_keys(kOp, *ctx_, keys, rotation_steps(), kHelper);
    require_same_count(kOp, abar, bbar);
    T acc;
    accumulate(ops, abar, bbar, acc);
    return finish(ops, std::move(acc), rk, keys);
}

template <ckks::Encrypted T>
T Matmul3D::multiply(const CountedOps& ops, const T& a, const T& b, const ckks::RelinKey& rk,
                     const ckks::GaloisKeys& keys) const {
    require_layout(kOp, a, "A", slots_, "3-D (slots >= d^3)");
    require_layout(kOp, b, "B", slots_, "3-D (slots >= d^3)");
    require_same_count(kOp, a, b);
    require_levels(kOp, a, "A", depth, "1 Mult + 2 cMult");
    require_levels(kOp, b, "B", depth, "1 Mult + 2 cMult");
    require_rotation_keys(kOp, *ctx_, keys, rotation_steps(), kHelper);
    const T abar = compute_abar(ops, a, keys);
    const T bbar = compute_bbar(ops, b, keys);
    return compute_c(ops, abar, bbar, rk, keys);
}

#define OBORO_MATMUL_3D(T)                                                                                        \
    template T Matmul3D::compute_abar(const CountedOps&, const T&, const ckks::GaloisKeys&) const;                \
    template T Matmul3D::compute_bbar(const CountedOps&, const T&, const ckks::GaloisKeys&) const;                \
    template T Matmul3D::compute_c(const CountedOps&, const T&, const T&, const ckks::RelinKey&,                  \
                                   const ckks::GaloisKeys&) const;                                                \
    template void Matmul3D::accumulate(const CountedOps&, const T&, const T&, T&) const;                          \
    template T Matmul3D::finish(const CountedOps&, T, const ckks::RelinKey&, const ckks::GaloisKeys&) const;      \
    template T Matmul3D::multiply(const CountedOps&, const T&, const T&, const ckks::RelinKey&,                   \
                                  const ckks::GaloisKeys&) const;
OBORO_MATMUL_3D(ckks::Ciphertext)
OBORO_MATMUL_3D(ckks::CiphertextBatch)
#undef OBORO_MATMUL_3D

}  // namespace oboro::algorithms
