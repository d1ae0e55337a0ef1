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
        explicit Scope(Workspace& ws) : ws_(ws), block_(ws.block_), offset_(ws.offset_) {}
        ~Scope() { ws_.rewind(block_, offset_); }
        Scope(const Scope&) = delete;
        Scope& operator=(const Scope&) = delete;

    private:
        Workspace& ws_;
        size_t block_, offset_;
    };

    // `words` uninitialised words (64-byte aligned), valid until the enclosing Scope ends.
    // The buffers are cut from blocks in take order (an arena). A take that does not fit adds a
    // block; once every Scope has ended, several blocks are replaced by one of the most words
    // that were in use at once, so a repeated sequence of takes reuses the same memory and the
    // workspace holds what its largest sequence needs at once (not, as buffers kept per take
    // position would, the sum of each position's largest take over all sequences).
    uint64_t* take(size_t words);

    // Words held (for tests and memory accounting).
    size_t capacity_words() const;
    // How many blocks take() has allocated since construction (for tests: a repeated sequence
    // of takes allocates none).
    size_t allocations() const { return allocations_; }

private:
    static constexpr size_t kAlignWords = 8;  // 64 bytes: every buffer starts on a cache line
    void rewind(size_t block, size_t offset);
    // Words not handed back: the blocks before the current one (the tails skipped there included)
    // and the current one up to offset_.
    size_t in_use() const;
    std::vector<AlignedBuffer<uint64_t>> blocks_;  // moving a block keeps its data pointer
    size_t block_ = 0, offset_ = 0;                // where the next take starts
    size_t peak_in_use_ = 0;                       // the most in_use() has been
    size_t allocations_ = 0;
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
