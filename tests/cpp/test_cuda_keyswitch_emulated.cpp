// The CUDA hybrid key switching (keyswitch_kernels.hpp: batched ModUp, key inner product,
// ModDown by the fused divide-and-drop) and the ops built on it (relinearize, rotate, hoisted
// rotations) through the CPU grid emulator, bit for bit against the CPU: backend::cpu::key_switch on
// random inputs and keys at every level of S1, S2, S3 and small contexts with multi-prime digits
// and several special primes, then
// Evaluator::relinearize / rotate / rotate_many on real ciphertexts (which also still decrypt).
#include <algorithm>
#include <cmath>
#include <complex>
#include <deque>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ckks_test_util.hpp"
#include "cuda_emulated_util.hpp"
#include "oboro/backend/queue.hpp"
#include "oboro/ckks/context.hpp"
#include "oboro/backend/cpu/keyswitch.hpp"
#include "oboro/math/random.hpp"
#include "oboro/util/error.hpp"

namespace {

using namespace oboro::test::cuda_emu;
namespace kernels = oboro::cuda::kernels;
namespace math = oboro::math;
using oboro::ckks::Context;
using oboro::ckks::KeySwitchKey;
using oboro::cuda::ThreadOrder;

// Uniform canonical residues over the primes `moduli(limb)` for rows of `limbs` limbs, with 0 and
// q-1 at the first two coefficients of each row.
template <typename Mod>
std::vector<uint64_t> random_rows(size_t rows, size_t limbs, size_t n, uint8_t tag, Mod&& modulus_of_limb) {
    math::Seed s{};
    s[0] = tag;
    math::Prng prng(s);
    std::vector<uint64_t> v(rows * n);
    for (size_t r = 0; r < rows; ++r) {
        const uint64_t q = modulus_of_limb(r % limbs);
        for (size_t k = 0; k < n; ++k) v[r * n + k] = k == 0 ? 0 : k == 1 ? q - 1 : prng.uniform(q);
    }
    return v;
}

// A key with random canonical entries (bit-exactness does not need a real key): [digit][b, a][QP].
KeySwitchKey random_key(const Context& ctx, uint8_t tag) {
    KeySwitchKey k = KeySwitchKey::allocate(oboro::ckks::key_basis(ctx, ctx.max_level(), ctx.p_count()), ctx.p_count(),
                                            ctx.level(ctx.max_level()).digits.size(), ctx.n());
    k.context_id = ctx.id();
    const auto v = random_rows(2 * k.digits * k.qp_limbs, k.qp_limbs, ctx.n(), tag, [&](size_t i) {
        return i < ctx.q_count() ? ctx.moduli()[i].value : ctx.p_moduli()[i - ctx.q_count()].value;
    });
    for (size_t p = 0; p < 2 * k.digits; ++p) k.store(p / 2, p % 2, v.data() + p * k.qp_limbs * k.n);
    return k;
}

// Emulated key switch of `count` inputs (count x nq x n), element c with *keys[c].
std::vector<uint64_t> emulated_key_switch(const Context& ctx, int level, const std::vector<uint64_t>& in,
                                          const std::vector<const KeySwitchKey*>& keys,
                                          ThreadOrder order = ThreadOrder::forward) {
    const kernels::KeySwitchHostData h(ctx.ring(), level);
    const uint32_t count = uint32_t(keys.size());
    const uint64_t n = ctx.n(), nq = uint64_t(level) + 1;
    std::deque<oboro::AlignedBuffer<uint64_t>> words;  // the keys as a device holds them
    std::vector<const uint64_t*> key_ptrs;
    for (const auto* k : keys) key_ptrs.push_back(words.emplace_back(k->words()).data());
    std::vector<uint64_t> out(count * 2 * nq * n, 0xABCD),
        scratch(kernels::key_switch_scratch(h.level, count).total(), oboro::cuda::shared_poison);
    kernels::KeySwitchArgs a;
    a.level = h.level;
    a.in = in.data();
    a.in_stride = nq * n;
    a.keys = key_ptrs.data();
    a.key_qp_limbs = keys[0]->qp_limbs;
    a.out = out.data();
    a.count = count;
    a.scratch = scratch.data();
    EmulatedLaunches ops{order};
    kernels::for_each_key_switch_step(a, ops);
    return out;
}

void expect_key_switch_matches_cpu(const Context& ctx, int level, uint32_t count, bool per_element_keys,
                                   ThreadOrder order = ThreadOrder::forward) {
    const size_t n = ctx.n(), nq = size_t(level) + 1;
    const auto in = random_rows(count * nq, nq, n, uint8_t(level * 7 + count),
                                [&](size_t i) { return ctx.moduli()[i].value; });
    std::vector<KeySwitchKey> key_store;
    for (uint32_t c = 0; c < (per_element_keys ? count : 1); ++c) key_store.push_back(random_key(ctx, uint8_t(90 + c)));
    std::vector<const KeySwitchKey*> keys;
    for (uint32_t c = 0; c < count; ++c) keys.push_back(&key_store[per_element_keys ? c : 0]);

    const auto out = emulated_key_switch(ctx, level, in, keys, order);
    for (uint32_t c = 0; c < count; ++c) {
        std::vector<uint64_t> ks0(nq * n), ks1(nq * n);
        oboro::backend::cpu::key_switch(ctx.ring(), level, in.data() + c * nq * n, keys[c]->view(), ks0.data(), ks1.data());
        const uint64_t* got = out.data() + c * 2 * nq * n;
        ASSERT_TRUE(std::equal(ks0.begin(), ks0.end(), got)) << "ks0 of element " << c;
        ASSERT_TRUE(std::equal(ks1.begin(), ks1.end(), got + nq * n)) << "ks1 of element " << c;
    }
}

oboro::ckks::Parameters small_params(std::vector<int> q_bits, int dnum) {
    oboro::ckks::Parameters p;
    p.log_n = 5;
    p.q_bits = std::move(q_bits);
    p.p_bits = {61};
    p.dnum = dnum;
    p.security = oboro::ckks::SecurityLevel::none;
    return p;
}

TEST(CudaKeySwitchEmulated, MatchesCpuKeySwitchOnPresetsAtEveryLevel) {
    for (const std::string preset : {"S1", "S2"}) {
        const auto ctx = Context::create(oboro::ckks::Parameters::preset(preset));
        for (int level = ctx->max_level(); level >= 0; --level) {
            SCOPED_TRACE(preset + " level " + std::to_string(level));
            expect_key_switch_matches_cpu(*ctx, level, 2, false);
        }
    }
}

// Digits of 2 and 3 primes (the last one shorter), digits of unequal lengths (3, 1 and 2 primes,
// the balanced split of a chain of unequal primes), several inputs, a key per element, both thread
// orders.
TEST(CudaKeySwitchEmulated, MultiPrimeDigitsPerElementKeysEveryThreadOrder) {
    auto unequal = small_params({20, 20, 20, 50, 30, 30}, 3);
    ASSERT_EQ(unequal.digit_partition(), (std::vector<int>{3, 1, 2}));
    for (const auto& params : {small_params({30, 25, 25, 25, 25, 25}, 3), small_params({20, 20, 20, 20, 20}, 2), unequal}) {
        const auto ctx = Context::create(params);
        const std::vector<size_t>& digits = ctx->digit_primes();
        ASSERT_GT(*std::max_element(digits.begin(), digits.end()), 1u);
        std::string split;
        for (size_t d : digits) split += " " + std::to_string(d);
        for (int level = ctx->max_level(); level >= 0; --level)
            for (auto order : {ThreadOrder::forward, ThreadOrder::reverse}) {
                SCOPED_TRACE("digits" + split + " level " + std::to_string(level));
                expect_key_switch_matches_cpu(*ctx, level, 3, true, order);
            }
    }
}

// Several special primes: ModDown by INTT + base conversion P -> Q_l + NTT with the fused
// subtraction (a small context with 2 and 3 special primes, and S3's 10 at two levels).
TEST(CudaKeySwitchEmulated, SeveralSpecialPrimesMatchCpu) {
    auto two = small_params({30, 25, 25, 25}, 2), three = small_params({40, 30, 30, 30, 30}, 0);
    two.p_bits = {40, 40};
    three.p_bits = {36, 36, 36};
    for (const auto& params : {two, three}) {
        const auto ctx = Context::create(params);
        for (int level = ctx->max_level(); level >= 0; --level)
            for (auto order : {ThreadOrder::forward, ThreadOrder::reverse}) {
                SCOPED_TRACE("k " + std::to_string(ctx->p_count()) + " level " + std::to_string(level));
                expect_key_switch_matches_cpu(*ctx, level, 2, true, order);
            }
    }
    const auto s3 = Context::create(oboro::ckks::Parameters::preset("S3"));
    for (int level : {s3->max_level(), 1}) {
        SCOPED_TRACE("S3 level " + std::to_string(level));
        expect_key_switch_matches_cpu(*s3, level, 1, false);
    }
}

// multiply_relin_rescale fused (one division by q_l * P), bit for bit the CPU queue's, on random
// size-2 inputs with random keys: S1, S2, a context with two special primes and multi-prime
// digits; b per element and broadcast; without an addend and with one (multiply_add_relin_rescale,
// c per element and broadcast, of 2 polynomials and of 3: lazy relinearization); every level >= 1.
TEST(CudaKeySwitchEmulated, MultiplyRelinRescaleMatchesCpuQueue) {
    auto two = small_params({30, 25, 25, 25}, 2);
    two.p_bits = {40, 40};
    for (const auto& params : {oboro::ckks::Parameters::preset("S1"), oboro::ckks::Parameters::preset("S2"), two}) {
        const auto ctx = Context::create(params);
        const auto key = random_key(*ctx, 7);
        for (int level = ctx->max_level(); level >= 1; --level)
            for (uint32_t b_count : {3u, 1u})
                for (const auto [c_count, c_polys] : {std::pair{0u, 2u}, {3u, 2u}, {1u, 2u}, {3u, 3u}, {1u, 3u}}) {
                    SCOPED_TRACE("log_n " + std::to_string(params.log_n) + " level " + std::to_string(level) +
                                 " b_count " + std::to_string(b_count) + " c_count " + std::to_string(c_count) +
                                 " c_polys " + std::to_string(c_polys));
                    const uint32_t count = 3;
                    const size_t n = ctx->n(), nq = size_t(level) + 1;
                    auto q_of = [&](size_t i) { return ctx->moduli()[i].value; };
                    const auto a = random_rows(count * 2 * nq, nq, n, uint8_t(level), q_of);
                    const auto b = random_rows(b_count * 2 * nq, nq, n, uint8_t(level + 50), q_of);
                    const auto c = random_rows(std::max(c_count, 1u) * c_polys * nq, nq, n, uint8_t(level + 100), q_of);
                    std::vector<uint64_t> expect(count * 2 * (nq - 1) * n);
                    const oboro::backend::BatchSpan expect_span{expect.data(), count, 2, nq - 1, n};
                    const oboro::backend::ConstBatchSpan a_span{a.data(), count, 2, nq, n}, b_span{b.data(), b_count, 2, nq, n},
                        c_span{c.data(), c_count, c_polys, nq, n};
                    if (c_count)
                        oboro::backend::cpu_queue()->multiply_add_relin_rescale(ctx->ring(), expect_span, a_span, b_span,
                                                                                c_span, key.view());
                    else
                        oboro::backend::cpu_queue()->multiply_relin_rescale(ctx->ring(), expect_span, a_span, b_span,
                                                                            key.view());

                    const kernels::KeySwitchHostData h(ctx->ring(), level);
                    const auto key_words = key.words();
                    std::vector<const uint64_t*> key_ptrs(count, key_words.data());
                    std::vector<uint64_t> out(expect.size(), 0xABCD),
                        scratch(kernels::key_switch_scratch(h.level, count, true).total(), oboro::cuda::shared_poison);
                    kernels::MultiplyRelinRescaleArgs m;
                    m.level = h.level;
                    m.a = a.data();
                    m.b = b.data();
                    m.b_count = b_count;
                    if (c_count) {
                        m.c = c.data();
                        m.c_count = c_count;
                        m.c_polys = c_polys;
                    }
                    m.out = out.data();
                    m.keys = key_ptrs.data();
                    m.key_qp_limbs = key.qp_limbs;
                    m.count = count;
                    m.scratch = scratch.data();
                    EmulatedLaunches ops;
                    kernels::for_each_multiply_relin_rescale_step(m, ops);
                    ASSERT_EQ(out, expect);
                }
    }
}

// ---- ciphertext ops on real ciphertexts ------------------------------------------------------

using oboro::ckks::Ciphertext;
using oboro::test::cplx;

struct CiphertextBatch {
    std::vector<uint64_t> data;  // count x polys x nq x n
    uint32_t count = 0;
};

CiphertextBatch batch_of(const std::vector<Ciphertext>& cts) {
    CiphertextBatch b;
    for (const auto& ct : cts) b.data.insert(b.data.end(), ct.data(), ct.data() + ct.size() * ct.limbs() * ct.n());
    b.count = uint32_t(cts.size());
    return b;
}

void expect_element_equals(const std::vector<uint64_t>& out, uint32_t c, const Ciphertext& expect) {
    const size_t words = 2 * expect.limbs() * expect.n();
    ASSERT_EQ(expect.size(), 2u);
    EXPECT_TRUE(std::equal(expect.data(), expect.data() + words, out.begin() + std::ptrdiff_t(c * words)))
        << "element " << c;
}

std::vector<cplx> test_vector(size_t slots, double phase) {
    std::vector<cplx> v(slots);
    for (size_t i = 0; i < slots; ++i) v[i] = {0.5 * std::sin(double(i) + phase), 0.25 * std::cos(phase * double(i))};
    return v;
}

struct OpsFixture {
    oboro::test::Keys& keys;
    const Context& ctx;
    explicit OpsFixture(const std::string& preset) : keys(oboro::test::Keys::get(preset)), ctx(*keys.ctx) {}

    kernels::CiphertextKeySwitchArgs args(const kernels::KeySwitchHostData& h, const CiphertextBatch& in,
                                          std::vector<uint64_t>& out, std::vector<uint64_t>& scratch,
                                          const std::vector<const uint64_t*>& keys_ptrs, uint64_t qp) {
        const uint64_t n = ctx.n();
        out.assign(size_t(in.count) * 2 * h.level.nq * n, 0xABCD);
        scratch.assign(kernels::key_switch_scratch(h.level, in.count).total(), oboro::cuda::shared_poison);
        kernels::CiphertextKeySwitchArgs a;
        a.level = h.level;
        a.in = in.data.data();
        a.out = out.data();
        a.keys = keys_ptrs.data();
        a.key_qp_limbs = qp;
        a.count = in.count;
        a.scratch = scratch.data();
        return a;
    }
};

TEST(CudaKeySwitchEmulated, RelinearizeMatchesEvaluatorOnBatches) {
    for (const std::string preset : {"S1", "S2"}) {
        SCOPED_TRACE(preset);
        OpsFixture f(preset);
        const size_t slots = f.ctx.max_slots();
        std::vector<Ciphertext> products;
        const auto x = test_vector(slots, 0.3), y = test_vector(slots, 1.1);
        const auto cx = f.keys.encrypt(x), cy = f.keys.encrypt(y);
        products.push_back(f.keys.eval->multiply(cx, cy));
        products.push_back(f.keys.eval->multiply(cx, cx));
        std::vector<std::vector<Ciphertext>> batches = {products};
        // one level down too (where the product still fits): the constants of another level
        const auto lx = f.keys.eval->rescale(f.keys.eval->relinearize(products[1], f.keys.rk));
        if (lx.level() >= 1)
            batches.push_back({f.keys.eval->multiply(lx, f.keys.eval->drop_to_level(cy, lx.level()))});
        for (const auto& batch : batches) {
            const int level = batch[0].level();
            const kernels::KeySwitchHostData h(f.ctx.ring(), level);
            const auto in = batch_of(batch);
            const auto key_words = f.keys.rk.words();
            std::vector<const uint64_t*> key_ptrs(in.count, key_words.data());
            std::vector<uint64_t> out, scratch;
            auto a = f.args(h, in, out, scratch, key_ptrs, f.keys.rk.qp_limbs);
            EmulatedLaunches ops;
            kernels::for_each_relinearize_step(a, ops);
            for (uint32_t c = 0; c < in.count; ++c)
                expect_element_equals(out, c, f.keys.eval->relinearize(batch[c], f.keys.rk));
        }
    }
}

// A batch rotated by one step for all, and a batch with a different step (key, permutation) per
// element, as BatchQueue::apply_galois receives it.
TEST(CudaKeySwitchEmulated, RotateMatchesEvaluator) {
    OpsFixture f("S2");
    const size_t slots = f.ctx.max_slots();
    const std::vector<Ciphertext> cts = {f.keys.encrypt(test_vector(slots, 0.2)), f.keys.encrypt(test_vector(slots, 0.9)),
                                         f.keys.encrypt(test_vector(slots, 1.7))};
    const int level = cts[0].level();
    const kernels::KeySwitchHostData h(f.ctx.ring(), level);
    const auto in = batch_of(cts);
    const std::vector<int64_t> steps = {1, -1, 5};
    for (bool per_element : {false, true}) {
        SCOPED_TRACE(per_element ? "a step per element" : "one step");
        std::vector<const uint64_t*> key_ptrs;
        std::deque<oboro::AlignedBuffer<uint64_t>> key_words;
        std::vector<uint32_t> perms;
        for (uint32_t c = 0; c < in.count; ++c) {
            const uint64_t g = f.ctx.galois_element(per_element ? steps[c] : steps[0]);
            key_ptrs.push_back(key_words.emplace_back(f.keys.gk.at(g).words()).data());
            if (per_element || c == 0) {
                const auto& p = f.ctx.automorphism_permutation(g);
                perms.insert(perms.end(), p.begin(), p.end());
            }
        }
        std::vector<uint64_t> out, scratch;
        auto a = f.args(h, in, out, scratch, key_ptrs, f.keys.gk.keys.begin()->second->qp_limbs);
        std::vector<const uint32_t*> table;
        for (uint32_t c = 0; c < in.count; ++c) table.push_back(perms.data() + size_t(c) * f.ctx.n());
        a.perm = perms.data();
        if (per_element) a.perm_table = table.data();
        EmulatedLaunches ops;
        kernels::for_each_rotate_step(a, ops);
        for (uint32_t c = 0; c < in.count; ++c)
            expect_element_equals(out, c, f.keys.eval->rotate(cts[c], per_element ? steps[c] : steps[0], f.keys.gk));
    }
}

// The rotations of `steps` (steps 0 are counted as identities) as the hoisted launch sequences
// take them: permutation, per-element key array and the key's limbs.
struct RotationKeys {
    std::vector<std::vector<const uint64_t*>> key_arrays;
    std::deque<oboro::AlignedBuffer<uint64_t>> key_words;  // the keys as a device holds them
    std::vector<kernels::HoistedRotation> rotations;
    uint32_t identities = 0;
    RotationKeys(const OpsFixture& f, const std::vector<int64_t>& steps, uint32_t count) {
        for (int64_t step : steps) {
            if (step == 0) {
                ++identities;
                continue;
            }
            const uint64_t g = f.ctx.galois_element(step);
            const auto& key = f.keys.gk.at(g);
            key_arrays.emplace_back(count, key_words.emplace_back(key.words()).data());
            rotations.push_back({f.ctx.automorphism_permutation(g).data(), nullptr, key.qp_limbs});
        }
        for (size_t r = 0; r < rotations.size(); ++r) rotations[r].keys = key_arrays[r].data();
    }
};

// The input of the hoisted kernels' tests: two fresh ciphertexts of `preset` (of the vectors
// test_vector(slots, 0.4) and (slots, 2.5)) as one batch, and the key-switching data of their level.
struct HoistedInput {
    OpsFixture f;
    size_t slots;
    std::vector<cplx> v0;  // the first element's vector
    std::vector<Ciphertext> cts;
    kernels::KeySwitchHostData h;
    CiphertextBatch in;
    explicit HoistedInput(const std::string& preset)
        : f(preset), slots(f.ctx.max_slots()), v0(test_vector(slots, 0.4)),
          cts{f.keys.encrypt(v0), f.keys.encrypt(test_vector(slots, 2.5))}, h(f.ctx.ring(), cts[0].level()),
          in(batch_of(cts)) {}
};

// Hoisted rotations of a batch: one ModUp, then per rotation an inner product through the
// permutation, ModDown and the addition: bit for bit Evaluator::rotate_many of each element; and
// the rotated ciphertexts decrypt to the rotated vectors.
TEST(CudaKeySwitchEmulated, HoistedRotationsMatchRotateMany) {
    for (const std::string preset : {"S1", "S2"}) {
        SCOPED_TRACE(preset);
        HoistedInput input(preset);
        auto& [f, slots, v0, cts, h, in] = input;
        const std::vector<int64_t> steps = {1, -1, 5, int64_t(slots) - 1};
        const RotationKeys rk(f, steps, in.count);
        std::vector<std::vector<uint64_t>> outs(steps.size(), std::vector<uint64_t>(in.data.size(), 0xABCD));
        std::vector<uint64_t*> out_ptrs;
        for (auto& o : outs) out_ptrs.push_back(o.data());
        std::vector<uint64_t> unused_out, scratch;
        auto a = f.args(h, in, unused_out, scratch, {}, 0);
        EmulatedLaunches ops;
        kernels::for_each_hoisted_rotation_step(a, rk.rotations.data(), out_ptrs.data(), uint32_t(steps.size()), ops);
        for (uint32_t c = 0; c < in.count; ++c) {
            const auto expect = f.keys.eval->rotate_many(cts[c], steps, f.keys.gk);
            for (size_t r = 0; r < steps.size(); ++r) {
                SCOPED_TRACE("element " + std::to_string(c) + " step " + std::to_string(steps[r]));
                expect_element_equals(outs[r], c, expect[r]);
            }
        }
        // and it decrypts: rotation by 1 of element 0 within the usual CKKS error
        Ciphertext rot = cts[0];
        std::copy(outs[0].begin(), outs[0].begin() + std::ptrdiff_t(rot.size() * rot.limbs() * rot.n()), rot.mutable_data());
        const auto dec = f.keys.decrypt(rot);
        for (size_t i = 0; i < slots; ++i) ASSERT_LT(std::abs(dec[i] - v0[(i + 1) % slots]), 1e-4) << i;
    }
}

// The hoisted sum of rotations of a batch: one ModUp, the inner products accumulated, one
// ModDown, the permuted c0's and the identities added: bit for bit Evaluator::rotate_sum of each
// element (two identities among the steps), and it decrypts to the sum of the rotated vectors.
TEST(CudaKeySwitchEmulated, HoistedSumMatchesRotateSum) {
    for (const std::string preset : {"S1", "S2"}) {
        SCOPED_TRACE(preset);
        HoistedInput input(preset);
        auto& [f, slots, v0, cts, h, in] = input;
        const std::vector<int64_t> steps = {0, 1, 5, 0, -1};
        const RotationKeys rk(f, steps, in.count);
        std::vector<uint64_t> out, scratch, tmp(in.data.size(), 0xABCD);
        auto a = f.args(h, in, out, scratch, {}, 0);
        EmulatedLaunches ops;
        kernels::for_each_hoisted_sum_step(a, rk.rotations.data(), uint32_t(rk.rotations.size()), rk.identities,
                                           tmp.data(), ops);
        for (uint32_t c = 0; c < in.count; ++c) {
            SCOPED_TRACE("element " + std::to_string(c));
            expect_element_equals(out, c, f.keys.eval->rotate_sum(cts[c], steps, f.keys.gk));
        }
        Ciphertext sum = cts[0];
        std::copy(out.begin(), out.begin() + std::ptrdiff_t(sum.size() * sum.limbs() * sum.n()), sum.mutable_data());
        const auto dec = f.keys.decrypt(sum);
        for (size_t i = 0; i < slots; ++i) {
            const auto want = 2.0 * v0[i] + v0[(i + 1) % slots] + v0[(i + 5) % slots] + v0[(i + slots - 1) % slots];
            ASSERT_LT(std::abs(dec[i] - want), 1e-4) << i;
        }
    }
}

}  // namespace
