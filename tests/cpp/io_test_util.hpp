// Helpers for the serialization tests: re-sealing mutated records (so that a mutation reaches the
// field validation instead of being caught by the checksum) and a small, fast parameter set.
#pragma once

#include <cstring>

#include "oboro/ckks/parameters.hpp"
#include "oboro/io/checksum.hpp"
#include "oboro/io/format.hpp"

namespace oboro::test {

// Recomputes the outer record's payload size (from the buffer length) and checksum.
inline void reseal(io::Bytes& b) {
    if (b.size() < io::kHeaderSize + io::kChecksumSize) return;
    const uint64_t payload = b.size() - io::kHeaderSize - io::kChecksumSize;
    std::memcpy(b.data() + 24, &payload, 8);
    const uint64_t sum = io::xxh64(b.data(), io::kHeaderSize + payload);
    std::memcpy(b.data() + b.size() - 8, &sum, 8);
}

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
