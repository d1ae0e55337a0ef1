// CUDA-only helpers shared by the .cu files of the backend.
#pragma once

#include <cuda_runtime.h>

#include "oboro/backend/cuda/elementwise_kernels.hpp"
#include "oboro/backend/cuda/thread_index.hpp"
#include "oboro/util/error.hpp"

namespace oboro::cuda::detail {

inline void check(cudaError_t err, const char* what) {
    if (err != cudaSuccess)
        raise<Error>("CUDA error in ", what, ": ", cudaGetErrorName(err), ": ", cudaGetErrorString(err));
}

// The calling thread's ThreadIndex (see thread_index.hpp).
__device__ __forceinline__ ThreadIndex this_thread() {
    ThreadIndex t;
    t.block = Dim3{blockIdx.x, blockIdx.y, blockIdx.z};
    t.thread = Dim3{threadIdx.x, threadIdx.y, threadIdx.z};
    t.block_dim = Dim3{blockDim.x, blockDim.y, blockDim.z};
    t.grid_dim = Dim3{gridDim.x, gridDim.y, gridDim.z};
    return t;
}

inline dim3 to_dim3(const Dim3& d) { return dim3(d.x, d.y, d.z); }

// One launch of an element-wise kernel over its arguments' rows (kernels::row_launch), on
// `stream`; nothing for an empty one.
template <typename Args> void launch_rows(void (*kernel)(Args), const Args& args, cudaStream_t stream, const char* what) {
    const kernels::RowLaunch l = row_launch(args);  // ADL: the overload next to Args
    if (l.empty) return;
    kernel<<<to_dim3(l.shape.grid), to_dim3(l.shape.block), 0, stream>>>(args);
    check(cudaGetLastError(), what);
}

// The device side of grid_emulator.hpp's emulate_block_phases: runs per_phase(thread, shared,
// phase) for phase = 0 .. phases-1 with a barrier after each, on the block's dynamic shared memory
// (the launch's third <<<>>> argument: shared_words * 8 bytes). Every thread of the block must
// call it (a barrier waits for all of them), so per_phase returns early instead of the kernel.
template <typename F> __device__ __forceinline__ void run_block_phases(uint32_t phases, F&& per_phase) {
    extern __shared__ uint64_t block_shared[];
    const ThreadIndex t = this_thread();
    for (uint32_t phase = 0; phase < phases; ++phase) {
        per_phase(t, block_shared, phase);
        __syncthreads();
    }
}

// A device allocation freed on scope exit (for the *_host convenience functions).
template <typename T> class DeviceArray {
public:
    explicit DeviceArray(size_t count) : count_(count) {
        if (count_) check(cudaMalloc(reinterpret_cast<void**>(&ptr_), count_ * sizeof(T)), "cudaMalloc");
    }
    DeviceArray(const T* host, size_t count) : DeviceArray(count) {
        if (count_) check(cudaMemcpy(ptr_, host, count_ * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy H2D");
    }
    ~DeviceArray() {
        if (ptr_) cudaFree(ptr_);
    }
    DeviceArray(const DeviceArray&) = delete;
    DeviceArray& operator=(const DeviceArray&) = delete;
    void copy_to(T* host) const {
        if (count_) check(cudaMemcpy(host, ptr_, count_ * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
    }
    T* get() const { return ptr_; }

private:
    T* ptr_ = nullptr;
    size_t count_ = 0;
};

}  // namespace oboro::cuda::detail
