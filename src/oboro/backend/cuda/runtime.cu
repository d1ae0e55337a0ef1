// CUDA runtime queries.
#include <string>

#include <cuda_runtime.h>

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
