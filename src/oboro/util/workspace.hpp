// Scratch memory that is reused instead of allocated: a Workspace hands out aligned word buffers
// and takes them back when a Scope ends, and a WorkspacePool lends whole workspaces to threads.
// After the first call of an operation has grown the buffers to its needs, repeating it (on the
// same parameters) allocates nothing: this keeps heap allocation out of the hot loops of key
// switching over many ciphertexts (batch.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "oboro/util/buffer.hpp"

namespace oboro {

class Workspace {
public:
    // Buffers taken after a Scope starts are handed back when it ends (stack discipline).
    class Scope {
    public:
        explicit Scope(Workspace& ws) : ws_(ws), mark_(ws.next_) {}
        ~Scope() { ws_.next_ = mark_; }
        Scope(const Scope&) = delete;
        Scope& operator=(const Scope&) = delete;

    private:
        Workspace& ws_;
        size_t mark_;
    };

    // `words` uninitialised words, valid until the enclosing Scope ends. Buffers are kept per
    // position in the take order, so a repeated sequence of takes reuses the same memory.
    uint64_t* take(size_t words) {
        if (next_ == buffers_.size()) buffers_.emplace_back(words);
        else if (buffers_[next_].size() < words) buffers_[next_] = AlignedBuffer<uint64_t>(words);
        return buffers_[next_++].data();
    }

    // Words held (for tests and memory accounting).
    size_t capacity_words() const {
        size_t w = 0;
        for (const auto& b : buffers_) w += b.size();
        return w;
    }
    // How many times take() had to allocate since construction.
    size_t buffers() const { return buffers_.size(); }

private:
    std::vector<AlignedBuffer<uint64_t>> buffers_;  // moving a buffer keeps its data pointer
    size_t next_ = 0;
};

// A thread-safe stock of workspaces. acquire() lends one (made on first need) and the Lease gives
// it back; each concurrently running task holds its own, so no locking is needed while it works.
class WorkspacePool {
public:
    class Lease {
    public:
        Lease(WorkspacePool& pool, std::unique_ptr<Workspace> ws) : pool_(&pool), ws_(std::move(ws)) {}
        Lease(Lease&& o) noexcept = default;
        Lease& operator=(Lease&&) = delete;
        ~Lease() {
            if (ws_) pool_->give_back(std::move(ws_));
        }
        Workspace& operator*() { return *ws_; }
        Workspace* operator->() { return ws_.get(); }

    private:
        WorkspacePool* pool_;
        std::unique_ptr<Workspace> ws_;
    };

    Lease acquire();
    // Frees every idle workspace (the memory held by leases still out stays).
    void release_idle();
    size_t idle_count() const;
    // Words held by the idle workspaces (for tests: a repeated operation must not grow it).
    size_t idle_capacity_words() const;

private:
    void give_back(std::unique_ptr<Workspace> ws);
    mutable std::mutex mutex_;
    std::vector<std::unique_ptr<Workspace>> idle_;
};

// The process-wide pool used by key switching.
WorkspacePool& scratch_pool();

}  // namespace oboro
