#include "oboro/algorithms/matmul_block.hpp"

#include <functional>
#include <mutex>

#include "oboro/algorithms/requirements.hpp"
#include "oboro/util/error.hpp"
#include "oboro/util/parallel.hpp"

namespace oboro::algorithms {

namespace {
const char* kOp = "matmul_block";

// parallel_for whose bodies count into their own OpCounts (OpCounts is not atomic), added to
// ops' counts at the end.
void parallel_counted(const CountedOps& ops, size_t count,
                      const std::function<void(const CountedOps&, size_t)>& body) {
    std::mutex mutex;
    parallel_for(count, [&](size_t i) {
        OpCounts local;
        body(CountedOps(ops.eval(), ops.counts() ? &local : nullptr), i);
        if (ops.counts()) {
            std::lock_guard<std::mutex> lock(mutex);
            *ops.counts() += local;
        }
    });
}
}  // namespace

BlockBase BlockMatmul::default_base(size_t d, size_t max_slots) {
    return d * d * d <= max_slots ? BlockBase::cube : BlockBase::jiang;
}

BlockMatmul::BlockMatmul(ckks::ContextPtr ctx, BlockBase base, size_t d) : ctx_(ctx), base_(base), d_(d) {
    if (base == BlockBase::jiang) jiang_ = std::make_unique<JiangMatmul>(ctx, d);
    else cube_ = std::make_unique<Matmul3D>(ctx, d);
}

size_t BlockMatmul::slots() const { return jiang_ ? jiang_->slots() : cube_->slots(); }

std::vector<int64_t> BlockMatmul::rotation_steps() const {
    return jiang_ ? jiang_->rotation_steps() : cube_->rotation_steps();
}

OpCounts BlockMatmul::cost(size_t gm, size_t gk, size_t gn) const {
    return (jiang_ ? jiang_->cost() : cube_->cost()).total(gm, gk, gn);
}

BlockMatmul::Prepared BlockMatmul::prepare_left(const CountedOps& ops, const ckks::Ciphertext& a,
                                                const ckks::GaloisKeys& keys) const {
    if (jiang_) return jiang_->left_operands(ops, a, keys);
    return {cube_->compute_abar(ops, a, keys)};
}

BlockMatmul::Prepared BlockMatmul::prepare_right(const CountedOps& ops, const ckks::Ciphertext& b,
                                                 const ckks::GaloisKeys& keys) const {
    if (jiang_) return jiang_->right_operands(ops, b, keys);
    return {cube_->compute_bbar(ops, b, keys)};
}

void BlockMatmul::accumulate(const CountedOps& ops, const Prepared& a, const Prepared& b,
                             ckks::Ciphertext& acc) const {
    if (jiang_) jiang_->accumulate(ops, a, b, acc);
    else cube_->accumulate(ops, a[0], b[0], acc);
}

ckks::Ciphertext BlockMatmul::finish(const CountedOps& ops, ckks::Ciphertext acc, const ckks::RelinKey& rk,
                                     const ckks::GaloisKeys& keys) const {
    return jiang_ ? jiang_->finish(ops, std::move(acc), rk) : cube_->finish(ops, std::move(acc), rk, keys);
}

void BlockMatmul::check_grid(const BlockGrid& g, const char* name) const {
    if (g.rows == 0 || g.cols == 0 || g.blocks.size() != g.rows * g.cols)
        raise<ValueError>(kOp, ": operand '", name, "' has ", g.blocks.size(), " blocks for a ", g.rows, " x ", g.cols,
                          " grid");
    for (const ckks::Ciphertext& ct : g.blocks) {
        require_layout(kOp, ct, name, slots(), base_ == BlockBase::jiang ? "Jiang (d^2 slots)" : "3-D (slots >= d^3)");
        // the accumulators add products of different blocks: they must share level and scale
        if (ct.level() != g.blocks[0].level() || ct.scale() != g.blocks[0].scale())
            raise<LevelMismatch>(kOp, ": the blocks of operand '", name, "' are at different levels or scales (",
                                 ckks::describe(g.blocks[0]), " and ", ckks::describe(ct), ")");
    }
    require_levels(kOp, g.blocks[0], name, depth, "the block products consume 3");
}

BlockGrid BlockMatmul::multiply(const CountedOps& ops, const BlockGrid& a, const BlockGrid& b,
                                const ckks::RelinKey& rk, const ckks::GaloisKeys& keys) const {
    check_grid(a, "A");
    check_grid(b, "B");
    if (a.cols != b.rows)
        raise<ValueError>(kOp, ": grids of ", a.rows, " x ", a.cols, " and ", b.rows, " x ", b.cols,
                          " blocks do not match");
    require_rotation_keys(kOp, *ctx_, keys, rotation_steps(), "BlockMatmul::rotation_steps");
    const size_t gm = a.rows, gk = a.cols, gn = b.cols;
    std::vector<ckks::Ciphertext> acc(gm * gn);
    std::vector<Prepared> left(gm), right(gn);
    for (size_t l = 0; l < gk; ++l) {
        // block column l of A and block row l of B, each transformed once ...
        parallel_counted(ops, gm + gn, [&](const CountedOps& o, size_t t) {
            if (t < gm) left[t] = prepare_left(o, a.blocks[t * gk + l], keys);
            else right[t - gm] = prepare_right(o, b.blocks[l * gn + (t - gm)], keys);
        });
        // ... and used by every output block: acc_ij += A_il (x) B_lj, degree 2
        parallel_counted(ops, gm * gn, [&](const CountedOps& o, size_t t) {
            accumulate(o, left[t / gn], right[t % gn], acc[t]);
        });
    }
    BlockGrid c{gm, gn, std::vector<ckks::Ciphertext>(gm * gn)};
    parallel_counted(ops, gm * gn, [&](const CountedOps& o, size_t t) {
        c.blocks[t] = finish(o, std::move(acc[t]), rk, keys);
    });
    return c;
}

}  // namespace oboro::algorithms
