#include "oboro/ckks/ciphertext.hpp"

#include <algorithm>
#include <cstring>

#include "oboro/util/error.hpp"

namespace oboro::ckks {

int PolyArray::checked_level(const Context& ctx, int level) {
    if (level < 0 || level > ctx.max_level())
        raise<LevelMismatch>("ciphertext: level ", level, " is outside 0..", ctx.max_level());
    return level;
}

void PolyArray::reshape_polys(size_t polys, int level) {
    if (level > level_ || level < 0 || polys > polys_)
        raise<ValueError>("reshape: cannot grow a ciphertext from ", polys_, " polynomials at level ", level_, " to ",
                          polys, " at level ", level);
    if (special_ && (level != level_ || polys != polys_))
        raise<ValueError>("reshape: an object over Q_level * P keeps its level and size (its special limbs follow "
                          "the ciphertext limbs); mod_down it first");
    uniform_seed_.reset();
    const size_t old_limbs = limbs(), new_limbs = size_t(level + 1);
    // Compact polynomial j from offset j*old_limbs*n to j*new_limbs*n; j = 0 never moves and
    // each later destination lies below its source, so moving in order is safe.
    for (size_t j = 1; j < polys; ++j)
        std::memmove(data_.data() + j * new_limbs * n_, data_.data() + j * old_limbs * n_, new_limbs * n_ * sizeof(uint64_t));
    polys_ = polys;
    level_ = level;
}

void PolyArray::reset_shape(const Context& ctx, size_t polys, int level, double scale, size_t slots, Basis basis) {
    reset_shape(ctx.n(), polys, checked_level(ctx, level), special_limbs_of(ctx, basis), scale, slots, ctx.id());
}

void PolyArray::reset_shape(size_t n, size_t polys, int level, size_t special, double scale, size_t slots,
                            uint64_t context_id) {
    const size_t words = polys * (size_t(level + 1) + special) * n;
    if (data_.size() != words) data_ = AlignedBuffer<uint64_t>(words);
    uniform_seed_.reset();
    n_ = n;
    polys_ = polys;
    level_ = level;
    special_ = special;
    scale_ = scale;
    slots_ = slots;
    context_id_ = context_id;
}

CompactPlaintext::CompactPlaintext(const Plaintext& dense, size_t block) : block_(block) {
    const size_t n = dense.n();
    if (block == 0 || (block & (block - 1)) != 0 || block > n)
        raise<ValueError>("CompactPlaintext: a block of ", block, " words; give a power of two up to n = ", n);
    const size_t runs = n / block;
    reset_shape(runs, 1, dense.level(), dense.special_limbs(), dense.scale(), dense.slots(), dense.context_id());
    uint64_t* out = data_.data();
    for (size_t i = 0; i < dense.limbs(); ++i) {
        const uint64_t* limb = dense.data() + i * n;
        for (size_t r = 0; r < runs; ++r) {
            const uint64_t w = limb[r * block];
            for (size_t k = 1; k < block; ++k)
                if (limb[r * block + k] != w)
                    raise<ValueError>("CompactPlaintext: limb ", i, " of the plaintext is not in runs of ", block,
                                      " equal words (words ", r * block, " and ", r * block + k, " differ); only a "
                                      "vector that repeats with period n / (2 * block) has them");
            out[i * runs + r] = w;
        }
    }
}

CompactPlaintext::CompactPlaintext(const Context& ctx, int level, double scale, size_t slots, Basis basis,
                                   size_t block)
    : block_(block) {
    const size_t n = ctx.n();
    if (block == 0 || (block & (block - 1)) != 0 || block > n)
        raise<ValueError>("CompactPlaintext: a block of ", block, " words; give a power of two up to n = ", n);
    reset_shape(n / block, 1, checked_level(ctx, level), special_limbs_of(ctx, basis), scale, slots, ctx.id());
}

Plaintext CompactPlaintext::expanded() const {
    Plaintext dense;
    dense.reset_shape(n_ * block_, 1, level_, special_, scale_, slots_, context_id_);
    uint64_t* out = dense.mutable_data();
    for (size_t k = 0; k < word_count(); ++k) std::fill_n(out + k * block_, block_, data_.data()[k]);
    return dense;
}

}  // namespace oboro::ckks
