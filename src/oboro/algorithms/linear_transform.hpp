// Plaintext matrix x encrypted vector by the diagonal method with baby-step giant-step (BSGS)
// and hoisted baby steps (Halevi-Shoup; Halevi-Shoup 2018 "Faster homomorphic linear
// transformations"):
//
//   y = sum_k diag_k * rot(x, k),  k = g + b (g a multiple of n1, 0 <= b < n1)
//     = sum_g rot( sum_b rot(diag_{g+b}, -g) * rot(x, b), g )
//
// The baby rotations rot(x, b) are of the same ciphertext and share one ModUp
// (Evaluator::rotate_many); each giant group costs one more rotation. With D diagonals over a
// range of offsets, n1 ~ sqrt(D) gives ~2 sqrt(D) rotations instead of D. The pre-rotated
// diagonals are plaintexts encoded once per level at scale q_level: a transform consumes one
// level and keeps the scale.
//
// Double hoisting (Bossuat, Mouchet, Troncoso-Pastoriza, Hubaux, Eurocrypt 2021) also saves the
// baby rotations' ModDowns: they stay over Q_level * P (Evaluator::rotate_many_extended), the
// diagonals, encoded over Q_level * P, multiply them there, and each giant group's sum is divided
// by P only to be rotated: the giant rotations' results stay over Q_level * P too, and the whole
// sum is divided by P once at the end. One ModDown per giant rotation and one more, instead of
// one per baby rotation and giant group.
//
// The giant rotations either each use the key of their own step g (keyed), or are chained
// (Horner's rule over the groups: acc = rot(acc, n1) + sum_g, from the farthest group in): k
// rotations by n1 reach the group at k n1, and the groups on the other side are reached by -n1,
// so the giant steps need two keys whatever their number. A chain rotates once per multiple of n1
// between the groups, which costs nothing more when the groups are contiguous (the DFTs of
// bootstrapping), and it lets a plan with a smaller n1 -- fewer baby keys, more giant rotations
// -- trade time for keys (MemoryPolicy).
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "oboro/algorithms/level_plaintexts.hpp"
#include "oboro/algorithms/matrix_encoding.hpp"
#include "oboro/algorithms/op_counts.hpp"
#include "oboro/ckks/trace.hpp"

namespace oboro::algorithms {

// How the giant groups' sums are rotated into place (see above).
enum class GiantRotations { keyed, chained };

struct BsgsPlan {
    size_t baby_size = 1;               // n1
    std::vector<int64_t> baby_steps;    // distinct b = k mod n1 in use (0 included when used)
    std::vector<int64_t> giant_steps;   // distinct g = k - b in use, as rotation steps in (-n/2, n/2]
    GiantRotations giants = GiantRotations::keyed;
    // chained: the groups at g = j n1 (mod slots) for j in 1 .. forward are reached by forward
    // rotations by n1, those at j = -1 .. -backward by backward rotations by -n1
    size_t forward = 0, backward = 0;
    size_t slots = 0;
    int64_t forward_step() const;       // chained: n1 and -n1, as rotation steps in (-n/2, n/2]
    int64_t backward_step() const;
    size_t giant_rotations() const;     // keyed: the non-zero giant steps; chained: forward + backward
    size_t rotations() const;           // non-zero baby steps + giant_rotations()
    std::vector<int64_t> rotation_steps() const;  // the distinct non-zero steps it rotates by (its keys), sorted
    // For each of rotation_steps(), the rotations by it in one application (1 for a baby or a keyed
    // giant step; forward or backward for a chain's step), in that order.
    std::vector<std::pair<int64_t, size_t>> key_uses() const;
};

// The plan of baby size n1 (a power of two dividing slots) for these offsets (each in [0, slots)),
// with its giant rotations keyed or chained (a chain: the split between the forward and the
// backward chain with the fewest rotations, then one key rather than two).
BsgsPlan bsgs_plan(const std::vector<int64_t>& offsets, size_t slots, size_t n1, GiantRotations giants);

// The n1 (a power of two) with the fewest rotations for these offsets (each in [0, slots));
// on ties the one with fewer giant steps, which are not hoisted.
BsgsPlan plan_bsgs(const std::vector<int64_t>& offsets, size_t slots);

// The plan of about the least modelled cost (ckks::key_switch_cost, ckks/trace.hpp) under double
// hoisting for these offsets, over every n1 and both kinds of giant rotations: the baby rotations
// cost a hoisted rotation each (their ModUp is shared), a giant rotation a rotation (its ModDown
// is the group's), so the best n1 is larger than the fewest-rotations one. Among the plans within
// `key_saving_tolerance` of the least cost, the one with the fewest keys (bootstrapping's DFTs hold
// tens of them), then the cheapest.
BsgsPlan plan_bsgs_double_hoisted(const std::vector<int64_t>& offsets, size_t slots, const ckks::KeySwitchCost& cost,
                                  double key_saving_tolerance = ckks::kKeySavingTolerance);

// What the baby-step rotations share: their ModUp (single hoisting), or their ModUp and, per
// giant group, their ModDown (double hoisting: on a queue with the extended basis, an Error
// naming the device on one without). The two results agree to the rounding of the divisions by P.
enum class Hoisting { mod_up, mod_up_and_mod_down };

// How much speed a transform gives up for memory.
struct MemoryPolicy {
    // the plan (double hoisting): the fewest keys among those within this fraction of the least
    // modelled cost (plan_bsgs_double_hoisted)
    double key_saving_tolerance = ckks::kKeySavingTolerance;
    // the dense diagonals encoded at every use, a giant group at a time, instead of once per level
    // and kept: the plaintexts' memory (tens of MB each at N = 2^16) for an encoding per use.
    // Compact ones (LevelPlaintexts::block() > 1, operands in host memory) are always kept.
    bool encode_on_use = false;
    // the keys made for the transform (Bootstrapper::generate_keys) keep their uniform
    // halves as their seed, drawn again at each key switch (ckks::KeySwitchKey::seed_a_halves):
    // half the keys' memory for the ChaCha20 stream of those halves at each use
    bool seeded_keys = false;
    // With seeded_keys, the keys that one pass of the circuit reads at least this many times
    // over (Bootstrapper::galois_key_reads: a chained giant step's key, used once per group)
    // stored whole all the same: the stream's cost is per read, the memory saved per key.
    // 0: every key seeded.
    double whole_key_reads = 0;

    // Low memory: the dense diagonals encoded at each use, plans within 2x of the least
    // modelled cost with the fewest keys, and every key seeded (bootstrapping at preset B1: 15
    // Galois keys of 1.4 GiB instead of the default's 27 of 2.8 GiB; its time and peak memory
    // are measured in docs/benchmarks/bootstrap.md).
    static MemoryPolicy low() { return {1.0, true, true, 0.0}; }

    bool operator==(const MemoryPolicy&) const = default;
};

// The plan a LinearTransform of these offsets uses: plan_bsgs for single hoisting,
// plan_bsgs_double_hoisted at the top level for double.
BsgsPlan plan_for(const ckks::Context& ctx, const std::vector<int64_t>& offsets, size_t slots, Hoisting hoisting,
                  const MemoryPolicy& memory = {});

class LinearTransform {
public:
    // `diags`: offsets in [0, slots), each diagonal `slots` values; applied to ciphertexts of
    // exactly `slots` slots (rotations cyclic modulo `slots`).
    // The plan: plan_bsgs for single hoisting, plan_bsgs_double_hoisted at the top level for double.
    // `scale`: the diagonals' scale (level_plaintexts.hpp): PlaintextScale::prime keeps the input's
    // scale, PlaintextScale::standard takes an input at the standard scale of its level to the
    // standard scale of the level below (automatic mode).
    // `memory`: the plan's trade of keys for time and whether the diagonals are kept (MemoryPolicy).
    LinearTransform(ckks::ContextPtr ctx, const Diagonals& diags, size_t slots, Hoisting hoisting = Hoisting::mod_up,
                    PlaintextScale scale = PlaintextScale::prime, const MemoryPolicy& memory = {});
    // The same with complex diagonals, encoded at `scale` times `scale_factor` (the output's scale
    // is then the input's times scale_factor, for PlaintextScale::prime).
    LinearTransform(ckks::ContextPtr ctx, const ComplexDiagonals& diags, size_t slots,
                    Hoisting hoisting = Hoisting::mod_up, PlaintextScale scale = PlaintextScale::prime,
                    double scale_factor = 1.0, const MemoryPolicy& memory = {});

    size_t slots() const { return slots_; }
    Hoisting hoisting() const { return hoisting_; }
    size_t diagonal_count() const { return offsets_.size(); }
    const BsgsPlan& plan() const { return plan_; }
    // Distinct non-zero rotation steps it performs (sorted).
    std::vector<int64_t> rotation_steps() const;
    // The rotations by each of them in one apply() (BsgsPlan::key_uses).
    std::vector<std::pair<int64_t, size_t>> key_uses() const { return plan_.key_uses(); }

    // The host memory its diagonals keep once applied at `level` (to a ciphertext in host memory):
    // compact ones always, dense ones unless MemoryPolicy::encode_on_use.
    size_t plaintext_bytes(int level) const;
    // The host memory its diagonals keep now (every level applied so far).
    size_t kept_plaintext_bytes() const { return diagonals_->kept_bytes(); }
    // Encodes now, at `level`, the diagonals that apply() on a ciphertext in host memory keeps
    // (those of plaintext_bytes(level)), instead of at the first apply().
    void encode_diagonals(int level) const;

    // What apply() performs: the BSGS rotations (the baby steps hoisted: one ModUp; doubly: one
    // ModDown per giant rotation, of its c1 alone, and one more, in the one division by q_l * P
    // that is also the rescale), one cMult per diagonal, the sums, one rescale.
    OpCounts cost() const;

    // y = M x, one level lower (at the scale the diagonals' PlaintextScale gives); for a batch,
    // every element in the same batched calls. Keys are checked before any work.
    template <ckks::Encrypted T> T apply(const CountedOps& ops, const T& x, const ckks::GaloisKeys& keys) const;
    // The same before its rescale (at x's level, scale x.scale * the diagonals' scale): products
    // of several transforms of one level and scale are summed with one rescale (plain_matrix.hpp).
    template <ckks::Encrypted T> T accumulate(const CountedOps& ops, const T& x, const ckks::GaloisKeys& keys) const;

private:
    // The sum before the rescale: over Q_level * P under double hoisting, which apply() divides
    // by q_l * P at once and accumulate() by P.
    template <ckks::Encrypted T> T sum(const CountedOps& ops, const T& x, const ckks::GaloisKeys& keys) const;
    template <typename V>
    void build(const std::map<int64_t, std::vector<V>>& diags, PlaintextScale scale, double scale_factor);
    // The giant groups' sums rotated into place and added (over Q_level * P under double hoisting);
    // the babies are freed once the groups have summed them.
    template <ckks::Encrypted T>
    T giant_sum(const CountedOps& ops, std::vector<T> babies, const ckks::GaloisKeys& keys) const;
    // One giant rotation of a group sum or chain (over Q_level * P in and out under double hoisting).
    template <ckks::Encrypted T>
    T rotate_giant(const CountedOps& ops, const T& a, int64_t step, const ckks::GaloisKeys& keys) const;

    ckks::ContextPtr ctx_;
    size_t slots_;
    Hoisting hoisting_;
    MemoryPolicy memory_;
    std::vector<int64_t> offsets_;
    BsgsPlan plan_;
    // For each giant step (plan_.giant_steps order): the baby steps used and their plaintexts.
    std::vector<std::vector<size_t>> group_babies_;  // indices into plan_.baby_steps
    std::vector<std::vector<size_t>> group_diags_;   // indices into diagonals_
    std::unique_ptr<LevelPlaintexts> diagonals_;     // rot(diag_{g+b}, -g), group by group

    // For each group (plan_.giant_steps order), the sum over its babies of diagonal * baby, over
    // Q_level (single hoisting) or Q_level * P (double): every group in one multiply_plain_sums
    // (each baby read from memory once for all the groups, not once per group), but for diagonals
    // encoded at each use, encoded and summed a group at a time (the plaintexts of one group alive
    // at once, as MemoryPolicy::encode_on_use promises).
    template <ckks::Encrypted T> std::vector<T> group_sums(const CountedOps& ops, const std::vector<T>& babies) const;
};

}  // namespace oboro::algorithms
