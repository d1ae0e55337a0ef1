// The device half of CKKS encoding on the CPU: the plaintext polynomial (level + 1 limbs, NTT form)
// of the 2 * slots integer subring coefficients that ckks::Encoder::scaled_coefficients gives
// (subring_layout.hpp). The encoder and the CPU queue's encode run it; the CUDA queue runs the same
// per-coefficient steps on the device.
#pragma once

#include <cstddef>
#include <cstdint>

#include "oboro/backend/ring.hpp"

namespace oboro::backend::cpu {

// `special` (0 or the ring's p_count): the limbs of the special primes after the level + 1 ciphertext
// limbs (an encoding over Q_level * P).
void write_plaintext(const Ring& ring, const double* coefficients, size_t slots, int level, uint64_t* out,
                     size_t special = 0);
// write_plaintext's limbs kept as their runs (ckks::CompactPlaintext): the polynomial of `slots`
// values lies in Z[X^(N / 2 slots)], so its NTT words come in runs of N / (2 slots) equal words, and
// the 2 * slots words per limb are computed directly, by a transform of that size.
void write_plaintext_runs(const Ring& ring, const double* coefficients, size_t slots, int level, uint64_t* out,
                          size_t special = 0);
// The same level + 1 ciphertext limbs left in coefficient form (no NTT): the message of an
// encryption that adds it to its error before the error's one NTT (ckks::Encryptor).
void write_coefficients(const Ring& ring, const double* coefficients, size_t slots, int level, uint64_t* out);

}  // namespace oboro::backend::cpu
