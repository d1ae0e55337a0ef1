// The CUDA fused rescale (ntt_kernels.hpp: INTT of the last limb, then a forward NTT whose loads
// convert the last limb and whose stores compute (x - conv) * q_l^{-1}), run through the CPU grid
// emulator and compared bit for bit with the CPU: backend::cpu::rescale_poly on random polynomials of
// real contexts, Evaluator::rescale on real ciphertexts, and backend::cpu::mod_down (the same kernels with
// the special prime dropped).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ckks_test_util.hpp"
#include "cuda_emulated_util.hpp"
#include "oboro/ckks/context.hpp"
#include "oboro/backend/cpu/keyswitch.hpp"
#include "oboro/math/random.hpp"

namespace {

using namespace oboro::test::cuda_emu;
namespace kernels = oboro::cuda::kernels;
namespace math = oboro::math;
using oboro::ckks::Context;
using oboro::cuda::ThreadOrder;

// Host-side constants and views of a division by one dropped prime in ctx: a rescale from `level`
// (mod_down = false) or ModDown at `level` with the one special prime (mod_down = true).
struct EmulatedDrop {
    std::vector<kernels::NttTableView> views;
    std::vector<kernels::DropLimb> limbs;
    kernels::DivideDropArgs args;

    EmulatedDrop(const Context& ctx, int level, uint32_t polys, bool mod_down = false)
        : views(table_views(ctx.ntt_tables(), ctx.q_count() + ctx.p_count())) {
        const uint32_t kept = mod_down ? uint32_t(level) + 1 : uint32_t(level);
        const uint32_t dropped = mod_down ? uint32_t(ctx.q_count()) : uint32_t(level);
        std::vector<uint64_t> moduli(kept);
        for (uint32_t j = 0; j < kept; ++j) moduli[j] = ctx.moduli()[j].value;
        limbs.resize(kept);
        const auto& lc = ctx.level(level);
        kernels::make_drop_limbs(moduli.data(), kept, views[dropped].q, mod_down ? lc.p_inv.data() : lc.inv_last.data(),
                                 limbs.data());
        args.tables = views.data();
        args.limbs = limbs.data();
        args.dropped_prime = views[dropped].q;
        args.dropped_table = dropped;
        args.kept = kept;
        args.polys = polys;
        uint32_t log_n = 0;
        while ((size_t(1) << log_n) < ctx.n()) ++log_n;
        args.plan = kernels::make_ntt_plan(log_n);
    }
};

// polys polynomials of level+1 limbs, uniform canonical residues (NTT form), edges included.
std::vector<uint64_t> random_polys(const Context& ctx, int level, uint32_t polys, uint8_t tag) {
    const size_t n = ctx.n(), limbs = size_t(level) + 1;
    math::Seed s{};
    s[0] = tag;
    math::Prng prng(s);
    std::vector<uint64_t> v(polys * limbs * n);
    for (size_t r = 0; r < polys * limbs; ++r) {
        const uint64_t q = ctx.moduli()[r % limbs].value;
        for (size_t k = 0; k < n; ++k) v[r * n + k] = k == 0 ? 0 : k == 1 ? q - 1 : prng.uniform(q);
    }
    return v;
}

// CPU reference: rescale_poly on each polynomial, compacted to level limbs per polynomial.
std::vector<uint64_t> cpu_rescale(const Context& ctx, int level, std::vector<uint64_t> v, uint32_t polys) {
    const size_t n = ctx.n(), limbs = size_t(level) + 1;
    std::vector<uint64_t> out;
    for (uint32_t p = 0; p < polys; ++p) {
        oboro::backend::cpu::rescale_poly(ctx.ring(), level, v.data() + p * limbs * n);
        out.insert(out.end(), v.begin() + std::ptrdiff_t(p * limbs * n), v.begin() + std::ptrdiff_t((p * limbs + level) * n));
    }
    return out;
}

// Runs the emulated division out of place into a compact batch; checks that the input is intact.
std::vector<uint64_t> emulated_drop(const Context& ctx, int level, const std::vector<uint64_t>& in_v, uint32_t polys,
                                    bool mod_down, ThreadOrder order = ThreadOrder::forward) {
    EmulatedDrop e(ctx, level, polys, mod_down);
    const uint64_t n = ctx.n(), kept = e.args.kept;
    std::vector<uint64_t> in = in_v, out(size_t(polys) * kept * n, 0),
                          scratch(kernels::divide_drop_scratch_words(polys, uint32_t(kept), n), 0);
    e.args.in = kernels::RowSet{in.data(), (kept + 1) * n};
    e.args.out = kernels::RowSet{out.data(), kept * n};
    e.args.scratch = scratch.data();
    emulate_divide_drop(e.args, order);
    EXPECT_EQ(in, in_v) << "the input was modified";
    return out;
}

std::vector<uint64_t> emulated_rescale(const Context& ctx, int level, const std::vector<uint64_t>& in_v, uint32_t polys,
                                       ThreadOrder order = ThreadOrder::forward) {
    return emulated_drop(ctx, level, in_v, polys, false, order);
}

TEST(CudaRescaleEmulated, MatchesRescalePolyOnPresets) {
    for (const std::string preset : {"S1", "S2", "S3"}) {
        const auto ctx = Context::create(oboro::ckks::Parameters::preset(preset));
        for (int level = ctx->max_level(); level >= 1; --level) {
            SCOPED_TRACE(preset + " level " + std::to_string(level));
            const uint32_t polys = 3;
            const auto in = random_polys(*ctx, level, polys, uint8_t(level));
            ASSERT_EQ(emulated_rescale(*ctx, level, in, polys), cpu_rescale(*ctx, level, in, polys));
        }
    }
}

// Small degree and small tiles: many blocks, looping threads, both thread orders.
TEST(CudaRescaleEmulated, SmallDegreeEveryThreadOrder) {
    oboro::ckks::Parameters p;
    p.log_n = 6;
    p.q_bits = {60, 45, 50, 55, 36, 61};
    p.p_bits = {61};
    p.security = oboro::ckks::SecurityLevel::none;
    const auto ctx = Context::create(p);
    for (int level = ctx->max_level(); level >= 1; --level) {
        const auto in = random_polys(*ctx, level, 4, uint8_t(40 + level));
        const auto expect = cpu_rescale(*ctx, level, in, 4);
        for (auto order : {ThreadOrder::forward, ThreadOrder::reverse})
            ASSERT_EQ(emulated_rescale(*ctx, level, in, 4, order), expect) << "level " << level;
    }
}

// In place (out = in, same stride), the way an evaluator rescales a ciphertext it owns.
TEST(CudaRescaleEmulated, InPlace) {
    const auto ctx = Context::create(oboro::ckks::Parameters::preset("S2"));
    const int level = ctx->max_level();
    const uint64_t n = ctx->n();
    const uint32_t polys = 2;
    auto data = random_polys(*ctx, level, polys, 77);
    const auto expect = cpu_rescale(*ctx, level, data, polys);
    EmulatedDrop e(*ctx, level, uint32_t(polys));
    std::vector<uint64_t> scratch(kernels::divide_drop_scratch_words(polys, uint32_t(level), n));
    e.args.in = e.args.out = kernels::RowSet{data.data(), (uint64_t(level) + 1) * n};
    e.args.scratch = scratch.data();
    emulate_divide_drop(e.args);
    for (uint32_t p = 0; p < polys; ++p)
        for (size_t k = 0; k < level * n; ++k)
            ASSERT_EQ(data[p * (level + 1) * n + k], expect[p * level * n + k]) << p << " " << k;
}

// A batch of real ciphertexts (products before rescaling) through Evaluator::rescale and through
// the emulated kernels: the same words, and the result still decrypts to the product.
TEST(CudaRescaleEmulated, MatchesEvaluatorRescaleOnCiphertexts) {
    auto& keys = oboro::test::Keys::get("S2");
    const auto& ctx = *keys.ctx;
    std::vector<oboro::test::cplx> a(ctx.max_slots()), b(ctx.max_slots());
    for (size_t i = 0; i < a.size(); ++i) {
        a[i] = {0.5 * std::sin(double(i)), 0.25};
        b[i] = {0.75 * std::cos(double(i)), -0.5};
    }
    const auto ca = keys.encrypt(a), cb = keys.encrypt(b);
    const auto prod = keys.eval->multiply(ca, cb);                             // size 3
    const auto prod2 = keys.eval->relinearize(keys.eval->multiply(cb, cb), keys.rk);  // size 2
    const int level = prod.level();
    const uint64_t n = ctx.n();
    const size_t poly_words = size_t(level + 1) * n;

    // one batch of the 5 polynomials of both ciphertexts, contiguous (DESIGN.md data layout)
    std::vector<uint64_t> batch(prod.data(), prod.data() + 3 * poly_words);
    batch.insert(batch.end(), prod2.data(), prod2.data() + 2 * poly_words);
    const auto out = emulated_rescale(ctx, level, batch, 5);

    const auto r1 = keys.eval->rescale(prod), r2 = keys.eval->rescale(prod2);
    ASSERT_EQ(r1.level(), level - 1);
    const size_t out_words = size_t(level) * n;
    EXPECT_TRUE(std::equal(r1.data(), r1.data() + 3 * out_words, out.begin()));
    EXPECT_TRUE(std::equal(r2.data(), r2.data() + 2 * out_words, out.begin() + std::ptrdiff_t(3 * out_words)));
}

// ModDown with one special prime (S1, S2 and a small context): the same kernels with P as the
// dropped prime, bit for bit backend::cpu::mod_down on random extended polynomials (l+1 limbs and P).
TEST(CudaRescaleEmulated, ModDownWithOneSpecialPrimeMatchesCpu) {
    const oboro::ckks::Parameters small = oboro::test::small_parameters();
    for (const auto& params : {oboro::ckks::Parameters::preset("S1"), oboro::ckks::Parameters::preset("S2"), small}) {
        const auto ctx = Context::create(params);
        ASSERT_EQ(ctx->p_count(), 1u);
        const size_t n = ctx->n();
        for (int level = ctx->max_level(); level >= 0; --level) {
            SCOPED_TRACE("log_n " + std::to_string(params.log_n) + " level " + std::to_string(level));
            const uint32_t polys = 2, ext = uint32_t(level) + 2;
            // extended polynomials: limbs q_0 .. q_level then P, canonical residues
            math::Seed seed{};
            seed[0] = uint8_t(level + 60);
            math::Prng prng(seed);
            std::vector<uint64_t> in(size_t(polys) * ext * n);
            for (size_t r = 0; r < size_t(polys) * ext; ++r) {
                const uint32_t limb = uint32_t(r % ext);
                const uint64_t m = limb + 1 == ext ? ctx->p_moduli()[0].value : ctx->moduli()[limb].value;
                for (size_t k = 0; k < n; ++k) in[r * n + k] = k == 0 ? m - 1 : prng.uniform(m);
            }
            std::vector<uint64_t> expect;
            for (uint32_t p = 0; p < polys; ++p) {
                std::vector<uint64_t> x(in.begin() + std::ptrdiff_t(p * ext * n), in.begin() + std::ptrdiff_t((p + 1) * ext * n));
                std::vector<uint64_t> o((ext - 1) * n);
                oboro::backend::cpu::mod_down(ctx->ring(), ctx->ring().level(level), x.data(), o.data());
                expect.insert(expect.end(), o.begin(), o.end());
            }
            for (auto order : {ThreadOrder::forward, ThreadOrder::reverse})
                ASSERT_EQ(emulated_drop(*ctx, level, in, polys, true, order), expect);
        }
    }
}

}  // namespace
