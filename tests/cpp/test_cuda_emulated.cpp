// The CUDA element-wise kernels' per-thread code, run on the CPU through the grid emulator and
// compared bit for bit with plain CPU loops. Needs no GPU and no nvcc: always built.
#include <algorithm>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "oboro/backend/cpu/poly_ops.hpp"
#include "oboro/backend/cuda/elementwise_kernels.hpp"
#include "oboro/ckks/context.hpp"
#include "oboro/backend/cuda/grid_emulator.hpp"
#include "oboro/math/modarith.hpp"
#include "oboro/math/primes.hpp"
#include "oboro/math/random.hpp"

namespace {

using oboro::cuda::Dim3;
using oboro::cuda::emulate_grid;
using oboro::cuda::LaunchShape;
using oboro::cuda::ThreadIndex;
namespace kernels = oboro::cuda::kernels;
namespace math = oboro::math;

// Moduli for a word type: NTT primes of several sizes, including the largest the word allows
// (just below 2^62 for uint64_t, 2^30 for uint32_t).
template <typename W> std::vector<W> test_moduli() {
    std::vector<int> sizes;
    if constexpr (sizeof(W) == 8) sizes = {math::max_modulus_bits<W>, 60, 50, 40, 31};
    else sizes = {math::max_modulus_bits<W>, 28, 20, 17};
    std::vector<W> out;
    for (int bits : sizes)
        for (uint64_t q : math::generate_ntt_primes(bits, 1024, 1, {})) out.push_back(W(q));
    return out;
}

// rows x n values, row r uniform in [0, q_{r % limbs}), with the edge values 0, 1, q-1 first.
template <typename W>
std::vector<W> random_rows(math::Prng& prng, const std::vector<W>& q, uint32_t rows, uint32_t n) {
    std::vector<W> v(size_t(rows) * n);
    for (uint32_t r = 0; r < rows; ++r) {
        const W m = q[r % q.size()];
        for (uint32_t i = 0; i < n; ++i) {
            W x = W(prng.uniform(m));
            if (i == 0) x = 0;
            if (i == 1) x = 1;
            if (i == 2 || i == 3) x = m - 1;
            v[size_t(r) * n + i] = x;
        }
    }
    return v;
}

math::Seed test_seed(uint8_t tag) {
    math::Seed s{};
    s[0] = tag;
    return s;
}

template <typename W> class CudaEmulated : public ::testing::Test {};
using WordTypes = ::testing::Types<uint32_t, uint64_t>;
TYPED_TEST_SUITE(CudaEmulated, WordTypes);

TYPED_TEST(CudaEmulated, LargestModulusIsJustBelowTheWordLimit) {
    using W = TypeParam;
    const W q = test_moduli<W>().front();
    EXPECT_LT(q, W(1) << math::max_modulus_bits<W>);
    EXPECT_GT(q, (W(1) << math::max_modulus_bits<W>) - (W(1) << (math::max_modulus_bits<W> - 8)));
}

TYPED_TEST(CudaEmulated, ShapeCoversAllCoefficientsAndRows) {
    for (uint32_t n : {1u, 255u, 256u, 257u, 4096u, 65536u})
        for (uint32_t rows : {1u, 7u, 65535u, 70000u}) {
            const LaunchShape s = kernels::elementwise_shape(n, rows);
            EXPECT_GE(uint64_t(s.grid.x) * s.block.x, n);
            EXPECT_LT(uint64_t(s.grid.x - 1) * s.block.x, n);  // no block entirely out of range
            EXPECT_LE(s.grid.y, oboro::cuda::max_grid_yz);
            EXPECT_EQ(s.grid.y, rows < oboro::cuda::max_grid_yz ? rows : oboro::cuda::max_grid_yz);
        }
}

// Runs mul_add_mod through the emulator with `shape` and checks it against two CPU loops.
template <typename W>
void check_mul_add(const std::vector<W>& q, uint32_t rows, uint32_t n, const LaunchShape& shape, uint8_t seed) {
    math::Prng prng(test_seed(seed));
    const uint32_t limbs = uint32_t(q.size());
    const auto a = random_rows(prng, q, rows, n);
    const auto b = random_rows(prng, q, rows, n);
    const auto c = random_rows(prng, q, rows, n);
    std::vector<math::Barrett<W>> br;
    for (W m : q) br.emplace_back(m);

    std::vector<W> out(a.size(), W(0xdead));
    kernels::MulAddModArgs<W> args;
    args.out = out.data();
    args.a = a.data();
    args.b = b.data();
    args.c = c.data();
    args.moduli = br.data();
    args.n = n;
    args.rows = rows;
    args.limbs = limbs;
    emulate_grid(shape, [&](const ThreadIndex& t) { kernels::mul_add_mod_thread(t, args); });

    for (uint32_t r = 0; r < rows; ++r) {
        const W m = q[r % limbs];
        const math::Barrett<W> ref(m);
        for (uint32_t i = 0; i < n; ++i) {
            const size_t k = size_t(r) * n + i;
            // straightforward loop with the same modarith functions ...
            const W expect = math::add_mod(ref.mul(a[k], b[k]), c[k], m);
            // ... and with plain double-word arithmetic
            const W naive = W((math::mul_wide(a[k], b[k]) + c[k]) % m);
            ASSERT_EQ(expect, naive) << "row " << r << " col " << i << " q " << m;
            ASSERT_EQ(out[k], expect) << "row " << r << " col " << i << " q " << m;
        }
    }
}

TYPED_TEST(CudaEmulated, MulAddModMatchesCpu) {
    using W = TypeParam;
    const auto q = test_moduli<W>();
    for (uint32_t n : {1000u, 4096u}) {
        const uint32_t rows = 2 * uint32_t(q.size());  // a batch of two polynomials
        check_mul_add<W>(q, rows, n, kernels::elementwise_shape(n, rows), 1);
    }
}

TYPED_TEST(CudaEmulated, MulAddModRowStrideLoop) {
    using W = TypeParam;
    const auto q = test_moduli<W>();
    const uint32_t n = 300, rows = 3 * uint32_t(q.size()) + 1;
    LaunchShape s = kernels::elementwise_shape(n, rows);
    s.grid.y = 2;  // fewer blocks along y than rows: the grid-stride loop must cover the rest
    check_mul_add<W>(q, rows, n, s, 2);
}

TYPED_TEST(CudaEmulated, ScalarMulAddModShoupMatchesCpu) {
    using W = TypeParam;
    const auto q = test_moduli<W>();
    const uint32_t limbs = uint32_t(q.size()), n = 777, rows = 3 * limbs;
    math::Prng prng(test_seed(3));
    const auto a = random_rows(prng, q, rows, n);
    const auto c = random_rows(prng, q, rows, n);
    std::vector<W> s(limbs), s_shoup(limbs);
    for (uint32_t l = 0; l < limbs; ++l) {
        s[l] = l == 0 ? q[l] - 1 : W(prng.uniform(q[l]));
        s_shoup[l] = math::shoup_precompute(s[l], q[l]);
    }
    std::vector<W> out(a.size());
    kernels::ScalarMulAddModArgs<W> args;
    args.out = out.data();
    args.a = a.data();
    args.c = c.data();
    args.scalar = s.data();
    args.scalar_shoup = s_shoup.data();
    args.moduli = q.data();
    args.n = n;
    args.rows = rows;
    args.limbs = limbs;
    emulate_grid(kernels::elementwise_shape(n, rows),
                 [&](const ThreadIndex& t) { kernels::scalar_mul_add_mod_thread(t, args); });
    for (uint32_t r = 0; r < rows; ++r) {
        const uint32_t l = r % limbs;
        const math::Barrett<W> ref(q[l]);
        for (uint32_t i = 0; i < n; ++i) {
            const size_t k = size_t(r) * n + i;
            const W expect = math::add_mod(ref.mul(a[k], s[l]), c[k], q[l]);
            ASSERT_EQ(out[k], expect) << "row " << r << " col " << i << " q " << q[l];
        }
    }
}

// add / sub / negate over a batch of rows: the same words as the CPU backend (uint64_t) or a
// plain loop over modarith (uint32_t), including a launch with fewer blocks along y than rows.
TYPED_TEST(CudaEmulated, AddSubNegateMatchCpu) {
    using W = TypeParam;
    const auto q = test_moduli<W>();
    const uint32_t limbs = uint32_t(q.size()), n = 515, rows = 3 * limbs;
    math::Prng prng(test_seed(4));
    const auto a = random_rows(prng, q, rows, n), b = random_rows(prng, q, rows, n);
    for (auto op : {kernels::ModOp::add, kernels::ModOp::sub, kernels::ModOp::negate})
        for (uint32_t grid_y : {rows, 2u}) {
            std::vector<W> out(a.size(), 0);
            kernels::ModOpArgs<W> args;
            args.out = out.data();
            args.a = a.data();
            args.b = b.data();
            args.moduli = q.data();
            args.n = n;
            args.rows = rows;
            args.limbs = limbs;
            LaunchShape s = kernels::elementwise_shape(n, rows);
            s.grid.y = grid_y;
            emulate_grid(s, [&](const ThreadIndex& t) {
                if (op == kernels::ModOp::add) kernels::mod_op_thread<kernels::ModOp::add>(t, args);
                else if (op == kernels::ModOp::sub) kernels::mod_op_thread<kernels::ModOp::sub>(t, args);
                else kernels::mod_op_thread<kernels::ModOp::negate>(t, args);
            });
            std::vector<W> expect(a.size());
            if constexpr (sizeof(W) == 8) {
                std::vector<math::Modulus> mods(q.begin(), q.end());
                for (uint32_t p = 0; p < rows / limbs; ++p) {
                    const size_t off = size_t(p) * limbs * n;
                    namespace cpu = oboro::backend::cpu;
                    if (op == kernels::ModOp::add) cpu::add(expect.data() + off, a.data() + off, b.data() + off, mods.data(), limbs, n);
                    else if (op == kernels::ModOp::sub) cpu::sub(expect.data() + off, a.data() + off, b.data() + off, mods.data(), limbs, n);
                    else cpu::negate(expect.data() + off, a.data() + off, mods.data(), limbs, n);
                }
            } else {
                for (size_t k = 0; k < a.size(); ++k) {
                    const W m = q[(k / n) % limbs];
                    expect[k] = op == kernels::ModOp::add   ? W((uint64_t(a[k]) + b[k]) % m)
                                : op == kernels::ModOp::sub ? W((uint64_t(a[k]) + m - b[k]) % m)
                                                            : W((m - a[k]) % m);
                }
            }
            ASSERT_EQ(out, expect) << "op " << int(op) << " grid.y " << grid_y;
        }
}

// The tensor product of a batch of ciphertext pairs, written straight into a batch of size-3
// ciphertexts: the CPU backend's tensor (uint64_t) or the schoolbook product (uint32_t).
TYPED_TEST(CudaEmulated, TensorMatchesCpu) {
    using W = TypeParam;
    const auto q = test_moduli<W>();
    const uint32_t limbs = uint32_t(q.size()), n = 300, count = 3;
    const size_t poly = size_t(limbs) * n;
    math::Prng prng(test_seed(5));
    const auto a = random_rows(prng, q, 2 * count * limbs, n), b = random_rows(prng, q, 2 * count * limbs, n);
    std::vector<math::Barrett<W>> br;
    for (W m : q) br.emplace_back(m);
    std::vector<W> d(3 * poly * count, 0);
    kernels::TensorArgs<W> args;
    args.out = d.data();
    args.out_stride = 3 * poly;
    args.a = a.data();
    args.a_stride = 2 * poly;
    args.b = b.data();
    args.b_stride = 2 * poly;
    args.moduli = br.data();
    args.n = n;
    args.limbs = limbs;
    args.count = count;
    emulate_grid(kernels::elementwise_shape(n, count * limbs), [&](const ThreadIndex& t) { kernels::tensor_thread(t, args); });
    for (uint32_t c = 0; c < count; ++c) {
        const W* a0 = a.data() + 2 * poly * c;
        const W* b0 = b.data() + 2 * poly * c;
        const W* d0 = d.data() + 3 * poly * c;
        if constexpr (sizeof(W) == 8) {
            std::vector<math::Modulus> mods(q.begin(), q.end());
            std::vector<W> e(3 * poly);
            oboro::backend::cpu::tensor(e.data(), e.data() + poly, e.data() + 2 * poly, a0, a0 + poly, b0, b0 + poly,
                                        mods.data(), limbs, n);
            ASSERT_TRUE(std::equal(e.begin(), e.end(), d0)) << "ciphertext " << c;
        } else {
            for (size_t k = 0; k < poly; ++k) {
                const uint64_t m = q[k / n];
                ASSERT_EQ(d0[k], W(uint64_t(a0[k]) * b0[k] % m));
                ASSERT_EQ(d0[poly + k], W((uint64_t(a0[k]) * b0[poly + k] % m + uint64_t(a0[poly + k]) * b0[k] % m) % m));
                ASSERT_EQ(d0[2 * poly + k], W(uint64_t(a0[poly + k]) * b0[poly + k] % m));
            }
        }
    }
}

// Automorphisms in NTT form over a batch: one permutation for all rows, and one per ciphertext
// (a different rotation step each), against the CPU backend's permute with the context's maps.
TEST(CudaEmulatedPermute, MatchesCpuPermute) {
    oboro::ckks::Parameters p;
    p.log_n = 8;
    p.q_bits = {60, 40, 40};
    p.p_bits = {60};
    p.security = oboro::ckks::SecurityLevel::none;
    const auto ctx = oboro::ckks::Context::create(p);
    const uint32_t n = uint32_t(ctx->n()), limbs = 3, cts = 3, rows_per_ct = 2 * limbs, rows = cts * rows_per_ct;
    std::vector<uint32_t> perms;
    for (uint64_t g : {5ull, 25ull, 2ull * n - 1}) {
        const auto& pm = ctx->automorphism_permutation(g);
        perms.insert(perms.end(), pm.begin(), pm.end());
    }
    std::vector<uint64_t> src(size_t(rows) * n);
    for (size_t k = 0; k < src.size(); ++k) src[k] = k * 2654435761u;
    for (uint32_t per : {0u, rows_per_ct}) {
        std::vector<uint64_t> dst(src.size(), 0), expect(src.size());
        kernels::PermuteArgs<uint64_t> args;
        args.dst = dst.data();
        args.src = src.data();
        std::vector<const uint32_t*> table;
        for (uint32_t c = 0; c < cts; ++c) table.push_back(perms.data() + size_t(c) * n);
        args.perm = perms.data();
        if (per) args.perm_table = table.data();
        args.rows_per_perm = per;
        args.n = n;
        args.rows = rows;
        emulate_grid(kernels::elementwise_shape(n, rows), [&](const ThreadIndex& t) { kernels::permute_thread(t, args); });
        for (uint32_t c = 0; c < cts; ++c) {
            const size_t off = size_t(c) * rows_per_ct * n;
            oboro::backend::cpu::permute(expect.data() + off, src.data() + off, perms.data() + (per ? c * n : 0),
                                         rows_per_ct, n);
        }
        ASSERT_EQ(dst, expect) << "rows_per_perm " << per;
    }
}

TEST(CudaEmulator, VisitsEveryThreadOnce2D) {
    const LaunchShape s{Dim3{3, 2, 1}, Dim3{4, 5, 1}};
    std::vector<int> hits(3 * 4 * 2 * 5, 0);
    emulate_grid(s, [&](const ThreadIndex& t) {
        EXPECT_EQ(t.grid_dim.x, 3u);
        EXPECT_EQ(t.block_dim.y, 5u);
        const uint64_t x = t.global_x(), y = t.global_y();
        ASSERT_LT(x, 12u);
        ASSERT_LT(y, 10u);
        ++hits[y * 12 + x];
    });
    for (int h : hits) EXPECT_EQ(h, 1);
}

// A block-wide reversal through shared memory: phase 0 stores, phase 1 reads another thread's
// word. Correct only if phase 1 runs after phase 0 of every thread of the block (the barrier).
TEST(CudaEmulator, BlockPhasesActAsBarriers) {
    const uint32_t blocks = 3, threads = 64;
    std::vector<uint64_t> in(blocks * threads), out(in.size(), 0);
    for (size_t i = 0; i < in.size(); ++i) in[i] = 1000 + i;
    for (auto order : {oboro::cuda::ThreadOrder::forward, oboro::cuda::ThreadOrder::reverse}) {
        std::fill(out.begin(), out.end(), 0);
        oboro::cuda::emulate_block_phases(
            LaunchShape{Dim3{blocks, 1, 1}, Dim3{threads, 1, 1}}, threads, 2,
            [&](const ThreadIndex& t, uint64_t* shared, uint32_t phase) {
                if (phase == 0) shared[t.thread.x] = in[t.global_x()];
                else out[t.global_x()] = shared[threads - 1 - t.thread.x];
            },
            order);
        for (uint32_t b = 0; b < blocks; ++b)
            for (uint32_t i = 0; i < threads; ++i) EXPECT_EQ(out[b * threads + i], in[b * threads + threads - 1 - i]);
    }
}

// Shared memory is poisoned at the start of every block (it is uninitialised on a GPU), and a
// within-phase race (thread i reads the word thread i+1 writes in the same phase) gives
// different results in the two thread orders: the check the kernel tests use.
TEST(CudaEmulator, BlockPhasesPoisonAndExposeRaces) {
    std::vector<uint64_t> seen;
    oboro::cuda::emulate_block_phases(LaunchShape{Dim3{2, 1, 1}, Dim3{4, 1, 1}}, 4, 1,
                                      [&](const ThreadIndex& t, uint64_t* shared, uint32_t) {
                                          seen.push_back(shared[t.thread.x]);
                                          shared[t.thread.x] = 7;  // must not leak into the next block
                                      });
    for (uint64_t v : seen) EXPECT_EQ(v, oboro::cuda::shared_poison);

    auto racy = [](oboro::cuda::ThreadOrder order) {
        std::vector<uint64_t> out(8);
        oboro::cuda::emulate_block_phases(LaunchShape{Dim3{1, 1, 1}, Dim3{8, 1, 1}}, 9, 2,
                                          [&](const ThreadIndex& t, uint64_t* shared, uint32_t phase) {
                                              const uint32_t i = t.thread.x;
                                              if (phase == 0) shared[i] = i, shared[8] = 0;
                                              else shared[i + 1] += shared[i], out[i] = shared[i + 1];
                                          },
                                          order);
        return out;
    };
    EXPECT_NE(racy(oboro::cuda::ThreadOrder::forward), racy(oboro::cuda::ThreadOrder::reverse));
}

TEST(CudaEmulator, OneDimensionalForm) {
    std::vector<int> hits(5 * 32, 0);
    emulate_grid(5, 32, [&](const ThreadIndex& t) { ++hits[t.global_x()]; });
    for (int h : hits) EXPECT_EQ(h, 1);
}

}  // namespace
