// The work of key switching as counted by the Evaluator's hoisted operations (rotate_many,
// rotate_sum, rotate_many_extended, mod_down: evaluator.hpp; the kernels in backend/cpu/hoisting.hpp
// and backend/cuda/keyswitch_kernels.hpp) and by the algorithms' CountedOps: hoisting shares one
// decomposition (ModUp) of a c1 among many automorphisms of the SAME ciphertext, and lazy or
// double hoisting shares ModDowns, so the three pieces are counted apart.
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
