// Batches in device memory (batch.hpp: device(), to_device, to_host) and Evaluator on a queue
// whose batches live there, tested without a GPU: OffsiteQueue (forwarding_queue.hpp) is a device
// queue whose "device memory" is separate host allocations and whose kernels are the CPU queue's.
// Checks: results equal the host-memory path bit for bit, outputs are allocated by the
// queue, copies are deep, at() / to_ciphertexts read back, and mixing memories is a clear error.
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "ckks_test_util.hpp"
#include "error_test_util.hpp"
#include "forwarding_queue.hpp"
#include "oboro/ckks/batch.hpp"
#include "oboro/ckks/batch_encoder.hpp"
#include "oboro/ckks/evaluator.hpp"
#include "oboro/backend/queue.hpp"
#include "oboro/io/serialize.hpp"

namespace {

using namespace oboro::ckks;
using oboro::test::Keys;
using oboro::test::OffsiteQueue;

void expect_same(const CiphertextBatch& device_batch, const CiphertextBatch& host_batch) {
    ASSERT_NE(device_batch.device(), nullptr);
    ASSERT_EQ(host_batch.device(), nullptr);
    const CiphertextBatch back = device_batch.to_host();
    ASSERT_EQ(back.device(), nullptr);
    ASSERT_EQ(back.word_count(), host_batch.word_count());
    EXPECT_TRUE(std::equal(back.data(), back.data() + back.word_count(), host_batch.data()));
    EXPECT_EQ(back.level(), host_batch.level());
    EXPECT_EQ(back.scale(), host_batch.scale());
}

TEST(BatchDeviceMemory, EvaluatorOnDeviceBatchesMatchesHostPath) {
    auto& k = Keys::get("S1");
    const auto& ctx = *k.ctx;
    std::vector<Ciphertext> xs, ys;
    for (int i = 0; i < 3; ++i) {
        xs.push_back(k.encrypt(oboro::test::random_complex(ctx.max_slots(), 1.0, uint64_t(i))));
        ys.push_back(k.encrypt(oboro::test::random_complex(ctx.max_slots(), 1.0, uint64_t(10 + i))));
    }
    const auto ha = CiphertextBatch::from_ciphertexts(ctx, xs), hb = CiphertextBatch::from_ciphertexts(ctx, ys);
    const auto queue = std::make_shared<OffsiteQueue>();
    OffsiteQueue& q = *queue;
    const Evaluator host(k.ctx), dev(k.ctx, queue);
    const auto da = ha.to_device(queue), db = hb.to_device(queue);
    EXPECT_EQ(da.device(), &q);
    EXPECT_EQ(q.allocations, 2u);

    expect_same(dev.add(da, db), host.add(ha, hb));
    expect_same(dev.multiply_relin_rescale(da, db, k.rk), host.multiply_relin_rescale(ha, hb, k.rk));
    expect_same(dev.rescale(dev.relinearize(dev.multiply(da, db), k.rk)),
                host.rescale(host.relinearize(host.multiply(ha, hb), k.rk)));
    expect_same(dev.rotate(da, 1, k.gk), host.rotate(ha, 1, k.gk));
    const auto dm = dev.rotate_many(da, {1, 0, -1}, k.gk), hm = host.rotate_many(ha, {1, 0, -1}, k.gk);
    for (size_t r = 0; r < 3; ++r) expect_same(dm[r], hm[r]);
    CiphertextBatch out;
    dev.multiply_into(da, db, out);
    EXPECT_EQ(out.device(), &q);
    const size_t before = q.allocations;
    dev.multiply_into(da, db, out);  // reused: no new allocation
    EXPECT_EQ(q.allocations, before);

    // read back element by element
    const auto cts = dev.add(da, db).to_ciphertexts();
    const auto expect = host.add(ha, hb).to_ciphertexts();
    for (size_t c = 0; c < cts.size(); ++c)
        EXPECT_TRUE(std::equal(cts[c].data(), cts[c].data() + cts[c].word_count(), expect[c].data()));
}

TEST(BatchDeviceMemory, EncodeBatchWritesStraightIntoDeviceMemory) {
    auto& k = Keys::get("S1");
    const auto queue = std::make_shared<OffsiteQueue>();
    OffsiteQueue& q = *queue;
    const auto values = oboro::test::random_complex(3 * 16, 1.0, 77);
    const PlaintextBatch dp = encode_batch(*k.encoder, values, 3, std::nullopt, std::nullopt, 16, queue);
    EXPECT_EQ(dp.device(), &q);
    EXPECT_EQ(q.allocations, 1u);  // the batch itself, nothing staged in host memory first
    const PlaintextBatch hp = encode_batch(*k.encoder, values, 3, std::nullopt, std::nullopt, 16);
    const PlaintextBatch back = dp.to_host();
    EXPECT_TRUE(std::equal(back.data(), back.data() + back.word_count(), hp.data()));
}

TEST(BatchDeviceMemory, SerializingADeviceBatchReadsItBack) {
    auto& k = Keys::get("S1");
    const auto& ctx = *k.ctx;
    std::vector<Ciphertext> xs;
    for (int i = 0; i < 3; ++i)  // secret-key encryptions: stored with their seeds
        xs.push_back(k.encrypt(oboro::test::random_complex(8, 1.0, uint64_t(30 + i)), std::nullopt, false));
    const auto host = CiphertextBatch::from_ciphertexts(ctx, xs);
    const auto queue = std::make_shared<OffsiteQueue>();
    const auto device = host.to_device(queue);
    EXPECT_EQ(oboro::io::serialize(ctx, device), oboro::io::serialize(ctx, host));
    const auto back = oboro::io::load_ciphertext_batch(ctx, oboro::io::serialize(ctx, device));
    EXPECT_TRUE(std::equal(back.data(), back.data() + back.word_count(), host.data()));
}

TEST(BatchDeviceMemory, CopiesAreDeepAndMemoriesDoNotMix) {
    auto& k = Keys::get("S1");
    const auto& ctx = *k.ctx;
    const auto ha = CiphertextBatch::from_ciphertexts(ctx, std::vector<Ciphertext>{k.encrypt({{0.5, 0.0}})});
    const auto queue = std::make_shared<OffsiteQueue>();
    const Evaluator host(k.ctx), dev(k.ctx, queue);
    const auto da = ha.to_device(queue);
    CiphertextBatch copy = da;
    EXPECT_NE(copy.data(), da.data());
    dev.negate_inplace(copy);
    expect_same(da, ha);  // the original is unchanged
    expect_same(copy, host.negate(ha));

    EXPECT_ERROR(oboro::ValueError, (void)dev.add(da, ha), "operand 'b'", "host memory", "offsite", "to_device");
    EXPECT_ERROR(oboro::ValueError, (void)host.add(ha, da), "operand 'b'", "offsite memory", "cpu", "to_host");
}

// select() on a device batch copies on the device, into the queue's memory, the same words as
// the host selection (a run of consecutive elements and a repeat).
TEST(BatchDeviceMemory, SelectionStaysOnTheDevice) {
    auto& k = Keys::get("S1");
    const auto& ctx = *k.ctx;
    std::vector<Ciphertext> cts;
    for (int c = 0; c < 4; ++c) cts.push_back(k.encrypt({{0.25 * c, 0.0}}));
    const auto ha = CiphertextBatch::from_ciphertexts(ctx, cts);
    const auto queue = std::make_shared<OffsiteQueue>();
    OffsiteQueue& q = *queue;
    const auto da = ha.to_device(queue);
    const size_t before = q.allocations;
    const std::vector<size_t> picks{1, 2, 0, 0};
    const auto sel = da.select(ctx, picks);
    EXPECT_EQ(sel.device(), &q);
    EXPECT_EQ(q.allocations, before + 1);
    expect_same(sel, ha.select(ctx, picks));

    // concatenation on the device: one device allocation, the host result's words; memories do not mix
    const CiphertextBatch* device_parts[] = {&sel, &da};
    const CiphertextBatch host_sel = ha.select(ctx, picks);
    const CiphertextBatch* host_parts[] = {&host_sel, &ha};
    const auto joined = CiphertextBatch::concatenate(ctx, device_parts);
    EXPECT_EQ(joined.device(), &q);
    expect_same(joined, CiphertextBatch::concatenate(ctx, host_parts));
    const CiphertextBatch* mixed[] = {&da, &ha};
    EXPECT_ERROR(oboro::ValueError, CiphertextBatch::concatenate(ctx, mixed), "batch 1", "host memory", "offsite");
}

}  // namespace
