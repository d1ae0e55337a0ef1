#include "oboro/util/secret_memory.hpp"

#include <cstdlib>

#include "oboro/util/memory_pool.hpp"
#include "oboro/util/wipe.hpp"

namespace oboro {

namespace {
constexpr size_t kAlignment = 64;  // AlignedBuffer's: the SIMD kernels read secret words too

size_t rounded(size_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }
}  // namespace

void* secret_allocate(size_t bytes) {
    if (bytes == 0) bytes = 1;  // a distinct block, as operator new gives
    if (bytes > size_t(-1) - kAlignment) throw std::bad_alloc();
    void* p = std::aligned_alloc(kAlignment, rounded(bytes));
    if (!p) {
        pool_trim();  // memory may be tied up in the block cache: give it back and try once more
        p = std::aligned_alloc(kAlignment, rounded(bytes));
        if (!p) throw std::bad_alloc();
    }
    return p;
}

void secret_release(void* p, size_t bytes) noexcept {
    if (!p) return;
    wipe(p, bytes);
    std::free(p);
}

}  // namespace oboro
