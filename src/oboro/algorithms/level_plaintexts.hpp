// Fixed plaintext vectors (masks, diagonals) encoded once per level and reused. Each is encoded
// at scale q_level, the prime that the rescale after the cMult removes, so cMult + rescale gives
// back the ciphertext's own scale (up to rounding in the last bits of the double) and products of
// such ciphertexts can be summed without any scale alignment.
#pragma once

#include <map>
#include <mutex>
#include <vector>

#include "oboro/ckks/encoder.hpp"

namespace oboro::algorithms {

class LevelPlaintexts {
public:
    // `vectors`: slot values (each of `slots` values or fewer; missing ones are zero).
    LevelPlaintexts(ckks::ContextPtr ctx, std::vector<std::vector<double>> vectors, size_t slots);

    size_t size() const { return vectors_.size(); }
    // The encodings at `level` (encoded on first use; safe to call from several threads).
    const std::vector<ckks::Plaintext>& at(int level) const;

private:
    ckks::ContextPtr ctx_;
    ckks::Encoder encoder_;
    std::vector<std::vector<double>> vectors_;
    size_t slots_;
    mutable std::mutex mutex_;
    mutable std::map<int, std::vector<ckks::Plaintext>> cache_;
};

}  // namespace oboro::algorithms
