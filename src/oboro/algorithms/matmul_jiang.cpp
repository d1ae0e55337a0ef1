#include "oboro/algorithms/matmul_jiang.hpp"

#include <algorithm>
#include <set>

#include "oboro/algorithms/requirements.hpp"
#include "oboro/util/error.hpp"

namespace oboro::algorithms {

namespace {
const char* kOp = "matmul_jiang";
const char* kHelper = "JiangMatmul::rotation_steps";

// m_k and m'_k for k = 1..d-1: the two diagonals of phi^k (offsets k and k - d + d^2).
std::vector<std::vector<double>> phi_mask_vectors(size_t d) {
    std::vector<std::vector<double>> out;
    const int64_t n = int64_t(d * d);
    for (size_t k = 1; k < d; ++k) {
        Diagonals diags = phi_diagonals(d, k);
        out.push_back(diags.at(int64_t(k)));
        out.push_back(diags.at(int64_t(k) - int64_t(d) + n));
    }
    return out;
}
}  // namespace

JiangMatmul::JiangMatmul(ckks::ContextPtr ctx, size_t d)
    : ctx_(ctx),
      d_(d),
      sigma_(ctx, sigma_diagonals((jiang_slots(kOp, d, ctx->max_slots()), d)), d * d),
      tau_(ctx, tau_diagonals(d), d * d),
      phi_masks_(ctx, phi_mask_vectors(d), d * d) {}

std::vector<int64_t> JiangMatmul::rotation_steps() const {
    std::set<int64_t> s;
    for (int64_t k : sigma_.rotation_steps()) s.insert(k);
    for (int64_t k : tau_.rotation_steps()) s.insert(k);
    for (size_t k = 1; k < d_; ++k) {
        s.insert(int64_t(k));                     // phi^k
        s.insert(int64_t(k) - int64_t(d_));       // phi^k
        s.insert(int64_t(k * d_));                // psi^k
    }
    return {s.begin(), s.end()};
}

MatmulCost JiangMatmul::cost() const {
    const uint64_t d = d_;
    MatmulCost c;
    c.left = sigma_.cost();
    c.left.rot += 2 * (d - 1);  // phi^k: rot(A0, k) and rot(A0, k - d), all hoisted together
    c.left.cmult += 2 * (d - 1);
    c.left.add += d - 1;
    c.left.rescale += d - 1;
    c.left.key_switch += ckks::KeySwitchCounts{1, 2 * (d - 1), 2 * (d - 1)};
    c.right = tau_.cost();
    c.right.rot += d - 1;  // psi^k = rot(B0, k d), hoisted
    c.right.key_switch += ckks::KeySwitchCounts{1, d - 1, d - 1};
    c.product.mult = d;
    c.product.add = d;
    c.finish.relin = 1;
    c.finish.rescale = 1;
    c.finish.key_switch = {1, 1, 1};
    return c;
}

template <ckks::Encrypted T>
std::vector<T> JiangMatmul::left_operands(const CountedOps& ops, const T& a, const ckks::GaloisKeys& keys) const {
    require_layout(kOp, a, "A", slots(), "Jiang (d^2 slots)");
    require_levels(kOp, a, "A", 2, "sigma and the phi masks");
    const T a0 = sigma_.apply(ops, a, keys);
    std::vector<int64_t> steps;
    for (size_t k = 1; k < d_; ++k) {
        steps.push_back(int64_t(k));
        steps.push_back(int64_t(k) - int64_t(d_));
    }
    const std::vector<T> rots = ops.rotate_many(a0, steps, keys);
    const auto& masks = phi_masks_.operands_for(a0);
    std::vector<T> out;
    out.reserve(d_);
    out.push_back(ops.eval().drop_to_level(a0, a0.level() - 1));
    for (size_t k = 1; k < d_; ++k) {
        T ak = rots[2 * (k - 1)];
        ops.multiply_plain_inplace(ak, masks[2 * (k - 1)]);
        T wrapped = rots[2 * (k - 1) + 1];
        ops.multiply_plain_inplace(wrapped, masks[2 * (k - 1) + 1]);
        ops.add_inplace(ak, wrapped);
        ops.rescale_inplace(ak);
        ak.set_scale(out[0].scale());  // m_k at scale q_l: the rescale restores A0's scale (to the last bits)
        out.push_back(std::move(ak));
    }
    return out;
}

template <ckks::Encrypted T>
std::vector<T> JiangMatmul::right_operands(const CountedOps& ops, const T& b, const ckks::GaloisKeys& keys) const {
    require_layout(kOp, b, "B", slots(), "Jiang (d^2 slots)");
    require_levels(kOp, b, "B", 1, "tau");
    const T b0 = tau_.apply(ops, b, keys);
    std::vector<int64_t> steps;
    for (size_t k = 0; k < d_; ++k) steps.push_back(int64_t(k * d_));
    return ops.rotate_many(b0, steps, keys);
}

template <ckks::Encrypted T>
void JiangMatmul::accumulate(const CountedOps& ops, const std::vector<T>& a_ops, const std::vector<T>& b_ops,
                             T& acc) const {
    if (a_ops.size() != d_ || b_ops.size() != d_)
        raise<ValueError>(kOp, ": ", a_ops.size(), " left and ", b_ops.size(), " right operands for d = ", d_);
    for (size_t k = 0; k < d_; ++k) {
        // the operands meet at the lower of their levels (dropping limbs is free and exact)
        const int level = std::min(a_ops[k].level(), b_ops[k].level());
        T a_low, b_low;
        const T* ak = &a_ops[k];
        const T* bk = &b_ops[k];
        if (ak->level() > level) ak = &(a_low = ops.eval().drop_to_level(*ak, level));
        if (bk->level() > level) bk = &(b_low = ops.eval().drop_to_level(*bk, level));
        T prod = ops.multiply(*ak, *bk);
        if (acc.size() == 0) acc = std::move(prod);
        else ops.add_inplace(acc, prod);
    }
}

template <ckks::Encrypted T> T JiangMatmul::finish(const CountedOps& ops, T acc, const ckks::RelinKey& rk) const {
    ops.relinearize_inplace(acc, rk);
    ops.rescale_inplace(acc);
    return acc;
}

template <ckks::Encrypted T>
T JiangMatmul::multiply(const CountedOps& ops, const T& a, const T& b, const ckks::RelinKey& rk,
                        const ckks::GaloisKeys& keys) const {
    require_layout(kOp, a, "A", slots(), "Jiang (d^2 slots)");
    require_layout(kOp, b, "B", slots(), "Jiang (d^2 slots)");
    require_same_count(kOp, a, b);
    require_levels(kOp, a, "A", depth, "2 cMult + 1 Mult");
    require_levels(kOp, b, "B", depth - 1, "1 cMult + 1 Mult");
    require_rotation_keys(kOp, *ctx_, keys, rotation_steps(), kHelper);
    const std::vector<T> a_ops = left_operands(ops, a, keys);
    std::vector<T> b_ops = right_operands(ops, b, keys);
    T acc;
    accumulate(ops, a_ops, b_ops, acc);
    return finish(ops, std::move(acc), rk);
}

#define OBORO_JIANG_MATMUL(T)                                                                                       \
    template std::vector<T> JiangMatmul::left_operands(const CountedOps&, const T&, const ckks::GaloisKeys&) const;  \
    template std::vector<T> JiangMatmul::right_operands(const CountedOps&, const T&, const ckks::GaloisKeys&) const; \
    template void JiangMatmul::accumulate(const CountedOps&, const std::vector<T>&, const std::vector<T>&, T&) const; \
    template T JiangMatmul::finish(const CountedOps&, T, const ckks::RelinKey&) const;                               \
    template T JiangMatmul::multiply(const CountedOps&, const T&, const T&, const ckks::RelinKey&,                   \
                                     const ckks::GaloisKeys&) const;
OBORO_JIANG_MATMUL(ckks::Ciphertext)
OBORO_JIANG_MATMUL(ckks::CiphertextBatch)
#undef OBORO_JIANG_MATMUL

}  // namespace oboro::algorithms
