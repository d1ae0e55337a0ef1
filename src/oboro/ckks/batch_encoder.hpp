// Batched encoding: d vectors encoded into one plaintext batch (batch.hpp), in host memory or
// straight into a device's memory.
//
// The encoding is cut where the work changes kind. The host does the embedding (an FFT of
// `slots` complex doubles per vector, in parallel over the vectors) and the range checks, which
// yields 2 * slots integer coefficients per vector. The batch queue does the rest for the whole
// batch: reducing the coefficients modulo every prime of the level, and the NTT of every limb.
// On a GPU that is one launch of each, and only the 2 * slots coefficients of a vector cross the
// bus instead of its (level + 1) x N words; on the CPU, one parallel loop. Each element is bit for
// bit Encoder::encode's plaintext of its vector.
#pragma once

#include <complex>
#include <cstddef>
#include <span>
#include <vector>

#include "oboro/ckks/batch.hpp"
#include "oboro/ckks/encoder.hpp"

namespace oboro::ckks {

// `rows` vectors of values.size() / rows values each (row r at values + r * row length), encoded
// as Encoder::encode does (not given: the top level, the default scale, N/2 slots),
// into the memory of `queue`, whose kernels do the work (nullptr: the CPU queue, host memory). Errors, raised before
// anything is enqueued: rows == 0 or values.size() not a multiple of rows (ValueError), and
// encode's (LevelMismatch, ValueError for too many values, bad slots, non-finite values or values
// beyond the modulus, naming the row).
PlaintextBatch encode_batch(const Encoder& encoder, std::span<const std::complex<double>> values, size_t rows,
                            std::optional<int> level = std::nullopt, std::optional<double> scale = std::nullopt,
                            std::optional<size_t> slots = std::nullopt, const QueuePtr& queue = nullptr);

// The host half of encode_batch (its errors, `op` naming the caller): the shape of each row's
// encoding and the 2 * slots scaled coefficients of every row (row r at r * 2 * shape.slots),
// computed in parallel over the rows. Encryptor::encrypt_batch(encoder, ...) starts from them too.
struct BatchCoefficients {
    EncodingShape shape;
    size_t rows = 0;
    std::vector<double> coefficients;
};
BatchCoefficients batch_coefficients(const char* op, const Encoder& encoder,
                                     std::span<const std::complex<double>> values, size_t rows,
                                     std::optional<int> level, std::optional<double> scale,
                                     std::optional<size_t> slots);

}  // namespace oboro::ckks
