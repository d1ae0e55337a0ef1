// The CUDA batched encoding (batch_queue.cu: the encode kernel of batch_kernels.hpp, then one
// batched forward NTT) through the CPU grid emulator, bit for bit against the CPU queue's encode
// on the same coefficients: S1, S2 and a small context, top level and level 0, full and sparse
// slots, and coefficients beyond 2^63.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ckks_test_util.hpp"
#include "cuda_emulated_util.hpp"
#include "oboro/backend/cuda/batch_kernels.hpp"
#include "oboro/backend/queue.hpp"

namespace {

using namespace oboro::test::cuda_emu;
using oboro::test::cplx;
namespace ckks = oboro::ckks;
namespace backend = oboro::backend;

void expect_emulated_encode_matches_cpu(const ckks::ContextPtr& ctx_ptr, int level, size_t slots, double scale) {
    const ckks::Context& ctx = *ctx_ptr;
    const ckks::Encoder encoder(ctx_ptr);
    const ckks::EncodingShape shape = encoder.encoding_shape("test", slots, level, scale, slots);
    const size_t count = 3, n = ctx.n(), limbs = size_t(shape.level) + 1;
    std::vector<double> coefficients(count * 2 * slots);
    for (size_t c = 0; c < count; ++c) {
        auto values = oboro::test::random_complex(slots, c == 2 ? 0x1p28 : 1.0, 40 + c);
        encoder.scaled_coefficients("test", values.data(), values.size(), shape, coefficients.data() + c * 2 * slots);
    }

    std::vector<uint64_t> expect(count * limbs * n), got(count * limbs * n, 7);
    backend::cpu_queue()->encode(ctx.ring(), backend::BatchSpan{expect.data(), count, 1, limbs, n}, coefficients.data(), slots);

    const auto moduli = barretts(ctx.moduli(), limbs);
    kernels::EncodeArgs e;
    e.out = got.data();
    e.coefficients = coefficients.data();
    e.moduli = moduli.data();
    e.n = uint32_t(n);
    e.count = uint32_t(count);
    e.limbs = uint32_t(limbs);
    e.slots = uint32_t(slots);
    EmulatedLaunches{}.encode(e);
    const auto views = table_views(ctx.ntt_tables(), ctx.q_count());
    uint32_t log_n = 0;
    while ((size_t(1) << log_n) < n) ++log_n;
    const kernels::RowSet rows{got.data(), limbs * n};
    emulate_ntt(kernels::ntt_args(views.data(), 0, e.limbs, e.count, kernels::make_ntt_plan(log_n), rows, rows), true);
    EXPECT_EQ(got, expect);
}

TEST(CudaEncodeEmulated, MatchesCpuQueue) {
    const oboro::ckks::Parameters small = oboro::test::small_parameters();
    for (const auto& params : {oboro::ckks::Parameters::preset("S1"), oboro::ckks::Parameters::preset("S2"), small}) {
        const auto ctx = ckks::Context::create(params);
        for (int level : {ctx->max_level(), 0})
            for (size_t slots : {ctx->max_slots(), size_t(4)}) {
                SCOPED_TRACE("log_n " + std::to_string(params.log_n) + " level " + std::to_string(level) + " slots " +
                             std::to_string(slots));
                // element 2 has coefficients near 2^68 at the top level of S2 (beyond 2^63)
                const double scale = level >= 3 ? 0x1p40 : 0x1p20;
                expect_emulated_encode_matches_cpu(ctx, level, slots, scale);
            }
    }
}

}  // namespace
