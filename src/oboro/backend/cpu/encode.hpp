// The device half of CKKS encoding on the CPU: the plaintext polynomial (level + 1 limbs, NTT form)
// of the 2 * slots integer subring coefficients that ckks::Encoder::scaled_coefficients gives
// (subring_layout.hpp). The encoder and the CPU queue's encode run it; the CUDA queue runs the same
// per-coefficient steps on the device.
#pragma once

#include <cstddef>
#include <cstdint>

#include "oboro/backend/ring.hpp"

namespace oboro::backend::cpu {

void write_plaintext(const Ring& ring, const double* coefficients, size_t slots, int level, uint64_t* out);

}  // namespace oboro::backend::cpu
