// Serialization of ciphertext batches and encrypted matrices (format version 2 records): bit-exact
// round trips, seeded matrix blocks, the version rule (a version-1 header cannot hold the new
// kinds) and a SerializationError for every kind of bad data specific to them (oversized counts,
// layouts that do not fit, blocks that do not match). The generic cases (truncation, corruption,
// checksum) and the fuzzing loop cover them too (test_io_serialize.cpp, test_io_fuzz.cpp).
#include <gtest/gtest.h>

#include <cstring>

#include "ckks_test_util.hpp"
#include "error_test_util.hpp"
#include "io_test_util.hpp"
#include "oboro/ckks/evaluator.hpp"
#include "oboro/io/serialize.hpp"

namespace oboro::test {
namespace {

using io::Bytes;

bool same_words(const uint64_t* a, const uint64_t* b, size_t n) { return std::memcmp(a, b, n * sizeof(uint64_t)) == 0; }

CiphertextBatch batch_of(Keys& k, size_t count, std::optional<int> level = std::nullopt) {
    std::vector<Ciphertext> cts;
    for (size_t c = 0; c < count; ++c) cts.push_back(k.encrypt(random_complex(8, 1.0, 100 + c), level, false, 8));
    return CiphertextBatch::from_ciphertexts(*k.ctx, cts);
}

class BatchMatrixRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(BatchMatrixRoundTrip, BatchIsBitIdenticalWithItsElementInfo) {
    Keys& k = Keys::get(GetParam());
    for (size_t count : {size_t(1), size_t(5)}) {
        const CiphertextBatch batch = batch_of(k, count, count == 1 ? std::optional<int>(0) : std::nullopt);
        const Bytes b = io::serialize(*k.ctx, batch, io::ArrayInfo{42, {2, 4}, true});
        EXPECT_EQ(io::peek_type(b), io::ObjectType::ciphertext_batch);
        io::ArrayInfo info;
        const CiphertextBatch back = io::load_ciphertext_batch(*k.ctx, b, &info);
        ASSERT_EQ(back.count(), count);
        EXPECT_EQ(back.size(), batch.size());
        EXPECT_EQ(back.level(), batch.level());
        EXPECT_EQ(back.scale(), batch.scale());
        EXPECT_EQ(back.slots(), batch.slots());
        EXPECT_TRUE(same_words(back.data(), batch.data(), batch.word_count()));
        EXPECT_EQ(info.key_id, 42u);
        EXPECT_EQ(info.shape, (std::vector<uint64_t>{2, 4}));
        EXPECT_TRUE(info.is_complex);
        // Bit-packed: smaller than the words in memory.
        EXPECT_LT(b.size(), batch.word_count() * 8);
    }
}

// Fresh secret-key elements keep their seeds in the batch (from_ciphertexts, at) until it is
// written to; serialization then stores the seeds: about half the size, bit-identical on load,
// mixed seeded and unseeded elements allowed, and a loaded batch is again compressible.
TEST_P(BatchMatrixRoundTrip, SeededBatchIsHalfTheSizeAndIdentical) {
    Keys& k = Keys::get(GetParam());
    std::vector<Ciphertext> cts;
    for (size_t c = 0; c < 4; ++c) cts.push_back(k.encrypt(random_complex(8, 1.0, 200 + c), std::nullopt, /*with_public_key=*/c == 3, 8));
    const CiphertextBatch mixed = CiphertextBatch::from_ciphertexts(*k.ctx, cts);  // element 3: public key
    const CiphertextBatch fresh = CiphertextBatch::from_ciphertexts(*k.ctx, std::span(cts).first(3));
    for (size_t c = 0; c < 4; ++c) EXPECT_EQ(mixed.uniform_seed(c).has_value(), c != 3);
    EXPECT_EQ(mixed.at(1).uniform_seed(), cts[1].uniform_seed());
    const Bytes seeded = io::serialize(*k.ctx, fresh);
    const Bytes full = io::serialize(*k.ctx, fresh, {}, /*compress=*/false);
    EXPECT_LT(double(seeded.size()), 0.51 * double(full.size()));
    for (const CiphertextBatch* b : {&mixed, &fresh}) {
        const CiphertextBatch back = io::load_ciphertext_batch(*k.ctx, io::serialize(*k.ctx, *b));
        EXPECT_TRUE(same_words(back.data(), b->data(), b->word_count()));
        for (size_t c = 0; c < b->count(); ++c) EXPECT_EQ(back.uniform_seed(c), b->uniform_seed(c));
        EXPECT_EQ(io::serialize(*k.ctx, back), io::serialize(*k.ctx, *b));
    }
    CiphertextBatch modified = fresh;
    Evaluator(k.ctx).add_inplace(modified, fresh);
    EXPECT_FALSE(modified.uniform_seed(0).has_value());
    EXPECT_EQ(io::serialize(*k.ctx, modified).size(), full.size());
}

TEST_P(BatchMatrixRoundTrip, MatrixBlocksAreSeededAndIdentical) {
    Keys& k = Keys::get(GetParam());
    const io::MatrixLayout layout{io::MatrixMethod::block, 5, 3, 4, 2, 1, 9};
    std::vector<Ciphertext> blocks = {k.encrypt(random_complex(16, 1.0, 1), std::nullopt, false, 16),
                                      k.encrypt(random_complex(16, 1.0, 2), std::nullopt, false, 16)};
    const Bytes seeded = io::serialize_matrix(*k.ctx, layout, blocks);
    const Bytes full = io::serialize_matrix(*k.ctx, layout, blocks, /*compress=*/false);
    EXPECT_LT(double(seeded.size()), 0.52 * double(full.size()));
    for (const Bytes* b : {&seeded, &full}) {
        io::MatrixLayout got;
        const std::vector<Ciphertext> back = io::load_matrix(*k.ctx, *b, &got);
        ASSERT_EQ(back.size(), 2u);
        for (size_t i = 0; i < 2; ++i)
            EXPECT_TRUE(same_words(back[i].data(), blocks[i].data(), blocks[i].word_count()));
        EXPECT_EQ(got.method, layout.method);
        EXPECT_EQ(got.rows, 5u);
        EXPECT_EQ(got.cols, 3u);
        EXPECT_EQ(got.d, 4u);
        EXPECT_EQ(got.grid_rows, 2u);
        EXPECT_EQ(got.grid_cols, 1u);
        EXPECT_EQ(got.key_id, 9u);
    }
}

INSTANTIATE_TEST_SUITE_P(Presets, BatchMatrixRoundTrip, ::testing::Values("S1", "S2"));

struct Tiny {
    Keys k{tiny_parameters()};
};

TEST(BatchMatrixErrors, WrongKindContextAndVersion) {
    Tiny t;
    const Bytes batch = io::serialize(*t.k.ctx, batch_of(t.k, 3), {}, /*compress=*/false);
    EXPECT_ERROR(SerializationError, io::load_ciphertext(*t.k.ctx, batch), "ciphertext batch, not a ciphertext");
    EXPECT_ERROR(SerializationError, io::load_matrix(*t.k.ctx, batch, nullptr), "not a encrypted matrix");
    Keys& s1 = Keys::get("S1");
    EXPECT_ERROR(SerializationError, io::load_ciphertext_batch(*s1.ctx, batch), "other parameters");
    EXPECT_ERROR(ContextMismatch, io::serialize(*s1.ctx, batch_of(t.k, 1)), "another parameter set");
    Bytes b = batch;
    b[8] = 1;  // a version-1 header cannot hold a batch
    reseal(b);
    EXPECT_ERROR(SerializationError, io::load_ciphertext_batch(*t.k.ctx, b), "needs format version 2");
    b = batch;
    b.resize(b.size() - 20);
    reseal(b);
    EXPECT_ERROR(SerializationError, io::load_ciphertext_batch(*t.k.ctx, b), "elements announced");
}

TEST(BatchMatrixErrors, OversizedAndZeroCountsAllocateNothing) {
    Tiny t;
    const Bytes good = io::serialize(*t.k.ctx, batch_of(t.k, 2), {}, /*compress=*/false);
    for (uint64_t count : {uint64_t(0), uint64_t(3), uint64_t(1) << 40, ~uint64_t(0)}) {
        Bytes b = good;
        std::memcpy(b.data() + io::kHeaderSize, &count, 8);
        reseal(b);
        EXPECT_ERROR(SerializationError, io::load_ciphertext_batch(*t.k.ctx, b), "elements announced");
    }
    Bytes b = good;
    b[io::kHeaderSize + 8] = 4;  // 4 polynomials
    reseal(b);
    EXPECT_ERROR(SerializationError, io::load_ciphertext_batch(*t.k.ctx, b), "4 polynomials");
    b = good;
    b[io::kHeaderSize + 32] = 2;  // an undefined flag
    reseal(b);
    EXPECT_ERROR(SerializationError, io::load_ciphertext_batch(*t.k.ctx, b), "unknown flags");
    // Seeded, but the elements have 3 polynomials; and seeded elements announced beyond the data.
    CiphertextBatch sq = Evaluator(t.k.ctx).multiply(batch_of(t.k, 2), batch_of(t.k, 2));
    b = io::serialize(*t.k.ctx, sq);
    b[io::kHeaderSize + 32] = 1;
    reseal(b);
    EXPECT_ERROR(SerializationError, io::load_ciphertext_batch(*t.k.ctx, b), "only 2-polynomial elements");
    b = io::serialize(*t.k.ctx, batch_of(t.k, 2));
    const uint64_t three = 3;
    std::memcpy(b.data() + io::kHeaderSize, &three, 8);
    reseal(b);
    EXPECT_ERROR(SerializationError, io::load_ciphertext_batch(*t.k.ctx, b), "elements announced");
}

TEST(BatchMatrixErrors, LayoutsThatDoNotFit) {
    Tiny t;
    const Context& c = *t.k.ctx;
    const std::vector<Ciphertext> one = {t.k.encrypt(random_complex(16, 1.0, 3), std::nullopt, false, 16)};
    using M = io::MatrixMethod;
    EXPECT_ERROR(ValueError, io::serialize_matrix(c, {M::jiang, 5, 3, 4, 1, 1, 0}, one), "(2, 1) grid");
    EXPECT_ERROR(ValueError, io::serialize_matrix(c, {M::jiang, 3, 3, 3, 1, 1, 0}, one), "d = 3");
    EXPECT_ERROR(ValueError, io::serialize_matrix(c, {M::block, 5, 3, 4, 2, 1, 0}, one), "1 blocks");
    const Bytes good = io::serialize_matrix(c, {M::jiang, 3, 4, 4, 1, 1, 0}, one);
    auto patched = [&](size_t offset, const void* value, size_t len) {
        Bytes b = good;
        std::memcpy(b.data() + io::kHeaderSize + offset, value, len);
        reseal(b);
        return b;
    };
    const uint8_t bad_method = 7;
    EXPECT_ERROR(SerializationError, io::load_matrix(c, patched(0, &bad_method, 1), nullptr), "unknown method 7");
    const uint64_t big = uint64_t(1) << 40;
    EXPECT_ERROR(SerializationError, io::load_matrix(c, patched(17, &big, 8), nullptr), "is not a power of two");
    const uint32_t huge_grid = 1u << 30;
    const uint8_t block = 2;
    Bytes b = patched(0, &block, 1);
    const uint64_t rows = uint64_t(1) << 22;  // with the grid to match: 2^20 blocks in a few hundred bytes
    std::memcpy(b.data() + io::kHeaderSize + 1, &rows, 8);
    const uint32_t rows_grid = uint32_t(rows / 4);
    std::memcpy(b.data() + io::kHeaderSize + 25, &rows_grid, 4);
    reseal(b);
    EXPECT_ERROR(SerializationError, io::load_matrix(c, b, nullptr), "blocks announced");
    EXPECT_ERROR(SerializationError, io::load_matrix(c, patched(25, &huge_grid, 4), nullptr), "grid");
    const uint64_t other_key = 5;
    EXPECT_ERROR(SerializationError, io::load_matrix(c, patched(33, &other_key, 8), nullptr), "does not match");
}

}  // namespace
}  // namespace oboro::test
