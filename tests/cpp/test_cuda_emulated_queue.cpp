// The emulated GPU queue (backend/cuda/emulated_queue.hpp): the CUDA queue's host logic and
// kernels, every launch run by the CPU grid emulator, in separate "device" allocations. The
// ckks::Evaluator on it against the Evaluator on the CPU queue, bit for bit, for every op of the
// queue contract, on S1 and on a small context; the raw queue with keys that have no uid (uploaded
// per op, not cached). Batches of 2-3 elements: the emulation is slow.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ckks_test_util.hpp"
#include "oboro/backend/cuda/emulated_queue.hpp"
#include "oboro/backend/queue.hpp"
#include "oboro/ckks/batch.hpp"
#include "oboro/ckks/batch_encoder.hpp"
#include "oboro/ckks/evaluator.hpp"

namespace {

using namespace oboro::ckks;
using oboro::test::Keys;

TEST(CudaEmulatedQueue, IsADeviceQueueWithItsOwnMemory) {
    const auto queue = oboro::cuda::make_emulated_queue();
    EXPECT_EQ(std::string(queue->device_name()), "cuda-emulated");
    EXPECT_FALSE(queue->host_memory());
    auto& keys = Keys::get("S1");
    const std::vector<Ciphertext> cts = {keys.encrypt(oboro::test::random_complex(8, 1.0, 1))};
    const auto host = CiphertextBatch::from_ciphertexts(*keys.ctx, cts);
    const auto dev = host.to_device(queue);
    EXPECT_EQ(dev.device(), queue.get());
    EXPECT_NE(dev.data(), host.data());
    const auto back = dev.to_host();
    EXPECT_EQ(back.device(), nullptr);
    EXPECT_TRUE(std::equal(back.data(), back.data() + back.word_count(), host.data()));
}

// Runs every op on the CPU evaluator (host batches) and on the emulated queue's (device batches)
// and compares the results bit for bit.
class EvaluatorParity {
public:
    explicit EvaluatorParity(Keys& keys)
        : keys_(keys), ctx_(*keys.ctx), queue_(oboro::cuda::make_emulated_queue()), cpu_(keys.ctx),
          emu_(keys.ctx, queue_) {}

    void run(size_t count) {
        std::vector<Ciphertext> xs, ys;
        for (size_t i = 0; i < count; ++i) {
            xs.push_back(keys_.encrypt(oboro::test::random_complex(ctx_.max_slots(), 1.0, i)));
            ys.push_back(keys_.encrypt(oboro::test::random_complex(ctx_.max_slots(), 1.0, 20 + i)));
        }
        const auto ha = CiphertextBatch::from_ciphertexts(ctx_, xs), hb = CiphertextBatch::from_ciphertexts(ctx_, ys);
        const auto da = ha.to_device(queue_), db = hb.to_device(queue_);
        const auto hb1 = CiphertextBatch::from_ciphertexts(ctx_, std::vector<Ciphertext>{ys[0]});
        const auto db1 = hb1.to_device(queue_);

        same(emu_.add(da, db), cpu_.add(ha, hb), "add");
        same(emu_.add(da, db1), cpu_.add(ha, hb1), "add, broadcast right operand");
        same(emu_.sub(da, db), cpu_.sub(ha, hb), "sub");
        same(emu_.negate(da), cpu_.negate(ha), "negate");
        same(emu_.add(da, 0.25), cpu_.add(ha, 0.25), "add scalar");
        same(emu_.sub(da, -1.5), cpu_.sub(ha, -1.5), "sub scalar");
        same(emu_.multiply(da, 0.75), cpu_.multiply(ha, 0.75), "mul scalar");
        same(emu_.multiply_integer(da, -3), cpu_.multiply_integer(ha, -3), "mul scalar (integer)");
        same(emu_.drop_to_level(da, 0), cpu_.drop_to_level(ha, 0), "drop_limbs");

        // tensor, relinearize, rescale, and the fused product
        const auto dprod = emu_.multiply(da, db), hprod = cpu_.multiply(ha, hb);
        same(dprod, hprod, "tensor");
        same(emu_.multiply(da, db1), cpu_.multiply(ha, hb1), "tensor, broadcast right operand");
        const auto drel = emu_.relinearize(dprod, keys_.rk), hrel = cpu_.relinearize(hprod, keys_.rk);
        same(drel, hrel, "relinearize");
        same(emu_.rescale(drel), cpu_.rescale(hrel), "rescale");
        same(emu_.multiply_relin_rescale(da, db, keys_.rk), cpu_.multiply_relin_rescale(ha, hb, keys_.rk),
             "multiply_relin_rescale");
        same(emu_.multiply_relin_rescale(da, db1, keys_.rk), cpu_.multiply_relin_rescale(ha, hb1, keys_.rk),
             "multiply_relin_rescale, broadcast right operand");

        // encoding on the device, then the plaintexts as operands (mul_plain, add / sub of one
        // polynomial), one per element and one for all
        const size_t slots = ctx_.max_slots();
        const auto values = oboro::test::random_complex(count * slots, 1.0, 90);
        const PlaintextBatch dp = encode_batch(*keys_.encoder, values, count, std::nullopt, std::nullopt, slots, queue_);
        const PlaintextBatch hp = encode_batch(*keys_.encoder, values, count, std::nullopt, std::nullopt, slots);
        ASSERT_EQ(dp.device(), queue_.get());
        same(dp, hp, "encode_batch");
        const auto sparse = oboro::test::random_complex(count * 4, 1.0, 91);
        same(encode_batch(*keys_.encoder, sparse, count, 0, std::nullopt, 4, queue_), encode_batch(*keys_.encoder, sparse, count, 0, std::nullopt, 4),
             "encode_batch (4 slots, level 0)");
        same(emu_.multiply(da, dp), cpu_.multiply(ha, hp), "mul_plain");
        same(emu_.add(da, dp), cpu_.add(ha, hp), "add plaintext");
        same(emu_.sub(da, dp), cpu_.sub(ha, hp), "sub plaintext");
        const Plaintext pt = keys_.encoder->encode(oboro::test::random_complex(slots, 1.0, 92));
        const auto hp1 = PlaintextBatch::from_plaintexts(ctx_, std::span<const Plaintext>(&pt, 1));
        same(emu_.multiply(da, hp1.to_device(queue_)), cpu_.multiply(ha, hp1), "mul_plain, broadcast plaintext");

        // automorphisms: one step for all, a step per element (0: a copy; runs of both)
        same(emu_.rotate(da, 1, keys_.gk), cpu_.rotate(ha, 1, keys_.gk), "rotate");
        same(emu_.conjugate(da, keys_.gk), cpu_.conjugate(ha, keys_.gk), "conjugate");
        std::vector<int64_t> per = {1, 0, -1};
        per.resize(count, 0);
        same(emu_.rotate(da, per, keys_.gk), cpu_.rotate(ha, per, keys_.gk), "apply_galois, a step per element");
        std::vector<int64_t> lead = {0, 5, 5};
        lead.resize(count, 1);
        same(emu_.rotate(da, lead, keys_.gk), cpu_.rotate(ha, lead, keys_.gk), "apply_galois, leading step 0");
        same(emu_.rotate(drel, 1, keys_.gk), cpu_.rotate(hrel, 1, keys_.gk), "apply_galois after relinearize");

        // hoisting
        const std::vector<int64_t> many = {1, 0, -1, 5};
        const auto dm = emu_.rotate_many(da, many, keys_.gk), hm = cpu_.rotate_many(ha, many, keys_.gk);
        ASSERT_EQ(dm.size(), hm.size());
        for (size_t r = 0; r < many.size(); ++r) same(dm[r], hm[r], "rotate_hoisted, step " + std::to_string(many[r]));
        same(emu_.rotate_sum(da, {0, 1, 5, 0, -1}, keys_.gk), cpu_.rotate_sum(ha, {0, 1, 5, 0, -1}, keys_.gk),
             "rotate_sum_hoisted");
        same(emu_.rotate_sum(da, {-1}, keys_.gk), cpu_.rotate_sum(ha, {-1}, keys_.gk), "rotate_sum_hoisted, one step");

        // multiply-accumulate: plaintexts, ciphertexts (size-3 accumulator), constants
        {
            auto dacc = emu_.zero_like(da, 2, da.level(), da.scale() * dp.scale());
            auto hacc = cpu_.zero_like(ha, 2, ha.level(), ha.scale() * hp.scale());
            same(dacc, hacc, "fill_zero");
            emu_.multiply_accumulate(dacc, da, dp);
            cpu_.multiply_accumulate(hacc, ha, hp);
            emu_.multiply_accumulate(dacc, db, hp1.to_device(queue_));
            cpu_.multiply_accumulate(hacc, hb, hp1);
            same(dacc, hacc, "mul_plain_add");
            auto dt = emu_.zero_like(da, 3, da.level(), da.scale() * db.scale());
            auto ht = cpu_.zero_like(ha, 3, ha.level(), ha.scale() * hb.scale());
            emu_.multiply_accumulate(dt, da, db);
            cpu_.multiply_accumulate(ht, ha, hb);
            emu_.multiply_accumulate(dt, db, db1);
            cpu_.multiply_accumulate(ht, hb, hb1);
            same(dt, ht, "tensor_add");
            auto dc = emu_.zero_like(da, 2, da.level(), da.scale() * 0x1p30);
            auto hc = cpu_.zero_like(ha, 2, ha.level(), ha.scale() * 0x1p30);
            emu_.multiply_accumulate(dc, da, -0.375);
            cpu_.multiply_accumulate(hc, ha, -0.375);
            same(dc, hc, "mul_scalar_add");
        }

        // sums of products in one launch: 18 terms (past the reduction every 16), plaintexts
        // per element, one for all, and a mix of both (Queue's default); constants on operands
        // above the accumulator's level; two sums at once
        {
            const size_t terms = 18;
            std::vector<const CiphertextBatch *> hs, ds;
            std::vector<const PlaintextBatch *> hps, dps, hp1s, dp1s, mixed_h, mixed_d;
            const auto dp1 = hp1.to_device(queue_);
            std::vector<double> constants;
            for (size_t t = 0; t < terms; ++t) {
                hs.push_back(t % 2 ? &hb : &ha);
                ds.push_back(t % 2 ? &db : &da);
                hps.push_back(&hp);
                dps.push_back(&dp);
                hp1s.push_back(&hp1);
                dp1s.push_back(&dp1);
                mixed_h.push_back(t % 3 ? &hp : &hp1);
                mixed_d.push_back(t % 3 ? &dp : &dp1);
                constants.push_back(0.5 - 0.125 * double(t));
            }
            same(emu_.multiply_plain_sum(ds, dps), cpu_.multiply_plain_sum(hs, hps), "mul_plain_sum, 18 terms");
            same(emu_.multiply_plain_sum(ds, dp1s), cpu_.multiply_plain_sum(hs, hp1s),
                 "mul_plain_sum, 18 terms, broadcast plaintexts");
            same(emu_.multiply_plain_sum(ds, mixed_d), cpu_.multiply_plain_sum(hs, mixed_h),
                 "mul_plain_sum, plaintexts per element and for all");
            const auto dsums = emu_.multiply_plain_sums<CiphertextBatch, PlaintextBatch>({ds, {ds.begin(), ds.begin() + 3}},
                                                                                      {dps, {dp1s.begin(), dp1s.begin() + 3}});
            const auto hsums = cpu_.multiply_plain_sums<CiphertextBatch, PlaintextBatch>({hs, {hs.begin(), hs.begin() + 3}},
                                                                                      {hps, {hp1s.begin(), hp1s.begin() + 3}});
            ASSERT_EQ(dsums.size(), hsums.size());
            for (size_t g = 0; g < dsums.size(); ++g) same(dsums[g], hsums[g], "mul_plain_sums, sum " + std::to_string(g));
            const int below = std::max(0, da.level() - 1);
            auto dc = emu_.zero_like(da, 2, below, da.scale() * 0x1p30);
            auto hc = cpu_.zero_like(ha, 2, below, ha.scale() * 0x1p30);
            emu_.multiply_accumulate(dc, da, 0.25);
            cpu_.multiply_accumulate(hc, ha, 0.25);
            emu_.multiply_accumulate(dc, ds, constants);
            cpu_.multiply_accumulate(hc, hs, constants);
            same(dc, hc, "mul_scalar_sum, 18 terms, operands above the accumulator's level");
        }

        // double hoisting: the extended basis Q_level * P
        {
            const auto dx = emu_.extend(da), hx = cpu_.extend(ha);
            same(dx, hx, "extend");
            same(emu_.mod_down(dx), cpu_.mod_down(hx), "mod_down of an extended batch");
            const std::vector<int64_t> ext_steps = {1, 0, 5};
            const auto de = emu_.rotate_many_extended(da, ext_steps, keys_.gk);
            const auto he = cpu_.rotate_many_extended(ha, ext_steps, keys_.gk);
            ASSERT_EQ(de.size(), he.size());
            for (size_t r = 0; r < ext_steps.size(); ++r)
                same(de[r], he[r], "rotate_hoisted_extended, step " + std::to_string(ext_steps[r]));
            const Plaintext w = keys_.encoder->encode_extended(oboro::test::random_complex(slots, 1.0, 93), da.level(),
                                                               0x1p30, slots);
            const auto hw = PlaintextBatch::from_plaintexts(ctx_, std::span<const Plaintext>(&w, 1));
            auto dacc = emu_.zero_like(da, 2, da.level(), da.scale() * w.scale(), Basis::qp);
            auto hacc = cpu_.zero_like(ha, 2, ha.level(), ha.scale() * w.scale(), Basis::qp);
            for (size_t r = 0; r < ext_steps.size(); ++r) {
                emu_.multiply_accumulate(dacc, de[r], hw.to_device(queue_));
                cpu_.multiply_accumulate(hacc, he[r], hw);
            }
            same(dacc, hacc, "mul_plain_add over Q*P");
            // an operand over Q*P: its rotations (c1 alone divided by P) and its rescale (one
            // division by q_level * P), the CPU queue's algorithms word for word
            const auto dre = emu_.rotate_many_extended(dacc, ext_steps, keys_.gk);
            const auto hre = cpu_.rotate_many_extended(hacc, ext_steps, keys_.gk);
            ASSERT_EQ(dre.size(), hre.size());
            for (size_t r = 0; r < ext_steps.size(); ++r)
                same(dre[r], hre[r], "rotate_hoisted_from_extended, step " + std::to_string(ext_steps[r]));
            if (dacc.level() >= 1) same(emu_.rescale(dacc), cpu_.rescale(hacc), "mod_down_rescale");
            same(emu_.sub(emu_.add(de[0], de[2]), emu_.negate(de[1])), cpu_.sub(cpu_.add(he[0], he[2]), cpu_.negate(he[1])),
                 "add, sub, negate over Q*P");
            same(emu_.mod_down(dacc), cpu_.mod_down(hacc), "mod_down");
        }

        // rotation keys at different levels in one hoisted call (each rotation reads its own key's
        // limbs), and in one batched rotation with a step per element
        {
            const int low = ctx_.max_level() - 1;
            GaloisKeys mixed = keys_.keygen->galois_keys({1}, false);
            keys_.keygen->add_galois_keys(mixed, {5, -1}, false, low);
            const auto dl = emu_.drop_to_level(da, low), hl = cpu_.drop_to_level(ha, low);
            const std::vector<int64_t> steps = {1, 5, -1};
            const auto dm2 = emu_.rotate_many(dl, steps, mixed), hm2 = cpu_.rotate_many(hl, steps, mixed);
            for (size_t r = 0; r < steps.size(); ++r)
                same(dm2[r], hm2[r], "rotate_hoisted, keys at two levels, step " + std::to_string(steps[r]));
            same(emu_.rotate_sum(dl, steps, mixed), cpu_.rotate_sum(hl, steps, mixed), "rotate_sum, keys at two levels");
            const auto de2 = emu_.rotate_many_extended(dl, steps, mixed), he2 = cpu_.rotate_many_extended(hl, steps, mixed);
            for (size_t r = 0; r < steps.size(); ++r) same(de2[r], he2[r], "rotate_hoisted_extended, keys at two levels");
            std::vector<int64_t> each = {5, 1, -1};
            each.resize(count, 1);
            same(emu_.rotate(dl, each, mixed), cpu_.rotate(hl, each, mixed), "apply_galois, keys at two levels");
        }
    }

private:
    // d (in the emulated queue's memory) equals h (host memory) word for word, with equal
    // metadata.
    template <typename Batch> void same(const Batch& d, const Batch& h, const std::string& what) {
        SCOPED_TRACE(what);
        ASSERT_EQ(d.device(), queue_.get());
        ASSERT_EQ(h.device(), nullptr);
        ASSERT_EQ(d.count(), h.count());
        ASSERT_EQ(d.polys(), h.polys());
        ASSERT_EQ(d.level(), h.level());
        ASSERT_EQ(d.scale(), h.scale());
        const auto back = d.to_host();
        ASSERT_EQ(back.word_count(), h.word_count());
        EXPECT_TRUE(std::equal(back.data(), back.data() + back.word_count(), h.data()));
    }

    Keys& keys_;
    const Context& ctx_;
    QueuePtr queue_;
    Evaluator cpu_, emu_;
};

TEST(CudaEmulatedQueue, EvaluatorMatchesCpuOnS1) { EvaluatorParity(Keys::get("S1")).run(2); }

TEST(CudaEmulatedQueue, EvaluatorMatchesCpuOnSmallContext) {
    Keys keys(oboro::test::small_parameters());
    EvaluatorParity(keys).run(3);
}

// Two special primes: ModDown and the fused rescale take the general division (base conversion
// from P), and the key's digits are two.
TEST(CudaEmulatedQueue, EvaluatorMatchesCpuWithTwoSpecialPrimes) {
    auto params = oboro::test::small_parameters();
    params.q_bits = {60, 45, 50, 50};
    params.p_bits = {61, 61};
    Keys keys(params);
    ASSERT_EQ(keys.ctx->p_count(), 2u);
    EvaluatorParity(keys).run(3);
}

// The raw queue with keys that have no uid (uploaded for each op, freed when the next key switch
// starts) against the CPU queue: relinearize, multiply_relin_rescale and apply_galois back to back
// on the same key, then once more (the cache must not have kept the first upload).
TEST(CudaEmulatedQueue, KeysWithoutUidMatchCpuQueue) {
    using oboro::backend::BatchSpan;
    using oboro::backend::ConstBatchSpan;
    Keys keys(oboro::test::small_parameters());
    const auto& ctx = *keys.ctx;
    const size_t count = 2, limbs = size_t(ctx.max_level()) + 1, n = ctx.n(), poly = limbs * n;
    std::vector<Ciphertext> cts;
    for (size_t i = 0; i < count; ++i) cts.push_back(keys.encrypt(oboro::test::random_complex(ctx.max_slots(), 1.0, i + 7)));
    const auto a = CiphertextBatch::from_ciphertexts(ctx, cts);
    const auto queue = oboro::cuda::make_emulated_queue();
    auto& cpu = *oboro::backend::cpu_queue();

    oboro::backend::KeySwitchKeyView rk = keys.rk.view(), gk = keys.gk.at(ctx.galois_element(1)).view();
    rk.uid = gk.uid = 0;
    const uint32_t* perm = ctx.automorphism_permutation(ctx.galois_element(1)).data();
    const std::vector<const uint32_t*> perms = {perm, nullptr};
    const std::vector<const oboro::backend::KeySwitchKeyView*> gks = {&gk, nullptr};

    const auto da = queue->allocate(a.word_count()), d3 = queue->allocate(count * 3 * poly),
               d2 = queue->allocate(count * 2 * poly), dr = queue->allocate(count * 2 * (poly - n));
    queue->copy_to_device(da.get(), a.data(), a.word_count());
    std::vector<uint64_t> e3(count * 3 * poly), e2(count * 2 * poly), er(count * 2 * (poly - n));
    auto download = [&](const std::shared_ptr<uint64_t>& d, size_t words) {
        std::vector<uint64_t> v(words);
        queue->copy_to_host(v.data(), d.get(), words);
        return v;
    };
    const ConstBatchSpan ha{a.data(), count, 2, limbs, n}, dA{da.get(), count, 2, limbs, n};
    for (int round = 0; round < 2; ++round) {
        SCOPED_TRACE("round " + std::to_string(round));
        queue->tensor(ctx.ring(), {d3.get(), count, 3, limbs, n}, dA, dA);
        queue->relinearize(ctx.ring(), {d2.get(), count, 2, limbs, n}, {d3.get(), count, 3, limbs, n}, rk);
        cpu.tensor(ctx.ring(), {e3.data(), count, 3, limbs, n}, ha, ha);
        cpu.relinearize(ctx.ring(), {e2.data(), count, 2, limbs, n}, {e3.data(), count, 3, limbs, n}, rk);
        ASSERT_EQ(download(d2, e2.size()), e2) << "relinearize";
        queue->multiply_relin_rescale(ctx.ring(), {dr.get(), count, 2, limbs - 1, n}, dA, dA, rk);
        cpu.multiply_relin_rescale(ctx.ring(), {er.data(), count, 2, limbs - 1, n}, ha, ha, rk);
        ASSERT_EQ(download(dr, er.size()), er) << "multiply_relin_rescale";
        queue->apply_galois(ctx.ring(), {d2.get(), count, 2, limbs, n}, dA, perms.data(), gks.data());
        cpu.apply_galois(ctx.ring(), {e2.data(), count, 2, limbs, n}, ha, perms.data(), gks.data());
        ASSERT_EQ(download(d2, e2.size()), e2) << "apply_galois";
    }
}

// The device caches a rotation's permutation by its automorphism, not by the host table's address:
// the same host buffer holding first one element's permutation and then another's (as a table of
// a later context of the same parameters may sit where an earlier one's was) rotates by each.
TEST(CudaEmulatedQueue, PermutationsAreCachedByAutomorphismNotAddress) {
    using oboro::backend::ConstBatchSpan;
    auto& keys = Keys::get("S1");
    const auto& ctx = *keys.ctx;
    const size_t limbs = size_t(ctx.max_level()) + 1, n = ctx.n();
    const std::vector<Ciphertext> cts = {keys.encrypt(oboro::test::random_complex(ctx.max_slots(), 1.0, 3))};
    const auto a = CiphertextBatch::from_ciphertexts(ctx, cts);
    const auto queue = oboro::cuda::make_emulated_queue();
    const auto da = queue->allocate(a.word_count()), dout = queue->allocate(a.word_count());
    queue->copy_to_device(da.get(), a.data(), a.word_count());
    std::vector<uint32_t> table;  // one host buffer, reused
    for (int64_t step : {1, 5}) {
        SCOPED_TRACE("step " + std::to_string(step));
        const uint64_t g = ctx.galois_element(step);
        const auto& perm = ctx.automorphism_permutation(g);
        const uint32_t* before = table.data();
        table.assign(perm.begin(), perm.end());
        if (step != 1) ASSERT_EQ(table.data(), before);  // the same address as the first step's table
        const oboro::backend::KeySwitchKeyView key = keys.gk.at(g).view();
        const uint32_t* perms[] = {table.data()};
        const oboro::backend::KeySwitchKeyView* ks[] = {&key};
        queue->apply_galois(ctx.ring(), {dout.get(), 1, 2, limbs, n}, ConstBatchSpan{da.get(), 1, 2, limbs, n}, perms, ks);
        std::vector<uint64_t> got(a.word_count()), want(a.word_count());
        queue->copy_to_host(got.data(), dout.get(), got.size());
        oboro::backend::cpu_queue()->apply_galois(ctx.ring(), {want.data(), 1, 2, limbs, n},
                                                  ConstBatchSpan{a.data(), 1, 2, limbs, n}, perms, ks);
        ASSERT_EQ(got, want);
    }
}

// ModRaise on the device (its own launches, not the host round trip of backend::Queue's default)
// gives the CPU queue's words, to every target level, on S1 and on a small context.
TEST(CudaEmulatedQueue, ModRaiseMatchesCpu) {
    for (const char* which : {"S1", "small"}) {
        SCOPED_TRACE(which);
        Keys own(oboro::test::small_parameters());
        Keys& keys = std::string(which) == "S1" ? Keys::get("S1") : own;
        const auto& ctx = *keys.ctx;
        std::vector<Ciphertext> cts;
        for (int i = 0; i < 3; ++i) cts.push_back(keys.encrypt(oboro::test::random_complex(ctx.max_slots(), 1.0, 40 + i), 0));
        const auto host = CiphertextBatch::from_ciphertexts(ctx, cts);
        const auto queue = oboro::cuda::make_emulated_queue();
        const Evaluator cpu(keys.ctx), emu(keys.ctx, queue);
        const auto dev = host.to_device(queue);
        for (int level = 1; level <= ctx.max_level(); ++level) {
            const auto want = cpu.mod_raise(host, level), got = emu.mod_raise(dev, level).to_host();
            ASSERT_EQ(got.level(), level);
            ASSERT_TRUE(std::equal(got.data(), got.data() + got.word_count(), want.data())) << "level " << level;
        }
    }
}

// The device keeps a key's copy while a copy of the key lives and lets it go before it uploads
// another once every copy is gone: a process that makes keys again and again does not fill the
// device. Copies of a key (and the key sets that share it) keep it.
TEST(CudaEmulatedQueue, KeysOfDeadKeysLeaveTheDevice) {
    Keys keys(oboro::test::small_parameters());
    const auto& ctx = *keys.ctx;
    const std::vector<Ciphertext> cts = {keys.encrypt(oboro::test::random_complex(ctx.max_slots(), 1.0, 5))};
    const auto queue = oboro::cuda::make_emulated_queue();
    const auto dev = CiphertextBatch::from_ciphertexts(ctx, cts).to_device(queue);
    const Evaluator emu(keys.ctx, queue);
    KeyGenerator& keygen = *keys.keygen;  // the keys' secret: every relinearization key is right
    auto relinearize_with = [&](const RelinKey& rk) { (void)emu.relinearize(emu.multiply(dev, dev), rk); };

    EXPECT_EQ(queue->cached_key_bytes(), 0u);
    std::optional<RelinKey> first = keygen.relin_key();
    const size_t one = first->view().words() * 8;
    relinearize_with(*first);
    EXPECT_EQ(queue->cached_key_bytes(), one);
    const RelinKey copy = *first;  // a copy keeps the device's copy
    first.reset();
    relinearize_with(keygen.relin_key());  // a second key, alive only during the call
    EXPECT_EQ(queue->cached_key_bytes(), 2 * one);
    relinearize_with(copy);  // still cached: nothing uploaded, nothing let go
    EXPECT_EQ(queue->cached_key_bytes(), 2 * one);
    relinearize_with(keygen.relin_key());  // uploading a third lets the second go
    EXPECT_EQ(queue->cached_key_bytes(), 2 * one);
    const auto want = Evaluator(keys.ctx).relinearize(Evaluator(keys.ctx).multiply(
        CiphertextBatch::from_ciphertexts(ctx, cts), CiphertextBatch::from_ciphertexts(ctx, cts)), copy);
    const auto got = emu.relinearize(emu.multiply(dev, dev), copy).to_host();
    EXPECT_TRUE(std::equal(got.data(), got.data() + got.word_count(), want.data()));
}

}  // namespace
