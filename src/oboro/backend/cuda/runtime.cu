// CUDA runtime queries and the CUDA memory policy (CudaMemory, device_buffer.hpp).
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

std::string version_summary() {
    auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
    int driver = 0, runtime = 0;
    const bool have_driver = cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0;
    const bool have_runtime = cudaRuntimeGetVersion(&runtime) == cudaSuccess;
    cudaGetLastError();
    return std::string("driver: ") + (have_driver ? "CUDA " + version(driver) : "none") +
           ", runtime: " + (have_runtime ? "CUDA " + version(runtime) : "unknown");
}

double peak_memory_bandwidth_gbs(int device) {
    int clock_khz = 0, bus_bits = 0;
    if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return 2.0 * double(clock_khz) * 1e3 * double(bus_bits) / 8 / 1e9;
}

}  // namespace oboro::cuda

// ---- CudaMemory --------------------------------------------------------------------------------

namespace oboro::cuda {

void* CudaMemory::allocate(size_t bytes) {
    void* p = nullptr;
    if (bytes) detail::check(cudaMalloc(&p, bytes), "cudaMalloc");
    return p;
}

void CudaMemory::release(void* p) noexcept {
    if (p) cudaFree(p);
}

void CudaMemory::upload(void* device, const void* host, size_t bytes) {
    if (bytes) detail::check(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy H2D");
}

void CudaMemory::download(void* host, const void* device, size_t bytes) {
    if (bytes) detail::check(cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
}

void synchronize() { detail::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }

}  // namespace oboro::cuda
