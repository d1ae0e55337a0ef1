#include "oboro/util/workspace.hpp"

#include <algorithm>

namespace oboro {

uint64_t* Workspace::take(size_t words) {
    words = (words + kAlignWords - 1) / kAlignWords * kAlignWords;
    // The current block, or the next one that fits (blocks skipped are wasted until the rewind).
    while (block_ < blocks_.size() && blocks_[block_].size() - offset_ < words) {
        ++block_;
        offset_ = 0;
    }
    if (block_ == blocks_.size()) {
        blocks_.emplace_back(std::max(words, peak_in_use_ - std::min(peak_in_use_, in_use())));
        ++allocations_;
    }
    uint64_t* p = blocks_[block_].data() + offset_;
    offset_ += words;
    peak_in_use_ = std::max(peak_in_use_, in_use());
    return p;
}

void Workspace::rewind(size_t block, size_t offset) {
    block_ = block;
    offset_ = offset;
    if (block == 0 && offset == 0 && blocks_.size() > 1) {
        blocks_.clear();
        blocks_.emplace_back(peak_in_use_);
        ++allocations_;
    }
}

size_t Workspace::in_use() const {
    size_t words = offset_;
    for (size_t b = 0; b < block_; ++b) words += blocks_[b].size();
    return words;
}

size_t Workspace::capacity_words() const {
    size_t w = 0;
    for (const auto& b : blocks_) w += b.size();
    return w;
}

WorkspacePool::Lease WorkspacePool::acquire() {
    {
        std::lock_guard<std::mutex> lk(mutex_);
        if (!idle_.empty()) {
            // The largest idle workspace: one operation at a time then always takes the same one,
            // and a workspace leased only alongside it (the other threads' share of a parallel
            // loop) grows to what that share needs, not to the largest operation's size.
            auto largest = std::max_element(idle_.begin(), idle_.end(), [](const auto& a, const auto& b) {
                return a->capacity_words() < b->capacity_words();
            });
            auto ws = std::move(*largest);
            idle_.erase(largest);
            return Lease(*this, std::move(ws));
        }
    }
    return Lease(*this, std::make_unique<Workspace>());
}

void WorkspacePool::give_back(std::unique_ptr<Workspace> ws) {
    std::lock_guard<std::mutex> lk(mutex_);
    idle_.push_back(std::move(ws));
}

void WorkspacePool::release_idle() {
    std::lock_guard<std::mutex> lk(mutex_);
    idle_.clear();
}

size_t WorkspacePool::idle_count() const {
    std::lock_guard<std::mutex> lk(mutex_);
    return idle_.size();
}

size_t WorkspacePool::idle_capacity_words() const {
    std::lock_guard<std::mutex> lk(mutex_);
    size_t words = 0;
    for (const auto& ws : idle_) words += ws->capacity_words();
    return words;
}

WorkspacePool& scratch_pool() {
    static WorkspacePool pool;
    return pool;
}

}  // namespace oboro
