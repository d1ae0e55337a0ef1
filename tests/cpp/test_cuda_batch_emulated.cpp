// The CUDA batch element-wise kernel (batch_kernels.hpp: the element-wise ops of the batch backend
// contract) through the CPU grid emulator, bit for bit against the CPU queue (oboro::backend::cpu_queue())
// on the same spans: every op, a right operand per element and broadcast, add / sub with fewer
// right polynomials (ciphertext + plaintext), drop_limbs, in place, on S1 and a small context.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ckks_test_util.hpp"
#include "cuda_emulated_util.hpp"
#include "oboro/backend/cuda/batch_kernels.hpp"
#include "oboro/backend/queue.hpp"
#include "oboro/ckks/context.hpp"
#include "oboro/math/random.hpp"

namespace {

namespace kernels = oboro::cuda::kernels;
namespace math = oboro::math;
using kernels::BatchOp;
using oboro::backend::BatchSpan;
using oboro::backend::ConstBatchSpan;
using oboro::ckks::Context;

std::vector<uint64_t> random_batch(const Context& ctx, size_t count, size_t polys, size_t limbs, uint8_t tag) {
    math::Seed s{};
    s[0] = tag;
    math::Prng prng(s);
    std::vector<uint64_t> v(count * polys * limbs * ctx.n());
    for (size_t r = 0; r < count * polys * limbs; ++r) {
        const uint64_t q = ctx.q()[r % limbs];
        for (size_t k = 0; k < ctx.n(); ++k) v[r * ctx.n() + k] = k == 0 ? 0 : k == 1 ? q - 1 : prng.uniform(q);
    }
    return v;
}

struct Case {
    BatchOp op;
    size_t b_count, b_polys;  // b_count 0: no right operand
};

void run_case(const Context& ctx, const Case& cs, bool in_place) {
    const size_t count = 3, polys = 2, limbs = size_t(ctx.max_level()) + 1, n = ctx.n();
    const size_t out_limbs = cs.op == BatchOp::drop_limbs ? limbs - 1 : limbs;
    const auto a = random_batch(ctx, count, polys, limbs, 1);
    const auto b = cs.b_count ? random_batch(ctx, cs.b_count, cs.b_polys, limbs, 2) : std::vector<uint64_t>{};
    std::vector<uint64_t> scalar(limbs), scalar_shoup(limbs);
    for (size_t i = 0; i < limbs; ++i) {
        scalar[i] = ctx.q()[i] - 1 - i;
        scalar_shoup[i] = math::shoup_precompute(scalar[i], ctx.q()[i]);
    }

    // CPU queue
    std::vector<uint64_t> expect(count * polys * out_limbs * n);
    const ConstBatchSpan as{a.data(), count, polys, limbs, n}, bs{b.data(), cs.b_count, cs.b_polys, limbs, n};
    const BatchSpan es{expect.data(), count, polys, out_limbs, n};
    auto& q = *oboro::backend::cpu_queue();
    switch (cs.op) {
    case BatchOp::add: q.add(ctx.ring(), es, as, bs); break;
    case BatchOp::sub: q.sub(ctx.ring(), es, as, bs); break;
    case BatchOp::negate: q.negate(ctx.ring(), es, as); break;
    case BatchOp::add_scalar: q.add_scalar(ctx.ring(), es, as, scalar.data()); break;
    case BatchOp::mul_scalar: q.mul_scalar(ctx.ring(), es, as, scalar.data()); break;
    case BatchOp::mul_plain: q.mul_plain(ctx.ring(), es, as, bs); break;
    case BatchOp::drop_limbs: q.drop_limbs(es, as); break;
    // The accumulating ops and extend read their output too: not run_case's shape of test.
    case BatchOp::mul_plain_add:
    case BatchOp::mul_scalar_add:
    case BatchOp::extend: FAIL() << "run_case does not cover this op";
    }

    // emulated kernel (in place: out is a copy of a, read and written)
    std::vector<uint64_t> out = in_place ? a : std::vector<uint64_t>(expect.size(), 0xABCD);
    const auto moduli = oboro::test::cuda_emu::barretts(ctx.moduli(), limbs);
    kernels::BatchEltArgs p;
    p.out = out.data();
    p.a = in_place ? out.data() : a.data();
    p.b = b.data();
    p.b_count = uint32_t(cs.b_count);
    p.b_polys = uint32_t(cs.b_polys);
    p.scalar = scalar.data();
    p.scalar_shoup = scalar_shoup.data();
    p.moduli = moduli.data();
    p.n = uint32_t(n);
    p.count = uint32_t(count);
    p.polys = uint32_t(polys);
    p.limbs = uint32_t(limbs);
    p.out_limbs = uint32_t(out_limbs);
    oboro::cuda::EmulatedLaunches{}.elementwise(cs.op, p);
    if (in_place) out.resize(expect.size());
    ASSERT_EQ(out, expect);
}

TEST(CudaBatchEmulated, ElementwiseOpsMatchCpuQueue) {
    const oboro::ckks::Parameters small = oboro::test::small_parameters();
    const std::vector<Case> cases = {
        {BatchOp::add, 3, 2},        {BatchOp::add, 1, 2}, {BatchOp::add, 3, 1}, {BatchOp::sub, 3, 2},
        {BatchOp::sub, 1, 1},        {BatchOp::negate, 0, 0}, {BatchOp::add_scalar, 0, 0},
        {BatchOp::mul_scalar, 0, 0}, {BatchOp::mul_plain, 3, 1}, {BatchOp::mul_plain, 1, 1},
        {BatchOp::drop_limbs, 0, 0}};
    for (const auto& params : {oboro::ckks::Parameters::preset("S1"), small}) {
        const auto ctx = Context::create(params);
        for (const auto& cs : cases)
            for (bool in_place : {false, true}) {
                if (in_place && cs.op == BatchOp::drop_limbs) continue;  // the output is smaller
                SCOPED_TRACE("log_n " + std::to_string(params.log_n) + " op " + std::to_string(int(cs.op)) + " b " +
                             std::to_string(cs.b_count) + "x" + std::to_string(cs.b_polys) + (in_place ? " in place" : ""));
                run_case(*ctx, cs, in_place);
            }
    }
}

}  // namespace
