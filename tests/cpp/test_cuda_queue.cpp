// make_cuda_queue (backend/cuda/batch_queue.hpp): without a GPU it throws oboro::Error
// "no CUDA GPU found (...)"; with one it gives a queue named "cuda:<device>" and refuses device
// indices that do not exist. (The queue's ops are compared with the CPU queue in test_cuda_device,
// which needs a GPU.)
#include <string>

#include <gtest/gtest.h>

#include "oboro/util/error.hpp"

#if defined(OBORO_WITH_CUDA_RUNTIME)
#include "oboro/backend/cuda/batch_queue.hpp"
#include "oboro/backend/cuda/elementwise.hpp"
#endif

namespace {

TEST(CudaQueue, ClearErrorWithoutGpuAndDeviceChecks) {
#if !defined(OBORO_WITH_CUDA_RUNTIME)
    GTEST_SKIP() << "built without the CUDA runtime";
#else
    if (oboro::cuda::device_count() == 0) {
        try {
            (void)oboro::cuda::make_cuda_queue();
            FAIL() << "make_cuda_queue succeeded without a GPU";
        } catch (const oboro::Error& e) {
            EXPECT_NE(std::string(e.what()).find("no CUDA GPU found"), std::string::npos) << e.what();
        }
        return;
    }
    const auto q = oboro::cuda::make_cuda_queue(0);
    EXPECT_EQ(std::string(q->device_name()), "cuda:0");
    q->synchronize();
    EXPECT_THROW((void)oboro::cuda::make_cuda_queue(oboro::cuda::device_count()), oboro::ValueError);
    EXPECT_THROW((void)oboro::cuda::make_cuda_queue(-1), oboro::ValueError);
#endif
}

}  // namespace
