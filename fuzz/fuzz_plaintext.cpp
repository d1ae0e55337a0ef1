// Fuzz target: plaintext records (io::load_plaintext) of the fuzz parameters.
#include "fuzz.hpp"

using namespace oboro;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const fuzz::Session& s = fuzz::fixture();
    fuzz::check({data, size}, [&](io::ByteView b) { return io::load_plaintext(*s.ctx, b); },
                [&](const ckks::Plaintext& pt) { fuzz::use_plaintext(s, pt); });
    return 0;
}
