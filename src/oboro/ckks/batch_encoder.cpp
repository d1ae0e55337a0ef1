#include "oboro/ckks/batch_encoder.hpp"

#include <string>
#include <vector>

#include "oboro/util/error.hpp"
#include "oboro/util/parallel.hpp"

namespace oboro::ckks {

BatchCoefficients batch_coefficients(const char* op, const Encoder& encoder, std::span<const std::complex<double>> values,
                                     size_t rows, std::optional<int> level, std::optional<double> scale,
                                     std::optional<size_t> slots) {
    if (rows == 0) raise<ValueError>(op, ": a batch needs at least one row");
    if (values.size() % rows) raise<ValueError>(op, ": ", values.size(), " values do not split into ", rows, " equal rows");
    const size_t row_length = values.size() / rows;
    BatchCoefficients out;
    out.shape = encoder.encoding_shape(op, row_length, level, scale, slots);
    out.rows = rows;
    const size_t row_words = 2 * out.shape.slots;
    out.coefficients.resize(rows * row_words);
    // in parallel over the rows; the first failing row's error is the one raised
    std::vector<std::string> errors(rows);
    parallel_for(rows, [&](size_t r) {
        const std::string row_op = std::string(op) + ": row " + std::to_string(r);
        try {
            encoder.scaled_coefficients(row_op.c_str(), values.data() + r * row_length, row_length, out.shape,
                                        out.coefficients.data() + r * row_words);
        } catch (const ValueError& e) {
            errors[r] = e.what();
        }
    });
    for (const std::string& e : errors)
        if (!e.empty()) raise<ValueError>(e);
    return out;
}

PlaintextBatch encode_batch(const Encoder& encoder, std::span<const std::complex<double>> values, size_t rows,
                            std::optional<int> level, std::optional<double> scale, std::optional<size_t> slots,
                            const QueuePtr& queue) {
    const BatchCoefficients host = batch_coefficients("encode_batch", encoder, values, rows, level, scale, slots);
    const QueuePtr& q = queue ? queue : backend::cpu_queue();
    PlaintextBatch out(*encoder.context(), rows, host.shape.level, host.shape.scale, host.shape.slots, q);
    q->encode(encoder.context()->ring(), span_of(out), host.coefficients.data(), host.shape.slots);
    return out;
}

}  // namespace oboro::ckks
