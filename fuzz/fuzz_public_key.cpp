// Fuzz target: public key records (io::load_public_key) of the fuzz parameters.
#include "fuzz.hpp"

using namespace oboro;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const fuzz::Session& s = fuzz::fixture();
    fuzz::check({data, size}, [&](io::ByteView b) { return io::load_public_key(*s.ctx, b); },
                [&](const ckks::PublicKey& pk) { fuzz::use_public_key(s, pk); });
    return 0;
}
