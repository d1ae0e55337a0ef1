// The CUDA element-wise kernels on a real GPU, compared bit for bit with the CPU grid emulation of
// the same per-thread code and with plain CPU loops. Skips itself (ctest shows "Not Run
// (Skipped)") when built without a linkable CUDA runtime or when no GPU is present.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "oboro/backend/cuda/elementwise_kernels.hpp"
#include "oboro/backend/cuda/grid_emulator.hpp"
#include "oboro/math/modarith.hpp"
#include "oboro/math/primes.hpp"
#include "oboro/math/random.hpp"

#include "oboro/backend/cpu/poly_ops.hpp"
#include "oboro/ckks/context.hpp"
#include "oboro/backend/cpu/keyswitch.hpp"
#include "oboro/math/ntt.hpp"

#if defined(OBORO_WITH_CUDA_RUNTIME)
#include "oboro/backend/cuda/base_conversion.hpp"
#include "oboro/backend/cuda/batch_queue.hpp"
#include "oboro/backend/cuda/elementwise.hpp"
#include "oboro/backend/cuda/keyswitch.hpp"
#include "oboro/backend/cuda/ntt.hpp"
#endif
#include "ckks_test_util.hpp"
#include "oboro/ckks/batch_encoder.hpp"
#include "oboro/ckks/evaluator.hpp"

namespace {

namespace kernels = oboro::cuda::kernels;
namespace math = oboro::math;

class CudaDevice : public ::testing::Test {
protected:
    void SetUp() override {
#if !defined(OBORO_WITH_CUDA_RUNTIME)
        GTEST_SKIP() << "SKIPPED: no CUDA GPU found (built without the CUDA runtime: OBORO_CUDA=OFF, "
                        "no nvcc, or no linkable cudart)";
#else
        if (oboro::cuda::device_count() == 0)
            GTEST_SKIP() << "SKIPPED: no CUDA GPU found (" << oboro::cuda::device_summary() << ")";
        std::printf("CUDA: %s\n", oboro::cuda::device_summary().c_str());
#endif
    }
};

template <typename W> std::vector<W> moduli() {
    std::vector<W> q;
    const std::vector<int> sizes = sizeof(W) == 8 ? std::vector<int>{62, 60, 50, 36} : std::vector<int>{30, 28, 20};
    for (int bits : sizes) q.push_back(W(math::generate_ntt_primes(bits, 1 << 12, 1, {})[0]));
    return q;
}

template <typename W> std::vector<W> random_rows(math::Prng& prng, const std::vector<W>& q, uint32_t rows, uint32_t n) {
    std::vector<W> v(size_t(rows) * n);
    for (uint32_t r = 0; r < rows; ++r)
        for (uint32_t i = 0; i < n; ++i) {
            const W m = q[r % q.size()];
            v[size_t(r) * n + i] = i < 2 ? W(i) : i < 4 ? m - 1 : W(prng.uniform(m));
        }
    return v;
}

template <typename W> void check_mul_add() {
#if defined(OBORO_WITH_CUDA_RUNTIME)
    const auto q = moduli<W>();
    const uint32_t limbs = uint32_t(q.size()), n = 1 << 12, rows = 3 * limbs;
    math::Seed seed{};
    seed[0] = 42;
    math::Prng prng(seed);
    const auto a = random_rows(prng, q, rows, n), b = random_rows(prng, q, rows, n), c = random_rows(prng, q, rows, n);

    std::vector<W> gpu(a.size());
    oboro::cuda::mul_add_mod_host(gpu.data(), a.data(), b.data(), c.data(), q.data(), limbs, rows, n);

    std::vector<math::Barrett<W>> br;
    for (W m : q) br.emplace_back(m);
    std::vector<W> emu(a.size());
    kernels::MulAddModArgs<W> args;
    args.out = emu.data(); args.a = a.data(); args.b = b.data(); args.c = c.data();
    args.moduli = br.data(); args.n = n; args.rows = rows; args.limbs = limbs;
    oboro::cuda::emulate_grid(kernels::elementwise_shape(n, rows),
                              [&](const oboro::cuda::ThreadIndex& t) { kernels::mul_add_mod_thread(t, args); });
    for (size_t k = 0; k < a.size(); ++k) {
        const W m = q[(k / n) % limbs];
        ASSERT_EQ(gpu[k], emu[k]) << "index " << k;
        ASSERT_EQ(gpu[k], W((math::mul_wide(a[k], b[k]) + c[k]) % m)) << "index " << k;
    }

    std::vector<W> s(limbs);
    for (uint32_t l = 0; l < limbs; ++l) s[l] = W(prng.uniform(q[l]));
    oboro::cuda::scalar_mul_add_mod_host(gpu.data(), a.data(), c.data(), s.data(), q.data(), limbs, rows, n);
    for (size_t k = 0; k < a.size(); ++k) {
        const uint32_t l = uint32_t((k / n) % limbs);
        ASSERT_EQ(gpu[k], W((math::mul_wide(a[k], s[l]) + c[k]) % q[l])) << "index " << k;
    }
#endif
}

TEST_F(CudaDevice, MulAddModWord64) { check_mul_add<uint64_t>(); }

// The batched NTT on the GPU against math::ntt_forward / ntt_inverse, bit for bit: several rows
// with different primes (62 to 30 bits), inputs at the lazy bounds ([0, 4q) forward, [0, 2q) inverse).
TEST_F(CudaDevice, NttMatchesCpuBitForBit) {
#if defined(OBORO_WITH_CUDA_RUNTIME)
    for (uint32_t log_n : {4u, 10u, 12u, 13u, 14u, 15u, 16u, 17u}) {
        SCOPED_TRACE("log_n " + std::to_string(log_n));
        const uint32_t n = 1u << log_n, limbs = 5, polys = 3;
        std::vector<math::NttTables> t;
        for (int bits : {62, 60, 50, 40, 30}) t.emplace_back(math::generate_ntt_primes(bits, n, 1)[0], n);
        math::Seed seed{};
        seed[0] = uint8_t(log_n);
        math::Prng prng(seed);
        for (bool forward : {true, false}) {
            std::vector<uint64_t> v(size_t(polys) * limbs * n);
            for (size_t k = 0; k < v.size(); ++k) {
                const uint64_t top = (forward ? 4 : 2) * t[(k / n) % limbs].q;
                v[k] = k % n == 3 ? top - 1 : prng.uniform(top);
            }
            std::vector<uint64_t> gpu = v;
            if (forward) oboro::cuda::ntt_forward_host(gpu.data(), t.data(), limbs, polys);
            else oboro::cuda::ntt_inverse_host(gpu.data(), t.data(), limbs, polys);
            for (size_t r = 0; r < size_t(polys) * limbs; ++r) {
                if (forward) math::ntt_forward(v.data() + r * n, t[r % limbs]);
                else math::ntt_inverse(v.data() + r * n, t[r % limbs]);
            }
            ASSERT_EQ(gpu, v) << (forward ? "forward" : "inverse");
        }
    }
#endif
}
// Every launch plan bench_gpu --ntt-plans times (kernels::candidate_ntt_plans: splits, tile sizes,
// threads per block) gives the CPU's transform bit for bit on the GPU, forward and inverse.
TEST_F(CudaDevice, NttEveryPlanMatchesCpu) {
#if defined(OBORO_WITH_CUDA_RUNTIME)
    for (uint32_t log_n : {12u, 14u, 16u}) {
        const uint32_t n = 1u << log_n, limbs = 3, polys = 2;
        std::vector<math::NttTables> t;
        for (int bits : {60, 50, 40}) t.emplace_back(math::generate_ntt_primes(bits, n, 1)[0], n);
        math::Seed seed{};
        seed[0] = uint8_t(log_n + 100);
        math::Prng prng(seed);
        std::vector<uint64_t> v(size_t(polys) * limbs * n);
        for (size_t k = 0; k < v.size(); ++k) v[k] = prng.uniform(t[(k / n) % limbs].q);
        std::vector<uint64_t> want_forward = v, want_inverse = v;
        for (size_t r = 0; r < size_t(polys) * limbs; ++r) {
            math::ntt_forward(want_forward.data() + r * n, t[r % limbs]);
            math::ntt_inverse(want_inverse.data() + r * n, t[r % limbs]);
        }
        for (const kernels::NttPlan& plan : kernels::candidate_ntt_plans(log_n)) {
            SCOPED_TRACE("log_n " + std::to_string(log_n) + " split " + std::to_string(plan.split) + " tile " +
                         std::to_string(plan.tile_columns << plan.split) + " threads " + std::to_string(plan.threads));
            std::vector<uint64_t> gpu = v;
            oboro::cuda::ntt_forward_host(gpu.data(), t.data(), limbs, polys, &plan);
            ASSERT_EQ(gpu, want_forward);
            gpu = v;
            oboro::cuda::ntt_inverse_host(gpu.data(), t.data(), limbs, polys, &plan);
            ASSERT_EQ(gpu, want_inverse);
        }
    }
#endif
}

// The fused rescale on the GPU against backend::cpu::rescale_poly, bit for bit, at every level of S2 and
// of a 2^16 context with 40-bit primes (batches of 3 polynomials).
TEST_F(CudaDevice, RescaleMatchesCpuBitForBit) {
#if defined(OBORO_WITH_CUDA_RUNTIME)
    oboro::ckks::Parameters big;
    big.log_n = 16;
    big.q_bits = std::vector<int>(12, 40);
    big.q_bits[0] = 60;
    big.p_bits = {60};
    for (const auto& params : {oboro::ckks::Parameters::preset("S2"), big}) {
        const auto ctx = oboro::ckks::Context::create(params);
        const size_t n = ctx->n();
        math::Seed seed{};
        math::Prng prng(seed);
        for (int level = ctx->max_level(); level >= 1; level -= (level > 3 ? 4 : 1)) {
            SCOPED_TRACE("log_n " + std::to_string(params.log_n) + " level " + std::to_string(level));
            const uint32_t polys = 3, limbs = uint32_t(level) + 1;
            std::vector<uint64_t> in(size_t(polys) * limbs * n);
            for (size_t k = 0; k < in.size(); ++k) in[k] = prng.uniform(ctx->moduli()[(k / n) % limbs].value);
            std::vector<uint64_t> gpu(size_t(polys) * level * n);
            oboro::cuda::divide_and_drop_host(in.data(), gpu.data(), ctx->ntt_tables(), uint32_t(level), uint32_t(level),
                                              ctx->level(level).inv_last.data(), polys);
            for (uint32_t p = 0; p < polys; ++p) {
                uint64_t* poly = in.data() + size_t(p) * limbs * n;
                oboro::backend::cpu::rescale_poly(ctx->ring(), level, poly);
                for (size_t k = 0; k < size_t(level) * n; ++k)
                    ASSERT_EQ(gpu[size_t(p) * level * n + k], poly[k]) << "poly " << p << " word " << k;
            }
        }
    }
#endif
}

// add / sub / negate, tensor and permute on the GPU against the CPU backend, bit for bit, on a
// batch of 4 ciphertexts of S2 size.
// ModDown with one special prime (the same kernels, P dropped) against backend::cpu::mod_down, S2.
TEST_F(CudaDevice, ModDownMatchesCpuBitForBit) {
#if defined(OBORO_WITH_CUDA_RUNTIME)
    const auto ctx = oboro::ckks::Context::create(oboro::ckks::Parameters::preset("S2"));
    const size_t n = ctx->n();
    math::Seed seed{};
    seed[0] = 3;
    math::Prng prng(seed);
    for (int level = ctx->max_level(); level >= 0; --level) {
        const uint32_t polys = 2, ext = uint32_t(level) + 2;
        std::vector<uint64_t> in(size_t(polys) * ext * n);
        for (size_t k = 0; k < in.size(); ++k) {
            const uint32_t limb = uint32_t((k / n) % ext);
            in[k] = prng.uniform(limb + 1 == ext ? ctx->p_moduli()[0].value : ctx->moduli()[limb].value);
        }
        std::vector<uint64_t> gpu(size_t(polys) * (ext - 1) * n), cpu((ext - 1) * n);
        oboro::cuda::divide_and_drop_host(in.data(), gpu.data(), ctx->ntt_tables(), ext - 1, uint32_t(ctx->q_count()),
                                          ctx->level(level).p_inv.data(), polys);
        for (uint32_t p = 0; p < polys; ++p) {
            oboro::backend::cpu::mod_down(ctx->ring(), ctx->ring().level(level), in.data() + size_t(p) * ext * n, cpu.data());
            ASSERT_TRUE(std::equal(cpu.begin(), cpu.end(), gpu.begin() + std::ptrdiff_t(size_t(p) * (ext - 1) * n)))
                << "level " << level << " poly " << p;
        }
    }
#endif
}

// Fast base conversion on the GPU against math::BaseConverter, bit for bit (the device's double
// arithmetic without fused multiply-adds must give the CPU's overflow estimate): the ModUp digit
// conversions and ModDown's P -> Q of a context with 2-prime digits and 2 special primes.
TEST_F(CudaDevice, BaseConversionMatchesCpuBitForBit) {
#if defined(OBORO_WITH_CUDA_RUNTIME)
    oboro::ckks::Parameters p;
    p.log_n = 14;
    p.q_bits = {60, 40, 40, 40, 40, 40};
    p.p_bits = {61, 61};
    p.dnum = 3;
    const auto ctx = oboro::ckks::Context::create(p);
    const uint32_t n = uint32_t(ctx->n()), polys = 3;
    math::Seed seed{};
    seed[0] = 5;
    math::Prng prng(seed);
    const auto& lc = ctx->level(ctx->max_level());
    std::vector<const math::BaseConverter*> convs = {&lc.p_to_q};
    for (const auto& d : lc.digits) convs.push_back(&d.to_others);
    for (const math::BaseConverter* c : convs) {
        const size_t k = c->from().size(), m = c->to().size();
        std::vector<uint64_t> in(polys * k * n);
        for (size_t x = 0; x < in.size(); ++x) in[x] = prng.uniform(c->from()[(x / n) % k]);
        for (bool centered : {false, true}) {
            std::vector<uint64_t> gpu(polys * m * n), cpu(polys * m * n), scratch(k * n);
            oboro::cuda::base_conversion_host(*c, centered, in.data(), gpu.data(), polys, n);
            for (uint32_t q = 0; q < polys; ++q) {
                if (centered) c->convert_centered(in.data() + q * k * n, n, cpu.data() + q * m * n, n, n, scratch.data());
                else c->convert(in.data() + q * k * n, n, cpu.data() + q * m * n, n, n, scratch.data());
            }
            ASSERT_EQ(gpu, cpu) << "k " << k << " m " << m << " centred " << centered;
        }
    }
#endif
}

TEST_F(CudaDevice, BatchElementwiseMatchesCpuBackend) {
#if defined(OBORO_WITH_CUDA_RUNTIME)
    namespace cpu = oboro::backend::cpu;
    namespace kernels = oboro::cuda::kernels;
    const auto ctx = oboro::ckks::Context::create(oboro::ckks::Parameters::preset("S2"));
    const uint32_t n = uint32_t(ctx->n()), limbs = uint32_t(ctx->max_level() + 1), count = 4;
    const size_t poly = size_t(limbs) * n;
    std::vector<uint64_t> q(limbs);
    for (uint32_t l = 0; l < limbs; ++l) q[l] = ctx->moduli()[l].value;
    math::Seed seed{};
    seed[0] = 9;
    math::Prng prng(seed);
    const auto a = random_rows(prng, q, 2 * count * limbs, n), b = random_rows(prng, q, 2 * count * limbs, n);
    const uint32_t rows = 2 * count * limbs;

    std::vector<uint64_t> gpu(a.size()), cpu_out(a.size());
    for (auto op : {kernels::ModOp::add, kernels::ModOp::sub, kernels::ModOp::negate}) {
        oboro::cuda::mod_op_host(op, gpu.data(), a.data(), b.data(), q.data(), limbs, rows, n);
        for (uint32_t p = 0; p < 2 * count; ++p) {
            const size_t off = p * poly;
            if (op == kernels::ModOp::add) cpu::add(cpu_out.data() + off, a.data() + off, b.data() + off, ctx->moduli(), limbs, n);
            if (op == kernels::ModOp::sub) cpu::sub(cpu_out.data() + off, a.data() + off, b.data() + off, ctx->moduli(), limbs, n);
            if (op == kernels::ModOp::negate) cpu::negate(cpu_out.data() + off, a.data() + off, ctx->moduli(), limbs, n);
        }
        ASSERT_EQ(gpu, cpu_out) << "op " << int(op);
    }

    std::vector<uint64_t> d(3 * poly * count), e(3 * poly);
    oboro::cuda::tensor_host(d.data(), a.data(), b.data(), q.data(), limbs, count, n);
    for (uint32_t c = 0; c < count; ++c) {
        const uint64_t *x = a.data() + 2 * poly * c, *y = b.data() + 2 * poly * c;
        cpu::tensor(e.data(), e.data() + poly, e.data() + 2 * poly, x, x + poly, y, y + poly, ctx->moduli(), limbs, n);
        ASSERT_TRUE(std::equal(e.begin(), e.end(), d.begin() + std::ptrdiff_t(3 * poly * c))) << "ciphertext " << c;
    }

    std::vector<uint32_t> perms;
    for (int64_t step : {1, -1, 5, 7}) {
        const auto& pm = ctx->automorphism_permutation(ctx->galois_element(step));
        perms.insert(perms.end(), pm.begin(), pm.end());
    }
    oboro::cuda::permute_host(gpu.data(), a.data(), perms.data(), count, 2 * limbs, rows, n);
    for (uint32_t c = 0; c < count; ++c)
        cpu::permute(cpu_out.data() + 2 * poly * c, a.data() + 2 * poly * c, perms.data() + size_t(c) * n, 2 * limbs, n);
    ASSERT_EQ(gpu, cpu_out);
#endif
}

TEST_F(CudaDevice, MulAddModWord32) { check_mul_add<uint32_t>(); }

// Key switching of a batch on the GPU: ckks::key_switch, Evaluator::relinearize and rotate, bit
// for bit, on real S2 ciphertexts at two levels.
TEST_F(CudaDevice, KeySwitchRelinearizeRotateMatchCpu) {
#if defined(OBORO_WITH_CUDA_RUNTIME)
    auto& keys = oboro::test::Keys::get("S2");
    const auto& ctx = *keys.ctx;
    const size_t slots = ctx.max_slots();
    std::vector<oboro::ckks::Ciphertext> cts;
    for (int i = 0; i < 3; ++i) cts.push_back(keys.encrypt(oboro::test::random_complex(slots, 1.0, uint64_t(i))));
    for (int level : {ctx.max_level(), 1}) {
        SCOPED_TRACE("level " + std::to_string(level));
        std::vector<oboro::ckks::Ciphertext> in2, in3;
        for (const auto& c : cts) {
            in2.push_back(keys.eval->drop_to_level(c, level));
            in3.push_back(keys.eval->multiply(in2.back(), in2.back()));
        }
        const size_t poly = size_t(level + 1) * ctx.n();
        std::vector<uint64_t> pairs, triples, out(in2.size() * 2 * poly);
        for (size_t c = 0; c < in2.size(); ++c) {
            pairs.insert(pairs.end(), in2[c].data(), in2[c].data() + 2 * poly);
            triples.insert(triples.end(), in3[c].data(), in3[c].data() + 3 * poly);
        }
        const uint32_t count = uint32_t(in2.size());

        oboro::cuda::key_switch_host(ctx.ring(), level, pairs.data() + poly, 1, keys.rk.view(), out.data());
        std::vector<uint64_t> ks(2 * poly);
        oboro::backend::cpu::key_switch(ctx.ring(), level, pairs.data() + poly, keys.rk.view(), ks.data(), ks.data() + poly);
        ASSERT_TRUE(std::equal(ks.begin(), ks.end(), out.begin())) << "key switch";

        oboro::cuda::relinearize_host(ctx.ring(), level, triples.data(), count, keys.rk.view(), out.data());
        for (uint32_t c = 0; c < count; ++c) {
            const auto r = keys.eval->relinearize(in3[c], keys.rk);
            ASSERT_TRUE(std::equal(r.data(), r.data() + 2 * poly, out.begin() + std::ptrdiff_t(2 * poly * c))) << c;
        }

        const uint64_t g = ctx.galois_element(5);
        oboro::cuda::rotate_host(ctx.ring(), level, pairs.data(), count, g, keys.gk.at(g).view(), out.data());
        for (uint32_t c = 0; c < count; ++c) {
            const auto r = keys.eval->rotate(in2[c], 5, keys.gk);
            ASSERT_TRUE(std::equal(r.data(), r.data() + 2 * poly, out.begin() + std::ptrdiff_t(2 * poly * c))) << c;
        }
    }
#endif
}

// The CUDA batch queue against the CPU queue on the same S2 data: every op of the contract, with
// the data on the device between ops and one synchronize() at the end.
TEST_F(CudaDevice, BatchQueueMatchesCpuQueue) {
#if defined(OBORO_WITH_CUDA_RUNTIME)
    using oboro::backend::BatchSpan;
    using oboro::backend::ConstBatchSpan;
    auto& keys = oboro::test::Keys::get("S2");
    const auto& ctx = *keys.ctx;
    const size_t count = 3, limbs = size_t(ctx.max_level()) + 1, n = ctx.n(), poly = limbs * n;
    std::vector<oboro::ckks::Ciphertext> cts;
    for (size_t i = 0; i < count; ++i) cts.push_back(keys.encrypt(oboro::test::random_complex(ctx.max_slots(), 1.0, i + 7)));
    std::vector<uint64_t> a, b;
    for (size_t c = 0; c < count; ++c) a.insert(a.end(), cts[c].data(), cts[c].data() + 2 * poly);
    for (size_t c = 0; c < count; ++c) b.insert(b.end(), cts[(c + 1) % count].data(), cts[(c + 1) % count].data() + 2 * poly);

    auto gpu = oboro::cuda::make_cuda_queue();
    auto& cpu = *oboro::backend::cpu_queue();
    oboro::cuda::DeviceBuffer da(a.size() * 8), db(b.size() * 8), d3(count * 3 * poly * 8), d2(count * 2 * poly * 8),
        dr(count * 2 * poly * 8);
    da.upload(a.data(), a.size() * 8);
    db.upload(b.data(), b.size() * 8);
    auto span = [&](const oboro::cuda::DeviceBuffer& d, size_t polys, size_t l) {
        return BatchSpan{d.as<uint64_t>(), count, polys, l, n};
    };
    auto cspan = [&](const oboro::cuda::DeviceBuffer& d, size_t polys, size_t l) {
        return ConstBatchSpan{d.as<const uint64_t>(), count, polys, l, n};
    };
    auto host = [&](std::vector<uint64_t>& v, size_t polys, size_t l) {
        return BatchSpan{v.data(), count, polys, l, n};
    };
    auto chost = [&](const std::vector<uint64_t>& v, size_t polys, size_t l) {
        return ConstBatchSpan{v.data(), count, polys, l, n};
    };
    auto download = [&](const oboro::cuda::DeviceBuffer& d, size_t words) {
        gpu->synchronize();
        std::vector<uint64_t> v(words);
        d.download(v.data(), words * 8);
        return v;
    };

    std::vector<uint64_t> e2(count * 2 * poly), e3(count * 3 * poly), er(count * 2 * poly);
    // add, then tensor, relinearize and rescale, queued back to back on the GPU
    gpu->add(ctx.ring(), span(d2, 2, limbs), cspan(da, 2, limbs), cspan(db, 2, limbs));
    cpu.add(ctx.ring(), host(e2, 2, limbs), chost(a, 2, limbs), chost(b, 2, limbs));
    ASSERT_EQ(download(d2, e2.size()), e2) << "add";
    gpu->tensor(ctx.ring(), span(d3, 3, limbs), cspan(da, 2, limbs), cspan(db, 2, limbs));
    gpu->relinearize(ctx.ring(), span(d2, 2, limbs), cspan(d3, 3, limbs), keys.rk.view());
    gpu->rescale(ctx.ring(), span(dr, 2, limbs - 1), cspan(d2, 2, limbs));
    cpu.tensor(ctx.ring(), host(e3, 3, limbs), chost(a, 2, limbs), chost(b, 2, limbs));
    cpu.relinearize(ctx.ring(), host(e2, 2, limbs), chost(e3, 3, limbs), keys.rk.view());
    cpu.rescale(ctx.ring(), host(er, 2, limbs - 1), chost(e2, 2, limbs));
    ASSERT_EQ(download(dr, count * 2 * (limbs - 1) * n), std::vector<uint64_t>(er.begin(), er.begin() + std::ptrdiff_t(count * 2 * (limbs - 1) * n)))
        << "tensor, relinearize, rescale";
    gpu->multiply_relin_rescale(ctx.ring(), span(dr, 2, limbs - 1), cspan(da, 2, limbs), cspan(db, 2, limbs), keys.rk.view());
    cpu.multiply_relin_rescale(ctx.ring(), host(er, 2, limbs - 1), chost(a, 2, limbs), chost(b, 2, limbs), keys.rk.view());
    ASSERT_EQ(download(dr, count * 2 * (limbs - 1) * n), std::vector<uint64_t>(er.begin(), er.begin() + std::ptrdiff_t(count * 2 * (limbs - 1) * n)))
        << "multiply_relin_rescale (fused)";

    // rotations: steps 1, 0 (a copy) and 5
    const std::vector<int64_t> steps = {1, 0, 5};
    std::vector<const uint32_t*> perms;
    std::vector<oboro::backend::KeySwitchKeyView> views;
    std::vector<const oboro::backend::KeySwitchKeyView*> ks;
    for (int64_t s : steps) views.push_back(s == 0 ? oboro::backend::KeySwitchKeyView{} : keys.gk.at(ctx.galois_element(s)).view());
    for (size_t i = 0; i < steps.size(); ++i) {
        perms.push_back(steps[i] == 0 ? nullptr : ctx.automorphism_permutation(ctx.galois_element(steps[i])).data());
        ks.push_back(steps[i] == 0 ? nullptr : &views[i]);
    }
    gpu->apply_galois(ctx.ring(), span(d2, 2, limbs), cspan(da, 2, limbs), perms.data(), ks.data());
    cpu.apply_galois(ctx.ring(), host(e2, 2, limbs), chost(a, 2, limbs), perms.data(), ks.data());
    ASSERT_EQ(download(d2, e2.size()), e2) << "apply_galois";
#endif
}

// Evaluator on the CUDA queue: batches moved to the device, every op with the data staying
// there, results read back once and compared with the CPU evaluator bit for bit.
TEST_F(CudaDevice, BatchEvaluatorOnGpuMatchesCpu) {
#if defined(OBORO_WITH_CUDA_RUNTIME)
    using namespace oboro::ckks;
    for (const std::string preset : {"S1", "S2"}) {
        auto& keys = oboro::test::Keys::get(preset);
        const auto& ctx = *keys.ctx;
        std::vector<Ciphertext> xs, ys;
        for (int i = 0; i < 4; ++i) {
            xs.push_back(keys.encrypt(oboro::test::random_complex(ctx.max_slots(), 1.0, uint64_t(i))));
            ys.push_back(keys.encrypt(oboro::test::random_complex(ctx.max_slots(), 1.0, uint64_t(20 + i))));
        }
        const auto ha = CiphertextBatch::from_ciphertexts(ctx, xs), hb = CiphertextBatch::from_ciphertexts(ctx, ys);
        auto queue = oboro::cuda::make_cuda_queue();
        const Evaluator cpu(keys.ctx), gpu(keys.ctx, queue);
        const auto da = ha.to_device(queue), db = hb.to_device(queue);
        auto same = [&](const CiphertextBatch& d, const CiphertextBatch& h, const char* what) {
            const auto back = d.to_host();
            ASSERT_EQ(back.word_count(), h.word_count()) << what;
            EXPECT_TRUE(std::equal(back.data(), back.data() + back.word_count(), h.data())) << preset << " " << what;
        };
        same(gpu.add(da, db), cpu.add(ha, hb), "add");
        same(gpu.sub(da, db), cpu.sub(ha, hb), "sub");
        same(gpu.negate(da), cpu.negate(ha), "negate");
        same(gpu.add(da, 0.25), cpu.add(ha, 0.25), "add constant");
        same(gpu.multiply(da, db), cpu.multiply(ha, hb), "multiply");
        same(gpu.relinearize(gpu.multiply(da, db), keys.rk), cpu.relinearize(cpu.multiply(ha, hb), keys.rk), "relinearize");
        same(gpu.rescale(gpu.relinearize(gpu.multiply(da, db), keys.rk)),
             cpu.rescale(cpu.relinearize(cpu.multiply(ha, hb), keys.rk)), "multiply, relinearize, rescale");
        same(gpu.multiply_relin_rescale(da, db, keys.rk), cpu.multiply_relin_rescale(ha, hb, keys.rk),
             "multiply_relin_rescale");
        same(gpu.rotate(da, 1, keys.gk), cpu.rotate(ha, 1, keys.gk), "rotate");
        same(gpu.rotate(da, std::vector<int64_t>{1, 0, 5, -1}, keys.gk), cpu.rotate(ha, std::vector<int64_t>{1, 0, 5, -1}, keys.gk),
             "rotate per element");
        same(gpu.drop_to_level(da, 0), cpu.drop_to_level(ha, 0), "drop_to_level");
        same(gpu.rotate(da, std::vector<int64_t>{0, 0, 5, 1}, keys.gk), cpu.rotate(ha, std::vector<int64_t>{0, 0, 5, 1}, keys.gk),
             "rotate per element, leading steps 0");
        const std::vector<int64_t> many = {1, 0, 5, -1};
        const auto gm = gpu.rotate_many(da, many, keys.gk), cm = cpu.rotate_many(ha, many, keys.gk);
        for (size_t r = 0; r < many.size(); ++r) same(gm[r], cm[r], "rotate_many (hoisted)");
        same(gpu.rotate_sum(da, {0, 1, 5, 0, -1}, keys.gk), cpu.rotate_sum(ha, {0, 1, 5, 0, -1}, keys.gk),
             "rotate_sum (hoisted, lazy ModDown)");

        // batched encoding on the device (batch_encoder.hpp), sparse and full, then used as operand
        for (size_t slots : {size_t(8), ctx.max_slots()}) {
            const auto values = oboro::test::random_complex(4 * slots, 1.0, 90 + slots);
            const PlaintextBatch dp = encode_batch(*keys.encoder, values, 4, std::nullopt, std::nullopt, slots, queue);
            const PlaintextBatch hp = encode_batch(*keys.encoder, values, 4, std::nullopt, std::nullopt, slots);
            ASSERT_EQ(dp.device(), queue.get());
            const PlaintextBatch back = dp.to_host();
            EXPECT_TRUE(std::equal(back.data(), back.data() + back.word_count(), hp.data())) << preset << " encode_batch";
            if (slots == ctx.max_slots()) same(gpu.multiply(da, dp), cpu.multiply(ha, hp), "multiply by encoded batch");
        }
    }
#endif
}

}  // namespace
