// A device queue (backend/queue.hpp) that runs the CUDA backend without a GPU: exactly the host
// logic of the CUDA queue (device_queue.hpp: the same cached constants, argument structs,
// scratch and launch sequences) and exactly its kernel bodies, every launch executed by the CPU
// grid emulator (emulated_launches.hpp) when it is enqueued, single-threaded. Its "device memory"
// is separate host allocations (EmulatedMemory, filled with a poison pattern when allocated), so
// batches move to it and back as they move to a GPU (host_memory() is false).
//
// For testing: results are bit for bit those of the CUDA queue, and so of backend::cpu_queue();
// it is orders of magnitude slower than either. Part of the backend layer in every build, with or
// without CUDA.
#pragma once

#include <memory>

#include "oboro/backend/queue.hpp"

namespace oboro::cuda {

// A new emulated queue, named "cuda-emulated". Errors of an op are thrown by the call that
// enqueues it (the emulator runs each op then).
std::shared_ptr<backend::Queue> make_emulated_queue();

}  // namespace oboro::cuda
