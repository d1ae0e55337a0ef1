// Fuzz target: bootstrap key records (io::load_bootstrap_keys) of the fuzz parameters.
#include "fuzz.hpp"

using namespace oboro;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const fuzz::Session& s = fuzz::fixture();
    fuzz::check({data, size}, [&](io::ByteView b) { return io::load_bootstrap_keys(*s.ctx, b); },
                [&](const auto& loaded) { fuzz::use_bootstrap_keys(s, loaded.first, loaded.second); });
    return 0;
}
