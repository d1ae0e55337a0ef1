// Helpers for the serialization tests: re-sealing mutated records (io::reseal, so that a mutation
// reaches the field validation instead of being caught by the checksum) and a small, fast parameter set.
#pragma once

#include "oboro/ckks/parameters.hpp"
#include "oboro/io/serialize.hpp"

namespace oboro::test {

// reseal(b): the payload size from the buffer length, the checksums recomputed (nested records too).
using io::reseal;

// N = 2^11, three ciphertext primes: milliseconds per object, for loops of thousands of loads.
// Far below 128-bit security: tests only.
inline ckks::Parameters tiny_parameters() {
    ckks::Parameters p;
    p.log_n = 11;
    p.q_bits = {50, 35, 35};
    p.p_bits = {50};
    p.security = ckks::SecurityLevel::none;
    return p;
}

}  // namespace oboro::test
