// CUDA runtime queries and device memory.
#include <string>

#include <cuda_runtime.h>

#include "oboro/backend/cuda/cuda_check.cuh"
#include "oboro/backend/cuda/device_buffer.hpp"
#include "oboro/backend/cuda/elementwise.hpp"

namespace oboro::cuda {

int device_count() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError();  // clear the sticky error
        return 0;
    }
    return count;
}

std::string device_summary() {
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        cudaGetLastError();
        return std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(err);
    }
    std::string s = std::to_string(count) + " device(s)";
    for (int d = 0; d < count; ++d) {
        cudaDeviceProp prop{};
        if (cudaGetDeviceProperties(&prop, d) == cudaSuccess)
            s += std::string(d ? ", " : ": ") + prop.name + " (sm_" + std::to_string(prop.major) +
                 std::to_string(prop.minor) + ")";
    }
    return s;
}

}  // namespace oboro::cuda

// ---- DeviceBuffer -----------------------------------------------------------------------------

namespace oboro::cuda {

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
    if (bytes_) detail::check(cudaMalloc(&ptr_, bytes_), "cudaMalloc");
}

DeviceBuffer::~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept : ptr_(other.ptr_), bytes_(other.bytes_) {
    other.ptr_ = nullptr;
    other.bytes_ = 0;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
        if (ptr_) cudaFree(ptr_);
        ptr_ = other.ptr_;
        bytes_ = other.bytes_;
        other.ptr_ = nullptr;
        other.bytes_ = 0;
    }
    return *this;
}

void DeviceBuffer::upload(const void* host, size_t bytes, size_t offset) {
    if (offset + bytes > bytes_) raise<ValueError>("DeviceBuffer::upload: ", bytes, " bytes at ", offset, " exceed ", bytes_);
    if (bytes) detail::check(cudaMemcpy(static_cast<char*>(ptr_) + offset, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy H2D");
}

void DeviceBuffer::download(void* host, size_t bytes, size_t offset) const {
    if (offset + bytes > bytes_) raise<ValueError>("DeviceBuffer::download: ", bytes, " bytes at ", offset, " exceed ", bytes_);
    if (bytes) detail::check(cudaMemcpy(host, static_cast<const char*>(ptr_) + offset, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
}

void synchronize() { detail::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }

}  // namespace oboro::cuda
