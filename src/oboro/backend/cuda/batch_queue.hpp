// The CUDA implementation of the batch backend contract (ckks/batch_queue.hpp): every batched
// op is one launch (element-wise) or one fixed launch sequence (rescale, key switching) for the
// whole batch, enqueued on the queue's own stream; nothing synchronises but synchronize().
// Scratch comes from the device's stream-ordered memory pool (cudaMallocAsync / cudaFreeAsync:
// reused from op to op without a synchronisation); a context's tables, a level's key-switching
// constants, keys and automorphism permutations are uploaded once and cached by the queue.
//
// The spans given to this queue point to DEVICE memory (BatchQueue's contract: memory of the
// queue's device): a BatchEvaluator on this queue works on batches moved there with
// CiphertextBatch::to_device(queue), and its results stay there until to_host / to_ciphertexts
// (which wait for the queue). Batches allocated by the queue must not outlive it. Results are
// bit-exact with cpu_batch_queue(), multiply_relin_rescale included (the same fused division by
// q_l * P).
// A key switching key is cached by its address: it must not change while the queue lives.
//
// Plain C++: no CUDA headers. Defined in batch_queue.cu; available to targets linking `oboro_cuda`.
#pragma once

#include <memory>

#include "oboro/ckks/batch_queue.hpp"

namespace oboro::cuda {

// A queue on CUDA device `device`. Throws oboro::Error "no CUDA GPU found (...)" when the process
// sees no GPU, ValueError for a device index out of range.
std::unique_ptr<ckks::BatchQueue> make_cuda_batch_queue(int device = 0);

}  // namespace oboro::cuda
