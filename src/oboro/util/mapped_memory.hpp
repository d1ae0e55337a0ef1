// Blocks mapped from the kernel directly, and unmapped when freed.
//
// Why not malloc for large blocks: glibc serves a block from its heap once a block of that size
// has been freed (its mmap threshold follows the largest freed block, up to 32 MiB), and memory
// freed into the heap mostly stays with the process. Key generation's secret temporaries (14 MiB
// each at N = 2^16) left 500 MiB of free heap behind that way. A mapped block goes back to the
// system the moment it is freed.
#pragma once

#include <cstddef>

namespace oboro {

// The page size of the system.
size_t system_page_size();

// `bytes` (a multiple of the page size) of fresh zeroed memory aligned to `alignment` (a power of
// two, at least the page size), or nullptr when the system has none.
void* map_block(size_t bytes, size_t alignment) noexcept;
// Gives back a block from map_block with the same `bytes`.
void unmap_block(void* p, size_t bytes) noexcept;

}  // namespace oboro
