// Encrypted matrix products (algorithms layer): the encodings and permutations against their
// definitions, the BSGS linear transform, Jiang et al. and the 3-D method of paper 003 against a
// double-precision matmul, their operation counts against the formulas and paper 003 Table 5,
// every error case, and the same algorithms on batches (in host memory and in a device queue's
// memory: OffsiteQueue) against each element alone, word for word.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>

#include "ckks_test_util.hpp"
#include "error_test_util.hpp"
#include "forwarding_queue.hpp"
#include "oboro/algorithms/linear_transform.hpp"
#include "oboro/algorithms/matmul_3d.hpp"
#include "oboro/algorithms/matmul_block.hpp"
#include "oboro/algorithms/matmul_jiang.hpp"
#include "oboro/algorithms/plain_matrix.hpp"
#include "oboro/backend/cuda/emulated_queue.hpp"
#include "oboro/ckks/batch.hpp"
#include "oboro/util/parallel.hpp"

namespace oboro::test {
namespace {

using namespace oboro::algorithms;

std::vector<double> random_matrix(size_t rows, size_t cols, uint64_t seed) {
    std::mt19937_64 gen(seed);  // test inputs only
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<double> m(rows * cols);
    for (auto& x : m) x = u(gen);
    return m;
}
std::vector<double> random_matrix(size_t d, uint64_t seed) { return random_matrix(d, d, seed); }

// (m x k) (k x n), row-major
std::vector<double> matmul_ref(const std::vector<double>& a, const std::vector<double>& b, size_t m, size_t k,
                               size_t n) {
    std::vector<double> c(m * n, 0.0);
    for (size_t i = 0; i < m; ++i)
        for (size_t l = 0; l < k; ++l)
            for (size_t j = 0; j < n; ++j) c[i * n + j] += a[i * k + l] * b[l * n + j];
    return c;
}
std::vector<double> matmul_ref(const std::vector<double>& a, const std::vector<double>& b, size_t d) {
    return matmul_ref(a, b, d, d, d);
}

double max_abs_diff(const std::vector<double>& x, const std::vector<double>& y) {
    double e = 0;
    for (size_t i = 0; i < x.size(); ++i) e = std::max(e, std::abs(x[i] - y[i]));
    return e;
}

// The second parameter set: N = 2^13 (4096 slots, so d = 16 fills them exactly with d^3), 30-bit scale.
Parameters small_params() {
    Parameters p;
    p.log_n = 13;
    p.q_bits = {50, 30, 30, 30};
    p.p_bits = {50};
    p.scale = std::pow(2.0, 30);
    return p;
}

// A context with relin keys and the Galois keys of both methods for d = 2..16 (where they fit).
struct MatmulKeys {
    ContextPtr ctx;
    std::unique_ptr<KeyGenerator> keygen;
    RelinKey rk;
    GaloisKeys gk;
    std::unique_ptr<Encoder> encoder;
    std::unique_ptr<Encryptor> encryptor;
    std::unique_ptr<Decryptor> decryptor;
    std::unique_ptr<Evaluator> eval;
    std::map<size_t, std::unique_ptr<JiangMatmul>> jiang;
    std::map<size_t, std::unique_ptr<Matmul3D>> cube, cube_paper, cube_hoisted;  // fused, paper, hoisted shifts

    static MatmulKeys& get(const std::string& name) {
        static std::map<std::string, std::unique_ptr<MatmulKeys>> cache;
        auto& slot = cache[name];
        if (!slot) slot = std::make_unique<MatmulKeys>(name == "small" ? small_params() : Parameters::preset(name));
        return *slot;
    }

    explicit MatmulKeys(const Parameters& params) {
        ctx = Context::create(params);
        keygen = std::make_unique<KeyGenerator>(ctx);
        rk = keygen->relin_key();
        encoder = std::make_unique<Encoder>(ctx);
        encryptor = std::make_unique<Encryptor>(ctx, keygen->secret_key());
        decryptor = std::make_unique<Decryptor>(ctx, keygen->secret_key());
        eval = std::make_unique<Evaluator>(ctx);
        std::vector<int64_t> steps;
        for (size_t d = 2; d <= 16; d *= 2) {
            jiang[d] = std::make_unique<JiangMatmul>(ctx, d);
            for (int64_t s : jiang[d]->rotation_steps()) steps.push_back(s);
            if (d * d * d <= ctx->max_slots()) {
                cube[d] = std::make_unique<Matmul3D>(ctx, d, 0, Shifts3D::fused);
                cube_paper[d] = std::make_unique<Matmul3D>(ctx, d, 0, Shifts3D::paper);
                cube_hoisted[d] = std::make_unique<Matmul3D>(ctx, d, 0, Shifts3D::hoisted);
                for (auto* m : {cube[d].get(), cube_paper[d].get(), cube_hoisted[d].get()})
                    for (int64_t s : m->rotation_steps()) steps.push_back(s);
            }
        }
        gk = keygen->galois_keys(steps);
    }

    Ciphertext encrypt(const std::vector<double>& m, size_t d, size_t slots, std::optional<int> level = std::nullopt) {
        return encryptor->encrypt(encoder->encode(flatten(m, d, slots), level, std::nullopt, slots));
    }
    std::vector<double> decrypt(const Ciphertext& ct, size_t d) {
        return unflatten(decryptor->decrypt_decode(ct, *encoder), d);
    }
};

// ---- encodings and permutations ----

TEST(MatrixEncoding, FlattenIsRowMajorAndRoundTrips) {
    const auto m = random_matrix(4, 1);
    const auto flat = flatten(m, 4, 64);
    ASSERT_EQ(flat.size(), 64u);
    EXPECT_EQ(flat[1 * 4 + 2], m[6]);
    for (size_t i = 16; i < 64; ++i) EXPECT_EQ(flat[i], 0.0);
    std::vector<cplx> slots(flat.begin(), flat.end());
    EXPECT_EQ(unflatten(slots, 4), m);
}

TEST(MatrixEncoding, MasksSelectColumnRowAndSquare) {
    const size_t d = 4, slots = 128;
    const auto mc = column_mask(d, 1, slots), mr = row_mask(d, 2, slots), ms = square_mask(d, 3, slots);
    for (size_t s = 0; s < slots; ++s) {
        const size_t t = s / 16, i = (s / 4) % 4, j = s % 4;
        EXPECT_EQ(mc[s], j == 1 ? 1.0 : 0.0);
        EXPECT_EQ(mr[s], i == 2 ? 1.0 : 0.0);
        EXPECT_EQ(ms[s], t == 3 ? 1.0 : 0.0);
    }
}

TEST(MatrixEncoding, JiangPermutationsMatchTheirDefinitions) {
    for (size_t d : {2, 4, 8, 16}) {
        const auto a = random_matrix(d, 10 + d);
        const auto sa = apply_diagonals(sigma_diagonals(d), a);
        const auto ta = apply_diagonals(tau_diagonals(d), a);
        EXPECT_EQ(sigma_diagonals(d).size(), 2 * d - 1);
        EXPECT_EQ(tau_diagonals(d).size(), d);
        for (size_t i = 0; i < d; ++i)
            for (size_t j = 0; j < d; ++j) {
                EXPECT_EQ(sa[i * d + j], a[i * d + (i + j) % d]);
                EXPECT_EQ(ta[i * d + j], a[((i + j) % d) * d + j]);
            }
        for (size_t k = 1; k < d; ++k) {
            const auto pa = apply_diagonals(phi_diagonals(d, k), a);
            const auto qa = apply_diagonals(psi_diagonals(d, k), a);
            EXPECT_EQ(phi_diagonals(d, k).size(), 2u);
            EXPECT_EQ(psi_diagonals(d, k).size(), 1u);
            for (size_t i = 0; i < d; ++i)
                for (size_t j = 0; j < d; ++j) {
                    EXPECT_EQ(pa[i * d + j], a[i * d + (j + k) % d]);
                    EXPECT_EQ(qa[i * d + j], a[((i + k) % d) * d + j]);
                }
        }
    }
}

TEST(MatrixEncoding, JiangIdentityHoldsInTheClear) {
    const size_t d = 8;
    const auto a = random_matrix(d, 3), b = random_matrix(d, 4);
    const auto a0 = apply_diagonals(sigma_diagonals(d), a), b0 = apply_diagonals(tau_diagonals(d), b);
    std::vector<double> c(d * d, 0.0);
    for (size_t k = 0; k < d; ++k) {
        const auto ak = k ? apply_diagonals(phi_diagonals(d, k), a0) : a0;
        const auto bk = k ? apply_diagonals(psi_diagonals(d, k), b0) : b0;
        for (size_t l = 0; l < d * d; ++l) c[l] += ak[l] * bk[l];
    }
    EXPECT_LT(max_abs_diff(c, matmul_ref(a, b, d)), 1e-12);
}

// ---- BSGS linear transform ----

TEST(LinearTransform, BsgsPlanUsesAboutTwoSqrtRotations) {
    // sigma at d = 16: 31 diagonals, offsets 0..15 and 241..255 -> n1 = 8: 7 baby + 3 giant
    std::vector<int64_t> offsets;
    for (const auto& [k, v] : sigma_diagonals(16)) offsets.push_back(k);
    const BsgsPlan p = plan_bsgs(offsets, 256);
    EXPECT_EQ(p.rotations(), 10u);
    EXPECT_EQ(p.baby_size, 8u);
    // tau at d = 16: offsets 16 j -> 3 baby + 3 giant
    offsets.clear();
    for (const auto& [k, v] : tau_diagonals(16)) offsets.push_back(k);
    EXPECT_EQ(plan_bsgs(offsets, 256).rotations(), 6u);
    // one diagonal at 0: no rotation
    EXPECT_EQ(plan_bsgs({0}, 256).rotations(), 0u);
}

// Under double hoisting a baby rotation costs an inner product only, so the plan takes more baby
// steps than the fewest-rotations plan and pays fewer ModDowns (one per giant group).
TEST(LinearTransform, DoubleHoistedPlanTakesMoreBabySteps) {
    auto& K = MatmulKeys::get("S2");
    const ckks::KeySwitchCost cost = ckks::key_switch_cost(*K.ctx, K.ctx->max_level());
    EXPECT_GT(cost.mod_up, cost.mod_down);
    EXPECT_GT(cost.hoisted_rotation, 0);
    EXPECT_LT(cost.hoisted_rotation, cost.rotation);
    EXPECT_LT(ckks::key_switch_cost(*K.ctx, 0).mod_up, cost.mod_up);  // fewer limbs below
    for (size_t D : {16, 64, 256}) {
        SCOPED_TRACE(D);
        std::vector<int64_t> offsets;
        for (size_t k = 0; k < D; ++k) offsets.push_back(int64_t(k));
        const BsgsPlan single = plan_bsgs(offsets, 8192), twice = plan_bsgs_double_hoisted(offsets, 8192, cost);
        EXPECT_GT(twice.baby_size, single.baby_size);
        EXPECT_LT(twice.giant_steps.size(), single.giant_steps.size());
        EXPECT_GE(twice.rotations(), single.rotations());
    }
    // one diagonal at 0: no rotation either way
    EXPECT_EQ(plan_bsgs_double_hoisted({0}, 256, cost).rotations(), 0u);
}

TEST(LinearTransform, MatchesThePlainMapOnTwoParameterSets) {
    for (const char* set : {"S2", "small"})
        for (const Hoisting hoisting : {Hoisting::mod_up, Hoisting::mod_up_and_mod_down}) {
            SCOPED_TRACE(std::string(set) + (hoisting == Hoisting::mod_up ? ", single hoisting" : ", double hoisting"));
            auto& K = MatmulKeys::get(set);
            const size_t n = 64;  // sigma of d = 8, plus random diagonal values
            Diagonals diags = sigma_diagonals(8);
            std::mt19937_64 gen(7);
            std::uniform_real_distribution<double> u(-1, 1);
            for (auto& [k, v] : diags)
                for (auto& x : v) x = u(gen);
            LinearTransform lt(K.ctx, diags, n, hoisting);
            const GaloisKeys gk = K.keygen->galois_keys(lt.rotation_steps());  // the plans differ
            const auto x = random_matrix(8, 8);
            OpCounts counts;
            const Ciphertext y = lt.apply(CountedOps(*K.eval, &counts), K.encrypt(x, 8, n), gk);
            const auto want = apply_diagonals(diags, x);
            EXPECT_LT(max_abs_diff(K.decrypt(y, 8), want), std::string(set) == "S2" ? 1e-6 : 1e-3);
            EXPECT_EQ(counts.cmult, diags.size());
            EXPECT_EQ(counts.add, diags.size() - 1);
            EXPECT_EQ(counts.rot, lt.plan().rotations());
            const size_t giants = lt.plan().giant_rotations();
            EXPECT_EQ(counts.key_switch.mod_ups, 1 + giants);  // babies hoisted
            // one ModDown per rotation, or per giant rotation and one for the sum
            const auto nonzero = [](const std::vector<int64_t>& v) {
                return size_t(std::count_if(v.begin(), v.end(), [](int64_t k) { return k != 0; }));
            };
            EXPECT_EQ(counts.key_switch.mod_downs,
                      hoisting == Hoisting::mod_up ? nonzero(lt.plan().baby_steps) + giants : giants + 1);
            EXPECT_EQ(counts, lt.cost());
            EXPECT_EQ(y.level(), K.ctx->max_level() - 1);
            EXPECT_EQ(y.basis(), Basis::q);
        }
}

// Chained giant rotations (Horner's rule over the groups) need the keys of n1 and -n1 only, and
// rotate once per multiple of n1 between the groups, holes included.
TEST(LinearTransform, ChainedGiantRotationsTakeTwoKeys) {
    auto& K = MatmulKeys::get("S2");
    const ckks::KeySwitchCost cost = ckks::key_switch_cost(*K.ctx, K.ctx->max_level());
    // offsets -31 .. 31 of 1024 slots (a DFT level): contiguous groups on both sides of 0
    std::vector<int64_t> offsets;
    for (int64_t k = -31; k <= 31; ++k) offsets.push_back((k + 1024) % 1024);
    const BsgsPlan fast = plan_bsgs_double_hoisted(offsets, 1024, cost);
    const BsgsPlan low = plan_bsgs_double_hoisted(offsets, 1024, cost, MemoryPolicy::low().key_saving_tolerance);
    EXPECT_LE(low.rotation_steps().size(), fast.rotation_steps().size());
    for (const BsgsPlan& p : {fast, low}) {
        if (p.giants != GiantRotations::chained) continue;
        const int64_t n1 = int64_t(p.baby_size);
        // the groups at -31 .. 31 reach 31 / n1 groups on each side
        EXPECT_EQ(p.forward, size_t(31 / n1));
        EXPECT_EQ(p.backward, size_t((31 + n1 - 1) / n1));
        const std::vector<int64_t> steps = p.rotation_steps();
        EXPECT_EQ(steps.size(), size_t(n1 - 1) + (p.forward > 0) + (p.backward > 0));
        if (p.forward) EXPECT_EQ(std::count(steps.begin(), steps.end(), n1), 1);
        EXPECT_EQ(std::count(steps.begin(), steps.end(), -n1), 1);
    }
    EXPECT_EQ(low.giants, GiantRotations::chained);
    EXPECT_LT(low.baby_size, fast.baby_size);
    // groups at 0, 2 n1 and 3 n1 only: a chain of 3 rotations by n1 (one key), or 2 keyed ones
    const BsgsPlan holes = bsgs_plan({0, 1, 16, 17, 24, 25}, 64, 8, GiantRotations::chained);
    EXPECT_EQ(holes.forward, 3u);
    EXPECT_EQ(holes.backward, 0u);
    EXPECT_EQ(holes.rotation_steps(), (std::vector<int64_t>{1, 8}));
    // its key uses: the baby step's once, the chain's three times
    EXPECT_EQ(holes.key_uses(), (std::vector<std::pair<int64_t, size_t>>{{1, 1}, {8, 3}}));
    // groups at 1 and -1 (mod 8 groups): one rotation each way beats 7 forward
    const BsgsPlan both = bsgs_plan({8, 56}, 64, 8, GiantRotations::chained);
    EXPECT_EQ(both.forward + both.backward, 2u);
    EXPECT_EQ(both.rotation_steps(), (std::vector<int64_t>{-8, 8}));
    EXPECT_EQ(both.key_uses(), (std::vector<std::pair<int64_t, size_t>>{{-8, 1}, {8, 1}}));
    // every plan's key uses are its rotations, step by step
    for (const BsgsPlan& p : {fast, low, bsgs_plan(offsets, 1024, 8, GiantRotations::keyed)}) {
        size_t uses = 0;
        std::vector<int64_t> steps;
        for (const auto& [step, count] : p.key_uses()) {
            uses += count;
            steps.push_back(step);
        }
        EXPECT_EQ(uses, p.rotations());
        EXPECT_EQ(steps, p.rotation_steps());
    }
}

// Every policy gives the plain map: keyed and chained giant rotations, diagonals kept or encoded
// at each use, a chain passing over empty groups; the counts are the model's.
TEST(LinearTransform, LowMemoryPolicyMatchesThePlainMap) {
    for (const char* set : {"S2", "small"}) {
        SCOPED_TRACE(set);
        auto& K = MatmulKeys::get(set);
        const size_t n = 64;
        std::mt19937_64 gen(9);
        std::uniform_real_distribution<double> u(-1, 1);
        Diagonals diags;
        // offsets -12 .. 9 with holes at -5 .. -3 and 4: groups on both sides, some empty
        for (int64_t k = -12; k <= 9; ++k) {
            if ((k >= -5 && k <= -3) || k == 4) continue;
            std::vector<double> v(n);
            for (auto& x : v) x = u(gen);
            diags[(k + int64_t(n)) % int64_t(n)] = std::move(v);
        }
        for (const MemoryPolicy memory : {MemoryPolicy{}, MemoryPolicy::low(), MemoryPolicy{4.0, true}}) {
            SCOPED_TRACE(memory.key_saving_tolerance);
            LinearTransform lt(K.ctx, diags, n, Hoisting::mod_up_and_mod_down, PlaintextScale::prime, memory);
            const GaloisKeys gk = K.keygen->galois_keys(lt.rotation_steps());
            const auto x = random_matrix(8, 8);
            OpCounts counts;
            const Ciphertext y = lt.apply(CountedOps(*K.eval, &counts), K.encrypt(x, 8, n), gk);
            EXPECT_LT(max_abs_diff(K.decrypt(y, 8), apply_diagonals(diags, x)), std::string(set) == "S2" ? 1e-6 : 1e-3);
            EXPECT_EQ(counts, lt.cost());
            EXPECT_EQ(counts.rot, lt.plan().rotations());
            if (memory.key_saving_tolerance > 1) EXPECT_EQ(lt.plan().giants, GiantRotations::chained);
        }
    }
}

// ---- the products ----

struct Case {
    const char* set;
    double bound;
};

class MatmulAccuracy : public ::testing::TestWithParam<Case> {};

TEST_P(MatmulAccuracy, BothMethodsMatchDoubleMatmul) {
    auto& K = MatmulKeys::get(GetParam().set);
    for (size_t d = 2; d <= 16; d *= 2) {
        const auto a = random_matrix(d, 100 + d), b = random_matrix(d, 200 + d);
        const auto want = matmul_ref(a, b, d);
        const Ciphertext cj = K.jiang[d]->multiply(CountedOps(*K.eval, nullptr), K.encrypt(a, d, d * d),
                                                   K.encrypt(b, d, d * d), K.rk, K.gk);
        EXPECT_LT(max_abs_diff(K.decrypt(cj, d), want), GetParam().bound) << "jiang d=" << d;
        EXPECT_EQ(cj.level(), K.ctx->max_level() - 3);
        if (!K.cube.count(d)) continue;
        for (auto* m : {K.cube[d].get(), K.cube_paper[d].get(), K.cube_hoisted[d].get()}) {
            const Ciphertext c3 = m->multiply(CountedOps(*K.eval, nullptr), K.encrypt(a, d, m->slots()),
                                              K.encrypt(b, d, m->slots()), K.rk, K.gk);
            EXPECT_LT(max_abs_diff(K.decrypt(c3, d), want), GetParam().bound) << "3d d=" << d << " " << to_string(m->shifts());
            EXPECT_EQ(c3.level(), K.ctx->max_level() - 3);
            // the other squares are masked to zero
            const auto all = K.decryptor->decrypt_decode(c3, *K.encoder);
            double rest = 0;
            for (size_t s = d * d; s < all.size(); ++s) rest = std::max(rest, std::abs(all[s]));
            EXPECT_LT(rest, GetParam().bound);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Sets, MatmulAccuracy, ::testing::Values(Case{"S2", 1e-4}, Case{"small", 1e-3}),
                         [](const auto& info) { return std::string(info.param.set); });

TEST(Matmul3D, WorksInAllSlotsOfTheCiphertext) {
    // S >= 2 d^3: the layout repeats nothing, the empty squares stay empty
    auto& K = MatmulKeys::get("S2");
    const size_t d = 8;
    Matmul3D m(K.ctx, d, K.ctx->max_slots());
    K.keygen->add_galois_keys(K.gk, m.rotation_steps());
    const auto a = random_matrix(d, 5), b = random_matrix(d, 6);
    const Ciphertext c = m.multiply(CountedOps(*K.eval, nullptr), K.encrypt(a, d, m.slots()), K.encrypt(b, d, m.slots()),
                                    K.rk, K.gk);
    EXPECT_LT(max_abs_diff(K.decrypt(c, d), matmul_ref(a, b, d)), 1e-4);
}

// ---- operation counts ----

TEST(MatmulCounts, ThreeDMatchesPaper003Table5) {
    auto& K = MatmulKeys::get("S2");
    // paper 003 Table 5 (3-D): d -> Add, Rot, cMult, Mult
    const std::map<size_t, std::array<uint64_t, 4>> table = {{4, {10, 14, 3, 1}}, {8, {15, 21, 3, 1}}, {16, {20, 28, 3, 1}}};
    for (const auto& [d, row] : table) {
        const uint64_t log_d = uint64_t(std::log2(double(d)));
        for (bool fused : {false, true}) {
            Matmul3D& m = fused ? *K.cube[d] : *K.cube_paper[d];
            OpCounts c;
            m.multiply(CountedOps(*K.eval, &c), K.encrypt(random_matrix(d, 1), d, m.slots()),
                       K.encrypt(random_matrix(d, 2), d, m.slots()), K.rk, K.gk);
            EXPECT_EQ(c.add, row[0]) << d;
            EXPECT_EQ(c.add, 5 * log_d);
            EXPECT_EQ(c.rot, fused ? 5 * log_d : row[1]) << d;  // fused: one rotation per composed shift
            EXPECT_EQ(c.cmult, row[2]);
            EXPECT_EQ(c.mult, row[3]);
            EXPECT_EQ(c.relin, 1u);
            EXPECT_EQ(c.rescale, 4u);  // Abar, Bbar, the product, M_S(0)
            EXPECT_EQ(c.key_switch.mod_ups, c.rot + 1);  // nothing to hoist: each shift feeds the next
            EXPECT_EQ(m.rotation_steps().size(), (fused ? 5 : 6) * log_d);
        }
    }
}

TEST(MatmulCounts, JiangMatchesItsFormulaAndBeatsPaper003Table5) {
    auto& K = MatmulKeys::get("S2");
    // paper 003 Table 5 ([15], Jiang et al.): d -> Add, Rot, cMult, Mult
    const std::map<size_t, std::array<uint64_t, 4>> paper = {{4, {18, 14, 19, 4}}, {8, {42, 30, 36, 8}}, {16, {90, 62, 65, 16}}};
    for (const auto& [d, row] : paper) {
        const JiangMatmul& m = *K.jiang[d];
        OpCounts c;
        m.multiply(CountedOps(*K.eval, &c), K.encrypt(random_matrix(d, 1), d, d * d),
                   K.encrypt(random_matrix(d, 2), d, d * d), K.rk, K.gk);
        std::vector<int64_t> so, to;
        for (const auto& [k, v] : sigma_diagonals(d)) so.push_back(int64_t(k));
        for (const auto& [k, v] : tau_diagonals(d)) to.push_back(int64_t(k));
        const BsgsPlan ps = plan_bsgs(so, d * d), pt = plan_bsgs(to, d * d);
        // sigma, tau by BSGS; phi^k two rotations, psi^k one (k = 1..d-1)
        EXPECT_EQ(c.rot, ps.rotations() + pt.rotations() + 3 * (d - 1)) << d;
        // 2d-1 + d diagonals, 2(d-1) phi masks
        EXPECT_EQ(c.cmult, (2 * d - 1) + d + 2 * (d - 1)) << d;
        // diagonal sums (2d-2 + d-1), the phi halves (d-1), the products (d-1)
        EXPECT_EQ(c.add, (2 * d - 2) + (d - 1) + (d - 1) + (d - 1)) << d;
        EXPECT_EQ(c.mult, d);
        EXPECT_EQ(c.mult, row[3]);
        EXPECT_EQ(c.relin, 1u);  // the paper's implementation relinearizes each of the d products
        // ModUps: sigma and tau baby steps, their giant steps, phi, psi, the relin
        EXPECT_EQ(c.key_switch.mod_ups, 1 + (ps.giant_steps.size() - 1) + 1 + (pt.giant_steps.size() - 1) + 2 + 1);
        // Rot: 15 / 31 / 61 against the paper's 14 / 30 / 62 (phi^k takes 2 hoisted rotations each);
        // full key switches (ModUps, incl. relinearization) are far fewer than the paper's Rot + Mult
        EXPECT_LE(c.rot, row[1] + 1) << d;
        EXPECT_LT(c.key_switch.mod_ups, (row[1] + row[3]) / 2) << d;
        // the keys: the distinct steps (phi's steps 1..d-1 also serve sigma's baby steps)
        std::set<int64_t> steps(ps.baby_steps.begin(), ps.baby_steps.end());
        steps.insert(ps.giant_steps.begin(), ps.giant_steps.end());
        steps.insert(pt.baby_steps.begin(), pt.baby_steps.end());
        steps.insert(pt.giant_steps.begin(), pt.giant_steps.end());
        for (int64_t k = 1; k < int64_t(d); ++k) steps.insert({k, k - int64_t(d), k * int64_t(d)});
        steps.erase(0);
        EXPECT_EQ(m.rotation_steps(), std::vector<int64_t>(steps.begin(), steps.end()));
    }
}

// ---- errors ----

TEST(MatmulErrors, BadDimensionsAndLayouts) {
    auto& K = MatmulKeys::get("S2");
    EXPECT_ERROR(ValueError, JiangMatmul(K.ctx, 6), "matmul_jiang", "power of two");
    EXPECT_ERROR(ValueError, JiangMatmul(K.ctx, 1), "power of two");
    EXPECT_ERROR(ValueError, JiangMatmul(K.ctx, 128), "d^2", "16384", "8192");
    EXPECT_ERROR(ValueError, Matmul3D(K.ctx, 32), "matmul_3d", "d^3", "32768");
    EXPECT_ERROR(ValueError, Matmul3D(K.ctx, 12), "power of two");
    EXPECT_ERROR(ValueError, Matmul3D(K.ctx, 8, 1000), "1000 slots");
    EXPECT_ERROR(ValueError, flatten(random_matrix(4, 1), 8, 64), "16 values", "8 x 8");
    // an operand in the wrong layout (shape mismatch: a 4 x 4 layout given to d = 8)
    const Ciphertext a4 = K.encrypt(random_matrix(4, 1), 4, 16);
    const Ciphertext a8 = K.encrypt(random_matrix(8, 1), 8, 64);
    EXPECT_ERROR(ValueError, K.jiang[8]->multiply(CountedOps(*K.eval, nullptr), a4, a8, K.rk, K.gk), "matmul_jiang",
                 "'A'", "16 slots", "64");
    EXPECT_ERROR(ValueError, K.cube[8]->multiply(CountedOps(*K.eval, nullptr), a8, a8, K.rk, K.gk), "matmul_3d",
                 "64 slots", "512");
}

TEST(MatmulErrors, LevelTooLow) {
    auto& K = MatmulKeys::get("S2");
    const Ciphertext low = K.encrypt(random_matrix(4, 1), 4, 16, 2);
    const Ciphertext top = K.encrypt(random_matrix(4, 1), 4, 16);
    EXPECT_ERROR(LevelMismatch, K.jiang[4]->multiply(CountedOps(*K.eval, nullptr), low, top, K.rk, K.gk),
                 "matmul_jiang", "'A'", "level 2", "3 levels");
    const Ciphertext low3 = K.encrypt(random_matrix(4, 1), 4, 64, 2);
    const Ciphertext top3 = K.encrypt(random_matrix(4, 1), 4, 64);
    EXPECT_ERROR(LevelMismatch, K.cube[4]->multiply(CountedOps(*K.eval, nullptr), top3, low3, K.rk, K.gk),
                 "matmul_3d", "'B'", "level 2", "3 levels");
}

TEST(MatmulErrors, MissingRotationKeysAreNamed) {
    auto& K = MatmulKeys::get("S2");
    const GaloisKeys few = K.keygen->galois_keys({1});
    const Ciphertext a = K.encrypt(random_matrix(4, 1), 4, 16);
    EXPECT_ERROR(MissingKey, K.jiang[4]->multiply(CountedOps(*K.eval, nullptr), a, a, K.rk, few), "matmul_jiang",
                 "-3", "12", "JiangMatmul::rotation_steps");
    const Ciphertext a3 = K.encrypt(random_matrix(4, 1), 4, 64);
    EXPECT_ERROR(MissingKey, K.cube[4]->multiply(CountedOps(*K.eval, nullptr), a3, a3, K.rk, few), "matmul_3d",
                 "-15", "16", "Matmul3D::rotation_steps");
}

// ---- block products ----

TEST(MatrixEncoding, SplitAndJoinBlocksRoundTripWithZeroPadding) {
    const BlockShape shape{5, 7, 4};  // a 2 x 2 grid, the last row and column of blocks padded
    const auto m = random_matrix(5, 7, 3);
    const auto blocks = split_blocks(m, shape);
    ASSERT_EQ(blocks.size(), 4u);
    EXPECT_EQ(blocks[1][0 * 4 + 2], m[0 * 7 + 6]);  // (0, 6): block (0, 1), entry (0, 2)
    EXPECT_EQ(blocks[2][0 * 4 + 3], m[4 * 7 + 3]);  // (4, 3): block (1, 0), entry (0, 3)
    EXPECT_EQ(blocks[3][0 * 4 + 3], 0.0);           // (4, 7) is padding
    EXPECT_EQ(blocks[1][1 * 4 + 3], 0.0);           // (1, 7) is padding
    EXPECT_EQ(join_blocks(blocks, shape), m);
    EXPECT_ERROR(ValueError, split_blocks(m, BlockShape{5, 6, 4}), "35 values", "5 x 6");
    EXPECT_ERROR(ValueError, split_blocks(m, BlockShape{5, 7, 3}), "power of two");
    EXPECT_ERROR(ValueError, join_blocks(blocks, BlockShape{9, 7, 4}), "4 blocks", "3 x 2");
}

BlockGrid encrypt_grid(MatmulKeys& K, const std::vector<double>& m, const BlockShape& s, size_t slots,
                       std::optional<int> level = std::nullopt) {
    BlockGrid g{s.grid_rows(), s.grid_cols(), {}};
    for (const auto& block : split_blocks(m, s)) g.blocks.push_back(K.encrypt(block, s.d, slots, level));
    return g;
}

std::vector<double> decrypt_grid(MatmulKeys& K, const BlockGrid& g, const BlockShape& s) {
    std::vector<std::vector<double>> blocks;
    for (const auto& ct : g.blocks) blocks.push_back(K.decrypt(ct, s.d));
    return join_blocks(blocks, s);
}

struct BlockCase {
    const char* set;
    size_t m, k, n, d;
    double bound;
};

class BlockMatmulAccuracy : public ::testing::TestWithParam<BlockCase> {};

// Against a double matmul on both bases, and the measured op counts against the cost formula,
// with one thread and with two (the counts do not depend on how the work is spread).
TEST_P(BlockMatmulAccuracy, MatchesDoubleMatmulAndItsCostFormula) {
    const BlockCase& p = GetParam();
    auto& K = MatmulKeys::get(p.set);
    const BlockShape sa{p.m, p.k, p.d}, sb{p.k, p.n, p.d}, sc{p.m, p.n, p.d};
    const auto a = random_matrix(p.m, p.k, 7), b = random_matrix(p.k, p.n, 8);
    const auto want = matmul_ref(a, b, p.m, p.k, p.n);
    const int threads = num_threads();
    for (BlockBase base : {BlockBase::jiang, BlockBase::cube}) {
        const BlockMatmul mm(K.ctx, base, p.d);
        const BlockGrid ea = encrypt_grid(K, a, sa, mm.slots()), eb = encrypt_grid(K, b, sb, mm.slots());
        for (int t : {1, 2}) {
            set_num_threads(t);
            OpCounts counts;
            const BlockGrid c = mm.multiply(CountedOps(*K.eval, &counts), ea, eb, K.rk, K.gk);
            ASSERT_EQ(c.rows, sc.grid_rows());
            ASSERT_EQ(c.cols, sc.grid_cols());
            EXPECT_EQ(c.blocks[0].level(), K.ctx->max_level() - 3);
            EXPECT_LT(max_abs_diff(decrypt_grid(K, c, sc), want), p.bound) << int(base) << " threads " << t;
            EXPECT_EQ(counts, mm.cost(sa.grid_rows(), sa.grid_cols(), sb.grid_cols())) << int(base) << " threads " << t;
            // one relinearization per output block, one transform per input block
            EXPECT_EQ(counts.relin, sc.grid_rows() * sc.grid_cols());
        }
    }
    set_num_threads(threads);
}

INSTANTIATE_TEST_SUITE_P(Grids, BlockMatmulAccuracy,
                         ::testing::Values(BlockCase{"S2", 32, 32, 32, 8, 1e-4},      // 4 x 4 x 4 blocks
                                           BlockCase{"S2", 20, 12, 28, 8, 1e-4},      // rectangular, padded
                                           BlockCase{"small", 16, 8, 12, 4, 1e-2}),  // N = 2^13, 30-bit scale
                         [](const auto& info) {
                             const BlockCase& c = info.param;
                             return std::string(c.set) + "_" + std::to_string(c.m) + "x" + std::to_string(c.k) + "x" +
                                    std::to_string(c.n) + "_d" + std::to_string(c.d);
                         });

TEST(MatmulCounts, OneBlockCostIsTheSingleProduct) {
    // MatmulCost::total(1, 1, 1) is exactly what multiply() of the base methods counts
    auto& K = MatmulKeys::get("S2");
    for (size_t d : {4, 8, 16}) {
        OpCounts cj, c3;
        K.jiang[d]->multiply(CountedOps(*K.eval, &cj), K.encrypt(random_matrix(d, 1), d, d * d),
                             K.encrypt(random_matrix(d, 2), d, d * d), K.rk, K.gk);
        EXPECT_EQ(cj, K.jiang[d]->cost().total(1, 1, 1)) << d;
        for (auto* m : {K.cube[d].get(), K.cube_paper[d].get(), K.cube_hoisted[d].get()}) {
            m->multiply(CountedOps(*K.eval, &c3), K.encrypt(random_matrix(d, 1), d, m->slots()),
                        K.encrypt(random_matrix(d, 2), d, m->slots()), K.rk, K.gk);
            EXPECT_EQ(c3, m->cost().total(1, 1, 1)) << d << " " << to_string(m->shifts());
            c3 = {};
        }
        // hoisted: fewer ModUps than fused (the same Mult/cMult; more, cheaper, inner products)
        const OpCounts fused = K.cube[d]->cost().total(1, 1, 1), hoisted = K.cube_hoisted[d]->cost().total(1, 1, 1);
        EXPECT_LE(hoisted.key_switch.mod_ups, fused.key_switch.mod_ups) << d;
        EXPECT_EQ(hoisted.cmult, 3u);
        EXPECT_EQ(hoisted.mult, 1u);
    }
}

TEST(MatmulErrors, BlockGridsAreChecked) {
    auto& K = MatmulKeys::get("S2");
    const BlockMatmul mm(K.ctx, BlockBase::cube, 4);
    const BlockShape s{8, 8, 4};
    const BlockGrid a = encrypt_grid(K, random_matrix(8, 8, 1), s, mm.slots());
    const BlockGrid tall = encrypt_grid(K, random_matrix(12, 8, 1), BlockShape{12, 8, 4}, mm.slots());
    const CountedOps ops(*K.eval, nullptr);
    EXPECT_ERROR(ValueError, mm.multiply(ops, a, tall, K.rk, K.gk), "matmul_block", "2 x 2", "3 x 2", "do not match");
    BlockGrid mixed = a;
    mixed.blocks[3] = K.encrypt(random_matrix(4, 1), 4, mm.slots(), 2);
    EXPECT_ERROR(LevelMismatch, mm.multiply(ops, a, mixed, K.rk, K.gk), "matmul_block", "'B'", "different levels");
    BlockGrid low = encrypt_grid(K, random_matrix(8, 8, 1), s, mm.slots(), 2);
    EXPECT_ERROR(LevelMismatch, mm.multiply(ops, low, a, K.rk, K.gk), "'A'", "3 levels");
    const BlockGrid jiang_layout = encrypt_grid(K, random_matrix(8, 8, 1), s, 16);
    EXPECT_ERROR(ValueError, mm.multiply(ops, a, jiang_layout, K.rk, K.gk), "'B'", "16 slots", "64");
    BlockGrid ragged = a;
    ragged.blocks.pop_back();
    EXPECT_ERROR(ValueError, mm.multiply(ops, ragged, a, K.rk, K.gk), "3 blocks", "2 x 2 grid");
    EXPECT_ERROR(MissingKey, mm.multiply(ops, a, a, K.rk, K.keygen->galois_keys({1})), "matmul_block",
                 "BlockMatmul::rotation_steps");
    EXPECT_ERROR(ValueError, BlockMatmul(K.ctx, BlockBase::cube, 32), "d^3");
    EXPECT_EQ(BlockMatmul::default_base(16, 8192), BlockBase::cube);
    EXPECT_EQ(BlockMatmul::default_base(32, 8192), BlockBase::jiang);
}

// ---- batches ----
// Every algorithm is one template for a Ciphertext and a CiphertextBatch: a batch must give, for
// each element, the words of the same algorithm on that element alone, and count the operations
// as totals over its elements (op_counts.hpp).

CiphertextBatch batch_of(MatmulKeys& K, const std::vector<Ciphertext>& cts) {
    return CiphertextBatch::from_ciphertexts(*K.ctx, cts);
}

// The block grids of several matrices as one grid of batches (element c of each block: grid c).
BlockGridBatch grid_batch_of(MatmulKeys& K, const std::vector<BlockGrid>& grids) {
    BlockGridBatch g{grids[0].rows, grids[0].cols, {}};
    for (size_t i = 0; i < grids[0].blocks.size(); ++i) {
        std::vector<Ciphertext> parts;
        for (const BlockGrid& grid : grids) parts.push_back(grid.blocks[i]);
        g.blocks.push_back(batch_of(K, parts));
    }
    return g;
}

// Element c of `batch` (host or device memory) is `want`, word for word, at its level and scale.
void expect_element(const CiphertextBatch& batch, size_t c, const Ciphertext& want, const std::string& what) {
    const Ciphertext got = batch.at(c);
    ASSERT_EQ(got.level(), want.level()) << what;
    ASSERT_EQ(got.size(), want.size()) << what;
    ASSERT_EQ(got.word_count(), want.word_count()) << what;
    EXPECT_EQ(got.scale(), want.scale()) << what;
    EXPECT_TRUE(std::equal(got.data(), got.data() + got.word_count(), want.data())) << what << ", element " << c;
}

// A batch in a device queue's memory has the words of its host-memory twin.
void expect_same_words(const CiphertextBatch& device, const CiphertextBatch& host, const std::string& what) {
    ASSERT_NE(device.device(), nullptr) << what;
    ASSERT_EQ(host.device(), nullptr) << what;
    const CiphertextBatch back = device.to_host();
    ASSERT_EQ(back.count(), host.count()) << what;
    ASSERT_EQ(back.word_count(), host.word_count()) << what;
    EXPECT_EQ(back.level(), host.level()) << what;
    EXPECT_EQ(back.scale(), host.scale()) << what;
    EXPECT_TRUE(std::equal(back.data(), back.data() + back.word_count(), host.data())) << what;
}

// A matrix product on a Ciphertext and on a batch, from one generic callable; named for messages.
struct Product {
    std::string name;
    size_t slots;
    std::function<Ciphertext(const CountedOps&, const Ciphertext&, const Ciphertext&)> one;
    std::function<CiphertextBatch(const CountedOps&, const CiphertextBatch&, const CiphertextBatch&)> batch;
};
template <typename F> Product product(std::string name, size_t slots, F f) { return {std::move(name), slots, f, f}; }

// Jiang et al. and the three forms of the 3-D method at dimension d.
std::vector<Product> products(MatmulKeys& K, size_t d) {
    std::vector<Product> out;
    const JiangMatmul* jiang = K.jiang[d].get();
    out.push_back(product("jiang d=" + std::to_string(d), jiang->slots(),
                         [&K, jiang](const CountedOps& ops, const auto& a, const auto& b) {
                             return jiang->multiply(ops, a, b, K.rk, K.gk);
                         }));
    for (const Matmul3D* m : {K.cube[d].get(), K.cube_paper[d].get(), K.cube_hoisted[d].get()})
        out.push_back(product(std::string("3d ") + to_string(m->shifts()) + " d=" + std::to_string(d), m->slots(),
                             [&K, m](const CountedOps& ops, const auto& a, const auto& b) {
                                 return m->multiply(ops, a, b, K.rk, K.gk);
                             }));
    return out;
}

TEST(MatmulBatch, LinearTransformOfABatchIsEachElementTransformed) {
    auto& K = MatmulKeys::get("S2");
    const LinearTransform lt(K.ctx, sigma_diagonals(8), 64);
    std::vector<Ciphertext> xs;
    for (uint64_t c = 0; c < 3; ++c) xs.push_back(K.encrypt(random_matrix(8, 40 + c), 8, 64));
    OpCounts batch_counts, one_counts;
    const CiphertextBatch y = lt.apply(CountedOps(*K.eval, &batch_counts), batch_of(K, xs), K.gk);
    ASSERT_EQ(y.count(), xs.size());
    for (size_t c = 0; c < xs.size(); ++c)
        expect_element(y, c, lt.apply(CountedOps(*K.eval, c == 0 ? &one_counts : nullptr), xs[c], K.gk), "sigma");
    EXPECT_EQ(batch_counts, repeated(one_counts, xs.size()));
    EXPECT_EQ(one_counts, lt.cost());
}

// Double hoisting on a batch: each element's words alone, on the CPU and on the emulated GPU
// queue (the same words); a queue without the extended basis says so before any work.
TEST(MatmulBatch, LinearTransformDoubleHoistingOnABatchAndOnADevice) {
    auto& K = MatmulKeys::get("S2");
    const LinearTransform lt(K.ctx, sigma_diagonals(8), 64, Hoisting::mod_up_and_mod_down);
    const GaloisKeys gk = K.keygen->galois_keys(lt.rotation_steps());
    std::vector<Ciphertext> xs;
    for (uint64_t c = 0; c < 2; ++c) xs.push_back(K.encrypt(random_matrix(8, 50 + c), 8, 64));
    const CiphertextBatch x = batch_of(K, xs);
    OpCounts batch_counts, one_counts, device_counts;
    const CiphertextBatch y = lt.apply(CountedOps(*K.eval, &batch_counts), x, gk);
    for (size_t c = 0; c < xs.size(); ++c)
        expect_element(y, c, lt.apply(CountedOps(*K.eval, c == 0 ? &one_counts : nullptr), xs[c], gk), "sigma");
    EXPECT_EQ(batch_counts, repeated(one_counts, xs.size()));

    const auto emulated = oboro::cuda::make_emulated_queue();
    const CiphertextBatch yd = lt.apply(CountedOps(K.eval->on(emulated), &device_counts), x.to_device(emulated), gk);
    EXPECT_EQ(yd.device(), emulated.get());
    expect_same_words(yd, y, "sigma on the emulated GPU queue");
    EXPECT_EQ(device_counts, batch_counts);

    const auto offsite = std::make_shared<OffsiteQueue>();
    EXPECT_ERROR(Error, lt.apply(CountedOps(K.eval->on(offsite), nullptr), x.to_device(offsite), gk),
                 "rotate_many_extended", "not available on offsite");
}

TEST(MatmulBatch, ProductsOfABatchAreEachElementsProduct) {
    auto& K = MatmulKeys::get("S2");
    for (size_t d : {4, 8})
        for (const Product& f : products(K, d)) {
            std::vector<Ciphertext> as, bs;
            for (uint64_t c = 0; c < 3; ++c) {
                as.push_back(K.encrypt(random_matrix(d, 50 + c), d, f.slots));
                bs.push_back(K.encrypt(random_matrix(d, 60 + c), d, f.slots));
            }
            OpCounts batch_counts, one_counts;
            const CiphertextBatch got = f.batch(CountedOps(*K.eval, &batch_counts), batch_of(K, as), batch_of(K, bs));
            ASSERT_EQ(got.count(), as.size()) << f.name;
            for (size_t c = 0; c < as.size(); ++c)
                expect_element(got, c, f.one(CountedOps(*K.eval, c == 0 ? &one_counts : nullptr), as[c], bs[c]), f.name);
            EXPECT_EQ(batch_counts, repeated(one_counts, as.size())) << f.name;
            // and the products are right
            EXPECT_LT(max_abs_diff(K.decrypt(got.at(2), d), matmul_ref(random_matrix(d, 52), random_matrix(d, 62), d)),
                      1e-4)
                << f.name;
        }
}

TEST(MatmulBatch, BlockProductsOfABatchAreEachElementsProduct) {
    auto& K = MatmulKeys::get("S2");
    const size_t d = 4, count = 2;
    const BlockShape sa{8, 8, d}, sb{8, 4, d};  // 2 x 2 times 2 x 1 blocks
    const int threads = num_threads();
    for (BlockBase base : {BlockBase::jiang, BlockBase::cube}) {
        const BlockMatmul mm(K.ctx, base, d);
        std::vector<BlockGrid> as, bs;
        for (uint64_t c = 0; c < count; ++c) {
            as.push_back(encrypt_grid(K, random_matrix(8, 8, 70 + c), sa, mm.slots()));
            bs.push_back(encrypt_grid(K, random_matrix(8, 4, 80 + c), sb, mm.slots()));
        }
        const BlockGridBatch a = grid_batch_of(K, as), b = grid_batch_of(K, bs);
        std::vector<BlockGrid> want;
        for (size_t c = 0; c < count; ++c) want.push_back(mm.multiply(CountedOps(*K.eval, nullptr), as[c], bs[c], K.rk, K.gk));
        for (int t : {1, 2}) {
            set_num_threads(t);
            OpCounts counts;
            const BlockGridBatch got = mm.multiply(CountedOps(*K.eval, &counts), a, b, K.rk, K.gk);
            ASSERT_EQ(got.rows, 2u);
            ASSERT_EQ(got.cols, 1u);
            for (size_t i = 0; i < got.blocks.size(); ++i)
                for (size_t c = 0; c < count; ++c)
                    expect_element(got.blocks[i], c, want[c].blocks[i],
                                   "base " + std::to_string(int(base)) + " block " + std::to_string(i));
            EXPECT_EQ(counts, repeated(mm.cost(2, 2, 1), count)) << int(base) << " threads " << t;
        }
    }
    set_num_threads(threads);
}

TEST(MatmulBatch, BatchesOfDifferentLengthsAreRefused) {
    auto& K = MatmulKeys::get("S2");
    std::vector<Ciphertext> three;
    for (uint64_t c = 0; c < 3; ++c) three.push_back(K.encrypt(random_matrix(4, c), 4, 16));
    const CiphertextBatch a = batch_of(K, three), b = batch_of(K, {three[0], three[1]});
    const CountedOps ops(*K.eval, nullptr);
    EXPECT_ERROR(ValueError, K.jiang[4]->multiply(ops, a, b, K.rk, K.gk), "matmul_jiang", "batch of 3", "batch of 2");
    const BlockMatmul mm(K.ctx, BlockBase::jiang, 4);
    const BlockGridBatch ga{1, 2, {a, a}}, gb{2, 1, {b, b}}, mixed{1, 2, {a, b}};
    EXPECT_ERROR(ValueError, mm.multiply(ops, ga, gb, K.rk, K.gk), "matmul_block", "batch of 3", "batch of 2");
    EXPECT_ERROR(ValueError, mm.multiply(ops, mixed, gb, K.rk, K.gk), "matmul_block", "blocks of operand 'A'",
                 "different lengths", "batch of 3", "batch of 2");
    // and the low-level check names the batch
    const CiphertextBatch low = batch_of(K, {K.encrypt(random_matrix(4, 1), 4, 16, 2)});
    EXPECT_ERROR(LevelMismatch, K.jiang[4]->multiply(ops, low, low, K.rk, K.gk), "'A'", "batch of 1, level 2");
}

// A batch takes the masks and diagonals as one-plaintext batches in its own memory: copied to a
// device once per level, the host encodings' words.
TEST(MatmulBatch, LevelPlaintextsAreCopiedToADeviceOncePerLevel) {
    auto& K = MatmulKeys::get("S2");
    const size_t d = 4, slots = 64;
    const LevelPlaintexts pts(K.ctx, {column_mask(d, 0, slots), row_mask(d, 0, slots)}, slots);
    const auto queue = std::make_shared<OffsiteQueue>();
    const int level = K.ctx->max_level();
    const auto& host = pts.at(level);
    const auto& device = pts.at(level, queue);
    EXPECT_EQ(queue->allocations, 2u);
    EXPECT_EQ(&pts.at(level, queue), &device);
    EXPECT_EQ(queue->allocations, 2u);  // cached: nothing copied again
    const auto& host_batches = pts.at(level, nullptr);
    ASSERT_EQ(device.size(), 2u);
    for (size_t i = 0; i < device.size(); ++i) {
        EXPECT_EQ(device[i].device(), queue.get());
        EXPECT_EQ(device[i].count(), 1u);
        EXPECT_EQ(host_batches[i].device(), nullptr);
        for (const PlaintextBatch& b : {device[i].to_host(), host_batches[i]}) {
            EXPECT_EQ(b.level(), host[i].level());
            EXPECT_EQ(b.scale(), host[i].scale());
            ASSERT_EQ(b.word_count(), host[i].word_count());
            EXPECT_TRUE(std::equal(b.data(), b.data() + b.word_count(), host[i].data()));
        }
    }
    EXPECT_NE(&pts.at(level - 1, queue), &device);
    EXPECT_EQ(queue->allocations, 4u);
}

// The algorithms on batches in a device queue's memory (OffsiteQueue: separate allocations, the
// CPU's kernels), with an evaluator on that queue: the host path's words and counts, results in
// the device's memory.
TEST(MatmulBatch, AlgorithmsRunOnBatchesInDeviceMemory) {
    auto& K = MatmulKeys::get("S2");
    const auto queue = std::make_shared<OffsiteQueue>();
    const Evaluator dev(K.ctx, queue);
    const size_t d = 4, count = 2;
    auto inputs = [&](size_t slots, uint64_t seed) {
        std::vector<Ciphertext> cts;
        for (uint64_t c = 0; c < count; ++c) cts.push_back(K.encrypt(random_matrix(d, seed + c), d, slots));
        return batch_of(K, cts);
    };

    const LinearTransform lt(K.ctx, tau_diagonals(d), d * d);
    const CiphertextBatch x = inputs(d * d, 90);
    OpCounts host_counts, device_counts;
    const CiphertextBatch y = lt.apply(CountedOps(dev, &device_counts), x.to_device(queue), K.gk);
    expect_same_words(y, lt.apply(CountedOps(*K.eval, &host_counts), x, K.gk), "tau");
    EXPECT_EQ(y.device(), queue.get());
    EXPECT_EQ(device_counts, host_counts);

    for (const Product& f : products(K, d)) {
        const CiphertextBatch a = inputs(f.slots, 100), b = inputs(f.slots, 110);
        OpCounts hc, dc;
        const CiphertextBatch got = f.batch(CountedOps(dev, &dc), a.to_device(queue), b.to_device(queue));
        EXPECT_EQ(got.device(), queue.get()) << f.name;
        expect_same_words(got, f.batch(CountedOps(*K.eval, &hc), a, b), f.name);
        EXPECT_EQ(dc, hc) << f.name;
    }

    for (BlockBase base : {BlockBase::jiang, BlockBase::cube}) {
        const BlockMatmul mm(K.ctx, base, d);
        BlockGridBatch a{2, 1, {inputs(mm.slots(), 120), inputs(mm.slots(), 130)}};
        BlockGridBatch b{1, 2, {inputs(mm.slots(), 140), inputs(mm.slots(), 150)}};
        BlockGridBatch da = a, db = b;
        for (auto& blk : da.blocks) blk = blk.to_device(queue);
        for (auto& blk : db.blocks) blk = blk.to_device(queue);
        OpCounts hc, dc;
        const BlockGridBatch got = mm.multiply(CountedOps(dev, &dc), da, db, K.rk, K.gk);
        const BlockGridBatch want = mm.multiply(CountedOps(*K.eval, &hc), a, b, K.rk, K.gk);
        ASSERT_EQ(got.blocks.size(), 4u);
        for (size_t i = 0; i < got.blocks.size(); ++i)
            expect_same_words(got.blocks[i], want.blocks[i], "block base " + std::to_string(int(base)));
        EXPECT_EQ(dc, hc) << int(base);
        EXPECT_EQ(dc, repeated(mm.cost(2, 1, 2), count)) << int(base);
    }
}


// ---- plaintext matrix x encrypted vector ----

std::vector<double> matvec_ref(const std::vector<double>& m, size_t rows, size_t cols, const std::vector<double>& x) {
    return matmul_ref(m, x, rows, cols, 1);
}

// x (cols values) as ceil(cols / slots) ciphertexts of `slots` slots, the pieces in order.
std::vector<Ciphertext> encrypt_pieces(MatmulKeys& K, const std::vector<double>& x, size_t slots,
                                       std::optional<int> level = std::nullopt, std::optional<double> scale = std::nullopt) {
    std::vector<Ciphertext> out;
    for (size_t at = 0; at < x.size(); at += slots) {
        std::vector<double> piece(x.begin() + long(at), x.begin() + long(std::min(at + slots, x.size())));
        out.push_back(K.encryptor->encrypt(K.encoder->encode(piece, level, scale, slots)));
    }
    return out;
}

// The first `rows` values of y (pieces of `slots` values each).
std::vector<double> decrypt_pieces(MatmulKeys& K, const std::vector<Ciphertext>& y, size_t slots, size_t rows) {
    std::vector<double> out;
    for (const Ciphertext& ct : y) {
        const auto v = K.decryptor->decrypt_decode(ct, *K.encoder);
        for (size_t l = 0; l < slots; ++l) out.push_back(v[l].real());
    }
    for (size_t l = rows; l < out.size(); ++l) EXPECT_LT(std::abs(out[l]), 1e-5) << "slot " << l << " after the rows";
    out.resize(rows);
    return out;
}

TEST(PlainMatrix, MatchesDoublePrecisionForSquareRectangularAndBlockShapes) {
    struct Shape { size_t rows, cols, slots; };
    // fits, padded into more slots, wide, tall, rows beyond the slots, columns beyond, both
    const std::vector<Shape> shapes = {{64, 64, 64}, {64, 64, 256}, {10, 50, 64}, {50, 10, 64}, {200, 64, 64},
                                       {64, 200, 64}, {130, 150, 64}, {1, 1, 1}, {3, 1, 4}};
    for (const char* set : {"S2", "small"}) {
        auto& K = MatmulKeys::get(set);
        for (const Shape& sh : shapes)
            for (const Hoisting hoisting : {Hoisting::mod_up, Hoisting::mod_up_and_mod_down}) {
                SCOPED_TRACE(std::string(set) + " " + std::to_string(sh.rows) + "x" + std::to_string(sh.cols) + " on " +
                             std::to_string(sh.slots) + (hoisting == Hoisting::mod_up ? " single" : " double"));
                const auto m = random_matrix(sh.rows, sh.cols, 1000 + sh.rows * 7 + sh.cols);
                const auto x = random_matrix(sh.cols, 1, 2000 + sh.cols);
                const PlainMatrix pm(K.ctx, m, sh.rows, sh.cols, sh.slots, hoisting);
                EXPECT_EQ(pm.input_count(), (sh.cols + sh.slots - 1) / sh.slots);
                EXPECT_EQ(pm.output_count(), (sh.rows + sh.slots - 1) / sh.slots);
                const GaloisKeys gk = K.keygen->galois_keys(pm.rotation_steps());
                OpCounts counts;
                const auto xs = encrypt_pieces(K, x, sh.slots);
                const auto y = pm.apply(CountedOps(*K.eval, &counts), xs, gk);
                ASSERT_EQ(y.size(), pm.output_count());
                const auto got = decrypt_pieces(K, y, sh.slots, sh.rows);
                const auto want = matvec_ref(m, sh.rows, sh.cols, x);
                // |y| <= cols; the encryption error of each product term adds up over cols terms
                const double bound = std::string(set) == "S2" ? 24.0 - std::log2(double(sh.cols)) / 2 : 10.0;
                std::vector<cplx> g(got.begin(), got.end()), w(want.begin(), want.end());
                EXPECT_GT(precision_bits(g, w), bound);
                EXPECT_EQ(counts, pm.cost());
                for (const Ciphertext& ct : y) {
                    EXPECT_EQ(ct.level(), K.ctx->max_level() - 1);
                    EXPECT_DOUBLE_EQ(ct.scale(), xs[0].scale());
                }
            }
    }
}

TEST(PlainMatrix, SkipsZeroDiagonalsAndZeroBlocks) {
    auto& K = MatmulKeys::get("S2");
    // a small matrix in many slots: rows + cols - 1 diagonals at most
    const PlainMatrix small(K.ctx, random_matrix(8, 8, 5), 8, 8, 4096);
    EXPECT_EQ(small.diagonal_count(), 15u);
    // tridiagonal: 3 diagonals
    std::vector<double> tri(64 * 64, 0.0);
    for (size_t i = 0; i < 64; ++i)
        for (size_t j = (i ? i - 1 : 0); j <= std::min<size_t>(i + 1, 63); ++j) tri[i * 64 + j] = 1.0 + double(i);
    EXPECT_EQ(PlainMatrix(K.ctx, tri, 64, 64, 64).diagonal_count(), 3u);
    // rows 64..127 zero: the second output is the zero vector, at the level and scale of the first
    auto m = random_matrix(128, 64, 6);
    std::fill(m.begin() + 64 * 64, m.end(), 0.0);
    const PlainMatrix pm(K.ctx, m, 128, 64, 64);
    const GaloisKeys gk = K.keygen->galois_keys(pm.rotation_steps());
    const auto x = random_matrix(64, 1, 7);
    const auto y = pm.apply(CountedOps(*K.eval, nullptr), encrypt_pieces(K, x, 64), gk);
    ASSERT_EQ(y.size(), 2u);
    EXPECT_EQ(y[1].level(), y[0].level());
    EXPECT_EQ(y[1].scale(), y[0].scale());
    const auto got = decrypt_pieces(K, y, 64, 128);
    const auto want = matvec_ref(m, 128, 64, x);
    EXPECT_LT(max_abs_diff(got, want), 1e-5);
}

// The steps from a shape alone are those of a matrix with no zero entry of that shape, for one
// block, several blocks of every size, either hoisting; and a full-slot shape costs no matrix.
TEST(PlainMatrix, DenseRotationStepsFromTheShapeAlone) {
    auto& K = MatmulKeys::get("S2");
    struct Shape {
        size_t rows, cols, slots;
    };
    for (const Shape& sh : {Shape{8, 8, 8}, Shape{3, 5, 8}, Shape{5, 3, 16}, Shape{20, 7, 8}, Shape{7, 20, 8},
                            Shape{100, 37, 32}, Shape{64, 64, 4096}, Shape{1, 1, 1}})
        for (Hoisting h : {Hoisting::mod_up, Hoisting::mod_up_and_mod_down}) {
            const std::vector<double> ones(sh.rows * sh.cols, 1.0);
            EXPECT_EQ(PlainMatrix::dense_rotation_steps(*K.ctx, sh.rows, sh.cols, sh.slots, h),
                      PlainMatrix(K.ctx, ones, sh.rows, sh.cols, sh.slots, h).rotation_steps())
                << sh.rows << " x " << sh.cols << " in " << sh.slots;
        }
    // 2^13 x 2^13 in 2^13 slots: 512 MiB as a matrix, a few plans here
    const auto full = PlainMatrix::dense_rotation_steps(*K.ctx, 8192, 8192, 8192, Hoisting::mod_up_and_mod_down);
    EXPECT_GT(full.size(), 2u);
    EXPECT_LT(full.size(), 8192u);
    EXPECT_THROW(PlainMatrix::dense_rotation_steps(*K.ctx, 0, 3, 8), ValueError);
    EXPECT_THROW(PlainMatrix::dense_rotation_steps(*K.ctx, 3, 3, 6), ValueError);
}

TEST(PlainMatrix, StandardScaleLandsOnTheStandardScaleOfTheLevelBelow) {
    auto& K = MatmulKeys::get("S2");
    const auto m = random_matrix(16, 16, 8);
    const PlainMatrix pm(K.ctx, m, 16, 16, 16, Hoisting::mod_up_and_mod_down, PlaintextScale::standard);
    const GaloisKeys gk = K.keygen->galois_keys(pm.rotation_steps());
    for (int level = K.ctx->max_level(); level >= 1; --level) {
        const auto x = random_matrix(16, 1, 9);
        const auto xs = encrypt_pieces(K, x, 16, level, K.ctx->standard_scale(level));
        ASSERT_EQ(xs[0].scale(), K.ctx->standard_scale(level));
        const auto y = pm.apply(CountedOps(*K.eval, nullptr), xs, gk);
        EXPECT_EQ(y[0].level(), level - 1);
        EXPECT_EQ(y[0].scale(), K.ctx->standard_scale(level - 1));  // exactly
        EXPECT_LT(max_abs_diff(decrypt_pieces(K, y, 16, 16), matvec_ref(m, 16, 16, x)), 1e-5);
    }
}

TEST(PlainMatrix, OfABatchIsEachElementMultiplied) {
    auto& K = MatmulKeys::get("S2");
    const auto m = random_matrix(100, 70, 10);
    const PlainMatrix pm(K.ctx, m, 100, 70, 64, Hoisting::mod_up_and_mod_down);
    const GaloisKeys gk = K.keygen->galois_keys(pm.rotation_steps());
    std::vector<std::vector<Ciphertext>> per_element;
    for (uint64_t c = 0; c < 3; ++c) per_element.push_back(encrypt_pieces(K, random_matrix(70, 1, 60 + c), 64));
    std::vector<CiphertextBatch> x;
    for (size_t j = 0; j < pm.input_count(); ++j) {
        std::vector<Ciphertext> parts;
        for (const auto& e : per_element) parts.push_back(e[j]);
        x.push_back(batch_of(K, parts));
    }
    OpCounts batch_counts, one_counts;
    const auto y = pm.apply(CountedOps(*K.eval, &batch_counts), x, gk);
    ASSERT_EQ(y.size(), pm.output_count());
    for (size_t c = 0; c < per_element.size(); ++c) {
        const auto want = pm.apply(CountedOps(*K.eval, c == 0 ? &one_counts : nullptr), per_element[c], gk);
        for (size_t i = 0; i < y.size(); ++i) expect_element(y[i], c, want[i], "output " + std::to_string(i));
    }
    EXPECT_EQ(batch_counts, repeated(one_counts, per_element.size()));
}

TEST(PlainMatrix, BlockDiagonalAppliesOneBlockToEveryPackedVector) {
    auto& K = MatmulKeys::get("S2");
    const size_t rows = 10, cols = 30, d = 32, slots = 256, copies = 8;
    const auto b = random_matrix(rows, cols, 13);
    const PlainMatrix pm = PlainMatrix::block_diagonal(K.ctx, b, rows, cols, copies, slots, Hoisting::mod_up_and_mod_down);
    EXPECT_EQ(pm.rows(), copies * d);
    EXPECT_EQ(pm.cols(), copies * d);
    // the diagonals of one block, whatever the number of copies
    const PlainMatrix one = PlainMatrix::block_diagonal(K.ctx, b, rows, cols, 1, slots, Hoisting::mod_up_and_mod_down);
    EXPECT_EQ(pm.diagonal_count(), one.diagonal_count());
    EXPECT_EQ(pm.cost(), one.cost());
    const GaloisKeys gk = K.keygen->galois_keys(pm.rotation_steps());
    std::vector<double> x(slots, 0.0), want(slots, 0.0);
    for (size_t t = 0; t < copies; ++t) {
        const auto v = random_matrix(cols, 1, 100 + t);
        std::copy(v.begin(), v.end(), x.begin() + long(t * d));
        const auto y = matvec_ref(b, rows, cols, v);
        std::copy(y.begin(), y.end(), want.begin() + long(t * d));
    }
    const auto y = pm.apply(CountedOps(*K.eval, nullptr), encrypt_pieces(K, x, slots), gk);
    EXPECT_LT(max_abs_diff(decrypt_pieces(K, y, slots, slots), want), 1e-5);
    EXPECT_ERROR(ValueError, PlainMatrix::block_diagonal(K.ctx, b, rows, cols, 9, slots), "at most 8");
    EXPECT_ERROR(ValueError, PlainMatrix::block_diagonal(K.ctx, b, rows, cols, 0, slots), "at most 8");
}

TEST(PlainMatrix, RefusesBadInputBeforeAnyWork) {
    auto& K = MatmulKeys::get("S2");
    const auto m = random_matrix(8, 70, 11);
    EXPECT_ERROR(ValueError, PlainMatrix(K.ctx, m, 8, 71, 64), "560 values for a 8 x 71 matrix");
    EXPECT_ERROR(ValueError, PlainMatrix(K.ctx, {}, 0, 3, 64), "empty");
    EXPECT_ERROR(ValueError, PlainMatrix(K.ctx, m, 8, 70, 48), "not a power of two");
    EXPECT_ERROR(ValueError, PlainMatrix(K.ctx, m, 8, 70, 2 * K.ctx->max_slots()), "not a power of two");
    auto bad = m;
    bad[75] = std::nan("");
    EXPECT_ERROR(ValueError, PlainMatrix(K.ctx, bad, 8, 70, 64), "entry (1, 5)");

    const PlainMatrix pm(K.ctx, m, 8, 70, 64);
    const GaloisKeys gk = K.keygen->galois_keys(pm.rotation_steps());
    const auto x = random_matrix(70, 1, 12);
    const auto xs = encrypt_pieces(K, x, 64);
    EXPECT_ERROR(ValueError, pm.apply(CountedOps(*K.eval, nullptr), std::vector<Ciphertext>{xs[0]}, gk),
                 "takes 2 ciphertext(s) of x, not 1");
    EXPECT_ERROR(ValueError, pm.apply(CountedOps(*K.eval, nullptr), encrypt_pieces(K, x, 128), gk), "slots");
    std::vector<Ciphertext> mixed = {xs[0], encrypt_pieces(K, x, 64, 1)[1]};
    EXPECT_ERROR(LevelMismatch, pm.apply(CountedOps(*K.eval, nullptr), mixed, gk), "levels");
    std::vector<Ciphertext> low = encrypt_pieces(K, x, 64, 0);
    EXPECT_ERROR(LevelMismatch, pm.apply(CountedOps(*K.eval, nullptr), low, gk), "level");
    EXPECT_ERROR(MissingKey, pm.apply(CountedOps(*K.eval, nullptr), xs, GaloisKeys{}), "PlainMatrix::rotation_steps");
}
}  // namespace
}  // namespace oboro::test
