// A process-wide cache of large, 64-byte aligned memory blocks: the storage of every AlignedBuffer
// of at least kPooledBytes.
//
// Why: ciphertexts, key-switching digits and scratch buffers are megabytes (S4: 14 MiB per
// polynomial pair) and are allocated and freed at every operation. Fresh memory costs the kernel's
// page faults and zeroing every time (a quarter of a public-key encryption at N = 2^16, a tenth of
// a bootstrap). Freed blocks are kept here and handed out again without touching the kernel.
//
// How much is kept: what the process has already shown it needs at once. The cache holds at most
// the peak of the blocks in use so far minus those in use now, or kPoolSlackBytes if that is
// more: a fresh block that would break this first gives back the least recently used cached
// blocks. So a workload that repeats (the ops of a bootstrap, a loop over a batch) runs from the
// cache without page faults whatever its working set, the cache adds at most kPoolSlackBytes to a
// workload's peak memory (nothing once the workload has reached its peak), and a phase whose memory
// grows (key generation: keys kept, temporaries freed) still reuses its temporaries. A cached block
// unused for kPoolIdleSeconds goes back to the system at the next call, so memory of a finished
// phase (a bootstrap's scratch) does not stay with the process. An optional hard cap on the
// cached bytes (environment variable OBORO_POOL_MB, set_pool_limit; 0 disables caching).
//
// Blocks of 4 MiB and more are mapped from the kernel directly, aligned to 2 MiB huge pages and
// marked MADV_HUGEPAGE (one page fault per 2 MiB where transparent huge pages are on; fewer TLB
// misses in the NTTs); a block given back is unmapped, so the process shrinks at once.
// OBORO_HUGE_PAGES=0 in the environment leaves the advice out: on some virtual machines a fresh
// huge page faults in slowly (docs/architecture.md, Memory).
// Blocks are not cleared between uses, exactly like malloc's own reuse of freed memory:
// AlignedBuffer never promises zeroed memory and every kernel writes its whole output. Thread-safe.
#pragma once

#include <cstddef>

namespace oboro {

// Blocks below this size use aligned_alloc/free directly.
inline constexpr size_t kPooledBytes = size_t(1) << 16;
// What the cache may hold beyond the peak of blocks in use (see above).
inline constexpr size_t kPoolSlackBytes = size_t(256) << 20;
// A cached block unused this long is given back to the system (by default; set_pool_idle_seconds).
inline constexpr double kPoolIdleSeconds = 10.0;

// How a fresh block of 4 MiB or more is mapped: advised as transparent huge pages (the default:
// fewer page faults and TLB misses for the hot buffers of operations), or with the system's
// default pages. A block served from the cache is whatever it was.
enum class PageAdvice { huge, none };

// A block of at least `bytes` bytes (a multiple of 64), 64-byte aligned; throws std::bad_alloc.
void* pool_allocate(size_t bytes, PageAdvice advice = PageAdvice::huge);
// Gives back a block from pool_allocate with the same `bytes`.
void pool_release(void* p, size_t bytes) noexcept;

// Bytes held in the cache now (not in use), the hard cap (SIZE_MAX: none), a way to set it (0: no
// caching) and to return everything cached to the system.
size_t pool_cached_bytes();
size_t pool_limit();
void set_pool_limit(size_t bytes);
void pool_trim();
// How long a cached block may stay unused before it is given back, in seconds (not above 0:
// kPoolIdleSeconds again).
void set_pool_idle_seconds(double seconds);
double pool_idle_seconds();

// What the pool holds and has done, for tests, benchmarks and memory reports (pooled sizes only).
struct PoolStats {
    size_t cached_bytes = 0;     // unused blocks held for reuse
    size_t live_bytes = 0;       // blocks in use
    size_t peak_live_bytes = 0;  // the most ever in use at once
    size_t hits = 0;             // allocations served from the cache
    size_t fresh = 0;            // allocations that took new memory from the system
};
PoolStats pool_stats();

// Blocks handed out by pool_allocate since the process started, of every size, cached or fresh:
// every AlignedBuffer allocation. Tests and benchmarks difference it around a call to count the
// buffers that call allocated (e.g. none per ciphertext in a batched operation).
size_t pool_allocation_count();

}  // namespace oboro
