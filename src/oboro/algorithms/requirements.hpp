// Checks that the matrix algorithms make before any work, so that a misuse fails with one clear
// message instead of deep inside an evaluator call.
#pragma once

#include <cstdint>
#include <vector>

#include "oboro/ckks/evaluator.hpp"
#include "oboro/ckks/keys.hpp"

namespace oboro::algorithms {

// MissingKey naming every step of `steps` without a Galois key, and the function (`helper`) that
// lists the steps the operation needs.
void require_rotation_keys(const char* op, const ckks::Context& ctx, const ckks::GaloisKeys& keys,
                           const std::vector<int64_t>& steps, const char* helper);
// LevelMismatch unless `ct` (operand `name`, a ciphertext or a batch) has at least `levels` levels
// left to consume.
template <ckks::Encrypted T>
void require_levels(const char* op, const T& ct, const char* name, int levels, const char* why);
// ValueError unless `ct` (operand `name`) is of size 2 with exactly `slots` slots (the layout the
// operation expects).
template <ckks::Encrypted T>
void require_layout(const char* op, const T& ct, const char* name, size_t slots, const char* layout);
// ValueError unless the operands `a` and `b` of a product hold as many elements (batches of the
// same length: element c of the result is the product of the elements c).
template <ckks::Encrypted T> void require_same_count(const char* op, const T& a, const T& b);

}  // namespace oboro::algorithms
