#include "oboro/ckks/trace.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>
#include <string_view>
#include <type_traits>

#include "oboro/backend/cpu/eltwise.hpp"
#include "oboro/util/error.hpp"

namespace oboro::ckks {

const char* to_string(SumStrategy s) {
    switch (s) {
        case SumStrategy::doubling: return "doubling";
        case SumStrategy::hoisted: return "hoisted";
        case SumStrategy::automatic: return "automatic";
    }
    return "?";
}

namespace {
bool is_pow2(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }
int log2_exact(uint64_t x) {
    int r = 0;
    while ((uint64_t(1) << r) < x) ++r;
    return r;
}

// Checks that the spec fits `slots`: the 2^rounds summed terms are distinct slots.
void check_spec(const char* op, const SumSpec& spec, size_t slots) {
    if (spec.rounds < 0 || spec.rounds > 62)
        raise<ValueError>(op, ": rounds = ", spec.rounds, " is out of range (0 .. log2 of the slots)");
    if (spec.stride == 0) raise<ValueError>(op, ": stride 0 sums one slot with itself; use a stride != 0");
    const uint64_t span = uint64_t(spec.stride < 0 ? -spec.stride : spec.stride) << spec.rounds;
    if (uint64_t(spec.stride < 0 ? -spec.stride : spec.stride) >= slots || span > slots)
        raise<ValueError>(op, ": stride ", spec.stride, " x 2^", spec.rounds, " rounds = ", span,
                          " slots does not fit in the ", slots, " slots (2^rounds terms |stride| apart must be distinct)");
}

void check_h(const char* op, int rounds, int h) {
    if (h < 1 || h > std::max(rounds, 1))
        raise<ValueError>(op, ": h = ", h, " iterations is out of range for ", rounds, " rounds (allowed: 1 .. ",
                          std::max(rounds, 1), ")");
}

// The steps of one iteration of the hoisted algorithm: j * base for j = 1 .. 2^r - 1.
std::vector<int64_t> iteration_steps(int64_t base, int r, size_t slots) {
    std::vector<int64_t> steps;
    for (int64_t j = 1; j < (int64_t(1) << r); ++j) steps.push_back(canonical_step(j * base, slots));
    return steps;
}

// Every iteration of the hoisted algorithm with h iterations, as (base step, rounds).
std::vector<std::pair<int64_t, int>> iterations(const SumSpec& spec, int h) {
    std::vector<std::pair<int64_t, int>> out;
    int done = 0;
    for (int r : unrolled_rounds(spec.rounds, h)) {
        out.emplace_back(spec.stride * (int64_t(1) << done), r);
        done += r;
    }
    return out;
}

std::vector<int64_t> steps_for(const SumSpec& spec, size_t slots, SumStrategy strategy, int h) {
    std::set<int64_t> steps;
    if (strategy == SumStrategy::doubling) {
        for (int i = 0; i < spec.rounds; ++i) steps.insert(canonical_step(spec.stride * (int64_t(1) << i), slots));
    } else {
        for (auto [base, r] : iterations(spec, h))
            for (int64_t s : iteration_steps(base, r, slots)) steps.insert(s);
    }
    return {steps.begin(), steps.end()};
}

std::vector<int64_t> missing_steps(const Context& ctx, const std::vector<int64_t>& steps, const KeySet& keys) {
    std::vector<int64_t> missing;
    for (int64_t s : steps)
        if (!keys.galois_key(ctx.galois_element(s))) missing.push_back(s);
    return missing;
}

std::string join(const std::vector<int64_t>& v) {
    std::ostringstream os;
    for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
    return os.str();
}
}  // namespace

SumSpec SumSpec::total(size_t slots) {
    if (!is_pow2(slots)) raise<ValueError>("SumSpec::total: the slot count ", slots, " is not a power of two");
    return {1, log2_exact(slots)};
}

SumSpec SumSpec::blocks(size_t block) {
    if (!is_pow2(block)) raise<ValueError>("SumSpec::blocks: block = ", block, " is not a power of two");
    return {1, log2_exact(block)};
}

SumSpec SumSpec::strided(int64_t stride, size_t count) {
    if (!is_pow2(count)) raise<ValueError>("SumSpec::strided: count = ", count, " is not a power of two");
    if (stride == 0) raise<ValueError>("SumSpec::strided: stride 0 sums one slot with itself");
    return {stride, log2_exact(count)};
}

std::vector<int> unrolled_rounds(int rounds, int h) {
    check_h("unrolled_rounds", rounds, h);
    std::vector<int> out;
    if (rounds == 0) return out;
    for (int i = 0; i < h; ++i) out.push_back(rounds / h + (i < rounds % h ? 1 : 0));
    return out;
}

// ---- cost model --------------------------------------------------------------------------------

KeySwitchCost key_switch_cost(const Context& ctx, int level) {
    const double n = double(ctx.n()), l1 = level + 1, k = double(ctx.p_count()), ne = l1 + k;
    const double ntt = n / 2 * std::log2(n);  // one limb
    const auto& digits = ctx.level(level).digits;
    const double beta = double(digits.size());
    // Weights of the memory-bound passes per word, relative to one modular multiplication.
    // Fitted (least squares on log speed-ups) to bench_trace's paper-004 grid (logN 15, k/l in
    // {1,5,10} x {1,4,9}, h = 1..7) on an AVX-512 machine: 3 next to the vector kernels and 1.5
    // next to the scalar ones. The weight stands for more than the permutation's own words (a
    // hoisted rotation also reads its key from memory, which the multiplication count leaves
    // out): with the grouped AVX-512 permutation (2.5-3x faster) a weight of 1 chose plans with
    // more baby steps, 53 Galois keys at B1 that bootstrapped in 9.35 s, where these weights (with
    // kKeySavingTolerance) choose 47 keys and 8.01 s (one thread, the same day).
    const bool simd = std::string_view(backend::cpu::eltwise_active().name) != "scalar";
    const double w_move = simd ? 3.0 : 1.5, w_add = 0.25;
    double mod_up = l1 * ntt;
    for (const DigitConversion& d : digits) {
        const double a = double(d.end - d.begin);
        mod_up += a * n + a * (ne - a) * n + (ne - a) * ntt;
    }
    const double mod_down = 2 * (k * ntt + k * n + k * l1 * n + l1 * ntt + l1 * n);
    const double inner = 2 * beta * ne * n;
    const double c0 = 2 * l1 * n * w_move + l1 * n * w_add;  // permute c0, add it; add the result
    KeySwitchCost c;
    c.mod_up = mod_up;
    c.mod_down = mod_down;
    c.hoisted_rotation = inner + beta * ne * n * w_move + 2 * ne * n * w_add + c0;
    c.rotation = l1 * n * w_move + mod_up + inner + mod_down + c0;  // c1, not the digits, is permuted
    return c;
}

double sum_cost(const Context& ctx, int level, int rounds, int h) {
    const KeySwitchCost c = key_switch_cost(ctx, level);
    if (h == 0) return rounds * c.rotation;  // doubling
    double total = 0;
    for (int r : unrolled_rounds(rounds, h)) total += c.mod_up + c.mod_down + double((int64_t(1) << r) - 1) * c.hoisted_rotation;
    return total;
}

int choose_iterations(const Context& ctx, int level, int rounds) {
    if (rounds <= 1) return 1;
    std::vector<double> cost(size_t(rounds) + 1);
    for (int h = 1; h <= rounds; ++h) cost[size_t(h)] = sum_cost(ctx, level, rounds, h);
    const double lowest = *std::min_element(cost.begin() + 1, cost.end());
    // A larger h needs fewer keys: the largest h within kKeySavingTolerance of the lowest cost.
    int best = rounds;
    while (cost[size_t(best)] > lowest * (1 + kKeySavingTolerance)) --best;
    return best;
}

std::vector<int64_t> sum_rotation_steps(const Context& ctx, const SumSpec& spec, size_t slots, SumStrategy strategy,
                                        int h) {
    check_spec("sum_rotation_steps", spec, slots);
    if (spec.rounds == 0) return {};
    if (strategy == SumStrategy::automatic) {
        h = choose_iterations(ctx, ctx.max_level(), spec.rounds);
        strategy = SumStrategy::hoisted;
    } else if (strategy == SumStrategy::hoisted) {
        check_h("sum_rotation_steps", spec.rounds, h);
    }
    return steps_for(spec, slots, strategy, h);
}

// ---- rotate and sum ----------------------------------------------------------------------------

namespace {

// The strategy and h that rotate-and-sum runs on an operand at `level` with `slots` slots (`who`
// describes it in the messages): automatic becomes hoisted with the cheapest h by the model whose
// keys are all there; a bad h raises ValueError and every missing key MissingKey, before any work.
std::pair<SumStrategy, int> plan_sum(const char* op, const Context& ctx, int level, size_t slots, const SumSpec& spec,
                                     const KeySet& keys, SumStrategy strategy, int h, const std::string& who) {
    if (strategy == SumStrategy::hoisted) check_h(op, spec.rounds, h);
    if (strategy == SumStrategy::automatic) {
        // The cheapest h by the model whose keys are all there; doubling's keys are those of h = M.
        std::vector<std::pair<double, int>> ranked;
        for (int c = 1; c <= spec.rounds; ++c) ranked.emplace_back(sum_cost(ctx, level, spec.rounds, c), c);
        std::stable_sort(ranked.begin(), ranked.end());
        for (auto [cost, c] : ranked)
            if (missing_steps(ctx, steps_for(spec, slots, SumStrategy::hoisted, c), keys).empty())
                return {SumStrategy::hoisted, c};
        const int want = choose_iterations(ctx, level, spec.rounds);
        const auto missing = missing_steps(ctx, steps_for(spec, slots, SumStrategy::hoisted, want), keys);
        raise<MissingKey>(op, ": no complete key set for stride ", spec.stride, ", ", spec.rounds,
                          " rounds on operand 'a' (", who, "); the automatic choice (h = ", want,
                          ") is missing the rotations by ", join(missing),
                          " (sum_rotation_steps lists the keys of each strategy)");
    }
    const auto missing = missing_steps(ctx, steps_for(spec, slots, strategy, h), keys);
    if (!missing.empty())
        raise<MissingKey>(op, " (", to_string(strategy), strategy == SumStrategy::hoisted ? ", h = " : "",
                          strategy == SumStrategy::hoisted ? std::to_string(h) : std::string(),
                          "): no Galois keys for the rotations by ", join(missing), " of operand 'a' (", who,
                          "); generate them with galois_keys({", join(missing), "})");
    return {strategy, h};
}

// Runs the planned sum with `eval`'s rotate / add / rotate_sum (and its keys) on a Ciphertext or a
// batch.
template <Encrypted T>
T run_sum(const Evaluator& eval, T acc, const SumSpec& spec, SumStrategy strategy, int h, KeySwitchCounts* counts) {
    const size_t slots = acc.slots();
    if (strategy == SumStrategy::doubling) {
        // Algorithm 2.2 of paper 004: one full key switch (ModUp, inner product, ModDown) per round.
        for (int i = 0; i < spec.rounds; ++i) {
            eval.add_inplace(acc, eval.rotate(acc, canonical_step(spec.stride * (int64_t(1) << i), slots)));
            if (counts) {
                const uint64_t d = element_count(acc);
                counts->mod_ups += d, counts->inner_products += d, counts->mod_downs += d;
            }
        }
        return acc;
    }
    // Algorithm 3.2: c' <- c' + HoistKS(c', k_i) for each of the h iterations; rotate_sum with the
    // step 0 included is exactly c' + HoistKS(c', k_i) (Algorithm 3.1, lazy ModDown).
    for (auto [base, r] : iterations(spec, h)) {
        std::vector<int64_t> steps = iteration_steps(base, r, slots);
        steps.insert(steps.begin(), 0);
        acc = eval.rotate_sum(acc, steps, counts);
    }
    return acc;
}

}  // namespace

template <Encrypted T>
T rotate_and_sum(const Evaluator& eval, const T& a, const SumSpec& spec, SumStrategy strategy, int h,
                 KeySwitchCounts* counts) {
    const char* op = "rotate_and_sum";
    if (a.empty()) raise<ValueError>(op, ": operand 'a' is empty");
    check_spec(op, spec, a.slots());
    if (a.size() != 2)
        raise<ValueError>(op, ": operand 'a' (", describe(a), ") has ", a.size(), " polynomials; relinearize it first");
    if (spec.rounds == 0) return a;
    static const MemoryKeySet no_keys;
    const KeySet& keys = eval.keys() ? *eval.keys() : no_keys;
    const auto [st, hh] = plan_sum(op, *eval.context(), a.level(), a.slots(), spec, keys, strategy, h, describe(a));
    return run_sum(eval, a, spec, st, hh, counts);
}

template <Encrypted T>
T rotate_and_sum(const Evaluator& eval, const T& a, const SumSpec& spec, const GaloisKeys& keys, SumStrategy strategy,
                 int h, KeySwitchCounts* counts) {
    const KeyRefs refs(keys);
    return rotate_and_sum(eval.with_keys(refs), a, spec, strategy, h, counts);
}

template Ciphertext rotate_and_sum(const Evaluator&, const Ciphertext&, const SumSpec&, SumStrategy, int,
                                   KeySwitchCounts*);
template CiphertextBatch rotate_and_sum(const Evaluator&, const CiphertextBatch&, const SumSpec&, SumStrategy, int,
                                        KeySwitchCounts*);
template Ciphertext rotate_and_sum(const Evaluator&, const Ciphertext&, const SumSpec&, const GaloisKeys&,
                                   SumStrategy, int, KeySwitchCounts*);
template CiphertextBatch rotate_and_sum(const Evaluator&, const CiphertextBatch&, const SumSpec&, const GaloisKeys&,
                                        SumStrategy, int, KeySwitchCounts*);

}  // namespace oboro::ckks
