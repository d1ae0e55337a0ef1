// Fuzz target: ciphertext records (io::load_ciphertext) of the fuzz parameters.
#include "fuzz.hpp"

using namespace oboro;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const fuzz::Session& s = fuzz::fixture();
    fuzz::check({data, size}, [&](io::ByteView b) { return io::load_ciphertext(*s.ctx, b); },
                [&](const ckks::Ciphertext& ct) { fuzz::use_ciphertext(s, ct); });
    return 0;
}
