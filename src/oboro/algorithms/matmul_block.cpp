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
// ops' counts at the end. On a queue with device memory the bodies run one after the other on
// the calling thread: the queue runs its work in order on the device, and each batched call
// already covers every element.
void parallel_counted(const CountedOps& ops, size_t count,
                      const std::function<void(const CountedOps&, size_t)>& body) {
    if (!ops.eval().queue().host_memory()) {
        for (size_t i = 0; i < count; ++i) body(ops, i);
        return;
    }
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

template <ckks::Encrypted T>
BlockMatmul::Prepared<T> BlockMatmul::prepare_left(const CountedOps& ops, const T& a,
                                                   const ckks::GaloisKeys& keys) const {
    if (jiang_) return jiang_->left_operands(ops, a, keys);
    return {cube_->compute_abar(ops, a, keys)};
}

template <ckks::Encrypted T>
BlockMatmul::Prepared<T> BlockMatmul::prepare_right(const CountedOps& ops, const T& b,
                                                    const ckks::GaloisKeys& keys) const {
    if (jiang_) return jiang_->right_operands(ops, b, keys);
    return {cube_->compute_bbar(ops, b, keys)};
}

template <ckks::Encrypted T>
void BlockMatmul::accumulate(const CountedOps& ops, const Prepared<T>& a, const Prepared<T>& b, T& acc) const {
    if (jiang_) jiang_->accumulate(ops, a, b, acc);
    else cube_->accumulate(ops, a[0], b[0], acc);
}

template <ckks::Encrypted T>
T BlockMatmul::finish(const CountedOps& ops, T acc, const ckks::RelinKey& rk, const ckks::GaloisKeys& keys) const {
    return jiang_ ? jiang_->finish(ops, std::move(acc), rk) : cube_->finish(ops, std::move(acc), rk, keys);
}

template <ckks::Encrypted T> void BlockMatmul::check_grid(const BlockGridOf<T>& g, const char* name) const {
    if (g.rows == 0 || g.cols == 0 || g.blocks.size() != g.rows * g.cols)
        raise<ValueError>(kOp, ": operand '", name, "' has ", g.blocks.size(), " blocks for a ", g.rows, " x ", g.cols,
                          " grid");
    for (const T& ct : g.blocks) {
        require_layout(kOp, ct, name, slots(), base_ == BlockBase::jiang ? "Jiang (d^2 slots)" : "3-D (slots >= d^3)");
        // the accumulators add products of different blocks: they must share level and scale
        if (ct.level() != g.blocks[0].level() || ct.scale() != g.blocks[0].scale())
            raise<LevelMismatch>(kOp, ": the blocks of operand '", name, "' are at different levels or scales (",
                                 ckks::describe(g.blocks[0]), " and ", ckks::describe(ct), ")");
        if (ckks::element_count(ct) != ckks::element_count(g.blocks[0]))
            raise<ValueError>(kOp, ": the blocks of operand '", name, "' hold batches of different lengths (",
                              ckks::describe(g.blocks[0]), " and ", ckks::describe(ct), ")");
    }
    require_levels(kOp, g.blocks[0], name, depth, "the block products consume 3");
}

template <ckks::Encrypted T>
BlockGridOf<T> BlockMatmul::multiply(const CountedOps& ops, const BlockGridOf<T>& a, const BlockGridOf<T>& b,
                                     const ckks::RelinKey& rk, const ckks::GaloisKeys& keys) const {
    check_grid(a, "A");
    check_grid(b, "B");
    if (a.cols != b.rows)
        raise<ValueError>(kOp, ": grids of ", a.rows, " x ", a.cols, " and ", b.rows, " x ", b.cols,
                          " blocks do not match");
    require_same_count(kOp, a.blocks[0], b.blocks[0]);
    require_rotation_keys(kOp, *ctx_, keys, rotation_steps(), "BlockMatmul::rotation_steps");
    const size_t gm = a.rows, gk = a.cols, gn = b.cols;
    std::vector<T> acc(gm * gn);
    std::vector<Prepared<T>> left(gm), right(gn);
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
    BlockGridOf<T> c{gm, gn, std::vector<T>(gm * gn)};
    parallel_counted(ops, gm * gn, [&](const CountedOps& o, size_t t) {
        c.blocks[t] = finish(o, std::move(acc[t]), rk, keys);
    });
    return c;
}

template BlockGrid BlockMatmul::multiply(const CountedOps&, const BlockGrid&, const BlockGrid&, const ckks::RelinKey&,
                                         const ckks::GaloisKeys&) const;
template BlockGridBatch BlockMatmul::multiply(const CountedOps&, const BlockGridBatch&, const BlockGridBatch&,
                                              const ckks::RelinKey&, const ckks::GaloisKeys&) const;

}  // namespace oboro::algorithms
