// A CPU emulator of a CUDA launch grid, for testing kernels on machines without a GPU.
//
// emulate_grid(shape, f) calls f(ThreadIndex) once for every thread of a 1-D, 2-D (or 3-D) grid,
// in a fixed order (z, then blocks y/x, then threads y/x). It has no barriers or shared memory:
// it runs kernels whose threads are independent.
//
// emulate_block_phases(shape, shared_words, phases, f) runs kernels with shared memory and
// barriers. Such a kernel is written as a per-phase OBORO_HD function f(thread, shared, phase):
// the code between two __syncthreads(). On the GPU the kernel calls it in a loop,
//     for (phase = 0; phase < phases; ++phase) { f(this_thread(), shared, phase); __syncthreads(); }
// with `extern __shared__` memory; the emulator runs, block by block, phase p for every thread of
// the block before phase p+1, which is exactly the ordering the barrier guarantees. A kernel that
// is correct here is correct on the GPU as long as no two threads of one phase touch the same
// shared word with one of them writing (a race): the tests catch most such races by running the
// threads of each phase in both orders (ThreadOrder) and comparing. Shared memory starts filled
// with a poison pattern (GPU shared memory is uninitialised), so reading a word that no earlier
// phase wrote gives garbage here too. No CUDA headers needed; compiles with any C++20 compiler.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "oboro/backend/cuda/thread_index.hpp"

namespace oboro::cuda {

template <typename F> void emulate_grid(const LaunchShape& shape, F&& per_thread) {
    ThreadIndex t;
    t.grid_dim = shape.grid;
    t.block_dim = shape.block;
    for (uint32_t bz = 0; bz < shape.grid.z; ++bz)
        for (uint32_t by = 0; by < shape.grid.y; ++by)
            for (uint32_t bx = 0; bx < shape.grid.x; ++bx)
                for (uint32_t tz = 0; tz < shape.block.z; ++tz)
                    for (uint32_t ty = 0; ty < shape.block.y; ++ty)
                        for (uint32_t tx = 0; tx < shape.block.x; ++tx) {
                            t.block = Dim3{bx, by, bz};
                            t.thread = Dim3{tx, ty, tz};
                            per_thread(static_cast<const ThreadIndex&>(t));
                        }
}

// 1-D convenience form.
template <typename F> void emulate_grid(uint32_t grid_x, uint32_t block_x, F&& per_thread) {
    emulate_grid(LaunchShape{Dim3{grid_x, 1, 1}, Dim3{block_x, 1, 1}}, static_cast<F&&>(per_thread));
}

// The order in which emulate_block_phases runs the threads of one block within a phase.
enum class ThreadOrder { forward, reverse };

// The value every shared word holds before a block's first phase.
inline constexpr uint64_t shared_poison = 0xDEADBEEFDEADBEEFull;

// Runs a kernel with `shared_words` 64-bit words of shared memory per block and `phases` phases
// separated by barriers: per block (in emulate_grid's block order), phase 0 for all its threads,
// then phase 1, ... f(const ThreadIndex&, uint64_t* shared, uint32_t phase).
template <typename F>
void emulate_block_phases(const LaunchShape& shape, size_t shared_words, uint32_t phases, F&& per_phase,
                          ThreadOrder order = ThreadOrder::forward) {
    std::vector<uint64_t> shared(shared_words);
    const uint32_t block_threads = shape.block.x * shape.block.y * shape.block.z;
    ThreadIndex t;
    t.grid_dim = shape.grid;
    t.block_dim = shape.block;
    for (uint32_t bz = 0; bz < shape.grid.z; ++bz)
        for (uint32_t by = 0; by < shape.grid.y; ++by)
            for (uint32_t bx = 0; bx < shape.grid.x; ++bx) {
                t.block = Dim3{bx, by, bz};
                shared.assign(shared_words, shared_poison);
                for (uint32_t phase = 0; phase < phases; ++phase)
                    for (uint32_t k = 0; k < block_threads; ++k) {
                        // linear thread id, x fastest (CUDA's numbering)
                        const uint32_t id = order == ThreadOrder::forward ? k : block_threads - 1 - k;
                        t.thread = Dim3{id % shape.block.x, (id / shape.block.x) % shape.block.y,
                                        id / (shape.block.x * shape.block.y)};
                        per_phase(static_cast<const ThreadIndex&>(t), shared.data(), phase);
                    }
            }
}

}  // namespace oboro::cuda
