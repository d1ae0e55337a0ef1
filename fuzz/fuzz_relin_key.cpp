// Fuzz target: relinearization key records (io::load_relin_key) of the fuzz parameters.
#include "fuzz.hpp"

using namespace oboro;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const fuzz::Session& s = fuzz::fixture();
    fuzz::check({data, size}, [&](io::ByteView b) { return io::load_relin_key(*s.ctx, b); },
                [&](const ckks::RelinKey& rk) { fuzz::use_relin_key(s, rk); });
    return 0;
}
