// A CPU emulator of a CUDA launch grid, for testing kernels on machines without a GPU.
//
// emulate_grid(shape, f) calls f(ThreadIndex) once for every thread of a 1-D, 2-D (or 3-D) grid,
// in a fixed order (z, then blocks y/x, then threads y/x). It has no barriers or shared memory:
// it runs kernels whose threads are independent, or one phase (the code between two
// __syncthreads) of a kernel at a time. No CUDA headers needed; compiles with any C++20 compiler.
#pragma once

#include <cstdint>

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

}  // namespace oboro::cuda
