// Device memory from plain C++ (no CUDA headers): an owning, move-only allocation of a device's
// memory, over a memory policy with static allocate / release / upload / download:
//  - CudaMemory: cudaMalloc and synchronous copies (defined in runtime.cu; available to targets
//    linking `oboro_cuda`, OBORO_WITH_CUDA_RUNTIME). CUDA errors throw oboro::Error naming the
//    operation. DeviceBuffer is a buffer of this memory.
//  - EmulatedMemory: the emulated device's memory (emulated_queue.hpp), separate host
//    allocations, so that a pointer of it is never a pointer of the data it was copied from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>

#include "oboro/backend/cuda/grid_emulator.hpp"
#include "oboro/util/error.hpp"

namespace oboro::cuda {

struct CudaMemory {
    static void* allocate(size_t bytes);     // nullptr for 0 bytes
    static void release(void* p) noexcept;   // p may be nullptr
    // Synchronous copies (they wait for the default stream).
    static void upload(void* device, const void* host, size_t bytes);
    static void download(void* host, const void* device, size_t bytes);
};

struct EmulatedMemory {
    static constexpr std::align_val_t alignment{64};
    // New memory holds shared_poison, as uninitialised device memory holds garbage: a kernel
    // that reads words no launch wrote gives wrong results here too.
    static void* allocate(size_t bytes) {
        if (bytes == 0) return nullptr;
        void* p = ::operator new(bytes, alignment);
        auto* words = static_cast<uint64_t*>(p);
        for (size_t i = 0; i < bytes / 8; ++i) words[i] = shared_poison;
        std::memset(static_cast<char*>(p) + bytes / 8 * 8, 0xDE, bytes % 8);
        return p;
    }
    static void release(void* p) noexcept {
        if (p) ::operator delete(p, alignment);
    }
    static void upload(void* device, const void* host, size_t bytes) {
        if (bytes) std::memcpy(device, host, bytes);
    }
    static void download(void* host, const void* device, size_t bytes) {
        if (bytes) std::memcpy(host, device, bytes);
    }
};

template <typename Memory> class BasicDeviceBuffer {
public:
    BasicDeviceBuffer() = default;
    explicit BasicDeviceBuffer(size_t bytes) : ptr_(Memory::allocate(bytes)), bytes_(bytes) {}
    ~BasicDeviceBuffer() { Memory::release(ptr_); }
    BasicDeviceBuffer(BasicDeviceBuffer&& other) noexcept : ptr_(other.ptr_), bytes_(other.bytes_) {
        other.ptr_ = nullptr;
        other.bytes_ = 0;
    }
    BasicDeviceBuffer& operator=(BasicDeviceBuffer&& other) noexcept {
        if (this != &other) {
            Memory::release(ptr_);
            ptr_ = other.ptr_;
            bytes_ = other.bytes_;
            other.ptr_ = nullptr;
            other.bytes_ = 0;
        }
        return *this;
    }
    BasicDeviceBuffer(const BasicDeviceBuffer&) = delete;
    BasicDeviceBuffer& operator=(const BasicDeviceBuffer&) = delete;

    // Synchronous copies at a byte offset.
    void upload(const void* host, size_t bytes, size_t offset = 0) {
        if (offset + bytes > bytes_) raise<ValueError>("DeviceBuffer::upload: ", bytes, " bytes at ", offset, " exceed ", bytes_);
        Memory::upload(static_cast<char*>(ptr_) + offset, host, bytes);
    }
    void download(void* host, size_t bytes, size_t offset = 0) const {
        if (offset + bytes > bytes_) raise<ValueError>("DeviceBuffer::download: ", bytes, " bytes at ", offset, " exceed ", bytes_);
        Memory::download(host, static_cast<const char*>(ptr_) + offset, bytes);
    }

    void* get() const { return ptr_; }
    template <typename T> T* as() const { return static_cast<T*>(ptr_); }
    size_t bytes() const { return bytes_; }

private:
    void* ptr_ = nullptr;
    size_t bytes_ = 0;
};

using DeviceBuffer = BasicDeviceBuffer<CudaMemory>;

// Waits for all work on the current device (cudaDeviceSynchronize); throws on a kernel error.
// Defined in runtime.cu.
void synchronize();

}  // namespace oboro::cuda
