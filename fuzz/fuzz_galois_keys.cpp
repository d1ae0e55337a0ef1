// Fuzz target: Galois key records (io::load_galois_keys) of the fuzz parameters.
#include "fuzz.hpp"

using namespace oboro;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const fuzz::Session& s = fuzz::fixture();
    fuzz::check({data, size}, [&](io::ByteView b) { return io::load_galois_keys(*s.ctx, b); },
                [&](const ckks::GaloisKeys& gk) { fuzz::use_galois_keys(s, gk); });
    return 0;
}
