// CudaBatchQueue: the batch backend contract on a CUDA stream (batch_queue.hpp): the host logic of
// device_queue.hpp on the CUDA device policy below (a stream, its stream-ordered memory pool and
// CudaLaunches), and the launches of the batch element-wise and encoding kernels
// (batch_kernels.hpp).
#include <cstdint>
#include <memory>
#include <string>

#include <cuda_runtime.h>

#include "oboro/backend/cuda/batch_kernels.hpp"
#include "oboro/backend/cuda/batch_queue.hpp"
#include "oboro/backend/cuda/cuda_check.cuh"
#include "oboro/backend/cuda/cuda_launches.hpp"
#include "oboro/backend/cuda/device_queue.hpp"
#include "oboro/backend/cuda/elementwise.hpp"

namespace oboro::cuda {

namespace {

using kernels::BatchOp;

template <BatchOp Op> __global__ void batch_elt_kernel(const kernels::BatchEltArgs args) {
    kernels::batch_elt_thread<Op>(detail::this_thread(), args);
}

__global__ void encode_kernel(const kernels::EncodeArgs args) { kernels::encode_thread(detail::this_thread(), args); }
__global__ void product_sum_kernel(const kernels::ProductSumArgs args) {
    kernels::product_sum_thread(detail::this_thread(), args);
}

// The device policy of DeviceQueue on CUDA device `device`: its own non-blocking stream, whose
// stream-ordered pool (cudaMallocAsync / cudaFreeAsync) serves batches and scratch, reused from
// op to op without a synchronisation.
class CudaDevice : public CudaLaunches {
public:
    using Memory = CudaMemory;

    explicit CudaDevice(int device) {
        detail::check(cudaSetDevice(device), "cudaSetDevice");
        cudaStream_t s = nullptr;
        detail::check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
        stream = s;
        // keep freed pool memory for reuse instead of returning it at each synchronisation
        cudaMemPool_t pool;
        detail::check(cudaDeviceGetDefaultMemPool(&pool, device), "cudaDeviceGetDefaultMemPool");
        uint64_t keep = UINT64_MAX;
        detail::check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep), "cudaMemPoolSetAttribute");
    }
    ~CudaDevice() {
        cudaStreamSynchronize(cuda_stream());
        cudaStreamDestroy(cuda_stream());
    }
    CudaDevice(const CudaDevice&) = delete;
    CudaDevice& operator=(const CudaDevice&) = delete;

    void synchronize() { detail::check(cudaStreamSynchronize(cuda_stream()), "CudaBatchQueue::synchronize"); }

    uint64_t* allocate(size_t words) {
        uint64_t* p = nullptr;
        if (words) detail::check(cudaMallocAsync(reinterpret_cast<void**>(&p), words * 8, cuda_stream()), "cudaMallocAsync");
        return p;
    }
    struct Release {
        cudaStream_t stream;
        void operator()(uint64_t* p) const {
            if (p) cudaFreeAsync(p, stream);
        }
    };
    Release releaser() const { return Release{cuda_stream()}; }

    // pageable host memory: staged before the call returns
    void copy_to_device(void* dst, const void* host, size_t bytes) {
        if (bytes)
            detail::check(cudaMemcpyAsync(dst, host, bytes, cudaMemcpyHostToDevice, cuda_stream()), "cudaMemcpyAsync (upload)");
    }
    void copy_on_device(void* dst, const void* src, size_t bytes) {
        if (bytes)
            detail::check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, cuda_stream()), "cudaMemcpyAsync (copy)");
    }
    void zero_on_device(void* dst, size_t bytes) {
        if (bytes) detail::check(cudaMemsetAsync(dst, 0, bytes, cuda_stream()), "cudaMemsetAsync (zeros)");
    }
    void copy_to_host(void* host, const void* src, size_t bytes) {
        if (bytes) detail::check(cudaMemcpy(host, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy (download)");
    }

private:
    cudaStream_t cuda_stream() const { return static_cast<cudaStream_t>(stream); }
};

}  // namespace

// ---- the launches of the batch kernels (CudaLaunches) ------------------------------------------

void CudaLaunches::elementwise(BatchOp op, const kernels::BatchEltArgs& a) {
    kernels::dispatch_batch_op(op, [&]<BatchOp Op>() {
        detail::launch_rows(batch_elt_kernel<Op>, a, static_cast<cudaStream_t>(stream), "CudaBatchQueue: element-wise launch");
    });
}

void CudaLaunches::product_sum(const kernels::ProductSumArgs& a) {
    detail::launch_rows(product_sum_kernel, a, static_cast<cudaStream_t>(stream), "CudaBatchQueue: sum of products launch");
}

void CudaLaunches::encode(const kernels::EncodeArgs& a) {
    detail::launch_rows(encode_kernel, a, static_cast<cudaStream_t>(stream), "CudaBatchQueue: encode launch");
}

std::shared_ptr<backend::Queue> make_cuda_queue(int device) {
    const int count = device_count();
    if (count == 0) raise<Error>("no CUDA GPU found (", device_summary(), ")");
    if (device < 0 || device >= count) raise<ValueError>("CUDA device ", device, " does not exist (", count, " found)");
    return std::make_shared<DeviceQueue<CudaDevice>>("cuda:" + std::to_string(device), device);
}

}  // namespace oboro::cuda
