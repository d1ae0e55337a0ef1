// Fuzz target: secret key records (io::load_secret_key) of the fuzz parameters.
#include "fuzz.hpp"

using namespace oboro;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const fuzz::Session& s = fuzz::fixture();
    fuzz::check({data, size}, [&](io::ByteView b) { return io::load_secret_key(*s.ctx, b); },
                [&](const ckks::SecretKeyPtr& sk) { fuzz::use_secret_key(s, sk); });
    return 0;
}
