// A process-wide cache of large, 64-byte aligned memory blocks: the storage of every AlignedBuffer
// of at least kPooledBytes.
//
// Why: ciphertexts, key-switching digits and scratch buffers are megabytes (S4: 14 MiB per
// polynomial pair) and are allocated and freed at every operation. glibc serves such sizes with
// fresh mmap()s, so every operation paid the kernel's page faults and zeroing again (a quarter of
// a public-key encryption at N = 2^16). Freed blocks are kept here, by exact size (the same sizes
// recur op after op), and handed out again without touching the kernel.
//
// Bounded: at most pool_limit() bytes are kept (default 1 GiB, environment variable
// OBORO_POOL_MB, 0 disables caching); a block released into a full cache evicts older blocks
// (largest first), since the next operation most likely asks for its size again. Thread-safe.
// Blocks of 4 MiB and more are aligned to 2 MiB huge pages and marked MADV_HUGEPAGE (one page
// fault per 2 MiB where transparent huge pages are on; fewer TLB misses in the NTTs).
// Blocks are not cleared between uses, exactly like malloc's own reuse of freed memory:
// AlignedBuffer never promises zeroed memory and every kernel writes its whole output.
#pragma once

#include <cstddef>

namespace oboro {

// Blocks below this size use aligned_alloc/free directly.
inline constexpr size_t kPooledBytes = size_t(1) << 16;

// A block of at least `bytes` bytes (a multiple of 64), 64-byte aligned; throws std::bad_alloc.
void* pool_allocate(size_t bytes);
// Gives back a block from pool_allocate with the same `bytes`.
void pool_release(void* p, size_t bytes) noexcept;

// Bytes held in the cache now (not in use), the cap, and a way to set it (0: no caching) and to
// return everything cached to the system.
size_t pool_cached_bytes();
size_t pool_limit();
void set_pool_limit(size_t bytes);
void pool_trim();

// Blocks handed out by pool_allocate since the process started, of every size, cached or fresh:
// every AlignedBuffer allocation. Tests and benchmarks difference it around a call to count the
// buffers that call allocated (e.g. none per ciphertext in a batched operation).
size_t pool_allocation_count();

}  // namespace oboro
