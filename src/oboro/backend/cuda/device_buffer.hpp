// Device memory from plain C++ (no CUDA headers): an owning, move-only cudaMalloc allocation and
// explicit synchronisation. Defined in runtime.cu; available to targets linking `oboro_cuda`
// (OBORO_WITH_CUDA_RUNTIME). CUDA errors throw oboro::Error naming the operation.
#pragma once

#include <cstddef>
#include <cstdint>

namespace oboro::cuda {

class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(size_t bytes);
    ~DeviceBuffer();
    DeviceBuffer(DeviceBuffer&& other) noexcept;
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    // Synchronous copies (they wait for the default stream) at a byte offset.
    void upload(const void* host, size_t bytes, size_t offset = 0);
    void download(void* host, size_t bytes, size_t offset = 0) const;

    void* get() const { return ptr_; }
    template <typename T> T* as() const { return static_cast<T*>(ptr_); }
    size_t bytes() const { return bytes_; }

private:
    void* ptr_ = nullptr;
    size_t bytes_ = 0;
};

// Waits for all work on the current device (cudaDeviceSynchronize); throws on a kernel error.
void synchronize();

}  // namespace oboro::cuda
