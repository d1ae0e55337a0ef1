#include "oboro/util/secret_memory.hpp"

#include <cstdlib>

#include <sys/mman.h>
#include <unistd.h>

#include "oboro/util/memory_pool.hpp"
#include "oboro/util/wipe.hpp"

namespace oboro {

namespace {

constexpr size_t kAlignment = 64;  // AlignedBuffer's: the SIMD kernels read secret words too

size_t page_size() {
    static const size_t page = [] {
        const long p = sysconf(_SC_PAGESIZE);
        return p > 0 ? size_t(p) : size_t(4096);
    }();
    return page;
}

// A locked block is whole pages: a lock covers pages and locks do not nest (munlock unlocks a
// page whatever else is on it), so a locked block never shares a page with another block.
size_t granule(SecretLock lock) { return lock == SecretLock::yes ? page_size() : kAlignment; }
size_t rounded(size_t bytes, SecretLock lock) { return (bytes + granule(lock) - 1) / granule(lock) * granule(lock); }

}  // namespace

void* secret_allocate(size_t bytes, SecretLock lock) {
    if (bytes == 0) bytes = 1;  // a distinct block, as operator new gives
    if (bytes > size_t(-1) - granule(lock)) throw std::bad_alloc();
    const size_t span = rounded(bytes, lock);
    void* p = std::aligned_alloc(granule(lock), span);
    if (!p) {
        pool_trim();  // memory may be tied up in the block cache: give it back and try once more
        p = std::aligned_alloc(granule(lock), span);
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
    if (lock == SecretLock::yes) {
        const size_t span = rounded(bytes == 0 ? 1 : bytes, lock);
#ifdef MADV_DODUMP
        (void)madvise(p, span, MADV_DODUMP);  // the pages go back to the allocator for ordinary use
#endif
        (void)munlock(p, span);
    }
    std::free(p);
}

}  // namespace oboro
