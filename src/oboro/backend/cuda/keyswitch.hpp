// Host API of the CUDA key switching (keyswitch_kernels.hpp): hybrid key switching, relinearize,
// rotate and hoisted rotations of a whole batch, each a fixed sequence of launches on one stream
// with no synchronisation. Plain C++: no CUDA headers. Defined in keyswitch.cu; available to
// targets linking `oboro_cuda` (OBORO_WITH_CUDA_RUNTIME).
#pragma once

#include <cstddef>
#include <cstdint>

#include "oboro/backend/cuda/base_conversion.hpp"
#include "oboro/backend/cuda/device_constants.hpp"
#include "oboro/backend/cuda/keyswitch_kernels.hpp"
#include "oboro/backend/cuda/ntt.hpp"
#include "oboro/backend/key_switch_key.hpp"
#include "oboro/backend/ring.hpp"

namespace oboro::cuda {

// The constants of key switching at one level in GPU memory (device_constants.hpp).
using DeviceKeySwitchLevel = BasicDeviceKeySwitchLevel<CudaMemory>;

// Asynchronous on `stream` (a cudaStream_t, nullptr: the default stream); device memory only.
void launch_key_switch(const kernels::KeySwitchArgs& args, void* stream = nullptr);
void launch_relinearize(const kernels::CiphertextKeySwitchArgs& args, void* stream = nullptr);
void launch_rotate(const kernels::CiphertextKeySwitchArgs& args, void* stream = nullptr);
// The fused multiply + relinearize + rescale (level >= 1; scratch key_switch_scratch(level, count, true)).
void launch_multiply_relin_rescale(const kernels::MultiplyRelinRescaleArgs& args, void* stream = nullptr);
// Host memory, for tests and examples (copy in, launch, wait, copy out):
// in = count x (level+1) limbs; out = count x 2 x (level+1) limbs = (ks0, ks1) of each input,
// bit for bit backend::cpu::key_switch.
void key_switch_host(const backend::Ring& ring, int level, const uint64_t* in, uint32_t count,
                     const backend::KeySwitchKeyView& key, uint64_t* out);
// in = count ciphertexts of 3 polynomials at `level`; out = count x 2 polynomials, bit for bit
// Evaluator::relinearize.
void relinearize_host(const backend::Ring& ring, int level, const uint64_t* in, uint32_t count,
                      const backend::KeySwitchKeyView& rk, uint64_t* out);
// in = count ciphertexts of 2 polynomials at `level`; out = each rotated by the automorphism
// `galois` with its key, bit for bit Evaluator::apply_galois (rotate, conjugate).
void rotate_host(const backend::Ring& ring, int level, const uint64_t* in, uint32_t count, uint64_t galois,
                 const backend::KeySwitchKeyView& key, uint64_t* out);

}  // namespace oboro::cuda
