#include "oboro/util/memory_pool.hpp"

#include <sys/mman.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <vector>

namespace oboro {

namespace {

constexpr size_t kAlignment = 64;
// Blocks of at least this size are aligned to and rounded up to a 2 MiB huge page and marked
// MADV_HUGEPAGE: a fresh block then costs one page fault per 2 MiB instead of 512 (about 4x
// faster to fault in), and the NTTs over its limbs miss the TLB less.
constexpr size_t kHugePage = size_t(2) << 20;
constexpr size_t kHugeBlockBytes = 2 * kHugePage;

// The size a request is served with: a multiple of the alignment, or of the huge page.
size_t block_bytes(size_t bytes) {
    const size_t unit = bytes >= kHugeBlockBytes ? kHugePage : kAlignment;
    return (bytes + unit - 1) / unit * unit;
}

void* allocate_block(size_t bytes) {
    if (bytes < kHugeBlockBytes) return std::aligned_alloc(kAlignment, bytes);
    void* p = std::aligned_alloc(kHugePage, bytes);
    if (p) madvise(p, bytes, MADV_HUGEPAGE);  // advice only: without transparent huge pages, nothing changes
    return p;
}

size_t limit_from_environment() {
    if (const char* s = std::getenv("OBORO_POOL_MB")) {
        char* end = nullptr;
        const unsigned long long mb = std::strtoull(s, &end, 10);
        if (end != s && *end == '\0') return size_t(mb) << 20;
    }
    return size_t(1) << 30;
}

// A cached block serves a request of up to this factor smaller than itself. Operations at lower
// levels ask for slightly smaller blocks than the same operations one level up (fewer limbs): with
// exact sizes only, a chain of rescaled products left every level's blocks in the cache and
// allocated new ones (the peak RSS of a depth-10 chain at N = 2^16 grew by 170 MiB); served from
// the larger blocks, the cache stays the size of one level's working set.
constexpr size_t kMaxOversize = 2;

struct BlockCache {
    std::mutex mutex;
    // By real size. Emptied lists stay, so that the steady state of a workload (the same sizes
    // taken and given back) allocates no bookkeeping either.
    std::map<size_t, std::vector<void*>> free_blocks;
    // Blocks in use that are larger than their request, with their real size (few at a time;
    // reserved so that recording one allocates nothing).
    std::vector<std::pair<void*, size_t>> oversized;
    size_t cached = 0;
    size_t limit = limit_from_environment();

    BlockCache() { oversized.reserve(256); }

    // Drops cached blocks (largest first) until at most `target` bytes are cached. Caller holds the lock.
    void shrink_to(size_t target) {
        while (cached > target && !free_blocks.empty()) {
            auto it = std::prev(free_blocks.end());
            for (void* p : it->second) std::free(p);
            cached -= it->first * it->second.size();
            free_blocks.erase(it);
        }
    }
};

std::atomic<size_t> allocations{0};

BlockCache& cache() {
    static BlockCache* c = new BlockCache;  // never destroyed: buffers may be freed during exit
    return *c;
}

}  // namespace

void* pool_allocate(size_t bytes) {
    allocations.fetch_add(1, std::memory_order_relaxed);
    bytes = block_bytes(bytes);
    if (bytes >= kPooledBytes) {
        BlockCache& c = cache();
        std::lock_guard<std::mutex> lock(c.mutex);
        // the smallest cached block that is large enough, if it is not too large
        auto it = c.free_blocks.lower_bound(bytes);
        while (it != c.free_blocks.end() && it->second.empty()) ++it;
        if (it != c.free_blocks.end() && it->first <= kMaxOversize * bytes) {
            const size_t real = it->first;
            bool recorded = real == bytes;
            if (!recorded) {
                try {
                    c.oversized.emplace_back(it->second.back(), real);
                    recorded = true;
                } catch (...) {
                    // no memory for the bookkeeping: a fresh block instead
                }
            }
            if (recorded) {
                void* p = it->second.back();
                it->second.pop_back();
                c.cached -= real;
                return p;
            }
        }
    }
    void* p = allocate_block(bytes);
    if (!p) {
        pool_trim();  // memory may be tied up in the cache: give it back and try once more
        p = allocate_block(bytes);
        if (!p) throw std::bad_alloc();
    }
    return p;
}

void pool_release(void* p, size_t bytes) noexcept {
    if (!p) return;
    bytes = block_bytes(bytes);
    if (bytes >= kPooledBytes) {
        BlockCache& c = cache();
        std::lock_guard<std::mutex> lock(c.mutex);
        for (auto& o : c.oversized) {
            if (o.first != p) continue;
            bytes = o.second;
            o = c.oversized.back();
            c.oversized.pop_back();
            break;
        }
        // The block just released is the likeliest to be asked for next (the same op on the
        // next input): older blocks make room for it, largest first.
        if (bytes <= c.limit) {
            c.shrink_to(c.limit - bytes);
            try {
                c.free_blocks[bytes].push_back(p);
                c.cached += bytes;
                return;
            } catch (...) {
                // no memory for the bookkeeping: free the block instead
            }
        }
    }
    std::free(p);
}

size_t pool_cached_bytes() {
    BlockCache& c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    return c.cached;
}

size_t pool_limit() {
    BlockCache& c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    return c.limit;
}

void set_pool_limit(size_t bytes) {
    BlockCache& c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    c.limit = bytes;
    c.shrink_to(bytes);
}

void pool_trim() {
    BlockCache& c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    c.shrink_to(0);
}

size_t pool_allocation_count() { return allocations.load(std::memory_order_relaxed); }

}  // namespace oboro
