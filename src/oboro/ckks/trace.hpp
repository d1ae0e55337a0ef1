// Trace-type functions: rotate-and-sum over M rounds (Halevi-Shoup "total sums" and their partial
// and strided variants). Round i adds the ciphertext rotated by stride * 2^i to itself, so after
// M rounds slot t holds sum_{j < 2^M} x[t + j*stride] (slot indices modulo the slot count).
//
// Three strategies, equal up to CKKS noise (tests/cpp/test_ckks_trace.cpp):
//  * doubling: M rounds of ct += rotate(ct, stride * 2^i): M key switches, M keys.
//  * hoisted with h iterations: the unrolled algorithm of Ishimaki & Yamana (IEEE Access 2021,
//    Algorithms 3.1 HoistKS and 3.2 of paper 004). The M rounds are grouped into h iterations;
//    an iteration that covers r rounds starting at round m replaces them by ONE hoisted step
//        ct += sum_{j=1}^{2^r - 1} rotate(ct, j * stride * 2^m)
//    (1 ModUp, 2^r - 1 key inner products, 1 lazy ModDown: Evaluator::rotate_sum). As in the
//    paper, h is the number of iterations after unrolling: h = M is one round per iteration (the
//    doubling recurrence done with the hoisted machinery), h = 1 is one iteration of 2^M - 1
//    rotations. Rounds are split as evenly as possible, longer iterations first.
//  * automatic: the h with the lowest modelled cost (sum_cost below) among those whose keys are
//    present. The keys sum_rotation_steps returns for it are those of the model's choice at the
//    context's top level.
#pragma once

#include <cstdint>
#include <vector>

#include "oboro/ckks/evaluator.hpp"
#include "oboro/ckks/key_switch_counts.hpp"

namespace oboro::ckks {

enum class SumStrategy { doubling, hoisted, automatic };
const char* to_string(SumStrategy s);

// What to sum: `rounds` rounds with the given stride (negative: towards lower slot indices).
struct SumSpec {
    int64_t stride = 1;
    int rounds = 0;

    // All slots: every slot of the result holds the sum of all slots.
    static SumSpec total(size_t slots);
    // Blocks of `block` consecutive slots (a power of two dividing the slots): the FIRST slot of
    // each block holds the sum of the block; the other slots hold sums of windows that straddle
    // two blocks (meaningless for the caller; mask them if they matter).
    static SumSpec blocks(size_t block);
    // `count` values (a power of two) `stride` slots apart: slot t holds sum_{j<count} x[t+j*stride].
    static SumSpec strided(int64_t stride, size_t count);
};

// Rounds per iteration of the unrolled algorithm with h iterations (1 <= h <= rounds).
std::vector<int> unrolled_rounds(int rounds, int h);

// The rotation steps whose Galois keys rotate_and_sum needs for ciphertexts with `slots` slots
// (sorted, each in 1 .. slots-1). h: iterations for `hoisted` (ignored otherwise).
std::vector<int64_t> sum_rotation_steps(const Context& ctx, const SumSpec& spec, size_t slots, SumStrategy strategy,
                                        int h = 0);

// The modelled cost of the pieces of key switching at `level` (hoisted or not), in 64-bit modular
// multiplications, memory-bound passes weighted by factors measured for the active kernels (see
// trace.cpp): what sum_cost adds up, and what plans built from hoisted rotations (double-hoisted
// BSGS, algorithms/linear_transform.hpp) weigh.
struct KeySwitchCost {
    double mod_up = 0;            // ModUp of one c1
    double mod_down = 0;          // ModDown of a key-switched pair
    double hoisted_rotation = 0;  // one more rotation of a hoisted set: digit permutation, inner product, c0
    double rotation = 0;          // one rotation alone: c1 permutation, ModUp, inner product, ModDown, c0
};
KeySwitchCost key_switch_cost(const Context& ctx, int level);

// The cost model of the automatic strategy (in key_switch_cost's units) of a sum of `rounds`
// rounds at `level`: h = 0 is doubling, h >= 1 the hoisted algorithm with h iterations. Per
// iteration of r rounds:
//   ModUp(level) + (2^r - 1) * (permute digits + key inner product) + ModDown(level)
// with ModUp = INTT of l+1 limbs + per digit (base conversion + NTT of the other limbs),
// inner product = 2 * beta * (l+1+k) * N multiply-adds, ModDown = 2 x (INTT of k limbs + base
// conversion + NTT of l+1 limbs); an NTT of one limb is (N/2) log2 N butterflies.
double sum_cost(const Context& ctx, int level, int rounds, int h);
// The h of the automatic strategy: the largest h (the fewest keys: 2^r - 1 per iteration of r
// rounds) whose sum_cost is within kKeySavingTolerance of the lowest over h = 1..rounds. The cost
// is flat near its minimum (S2, 13 rounds: h = 6, 7 and 8 measured within 1% of each other, with
// 22, 19 and 18 keys) and every key is memory (86 MiB at N = 2^16 with 21 levels). The same
// tolerance picks bootstrapping's BSGS plans (algorithms/linear_transform.hpp).
inline constexpr double kKeySavingTolerance = 0.05;
int choose_iterations(const Context& ctx, int level, int rounds);

// Rotate-and-sum of `a` (size 2): a Ciphertext, or every element of a batch (each element bit for
// bit as it would be alone: the same checks up front, the same choice of h for `automatic`).
// doubling runs per round ONE rotation and ONE addition over all the elements; hoisted runs per
// iteration ONE hoisted sum (Evaluator::rotate_sum: one ModUp per element shared by all the
// iteration's rotations, one ModDown). h: iterations for `hoisted` (1..rounds). Checks the spec
// and all keys before any work: ValueError for a spec that does not fit the slots or a bad h,
// MissingKey naming every missing step. The first form uses the evaluator's key set, the second
// `keys`.
template <Encrypted T>
T rotate_and_sum(const Evaluator& eval, const T& a, const SumSpec& spec, SumStrategy strategy = SumStrategy::automatic,
                 int h = 0, KeySwitchCounts* counts = nullptr);
template <Encrypted T>
T rotate_and_sum(const Evaluator& eval, const T& a, const SumSpec& spec, const GaloisKeys& keys,
                 SumStrategy strategy = SumStrategy::automatic, int h = 0, KeySwitchCounts* counts = nullptr);

}  // namespace oboro::ckks
