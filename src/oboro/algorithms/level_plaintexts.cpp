#include "oboro/algorithms/level_plaintexts.hpp"

namespace oboro::algorithms {

LevelPlaintexts::LevelPlaintexts(ckks::ContextPtr ctx, std::vector<std::vector<double>> vectors, size_t slots,
                                 ckks::Basis basis, PlaintextScale scale)
    : ctx_(std::move(ctx)), encoder_(ctx_), real_(std::move(vectors)), slots_(slots), basis_(basis), scale_(scale) {}

LevelPlaintexts::LevelPlaintexts(ckks::ContextPtr ctx, std::vector<std::vector<std::complex<double>>> vectors,
                                 size_t slots, ckks::Basis basis, PlaintextScale scale, double scale_factor)
    : ctx_(std::move(ctx)),
      encoder_(ctx_),
      complex_(std::move(vectors)),
      slots_(slots),
      basis_(basis),
      scale_(scale),
      scale_factor_(scale_factor) {}

double plaintext_scale(const ckks::Context& ctx, PlaintextScale kind, int level) {
    switch (kind) {
        case PlaintextScale::prime: return double(ctx.q()[size_t(level)]);
        case PlaintextScale::standard: return ctx.standard_scale(level);
        case PlaintextScale::unit: return 1.0;
    }
    return 1.0;
}

ckks::Plaintext LevelPlaintexts::encode(size_t index, int level) const {
    const double scale = plaintext_scale(*ctx_, scale_, level) * scale_factor_;
    const auto encode_one = [&](const auto& v) {
        return basis_ == ckks::Basis::qp ? encoder_.encode_extended(v, level, scale, slots_)
                                         : encoder_.encode(v, level, scale, slots_);
    };
    return index < real_.size() ? encode_one(real_[index]) : encode_one(complex_[index - real_.size()]);
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
    return batches_.emplace(key, batches_in(encoded_locked(level), device)).first->second;
}

}  // namespace oboro::algorithms
