#include "oboro/util/memory_pool.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>
#include <new>
#include <string_view>
#include <vector>

#include "oboro/util/mapped_memory.hpp"

namespace oboro {

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kAlignment = 64;
// Blocks of at least this size are mapped directly, aligned to and rounded up to a 2 MiB huge
// page and marked MADV_HUGEPAGE: a fresh block then costs one page fault per 2 MiB instead of 512
// (about 4x faster to fault in), and the NTTs over its limbs miss the TLB less.
constexpr size_t kHugePage = size_t(2) << 20;
constexpr size_t kHugeBlockBytes = 2 * kHugePage;

Clock::duration seconds(double s) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

// The size a request is served with: a multiple of the alignment, or of the huge page.
size_t block_bytes(size_t bytes) {
    const size_t unit = bytes >= kHugeBlockBytes ? kHugePage : kAlignment;
    if (bytes > std::numeric_limits<size_t>::max() - unit) throw std::bad_alloc();
    return (bytes + unit - 1) / unit * unit;
}

// OBORO_HUGE_PAGES=0 leaves out the huge-page advice (read once).
bool advise_huge_pages() {
    static const bool advise = [] {
        const char* s = std::getenv("OBORO_HUGE_PAGES");
        return !(s && std::string_view(s) == "0");
    }();
    return advise;
}

// nullptr when the system has no memory for it.
void* system_allocate(size_t bytes, PageAdvice advice = PageAdvice::huge) {
    if (bytes < kHugeBlockBytes) return std::aligned_alloc(kAlignment, bytes);
    void* p = map_block(bytes, kHugePage);
    // advice only: without transparent huge pages, nothing changes
    if (p && advice == PageAdvice::huge && advise_huge_pages()) madvise(p, bytes, MADV_HUGEPAGE);
    return p;
}

void system_release(void* p, size_t bytes) noexcept {
    if (bytes < kHugeBlockBytes)
        std::free(p);
    else
        unmap_block(p, bytes);
}

size_t limit_from_environment() {
    if (const char* s = std::getenv("OBORO_POOL_MB")) {
        char* end = nullptr;
        const unsigned long long mb = std::strtoull(s, &end, 10);
        if (end != s && *end == '\0') return size_t(mb) << 20;
    }
    return std::numeric_limits<size_t>::max();
}

// A cached block serves a request of up to this factor smaller than itself. Operations at lower
// levels ask for slightly smaller blocks than the same operations one level up (fewer limbs): with
// exact sizes only, a chain of rescaled products left every level's blocks in the cache and
// allocated new ones (the peak RSS of a depth-10 chain at N = 2^16 grew by 170 MiB); served from
// the larger blocks, the cache stays the size of one level's working set.
constexpr size_t kMaxOversize = 2;

struct Cached {
    void* block;
    Clock::time_point released;
};

struct BlockCache {
    std::mutex mutex;
    // By real size, each list oldest first. Emptied lists stay, so that the steady state of a
    // workload (the same sizes taken and given back) allocates no bookkeeping either.
    std::map<size_t, std::vector<Cached>> free_blocks;
    // Blocks in use that are larger than their request, with their real size (few at a time;
    // reserved so that recording one allocates nothing).
    std::vector<std::pair<void*, size_t>> oversized;
    size_t cached = 0;
    size_t live = 0;
    size_t peak_live = 0;
    size_t hits = 0;
    size_t fresh = 0;
    size_t limit = limit_from_environment();
    Clock::duration idle = seconds(kPoolIdleSeconds);
    // The idle sweep walks every cached block: it runs at most ten times per idle period.
    Clock::duration sweep_interval = idle / 10;
    Clock::time_point last_sweep = Clock::now();

    BlockCache() { oversized.reserve(256); }

    // Gives back the least recently released cached block. Caller holds the lock; cached > 0.
    void drop_oldest() {
        auto oldest = free_blocks.end();
        for (auto it = free_blocks.begin(); it != free_blocks.end(); ++it)
            if (!it->second.empty() &&
                (oldest == free_blocks.end() || it->second.front().released < oldest->second.front().released))
                oldest = it;
        system_release(oldest->second.front().block, oldest->first);
        oldest->second.erase(oldest->second.begin());
        cached -= oldest->first;
    }

    // Drops the least recently used blocks until at most `target` bytes are cached. Caller holds the lock.
    void shrink_to(size_t target) {
        while (cached > target) drop_oldest();
    }

    // Gives back the blocks unused for `idle` (checked at most once per sweep_interval).
    void sweep(Clock::time_point now) {
        if (now - last_sweep < sweep_interval) return;
        last_sweep = now;
        for (auto& [bytes, blocks] : free_blocks) {
            size_t expired = 0;  // the list is oldest first
            while (expired < blocks.size() && now - blocks[expired].released >= idle) {
                system_release(blocks[expired].block, bytes);
                cached -= bytes;
                ++expired;
            }
            blocks.erase(blocks.begin(), blocks.begin() + std::ptrdiff_t(expired));
        }
    }

    // A cached block for `bytes`, or nullptr. Caller holds the lock.
    void* take(size_t bytes) {
        // the smallest cached block that is large enough, if it is not too large
        auto it = free_blocks.lower_bound(bytes);
        while (it != free_blocks.end() && it->second.empty()) ++it;
        if (it == free_blocks.end() || it->first > kMaxOversize * bytes) return nullptr;
        const size_t real = it->first;
        if (real != bytes) {
            try {
                oversized.emplace_back(it->second.back().block, real);
            } catch (...) {
                return nullptr;  // no memory for the bookkeeping: a fresh block instead
            }
        }
        void* p = it->second.back().block;  // the most recently used: likeliest still in the caches
        it->second.pop_back();
        cached -= real;
        live += real;
        if (live > peak_live) peak_live = live;  // a larger block than asked for may set a new peak
        ++hits;
        return p;
    }
};

std::atomic<size_t> allocations{0};

BlockCache& cache() {
    static BlockCache* c = new BlockCache;  // never destroyed: buffers may be freed during exit
    return *c;
}

// New memory from the system, or nullptr.
void* fresh_block(size_t bytes, PageAdvice advice = PageAdvice::huge) {
    void* p = system_allocate(bytes, advice);
    if (p) return p;
    pool_trim();  // memory may be tied up in the cache: give it back and try once more
    return system_allocate(bytes, advice);
}

}  // namespace

void* pool_allocate(size_t bytes, PageAdvice advice) {
    allocations.fetch_add(1, std::memory_order_relaxed);
    bytes = block_bytes(bytes);
    if (bytes < kPooledBytes) {
        void* p = fresh_block(bytes);
        if (!p) throw std::bad_alloc();
        return p;
    }
    BlockCache& c = cache();
    {
        std::lock_guard<std::mutex> lock(c.mutex);
        c.sweep(Clock::now());
        if (void* p = c.take(bytes)) return p;
        // A fresh block: the cache makes room for it within the peak of what the process has had
        // in use (or the slack).
        c.live += bytes;
        ++c.fresh;
        if (c.live > c.peak_live) c.peak_live = c.live;
        c.shrink_to(std::max(c.peak_live - c.live, kPoolSlackBytes));
    }
    void* p = fresh_block(bytes, advice);
    if (!p) {
        std::lock_guard<std::mutex> lock(c.mutex);
        c.live -= bytes;
        throw std::bad_alloc();
    }
    return p;
}

void pool_release(void* p, size_t bytes) noexcept {
    if (!p) return;
    bytes = block_bytes(bytes);
    if (bytes < kPooledBytes) {
        system_release(p, bytes);
        return;
    }
    BlockCache& c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    for (auto& o : c.oversized) {
        if (o.first != p) continue;
        bytes = o.second;
        o = c.oversized.back();
        c.oversized.pop_back();
        break;
    }
    c.live -= bytes;
    const auto now = Clock::now();
    c.sweep(now);
    // The block just released is the likeliest to be asked for next (the same op on the next
    // input): under a hard cap, older blocks make room for it.
    if (bytes <= c.limit) {
        c.shrink_to(c.limit - bytes);
        try {
            c.free_blocks[bytes].push_back({p, now});
            c.cached += bytes;
            return;
        } catch (...) {
            // no memory for the bookkeeping: give the block back instead
        }
    }
    system_release(p, bytes);
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

void set_pool_idle_seconds(double s) {
    BlockCache& c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    c.idle = seconds(s > 0 ? s : kPoolIdleSeconds);
    c.sweep_interval = c.idle / 10;
}

double pool_idle_seconds() {
    BlockCache& c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    return std::chrono::duration<double>(c.idle).count();
}

PoolStats pool_stats() {
    BlockCache& c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    return {c.cached, c.live, c.peak_live, c.hits, c.fresh};
}

size_t pool_allocation_count() { return allocations.load(std::memory_order_relaxed); }

}  // namespace oboro
