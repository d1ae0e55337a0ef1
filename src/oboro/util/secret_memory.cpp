#include "oboro/util/secret_memory.hpp"

#include <cstdlib>

#include <sys/mman.h>

#include "oboro/util/mapped_memory.hpp"
#include "oboro/util/memory_pool.hpp"
#include "oboro/util/wipe.hpp"

namespace oboro {

namespace {

constexpr size_t kAlignment = 64;  // AlignedBuffer's: the SIMD kernels read secret words too
// Blocks of at least this size are mapped (util/mapped_memory.hpp): freed, they leave the process
// instead of staying in the C library's heap (a secret key and key generation's temporaries are
// megabytes each at N = 2^16).
constexpr size_t kMappedBytes = size_t(1) << 20;

// A locked block is whole pages: a lock covers pages and locks do not nest (munlock unlocks a
// page whatever else is on it), so a locked block never shares a page with another block. So is
// a mapped block.
size_t granule(size_t bytes, SecretLock lock) {
    return lock == SecretLock::yes || bytes >= kMappedBytes ? system_page_size() : kAlignment;
}
size_t rounded(size_t bytes, SecretLock lock) {
    const size_t g = granule(bytes, lock);
    return (bytes + g - 1) / g * g;
}

void* system_allocate(size_t bytes, size_t span, SecretLock lock) {
    return bytes >= kMappedBytes ? map_block(span, system_page_size()) : std::aligned_alloc(granule(bytes, lock), span);
}

}  // namespace

void* secret_allocate(size_t bytes, SecretLock lock) {
    if (bytes == 0) bytes = 1;  // a distinct block, as operator new gives
    if (bytes > size_t(-1) - system_page_size()) throw std::bad_alloc();
    const size_t span = rounded(bytes, lock);
    void* p = system_allocate(bytes, span, lock);
    if (!p) {
        pool_trim();  // memory may be tied up in the block cache: give it back and try once more
        p = system_allocate(bytes, span, lock);
        if (!p) throw std::bad_alloc();
    }
    if (lock == SecretLock::yes) {
        // out of swap (refused past RLIMIT_MEMLOCK: the block is then used unlocked) and out of
        // core dumps (Linux); both best effort
        (void)mlock(p, span);
#ifdef MADV_DONTDUMP
        (void)madvise(p, span, MADV_DONTDUMP);
#endif
    }
    return p;
}

void secret_release(void* p, size_t bytes, SecretLock lock) noexcept {
    if (!p) return;
    wipe(p, bytes);
    if (bytes == 0) bytes = 1;
    const size_t span = rounded(bytes, lock);
    if (lock == SecretLock::yes) {
#ifdef MADV_DODUMP
        (void)madvise(p, span, MADV_DODUMP);  // the pages go back to the allocator for ordinary use
#endif
        (void)munlock(p, span);
    }
    if (bytes >= kMappedBytes)
        unmap_block(p, span);
    else
        std::free(p);
}

}  // namespace oboro
