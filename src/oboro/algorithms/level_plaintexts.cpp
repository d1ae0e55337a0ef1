#include "oboro/algorithms/level_plaintexts.hpp"

#include <algorithm>

#include "oboro/util/error.hpp"

namespace oboro::algorithms {

LevelPlaintexts::LevelPlaintexts(ckks::ContextPtr ctx, std::vector<std::vector<double>> vectors, size_t slots,
                                 ckks::Basis basis, PlaintextScale scale)
    : ctx_(std::move(ctx)), encoder_(ctx_), real_(std::move(vectors)), slots_(slots), basis_(basis), scale_(scale) {
    set_period();
}

LevelPlaintexts::LevelPlaintexts(ckks::ContextPtr ctx, std::vector<std::vector<std::complex<double>>> vectors,
                                 size_t slots, ckks::Basis basis, PlaintextScale scale, double scale_factor)
    : ctx_(std::move(ctx)),
      encoder_(ctx_),
      complex_(std::move(vectors)),
      slots_(slots),
      basis_(basis),
      scale_(scale),
      scale_factor_(scale_factor) {
    set_period();
}

namespace {
// The shortest period p (a power of two dividing slots) with which v (slots values, the missing
// ones zero) repeats exactly.
template <typename V> size_t repeat_period(const std::vector<V>& v, size_t slots) {
    const auto at = [&](size_t l) { return l < v.size() ? v[l] : V(0); };
    size_t p = 1;
    while (p < slots) {
        bool repeats = true;
        for (size_t l = p; l < slots && repeats; ++l) repeats = at(l) == at(l % p);
        if (repeats) break;
        p *= 2;
    }
    return p;
}

// The first `p` values of v (zeros past its end).
template <typename V> std::vector<V> first_values(const std::vector<V>& v, size_t p) {
    std::vector<V> out(p, V(0));
    std::copy_n(v.begin(), std::min(p, v.size()), out.begin());
    return out;
}
}  // namespace

void LevelPlaintexts::set_period() {
    period_ = 1;
    for (const auto& v : real_) period_ = std::max(period_, repeat_period(v, slots_));
    for (const auto& v : complex_) period_ = std::max(period_, repeat_period(v, slots_));
    const size_t block = ctx_->n() / (2 * period_);
    block_ = block >= kMinCompactBlock ? block : 1;
    // Only the first period of each vector is ever encoded: the rest repeats it. Bootstrapping's
    // DFTs hold hundreds of vectors of short period, 0.13 GiB at full length at N = 2^16.
    const auto keep_period = [&](auto& vectors) {
        for (auto& v : vectors)
            if (v.size() > period_) {
                v.resize(period_);
                v.shrink_to_fit();
            }
    };
    keep_period(real_);
    keep_period(complex_);
}

double plaintext_scale(const ckks::Context& ctx, PlaintextScale kind, int level) {
    switch (kind) {
        case PlaintextScale::prime: return double(ctx.q()[size_t(level)]);
        case PlaintextScale::standard: return ctx.standard_scale(level);
        case PlaintextScale::unit: return 1.0;
    }
    return 1.0;
}

template <typename Encode> auto LevelPlaintexts::encode_with(size_t index, int level, Encode encode) const {
    const double scale = plaintext_scale(*ctx_, scale_, level) * scale_factor_;
    const auto encode_one = [&](const auto& v) {
        auto pt = encode(first_values(v, period_), scale);
        pt.set_slots(slots_);  // the same vector seen with slots_ slots
        return pt;
    };
    return index < real_.size() ? encode_one(real_[index]) : encode_one(complex_[index - real_.size()]);
}

ckks::Plaintext LevelPlaintexts::encode(size_t index, int level) const {
    return encode_with(index, level, [&](const auto& values, double scale) {
        return basis_ == ckks::Basis::qp ? encoder_.encode_extended(values, level, scale, period_)
                                         : encoder_.encode(values, level, scale, period_);
    });
}

const std::vector<ckks::CompactPlaintext>& LevelPlaintexts::compact_locked(int level) const {
    if (block_ == 1)
        raise<ValueError>("LevelPlaintexts: vectors of period ", period_, " in ", slots_, " slots have no runs of ",
                          kMinCompactBlock, " or more equal words to keep compact (block() is 1)");
    auto it = compact_.find(level);
    if (it != compact_.end()) return it->second;
    std::vector<ckks::CompactPlaintext> pts;
    pts.reserve(size());
    for (size_t i = 0; i < size(); ++i)
        pts.push_back(encode_with(i, level, [&](const auto& values, double scale) {
            return encoder_.encode_compact(values, level, scale, period_, basis_);
        }));
    return compact_.emplace(level, std::move(pts)).first->second;
}

size_t LevelPlaintexts::bytes_at(int level, bool compact) const {
    const size_t limbs = size_t(level + 1) + ckks::special_limbs_of(*ctx_, basis_);
    return size() * limbs * (ctx_->n() / (compact ? block_ : 1)) * sizeof(uint64_t);
}

size_t LevelPlaintexts::kept_bytes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    size_t words = 0;
    for (const auto& [level, pts] : cache_)
        for (const auto& pt : pts) words += pt.word_count();
    for (const auto& [level, pts] : compact_)
        for (const auto& pt : pts) words += pt.word_count();
    return words * sizeof(uint64_t);
}

const std::vector<ckks::CompactPlaintext>& LevelPlaintexts::compact_at(int level) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return compact_locked(level);
}

const std::vector<ckks::Plaintext>& LevelPlaintexts::encoded_locked(int level) const {
    auto it = cache_.find(level);
    if (it != cache_.end()) return it->second;
    std::vector<ckks::Plaintext> pts;
    pts.reserve(size());
    for (size_t i = 0; i < size(); ++i) pts.push_back(encode(i, level));
    return cache_.emplace(level, std::move(pts)).first->second;
}

const std::vector<ckks::Plaintext>& LevelPlaintexts::at(int level) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return encoded_locked(level);
}

std::vector<ckks::PlaintextBatch> LevelPlaintexts::batches_in(const std::vector<ckks::Plaintext>& pts,
                                                              const ckks::QueuePtr& memory) const {
    const ckks::QueuePtr device = memory && !memory->host_memory() ? memory : nullptr;
    std::vector<ckks::PlaintextBatch> out;
    out.reserve(pts.size());
    for (const ckks::Plaintext& pt : pts) {
        ckks::PlaintextBatch one = ckks::PlaintextBatch::from_plaintexts(*ctx_, {&pt, 1});
        out.push_back(device ? one.to_device(device) : std::move(one));
    }
    // the uploads are enqueued copies from host batches freed on return: their sources must stay
    // alive until the queue has run them (backend/queue.hpp)
    if (device) device->synchronize();
    return out;
}

const std::vector<ckks::PlaintextBatch>& LevelPlaintexts::at(int level, const ckks::QueuePtr& memory) const {
    const ckks::QueuePtr device = memory && !memory->host_memory() ? memory : nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    const auto key = std::make_pair(level, static_cast<const backend::Queue*>(device.get()));
    auto it = batches_.find(key);
    if (it != batches_.end()) return it->second;
    if (block_ == 1) return batches_.emplace(key, batches_in(encoded_locked(level), device)).first->second;
    std::vector<ckks::Plaintext> dense;
    for (const ckks::CompactPlaintext& pt : compact_locked(level)) dense.push_back(pt.expanded());
    return batches_.emplace(key, batches_in(dense, device)).first->second;
}

}  // namespace oboro::algorithms
