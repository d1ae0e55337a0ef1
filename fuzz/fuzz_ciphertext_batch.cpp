// Fuzz target: ciphertext batch records (io::load_ciphertext_batch) of the fuzz parameters.
#include "fuzz.hpp"

using namespace oboro;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const fuzz::Session& s = fuzz::fixture();
    fuzz::check({data, size}, [&](io::ByteView b) { return io::load_ciphertext_batch(*s.ctx, b); },
                [&](const ckks::CiphertextBatch& batch) { fuzz::use_batch(s, batch); });
    return 0;
}
