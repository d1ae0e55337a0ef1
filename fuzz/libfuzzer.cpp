// The libFuzzer hooks every target shares: the process set-up and the mutator that re-seals.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string_view>

#include "fuzz.hpp"
#include "oboro/util/memory_pool.hpp"
#include "oboro/util/parallel.hpp"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {
// OBORO_FUZZ_RESEAL=0 turns the re-sealing off: to measure how far the fuzzer gets without it
// (docs/serialization.md, "Fuzzing").
bool reseal_mutants = true;
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    // One thread: executions are small, and a single thread keeps them reproducible. No memory
    // pool: every buffer goes back to the allocator when freed, so that AddressSanitizer sees a
    // use after free and LeakSanitizer a leak instead of a block parked in the cache.
    oboro::set_num_threads(1);
    oboro::set_pool_limit(0);
    if (const char* env = std::getenv("OBORO_FUZZ_RESEAL")) reseal_mutants = std::string_view(env) != "0";
    (void)oboro::fuzz::fixture();  // the keys, before the first input (not counted in its time)
    return 0;
}

// libFuzzer's own mutations, then the record re-sealed (io::reseal: payload size and checksums,
// nested records included). Without it nearly every mutant would fail the checksum and the fuzzer
// would never see the code behind it. One mutant in 16 keeps its broken checksum, so that the
// checksum check itself stays covered. The inputs the fuzzer keeps are the bytes loaded, so a
// crashing input reproduces as it is, without the target re-sealing anything.
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
    size = LLVMFuzzerMutate(data, size, max_size);
    if (reseal_mutants && seed % 16 != 0) oboro::io::reseal(std::span<uint8_t>(data, size));
    return size;
}
