// Hoisted key switching (Halevi-Shoup; Bossuat et al.; Ishimaki-Yamana): many automorphisms of
// the SAME ciphertext share one decomposition (ModUp) of its c1 (backend/cpu/hoisting.hpp says
// why that works). The Evaluator methods rotate_many and rotate_sum (evaluator.hpp) are the
// public API and backend/cpu/hoisting.hpp the CPU kernels; this header has the operation counter
// they report to.
#pragma once

#include <cstdint>

namespace oboro::ckks {

// What a key-switching call did, for tests and cost accounting. Functions that take a
// `KeySwitchCounts*` add to it (nullptr: not counted).
struct KeySwitchCounts {
    uint64_t mod_ups = 0;         // decompositions of a c1 (ModUp)
    uint64_t inner_products = 0;  // key inner products, one per automorphism = one per key used
    uint64_t mod_downs = 0;       // ModDowns of a key-switched pair (both halves count as one)

    KeySwitchCounts& operator+=(const KeySwitchCounts& o) {
        mod_ups += o.mod_ups;
        inner_products += o.inner_products;
        mod_downs += o.mod_downs;
        return *this;
    }
    bool operator==(const KeySwitchCounts&) const = default;
};

}  // namespace oboro::ckks
