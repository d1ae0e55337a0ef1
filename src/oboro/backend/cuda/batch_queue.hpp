// The CUDA implementation of the device queue (backend/queue.hpp): every batched
// op is one launch (element-wise) or one fixed launch sequence (rescale, key switching) for the
// whole batch, enqueued on the queue's own stream; nothing synchronises but synchronize().
// Scratch comes from the device's stream-ordered memory pool (cudaMallocAsync / cudaFreeAsync:
// reused from op to op without a synchronisation); a context's tables, a level's key-switching
// constants, keys and automorphism permutations are uploaded once and cached by the queue.
//
// The spans given to this queue point to DEVICE memory (the queue's contract: memory of the
// queue's device): an Evaluator on this queue works on batches moved there with
// CiphertextBatch::to_device(queue), and its results stay there until to_host / to_ciphertexts
// (which wait for the queue). Batches in its memory hold the queue (shared_ptr). Results are
// bit-exact with backend::cpu_queue(), multiply_relin_rescale included (the same fused division
// by q_l * P).
// A key-switching key is uploaded once and cached by its uid (backend/key_switch_key.hpp); a key
// without one (uid 0) is uploaded for each operation.
//
// The host logic is DeviceQueue's (device_queue.hpp), which the emulated queue
// (emulated_queue.hpp) runs too, with every launch in the CPU grid emulator.
//
// Plain C++: no CUDA headers. Defined in batch_queue.cu; available to targets linking `oboro_cuda`.
#pragma once

#include <memory>

#include "oboro/backend/queue.hpp"

namespace oboro::cuda {

// A queue on CUDA device `device`. Throws oboro::Error "no CUDA GPU found (...)" when the process
// sees no GPU, ValueError for a device index out of range.
std::shared_ptr<backend::Queue> make_cuda_queue(int device = 0);

}  // namespace oboro::cuda
