#include "oboro/algorithms/level_plaintexts.hpp"

namespace oboro::algorithms {

LevelPlaintexts::LevelPlaintexts(ckks::ContextPtr ctx, std::vector<std::vector<double>> vectors, size_t slots)
    : ctx_(std::move(ctx)), encoder_(ctx_), vectors_(std::move(vectors)), slots_(slots) {}

const std::vector<ckks::Plaintext>& LevelPlaintexts::at(int level) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = cache_.find(level);
    if (it != cache_.end()) return it->second;
    const double scale = double(ctx_->q()[size_t(level)]);
    std::vector<ckks::Plaintext> pts;
    pts.reserve(vectors_.size());
    for (const auto& v : vectors_) pts.push_back(encoder_.encode(v, level, scale, slots_));
    return cache_.emplace(level, std::move(pts)).first->second;
}

}  // namespace oboro::algorithms
