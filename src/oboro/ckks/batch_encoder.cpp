#include "oboro/ckks/batch_encoder.hpp"

#include <string>
#include <vector>

#include "oboro/util/error.hpp"
#include "oboro/util/parallel.hpp"

namespace oboro::ckks {

PlaintextBatch encode_batch(const Encoder& encoder, std::span<const std::complex<double>> values, size_t rows,
                            std::optional<int> level, std::optional<double> scale, std::optional<size_t> slots,
                            const QueuePtr& queue) {
    if (rows == 0) raise<ValueError>("encode_batch: a batch needs at least one row");
    if (values.size() % rows)
        raise<ValueError>("encode_batch: ", values.size(), " values do not split into ", rows, " equal rows");
    const size_t row_length = values.size() / rows;
    const EncodingShape shape = encoder.encoding_shape("encode_batch", row_length, level, scale, slots);

    // The host half, in parallel over the rows; the first failing row's error is the one raised.
    std::vector<double> coefficients(rows * 2 * shape.slots);
    std::vector<std::string> errors(rows);
    parallel_for(rows, [&](size_t r) {
        const std::string op = "encode_batch: row " + std::to_string(r);
        try {
            encoder.scaled_coefficients(op.c_str(), values.data() + r * row_length, row_length, shape,
                                        coefficients.data() + r * 2 * shape.slots);
        } catch (const ValueError& e) {
            errors[r] = e.what();
        }
    });
    for (const std::string& e : errors)
        if (!e.empty()) raise<ValueError>(e);

    const QueuePtr& q = queue ? queue : backend::cpu_queue();
    PlaintextBatch out(*encoder.context(), rows, shape.level, shape.scale, shape.slots, q);
    q->encode(encoder.context()->ring(), span_of(out), coefficients.data(), shape.slots);
    return out;
}

}  // namespace oboro::ckks
