// make_emulated_queue: the CUDA queue's host logic (DeviceQueue) on the emulated device policy,
// whose launches are EmulatedLaunches and whose memory is EmulatedMemory.
#include "oboro/backend/cuda/emulated_queue.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "oboro/backend/cuda/device_buffer.hpp"
#include "oboro/backend/cuda/device_queue.hpp"
#include "oboro/backend/cuda/emulated_launches.hpp"

namespace oboro::cuda {

namespace {

// Every launch runs when it is enqueued, so the queue order of allocations, copies and releases
// is simply the order of the calls, and there is nothing to wait for.
class EmulatedDevice : public EmulatedLaunches {
public:
    using Memory = EmulatedMemory;

    void synchronize() {}

    uint64_t* allocate(size_t words) { return static_cast<uint64_t*>(Memory::allocate(words * 8)); }
    struct Release {
        void operator()(uint64_t* p) const { Memory::release(p); }
    };
    Release releaser() const { return Release{}; }

    void copy_to_device(void* dst, const void* host, size_t bytes) { Memory::upload(dst, host, bytes); }
    void copy_on_device(void* dst, const void* src, size_t bytes) {
        if (bytes) std::memcpy(dst, src, bytes);
    }
    void zero_on_device(void* dst, size_t bytes) {
        if (bytes) std::memset(dst, 0, bytes);
    }
    void copy_to_host(void* host, const void* src, size_t bytes) { Memory::download(host, src, bytes); }
};

}  // namespace

std::shared_ptr<backend::Queue> make_emulated_queue() { return std::make_shared<DeviceQueue<EmulatedDevice>>("cuda-emulated"); }

}  // namespace oboro::cuda
