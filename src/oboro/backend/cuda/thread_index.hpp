// The position of one GPU thread in its launch grid, as a plain struct.
//
// CUDA kernels in oboro are thin wrappers: they build a ThreadIndex from blockIdx/threadIdx/
// blockDim/gridDim and call a per-thread OBORO_HD function with it. The same per-thread function
// runs on the CPU through grid_emulator.hpp, so kernel indexing and arithmetic are tested on
// machines without a GPU. This header needs no CUDA headers.
#pragma once

#include <cstdint>

#include "oboro/math/modarith.hpp"  // OBORO_HD

namespace oboro::cuda {

struct Dim3 {
    uint32_t x = 1, y = 1, z = 1;
};

struct ThreadIndex {
    Dim3 block;      // blockIdx
    Dim3 thread;     // threadIdx
    Dim3 block_dim;  // blockDim
    Dim3 grid_dim;   // gridDim

    // Global thread coordinates (x and y) in the whole grid.
    OBORO_HD uint64_t global_x() const { return uint64_t(block.x) * block_dim.x + thread.x; }
    OBORO_HD uint64_t global_y() const { return uint64_t(block.y) * block_dim.y + thread.y; }
};

// Grid and block dimensions of one kernel launch.
struct LaunchShape {
    Dim3 grid;
    Dim3 block;
};

// CUDA's limit on gridDim.y and gridDim.z.
inline constexpr uint32_t max_grid_yz = 65535;

}  // namespace oboro::cuda
