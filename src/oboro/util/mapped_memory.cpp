#include "oboro/util/mapped_memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace oboro {

size_t system_page_size() {
    static const size_t page = [] {
        const long p = sysconf(_SC_PAGESIZE);
        return p > 0 ? size_t(p) : size_t(4096);
    }();
    return page;
}

void* map_block(size_t bytes, size_t alignment) noexcept {
    // The kernel aligns a mapping to its pages only: map `alignment` more than asked for, then cut
    // off what lies before the aligned start and after the block.
    const size_t extra = alignment > system_page_size() ? alignment : 0;
    if (bytes + extra < bytes) return nullptr;
    const size_t span = bytes + extra;
    void* m = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return nullptr;
    const uintptr_t start = reinterpret_cast<uintptr_t>(m);
    const uintptr_t aligned = (start + alignment - 1) / alignment * alignment;
    if (aligned > start) munmap(m, aligned - start);
    const uintptr_t end = start + span, block_end = aligned + bytes;
    if (end > block_end) munmap(reinterpret_cast<void*>(block_end), end - block_end);
    return reinterpret_cast<void*>(aligned);
}

void unmap_block(void* p, size_t bytes) noexcept {
    if (p) munmap(p, bytes);
}

}  // namespace oboro
