#include "oboro/util/workspace.hpp"

namespace oboro {

WorkspacePool::Lease WorkspacePool::acquire() {
    {
        std::lock_guard<std::mutex> lk(mutex_);
        if (!idle_.empty()) {
            auto ws = std::move(idle_.back());
            idle_.pop_back();
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
