#include "oboro/ckks/batch.hpp"

#include <cstring>

#include "oboro/ckks/evaluator.hpp"
#include "oboro/util/error.hpp"

namespace oboro::ckks {

PolyBatch::PolyBatch(const Context& ctx, size_t count, size_t polys, int level, double scale, size_t slots)
    : n_(ctx.n()), level_(level), scale_(scale), slots_(slots), context_id_(ctx.id()) {
    if (level < 0 || level > ctx.max_level())
        raise<LevelMismatch>("batch: level ", level, " is outside 0..", ctx.max_level());
    if (count == 0) raise<ValueError>("batch: a batch needs at least one element");
    count_ = count;
    polys_ = polys;
    data_ = AlignedBuffer<uint64_t>(count * polys * limbs() * n_);
}

namespace {
// The checks shared by from_ciphertexts and from_plaintexts: every element non-empty, of this
// context, at the first one's level, scale and slot count.
template <typename T> void check_elements(const Context& ctx, std::span<const T> xs, const char* op) {
    if (xs.empty()) raise<ValueError>(op, ": the list is empty; a batch needs at least one element");
    const T& first = xs[0];
    for (size_t c = 0; c < xs.size(); ++c) {
        const T& x = xs[c];
        if (x.empty()) raise<ValueError>(op, ": element ", c, " is empty");
        if (x.context_id() != ctx.id())
            raise<ContextMismatch>(op, ": element ", c, " (", describe(x), ") belongs to another parameter set");
        if (x.level() != first.level())
            raise<LevelMismatch>(op, ": element ", c, " is at ", describe(x), " but element 0 is at ", describe(first),
                                 "; a batch holds elements of one level");
        if (!same_scale(x.scale(), first.scale()))
            raise<ScaleMismatch>(op, ": element ", c, " has ", describe(x), " but element 0 has ", describe(first),
                                 "; a batch holds elements of one scale");
        if (x.slots() != first.slots())
            raise<ValueError>(op, ": element ", c, " has ", x.slots(), " slots but element 0 has ", first.slots());
    }
}
}  // namespace

CiphertextBatch CiphertextBatch::from_ciphertexts(const Context& ctx, std::span<const Ciphertext> cts) {
    check_elements(ctx, cts, "from_ciphertexts");
    const Ciphertext& first = cts[0];
    for (size_t c = 0; c < cts.size(); ++c)
        if (cts[c].size() != first.size())
            raise<ValueError>("from_ciphertexts: element ", c, " has ", cts[c].size(), " polynomials but element 0 has ",
                              first.size());
    CiphertextBatch out(ctx, cts.size(), first.size(), first.level(), first.scale(), first.slots());
    const size_t words = first.word_count();
    for (size_t c = 0; c < cts.size(); ++c) std::memcpy(out.poly(c, 0), cts[c].data(), words * sizeof(uint64_t));
    for (size_t c = 0; c < cts.size(); ++c)  // after the copies, which forget seeds
        if (cts[c].uniform_seed()) out.set_uniform_seed(c, *cts[c].uniform_seed());
    return out;
}

void CiphertextBatch::prepare_output(const Context& ctx, size_t count, size_t size, int level, double scale,
                                     size_t slots) {
    if (word_count() == count * size * size_t(level + 1) * ctx.n() && context_id_ == ctx.id()) {
        seeds_.clear();
        count_ = count;
        polys_ = size;
        level_ = level;
        scale_ = scale;
        slots_ = slots;
        return;
    }
    *this = CiphertextBatch(ctx, count, size, level, scale, slots);
}

Ciphertext CiphertextBatch::at(size_t c) const {
    if (c >= count_) raise<ValueError>("batch: index ", c, " is out of range for a batch of ", count_);
    Ciphertext out;
    out.reset_shape(n_, polys_, level_, scale_, slots_, context_id_);
    std::memcpy(out.data(), poly(c, 0), polys_ * limbs() * n_ * sizeof(uint64_t));
    if (const auto seed = uniform_seed(c)) out.set_uniform_seed(*seed);
    return out;
}

std::vector<Ciphertext> CiphertextBatch::to_ciphertexts() const {
    std::vector<Ciphertext> out;
    out.reserve(count_);
    for (size_t c = 0; c < count_; ++c) out.push_back(at(c));
    return out;
}

PlaintextBatch PlaintextBatch::from_plaintexts(const Context& ctx, std::span<const Plaintext> pts) {
    check_elements(ctx, pts, "from_plaintexts");
    const Plaintext& first = pts[0];
    PlaintextBatch out(ctx, pts.size(), first.level(), first.scale(), first.slots());
    const size_t words = first.word_count();
    for (size_t c = 0; c < pts.size(); ++c) std::memcpy(out.poly(c, 0), pts[c].data(), words * sizeof(uint64_t));
    return out;
}

}  // namespace oboro::ckks
