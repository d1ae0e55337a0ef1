// Checks that the matrix algorithms make before any work, so that a misuse fails with one clear
// message instead of deep inside an evaluator call.
#pragma once

#include <cstdint>
#include <vector>

#include "oboro/ckks/ciphertext.hpp"
#include "oboro/ckks/keys.hpp"

namespace oboro::algorithms {

// MissingKey naming every step of `steps` without a Galois key, and the function (`helper`) that
// lists the steps the operation needs.
void require_rotation_keys(const char* op, const ckks::Context& ctx, const ckks::GaloisKeys& keys,
                           const std::vector<int64_t>& steps, const char* helper);
// LevelMismatch unless `ct` (operand `name`) has at least `levels` levels left to consume.
void require_levels(const char* op, const ckks::Ciphertext& ct, const char* name, int levels, const char* why);
// ValueError unless `ct` (operand `name`) is a size-2 ciphertext with exactly `slots` slots (the
// layout the operation expects).
void require_layout(const char* op, const ckks::Ciphertext& ct, const char* name, size_t slots, const char* layout);

}  // namespace oboro::algorithms
