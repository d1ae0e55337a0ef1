// Fuzz target: encrypted matrix records (io::load_matrix) of the fuzz parameters: the layout, and each
// block a whole ciphertext record with its own checksum (the mutator re-seals them too).
#include <algorithm>
#include <utility>
#include <vector>

#include "fuzz.hpp"

using namespace oboro;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const fuzz::Session& s = fuzz::fixture();
    using Loaded = std::pair<std::vector<ckks::Ciphertext>, io::MatrixLayout>;
    fuzz::check(
        {data, size},
        [&](io::ByteView b) {
            Loaded m;
            m.first = io::load_matrix(*s.ctx, b, &m.second);
            return m;
        },
        [&](const Loaded& m) {
            // two blocks are enough to find a block the loader should not have accepted
            for (size_t i = 0; i < std::min<size_t>(m.first.size(), 2); ++i) fuzz::use_ciphertext(s, m.first[i]);
            fuzz::must_work("serialize the matrix again", [&] {
                const io::Bytes again = io::serialize_matrix(*s.ctx, m.second, m.first);
                (void)io::load_matrix(*s.ctx, again, nullptr);
            });
        });
    return 0;
}
