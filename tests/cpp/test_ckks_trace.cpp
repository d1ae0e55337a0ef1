// Hoisted rotations and trace-type functions (rotate-and-sum) against a double-precision
// reference, with precision bounds in bits, on S1, S2 and a log N = 15 set: every strategy and
// every h, total, block and strided sums, operation counts and the errors.
#include <cstdio>

#include "ckks_test_util.hpp"
#include "error_test_util.hpp"
#include "oboro/ckks/trace.hpp"

using namespace oboro::test;
using oboro::MissingKey;
using oboro::ValueError;

namespace {
std::vector<cplx> rotate_ref(const std::vector<cplx>& v, int64_t k) {
    const int64_t n = int64_t(v.size());
    std::vector<cplx> out(v.size());
    for (int64_t i = 0; i < n; ++i) out[size_t(i)] = v[size_t(((i + k) % n + n) % n)];
    return out;
}

// slot t of the result = sum_{j < 2^rounds} x[t + j*stride] (cyclic)
std::vector<cplx> sum_ref(const std::vector<cplx>& v, const SumSpec& spec) {
    const int64_t n = int64_t(v.size());
    std::vector<cplx> out(v.size());
    for (int64_t t = 0; t < n; ++t)
        for (int64_t j = 0; j < (int64_t(1) << spec.rounds); ++j)
            out[size_t(t)] += v[size_t(((t + j * spec.stride) % n + n) % n)];
    return out;
}

// Only the slots that hold a meaningful result (the first slot of each block for block sums).
std::vector<cplx> every(const std::vector<cplx>& v, size_t step) {
    std::vector<cplx> out;
    for (size_t i = 0; i < v.size(); i += step) out.push_back(v[i]);
    return out;
}

Parameters log15() {
    Parameters p;
    p.log_n = 15;
    p.q_bits = {60, 40, 40};
    p.p_bits = {60};
    p.scale = 0x1p40;
    return p;
}

Keys& keys_for(const std::string& name) {
    if (name != "L15") return Keys::get(name);
    static Keys k(log15());
    return k;
}

// Galois keys for a set of steps, cached per (preset, steps).
const GaloisKeys& galois_for(const std::string& name, const std::vector<int64_t>& steps) {
    static std::map<std::pair<std::string, std::vector<int64_t>>, GaloisKeys> cache;
    auto it = cache.find({name, steps});
    if (it == cache.end()) it = cache.emplace(std::make_pair(name, steps), keys_for(name).keygen->galois_keys(steps)).first;
    return it->second;
}

std::vector<int64_t> unite(std::vector<int64_t> a, const std::vector<int64_t>& b) {
    a.insert(a.end(), b.begin(), b.end());
    std::sort(a.begin(), a.end());
    a.erase(std::unique(a.begin(), a.end()), a.end());
    return a;
}
}  // namespace

class TraceTest : public ::testing::TestWithParam<std::string> {
protected:
    Keys& k() { return keys_for(GetParam()); }
    size_t slots() { return k().ctx->max_slots(); }
    const Context& ctx() { return *k().ctx; }

    // Runs `spec` on a random input with `slots` slots with every strategy in `hs` (0: doubling,
    // -1: automatic), checks each against the reference (on every `check_every`-th slot) with
    // `bits` of precision, and the strategies against each other.
    void check_sum(const SumSpec& spec, size_t n_slots, const std::vector<int>& hs, double bits, size_t check_every = 1,
                   std::optional<int> level = std::nullopt) {
        std::vector<int64_t> steps;
        for (int h : hs)
            steps = unite(steps, sum_rotation_steps(ctx(), spec, n_slots,
                                                    h == 0 ? SumStrategy::doubling
                                                           : h < 0 ? SumStrategy::automatic : SumStrategy::hoisted,
                                                    std::max(h, 1)));
        const GaloisKeys& gk = galois_for(GetParam(), steps);
        const auto x = random_complex(n_slots, 1.0, 40 + uint64_t(spec.rounds));
        const Ciphertext cx = k().encrypt(x, level, true, n_slots);
        const auto want = every(sum_ref(x, spec), check_every);
        std::vector<cplx> first;
        for (int h : hs) {
            const SumStrategy s = h == 0 ? SumStrategy::doubling : h < 0 ? SumStrategy::automatic : SumStrategy::hoisted;
            const Ciphertext r = rotate_and_sum(*k().eval, cx, spec, gk, s, std::max(h, 1));
            EXPECT_EQ(r.level(), cx.level());
            EXPECT_EQ(r.scale(), cx.scale());
            const auto got = every(k().decrypt(r), check_every);
            const double p = precision_bits(got, want);
            EXPECT_GE(p, bits) << GetParam() << " stride " << spec.stride << " rounds " << spec.rounds << " "
                               << to_string(s) << " h " << h;
            if (first.empty()) first = got;
            else EXPECT_GE(precision_bits(got, first), bits) << "strategy " << to_string(s) << " h " << h << " vs first";
            std::printf("[ info ] %s slots %zu stride %lld rounds %d %s h=%d: %.2f bits\n", GetParam().c_str(), n_slots,
                        (long long)spec.stride, spec.rounds, to_string(s), h, p);
        }
    }
    std::vector<int> all_h(int rounds) {
        std::vector<int> hs = {0, -1};
        for (int h = 1; h <= rounds; ++h) hs.push_back(h);
        return hs;
    }
};

// Sums of 2^M fresh values: the error of each summand adds up, about M/2 bits lost (random
// signs) on top of a rotation's 21-22 bits; the bounds leave 2-3 bits for the tail.
TEST_P(TraceTest, TotalSumEveryStrategyAndH) {
    const size_t n_slots = GetParam() == "S1" ? 64 : 32;  // h = 1 needs 2^M - 1 keys
    const SumSpec spec = SumSpec::total(n_slots);
    check_sum(spec, n_slots, all_h(spec.rounds), 21.0 - spec.rounds / 2.0);
}

TEST_P(TraceTest, TotalSumFullSlots) {
    const SumSpec spec = SumSpec::total(slots());
    const int m = spec.rounds;
    check_sum(spec, slots(), {0, m, (m + 2) / 3, -1}, 21.0 - m / 2.0);
}

TEST_P(TraceTest, BlockSums) {
    for (size_t block : {size_t(2), size_t(8)}) {
        const SumSpec spec = SumSpec::blocks(block);
        check_sum(spec, slots(), all_h(spec.rounds), 21.0 - spec.rounds / 2.0, block);
    }
}

TEST_P(TraceTest, StrideSums) {
    check_sum(SumSpec::strided(16, 8), slots(), all_h(3), 19.0);
    check_sum(SumSpec::strided(-3, 4), slots(), all_h(2), 19.0);
    // the largest stride that fits: slots/2, two terms
    check_sum(SumSpec::strided(int64_t(slots() / 2), 2), slots(), all_h(1), 20.0);
}

TEST_P(TraceTest, LevelZeroInput) {
    const SumSpec spec = SumSpec::strided(1, 16);
    check_sum(spec, slots(), {0, 2, -1}, 21.0 - spec.rounds / 2.0, 1, 0);
}

TEST_P(TraceTest, RotateManyMatchesRotate) {
    const int64_t n = int64_t(slots());
    const auto x = random_complex(slots(), 1.0, 18);
    const Ciphertext cx = k().encrypt(x);
    const std::vector<int64_t> steps = {1, 5, 0, -1, n - 1, -(n - 1), n / 2, 1};
    KeySwitchCounts counts;
    const auto many = k().eval->rotate_many(cx, steps, k().gk, &counts);
    ASSERT_EQ(many.size(), steps.size());
    for (size_t i = 0; i < steps.size(); ++i) {
        const auto got = k().decrypt(many[i]);
        EXPECT_GE(precision_bits(got, rotate_ref(x, steps[i])), 21.0) << "step " << steps[i];
        EXPECT_GE(precision_bits(got, k().decrypt(k().eval->rotate(cx, steps[i], k().gk))), 21.0) << "step " << steps[i];
        EXPECT_EQ(many[i].level(), cx.level());
        EXPECT_EQ(many[i].scale(), cx.scale());
    }
    EXPECT_EQ(counts, (KeySwitchCounts{1, 7, 7}));  // one ModUp; step 0 needs no key switch
}

TEST_P(TraceTest, RotateSumIsSumOfRotations) {
    const int64_t n = int64_t(slots());
    const auto x = random_complex(slots(), 1.0, 19);
    const Ciphertext cx = k().encrypt(x);
    const std::vector<int64_t> steps = {0, 1, 5, n / 2, -1};
    KeySwitchCounts counts;
    const auto got = k().decrypt(k().eval->rotate_sum(cx, steps, k().gk, &counts));
    std::vector<cplx> want(x.size());
    for (int64_t s : steps) {
        const auto r = rotate_ref(x, s);
        for (size_t i = 0; i < x.size(); ++i) want[i] += r[i];
    }
    EXPECT_GE(precision_bits(got, want), 20.0);
    EXPECT_EQ(counts, (KeySwitchCounts{1, 4, 1}));  // one ModUp and ONE ModDown for four rotations
    // only identities: exactly 2x
    const auto twice = k().decrypt(k().eval->rotate_sum(cx, {0, 0}, k().gk));
    for (auto& w : want) w = 0;
    for (size_t i = 0; i < x.size(); ++i) want[i] = 2.0 * x[i];
    EXPECT_GE(precision_bits(twice, want), 21.0);
}

INSTANTIATE_TEST_SUITE_P(Presets, TraceTest, ::testing::Values("S1", "S2", "L15"));

// ---- operation counts, key lists, errors (S1 only: they do not depend on the parameters) ----

TEST(TraceCounts, PerStrategy) {
    Keys& k = Keys::get("S1");
    const size_t n_slots = 128;
    const SumSpec spec = SumSpec::total(n_slots);  // M = 7, the paper's table
    ASSERT_EQ(spec.rounds, 7);
    std::vector<int64_t> steps;
    for (int h = 1; h <= 7; ++h) steps = unite(steps, sum_rotation_steps(*k.ctx, spec, n_slots, SumStrategy::hoisted, h));
    EXPECT_EQ(steps.size(), 127u);  // h = 1 uses every rotation
    const GaloisKeys& gk = galois_for("S1", steps);
    const Ciphertext cx = k.encrypt(random_real(n_slots, 1.0, 3), std::nullopt, true, n_slots);

    KeySwitchCounts d;
    rotate_and_sum(*k.eval, cx, spec, gk, SumStrategy::doubling, 0, &d);
    EXPECT_EQ(d, (KeySwitchCounts{7, 7, 7}));
    for (int h = 1; h <= 7; ++h) {
        KeySwitchCounts c;
        rotate_and_sum(*k.eval, cx, spec, gk, SumStrategy::hoisted, h, &c);
        uint64_t rotations = 0;
        for (int r : unrolled_rounds(7, h)) rotations += (uint64_t(1) << r) - 1;
        EXPECT_EQ(c, (KeySwitchCounts{uint64_t(h), rotations, uint64_t(h)})) << "h " << h;
    }
    EXPECT_EQ(unrolled_rounds(7, 3), (std::vector<int>{3, 2, 2}));
    EXPECT_EQ(unrolled_rounds(7, 7), std::vector<int>(7, 1));
    EXPECT_EQ(unrolled_rounds(7, 1), std::vector<int>{7});
    // automatic runs the cheapest h by the model whose keys are there: with every key, the
    // model's minimum; key generation's choice trades up to 5% of it for fewer keys
    KeySwitchCounts a;
    rotate_and_sum(*k.eval, cx, spec, gk, SumStrategy::automatic, 0, &a);
    int cheapest = 1;
    for (int h = 2; h <= 7; ++h)
        if (sum_cost(*k.ctx, cx.level(), 7, h) < sum_cost(*k.ctx, cx.level(), 7, cheapest)) cheapest = h;
    EXPECT_EQ(a.mod_ups, uint64_t(cheapest));
    const int chosen = choose_iterations(*k.ctx, cx.level(), 7);
    EXPECT_GE(chosen, cheapest);
    EXPECT_LE(sum_cost(*k.ctx, cx.level(), 7, chosen), (1 + kKeySavingTolerance) * sum_cost(*k.ctx, cx.level(), 7, cheapest));
    // with only the keys of key generation's choice, automatic runs that choice
    const GaloisKeys& chosen_keys = galois_for("S1", sum_rotation_steps(*k.ctx, spec, n_slots, SumStrategy::automatic));
    KeySwitchCounts b;
    rotate_and_sum(*k.eval, cx, spec, chosen_keys, SumStrategy::automatic, 0, &b);
    EXPECT_EQ(b.mod_ups, uint64_t(chosen));
}

TEST(TraceCounts, KeyLists) {
    Keys& k = Keys::get("S1");
    const SumSpec total = SumSpec::total(1024);
    EXPECT_EQ(sum_rotation_steps(*k.ctx, total, 1024, SumStrategy::doubling),
              (std::vector<int64_t>{1, 2, 4, 8, 16, 32, 64, 128, 256, 512}));
    EXPECT_EQ(sum_rotation_steps(*k.ctx, total, 1024, SumStrategy::hoisted, 10),
              sum_rotation_steps(*k.ctx, total, 1024, SumStrategy::doubling));
    // h = 5 on 10 rounds: rounds {2,2,2,2,2}, steps j * 4^i for j = 1..3
    EXPECT_EQ(sum_rotation_steps(*k.ctx, total, 1024, SumStrategy::hoisted, 5).size(), 15u);
    // negative strides use the steps in 0..slots-1 too
    EXPECT_EQ(sum_rotation_steps(*k.ctx, SumSpec::strided(-3, 4), 1024, SumStrategy::doubling),
              (std::vector<int64_t>{1018, 1021}));
    const int h = choose_iterations(*k.ctx, k.ctx->max_level(), total.rounds);
    EXPECT_EQ(sum_rotation_steps(*k.ctx, total, 1024, SumStrategy::automatic),
              sum_rotation_steps(*k.ctx, total, 1024, SumStrategy::hoisted, h));
    // the model: hoisting pays (h < M) and the model's cost is below doubling's
    EXPECT_LT(h, total.rounds);
    EXPECT_LT(sum_cost(*k.ctx, 1, 10, h), sum_cost(*k.ctx, 1, 10, 0));
}

TEST(TraceErrors, MissingKeysAndRanges) {
    Keys& k = Keys::get("S1");
    const size_t n = k.ctx->max_slots();
    const Ciphertext cx = k.encrypt(random_real(n, 1.0, 4));
    const GaloisKeys& gk = galois_for("S1", {1, 2, 4});
    const SumSpec spec = SumSpec::total(n);
    EXPECT_ERROR(MissingKey, rotate_and_sum(*k.eval, cx, spec, gk, SumStrategy::doubling), "rotate_and_sum", "doubling",
                 "8, 16, 32", "2048", "level 1");
    EXPECT_ERROR(MissingKey, rotate_and_sum(*k.eval, cx, spec, gk, SumStrategy::hoisted, 6), "rotate_and_sum", "h = 6");
    EXPECT_ERROR(MissingKey, rotate_and_sum(*k.eval, cx, spec, gk, SumStrategy::automatic), "rotate_and_sum",
                 "automatic choice");
    EXPECT_ERROR(MissingKey, k.eval->rotate_many(cx, {1, 3, 7}, gk), "rotate_many", "3, 7");
    EXPECT_ERROR(MissingKey, k.eval->rotate_sum(cx, {0, 9}, gk), "rotate_sum", "9");
    // steps out of range
    EXPECT_ERROR(ValueError, k.eval->rotate_many(cx, {1, int64_t(n)}, k.gk), "rotate_many", std::to_string(n));
    EXPECT_ERROR(ValueError, k.eval->rotate_many(cx, {-int64_t(n)}, k.gk), "rotate_many");
    EXPECT_ERROR(ValueError, rotate_and_sum(*k.eval, cx, SumSpec::strided(int64_t(n) / 2, 4), gk), "rotate_and_sum",
                 "stride");
    EXPECT_ERROR(ValueError, rotate_and_sum(*k.eval, cx, SumSpec{0, 2}, gk), "stride 0");
    EXPECT_ERROR(ValueError, rotate_and_sum(*k.eval, cx, spec, gk, SumStrategy::hoisted, 0), "h = 0");
    EXPECT_ERROR(ValueError, rotate_and_sum(*k.eval, cx, spec, gk, SumStrategy::hoisted, spec.rounds + 1), "h = ");
    EXPECT_ERROR(ValueError, SumSpec::blocks(6), "block = 6");
    EXPECT_ERROR(ValueError, sum_rotation_steps(*k.ctx, SumSpec::total(2 * n), n, SumStrategy::doubling), "does not fit");
    // a size-3 ciphertext must be relinearized first
    const Ciphertext c3 = k.eval->multiply(cx, cx);
    EXPECT_ERROR(ValueError, rotate_and_sum(*k.eval, c3, spec, k.gk), "relinearize");
    EXPECT_ERROR(ValueError, k.eval->rotate_many(c3, {1}, k.gk), "relinearize");
    // nothing counted for a call that throws, and zero rounds is the identity
    KeySwitchCounts c;
    EXPECT_THROW(rotate_and_sum(*k.eval, cx, spec, gk, SumStrategy::doubling, 0, &c), MissingKey);
    EXPECT_EQ(c, KeySwitchCounts{});
    const auto same = k.decrypt(rotate_and_sum(*k.eval, cx, SumSpec{1, 0}, gk));
    EXPECT_GE(precision_bits(same, k.decrypt(cx)), 50.0);
}
