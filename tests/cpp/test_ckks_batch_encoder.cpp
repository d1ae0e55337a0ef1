// Batched encoding (batch_encoder.hpp) on the CPU queue: every element bit for bit
// Encoder::encode's plaintext of its row, on several parameter sets, at the top level and level
// 0, with full and sparse slots, zero rows and coefficients beyond 2^63; and every error case,
// raised before anything is allocated or enqueued.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ckks_test_util.hpp"
#include "error_test_util.hpp"
#include "oboro/ckks/batch_encoder.hpp"

namespace oboro::test {
namespace {

// rows x row_length values: random rows, a zero row, and (huge) a row scaled up by 2^30.
std::vector<cplx> rows_of(size_t rows, size_t row_length, bool huge) {
    std::vector<cplx> v;
    for (size_t r = 0; r < rows; ++r) {
        auto row = random_complex(row_length, 1.0, 300 + r);
        if (r == 1) std::fill(row.begin(), row.end(), cplx(0, 0));
        if (huge && r == 2)
            for (auto& x : row) x *= 0x1p30;
        v.insert(v.end(), row.begin(), row.end());
    }
    return v;
}

void expect_rows_encoded(const ContextPtr& ctx, std::optional<int> level, std::optional<double> scale,
                         std::optional<size_t> slots, bool huge) {
    const Encoder encoder(ctx);
    const size_t rows = 4, row_length = slots.value_or(ctx->max_slots());
    const auto values = rows_of(rows, row_length, huge);
    const PlaintextBatch batch = encode_batch(encoder, values, rows, level, scale, slots);
    ASSERT_EQ(batch.count(), rows);
    ASSERT_EQ(batch.device(), nullptr);
    for (size_t r = 0; r < rows; ++r) {
        SCOPED_TRACE("row " + std::to_string(r));
        const std::vector<cplx> row(values.begin() + long(r * row_length), values.begin() + long((r + 1) * row_length));
        const Plaintext pt = encoder.encode(row, level, scale, slots);
        EXPECT_EQ(batch.level(), pt.level());
        EXPECT_EQ(batch.scale(), pt.scale());
        EXPECT_EQ(batch.slots(), pt.slots());
        EXPECT_TRUE(std::equal(pt.data(), pt.data() + pt.word_count(), batch.poly(r, 0)));
    }
}

TEST(BatchEncoder, EachElementIsEncodersPlaintext) {
    for (const auto& params : {Parameters::preset("S1"), Parameters::preset("S2"), small_parameters()}) {
        const auto ctx = Context::create(params);
        SCOPED_TRACE("log_n " + std::to_string(params.log_n));
        for (std::optional<int> level : {std::optional<int>(), std::optional<int>(0)}) {
            expect_rows_encoded(ctx, level, std::nullopt, std::nullopt, false);  // full slots, default scale
            expect_rows_encoded(ctx, level, std::nullopt, 4, false);             // sparse
        }
    }
}

TEST(BatchEncoder, CoefficientsBeyond2To63AreExact) {
    // S2 at the top level: log2 Q = 180; values up to 2^30 at scale 2^50 give coefficients near 2^80
    const auto ctx = Context::create(Parameters::preset("S2"));
    expect_rows_encoded(ctx, std::nullopt, 0x1p50, std::nullopt, true);
    expect_rows_encoded(ctx, std::nullopt, 0x1p50, 8, true);
}

// The encoders' rounding (Encoder::scaled_coefficients, which encode and the batch encoder share)
// is std::round to the bit, the sign of zero included: with one slot and scale 1 the coefficients
// are the value's real and imaginary parts themselves. Halves both ways, the doubles next to
// them, integers and halves at 2^52 and beyond, tiny values and negative zero.
TEST(Encoder, RoundsHalvesAwayFromZeroToTheBit) {
    Keys& K = Keys::get("S1");
    const double below_half = std::nextafter(0.5, 0.0), above_half = std::nextafter(0.5, 1.0);
    const std::vector<double> xs = {0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, below_half, -below_half,
                                    above_half, -above_half, 1e-300, -1e-300, 0x1p52 - 0.5, -(0x1p52 - 0.5),
                                    0x1p52 - 1, 0x1p52, 0x1p52 + 2, -0x1p53, 0x1p62 + 1024, 123456.49999999999,
                                    -98765.5, 7.0, -7.0};
    const ckks::EncodingShape shape{K.ctx->max_level(), 1.0, 1};
    for (size_t i = 0; i + 1 < xs.size(); ++i) {
        const cplx value(xs[i], xs[i + 1]);
        double out[2];
        K.encoder->scaled_coefficients("encode", &value, 1, shape, out);
        for (int part = 0; part < 2; ++part) {
            const double x = xs[i + size_t(part)], want = std::round(x);
            EXPECT_EQ(out[part], want) << x;
            EXPECT_EQ(std::signbit(out[part]), std::signbit(want)) << x;
        }
    }
}

TEST(BatchEncoder, Errors) {
    const auto ctx = Context::create(small_parameters());
    const Encoder encoder(ctx);
    const size_t slots = ctx->max_slots();
    const auto values = rows_of(3, slots, false);
    EXPECT_ERROR(ValueError, encode_batch(encoder, values, 0), "at least one row");
    EXPECT_ERROR(ValueError, encode_batch(encoder, std::span(values).first(values.size() - 1), 3), "equal rows");
    EXPECT_ERROR(ValueError, encode_batch(encoder, values, 1), "do not fit", std::to_string(slots));
    EXPECT_ERROR(ValueError, encode_batch(encoder, values, 3, std::nullopt, std::nullopt, 3), "power of two");
    EXPECT_ERROR(LevelMismatch, encode_batch(encoder, values, 3, ctx->max_level() + 1), "level");
    EXPECT_ERROR(ValueError, encode_batch(encoder, values, 3, std::nullopt, 0.5), "scale");
    auto bad = values;
    bad[2 * slots + 1] = cplx(std::numeric_limits<double>::quiet_NaN(), 0);
    EXPECT_ERROR(ValueError, encode_batch(encoder, bad, 3), "row 2", "not finite");
    bad = values;
    bad[slots] = cplx(0x1p200, 0);
    EXPECT_ERROR(ValueError, encode_batch(encoder, bad, 3), "row 1", "beyond the modulus");
}

}  // namespace
}  // namespace oboro::test
