// The CUDA NTT kernels' per-phase code (backend/cuda/ntt_kernels.hpp), run on the CPU through the
// grid emulator's barrier/shared-memory mode, compared bit for bit with math::ntt_forward /
// ntt_inverse. Needs no GPU and no nvcc: always built.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cuda_emulated_util.hpp"
#include "oboro/math/ntt.hpp"
#include "oboro/math/primes.hpp"
#include "oboro/math/random.hpp"
#include "oboro/util/error.hpp"

namespace {

using namespace oboro::test::cuda_emu;
namespace kernels = oboro::cuda::kernels;
namespace math = oboro::math;
using oboro::cuda::ThreadOrder;

// `limbs` different NTT primes for degree n, of the sizes the library uses (62 bits down to 30).
std::vector<math::NttTables> make_tables(uint32_t n, uint32_t limbs) {
    const int sizes[] = {62, 60, 50, 40, 36, 30};
    std::vector<math::NttTables> t;
    for (uint32_t i = 0; i < limbs; ++i) t.emplace_back(math::generate_ntt_primes(sizes[i % 6], n, 1 + int(i / 6))[i / 6], n);
    return t;
}

// polys x limbs rows; row values in [0, bound * q) with the edges 0 and bound*q - 1 included.
std::vector<uint64_t> lazy_input(const std::vector<math::NttTables>& t, uint32_t polys, uint64_t bound, uint8_t seed) {
    const uint32_t limbs = uint32_t(t.size()), n = t[0].n;
    math::Seed s{};
    s[0] = seed;
    math::Prng prng(s);
    std::vector<uint64_t> v(size_t(polys) * limbs * n);
    for (size_t r = 0; r < size_t(polys) * limbs; ++r) {
        const uint64_t top = bound * t[r % limbs].q;
        for (uint32_t k = 0; k < n; ++k) {
            uint64_t x = prng.uniform(top);
            if (k == 1) x = 0;
            if (k == 2 || k == n - 1) x = top - 1;
            v[r * n + k] = x;
        }
    }
    return v;
}

// CPU reference: math::ntt_forward / ntt_inverse on every row.
std::vector<uint64_t> reference(std::vector<uint64_t> v, const std::vector<math::NttTables>& t, bool forward) {
    const uint32_t limbs = uint32_t(t.size()), n = t[0].n;
    for (size_t r = 0; r < v.size() / n; ++r) {
        if (forward) math::ntt_forward(v.data() + r * n, t[r % limbs]);
        else math::ntt_inverse(v.data() + r * n, t[r % limbs]);
    }
    return v;
}

// Runs the emulated transform out of place (src -> dst, mid = dst) and checks that src is intact.
std::vector<uint64_t> emulated(const std::vector<uint64_t>& in, const std::vector<math::NttTables>& t, uint32_t polys,
                               bool forward, const kernels::NttPlan& plan, ThreadOrder order = ThreadOrder::forward) {
    const auto views = table_views(t);
    std::vector<uint64_t> src = in, dst(in.size(), 0);
    const uint64_t n = t[0].n, limbs = t.size();
    kernels::NttArgs a;
    a.tables = views.data();
    a.limbs = uint32_t(limbs);
    a.polys = polys;
    a.plan = plan;
    a.src = kernels::RowSet{src.data(), limbs * n};
    a.mid = a.dst = kernels::RowSet{dst.data(), limbs * n};
    emulate_ntt(a, forward, order);
    EXPECT_EQ(src, in) << "the source rows were modified";
    return dst;
}

struct Case {
    uint32_t log_n, limbs, polys;
};

TEST(CudaNttEmulated, ForwardAndInverseMatchCpuBitForBit) {
    for (const Case c : {Case{4, 3, 2}, Case{5, 6, 1}, Case{8, 6, 2}, Case{11, 4, 2}, Case{13, 3, 2}, Case{16, 2, 1},
                         Case{17, 1, 1}}) {
        SCOPED_TRACE("log_n " + std::to_string(c.log_n));
        const auto t = make_tables(1u << c.log_n, c.limbs);
        const auto plan = kernels::make_ntt_plan(c.log_n);
        // forward accepts [0, 4q), inverse [0, 2q): test at those bounds
        const auto fin = lazy_input(t, c.polys, 4, uint8_t(c.log_n));
        EXPECT_EQ(emulated(fin, t, c.polys, true, plan), reference(fin, t, true));
        const auto iin = lazy_input(t, c.polys, 2, uint8_t(c.log_n + 100));
        EXPECT_EQ(emulated(iin, t, c.polys, false, plan), reference(iin, t, false));
    }
}

TEST(CudaNttEmulated, RoundTripIsIdentity) {
    const auto t = make_tables(1u << 12, 3);
    const auto in = lazy_input(t, 2, 1, 7);
    const auto plan = kernels::make_ntt_plan(12);
    const auto f = emulated(in, t, 2, true, plan);
    EXPECT_NE(f, in);
    EXPECT_EQ(emulated(f, t, 2, false, plan), in);
}

// Every split of the stages between the two passes, tiles of one group up to the whole row, and
// blocks with fewer threads than butterflies (each thread loops): the same result every time, in
// both thread orders (a within-phase race would make the orders differ).
TEST(CudaNttEmulated, EverySplitTileAndThreadCount) {
    const uint32_t log_n = 7, n = 1u << log_n;
    const auto t = make_tables(n, 3);
    const auto fin = lazy_input(t, 2, 4, 11), iin = lazy_input(t, 2, 2, 12);
    const auto fref = reference(fin, t, true), iref = reference(iin, t, false);
    for (uint32_t split = 1; split < log_n; ++split)
        for (uint32_t tile : {2u, 8u, 64u, 4096u})
            for (uint32_t threads : {1u, 3u, 32u, 256u})
                for (auto order : {ThreadOrder::forward, ThreadOrder::reverse}) {
                    SCOPED_TRACE(testing::Message() << "split " << split << " tile " << tile << " threads " << threads);
                    const auto plan = kernels::make_ntt_plan(log_n, split, tile, threads);
                    ASSERT_EQ(emulated(fin, t, 2, true, plan, order), fref);
                    ASSERT_EQ(emulated(iin, t, 2, false, plan, order), iref);
                }
}

TEST(CudaNttEmulated, PlanShapes) {
    for (uint32_t log_n = 2; log_n <= 17; ++log_n)
        for (uint64_t rows : {1u, 5u, 4096u}) {
            const auto auto_plan = kernels::make_ntt_plan(log_n);
            EXPECT_EQ(auto_plan.split, log_n / 2);
            EXPECT_EQ(auto_plan.tile_columns, 0u);  // chosen per launch
            const auto p = kernels::resolve_ntt_plan(auto_plan, rows);
            for (auto pass : {kernels::NttPass::forward_columns, kernels::NttPass::forward_chunks}) {
                const auto s = kernels::pass_shape(p, pass, 5);
                const size_t words = kernels::pass_shared_words(p, pass);
                EXPECT_LE(words, kernels::ntt_tile_words) << log_n;
                EXPECT_EQ(size_t(s.grid.x) * words, size_t(1) << log_n) << log_n;  // tiles cover the row once
                EXPECT_LE(s.block.x, kernels::ntt_block_threads);
                EXPECT_EQ(s.grid.y, 5u);
            }
        }
    EXPECT_THROW(kernels::make_ntt_plan(1), oboro::ValueError);
    EXPECT_THROW(kernels::make_ntt_plan(25), oboro::ValueError);
    EXPECT_THROW(kernels::make_ntt_plan(8, 8), oboro::ValueError);
    EXPECT_THROW(kernels::make_ntt_plan(8, 0, 2 * kernels::ntt_tile_words), oboro::ValueError);
    EXPECT_THROW(kernels::make_ntt_plan(8, 0, 512, 2 * kernels::ntt_block_threads), oboro::ValueError);
    EXPECT_EQ(kernels::make_ntt_plan(8, 0, 100).tile_chunks, 4u);  // 100 words -> tiles of 64
    // 2^16, chosen per launch: a small launch (2 rows, 2^17 words) takes tiles of 512 words (2
    // columns or chunks of 256) and 256 threads; a large one (48 rows) tiles of 1024 and 128 threads
    const auto p16 = kernels::make_ntt_plan(16);
    const auto small = kernels::resolve_ntt_plan(p16, 2), large = kernels::resolve_ntt_plan(p16, 48);
    EXPECT_EQ(small.tile_columns, 2u);
    EXPECT_EQ(small.tile_chunks, 2u);
    EXPECT_EQ(small.threads, 256u);
    EXPECT_EQ(large.tile_columns, 4u);
    EXPECT_EQ(large.tile_chunks, 4u);
    EXPECT_EQ(large.threads, 128u);
    // an explicit plan is kept as it is
    const auto fixed = kernels::make_ntt_plan(16, 0, 2048, 256);
    EXPECT_EQ(kernels::resolve_ntt_plan(fixed, 2).tile_columns, 8u);
}

// In place (src = mid = dst) and on a row set with a poly stride larger than its limbs (the last
// limb of each polynomial of a batch), with more rows than one launch takes (row_offset).
TEST(CudaNttEmulated, InPlaceStridedAndManyRows) {
    const uint32_t n = 16;
    const auto t = make_tables(n, 3);
    const auto views = table_views(t);
    const uint32_t polys = 21846;  // 3 * 21846 = 65538 rows > max_grid_yz
    auto data = lazy_input(t, polys, 1, 21);
    const auto in = data;
    // the last limb (2) of every polynomial, in place
    kernels::NttArgs a;
    a.tables = views.data();
    a.first_table = 2;
    a.limbs = 1;
    a.polys = polys;
    a.plan = kernels::make_ntt_plan(4);
    a.src = a.mid = a.dst = kernels::RowSet{data.data() + 2 * n, 3 * n};
    emulate_ntt(a, true);
    for (size_t p = 0; p < polys; ++p)
        for (uint32_t limb = 0; limb < 3; ++limb) {
            std::vector<uint64_t> row(in.begin() + (p * 3 + limb) * n, in.begin() + (p * 3 + limb + 1) * n);
            if (limb == 2) math::ntt_forward(row.data(), t[2]);
            ASSERT_TRUE(std::equal(row.begin(), row.end(), data.begin() + (p * 3 + limb) * n)) << p << " " << limb;
        }
    // all rows in place, forward then inverse
    a.first_table = 0;
    a.limbs = 3;
    a.src = a.mid = a.dst = kernels::RowSet{data.data(), 3 * n};
    data = in;
    emulate_ntt(a, true);
    EXPECT_EQ(data, reference(in, t, true));
    emulate_ntt(a, false);
    EXPECT_EQ(data, in);
}

}  // namespace
