// CKKS bootstrapping (Cheon, Han, Kim, Kim and Song, Eurocrypt 2018, with the improvements of
// Chen-Chillotti-Song 2019, Han-Ki 2020 and Bossuat-Mouchet-Troncoso-Pastoriza-Hubaux 2021):
// a ciphertext with no levels left comes back with `output_level()` levels and the same values.
// Written once over the Evaluator, so it runs on every device a batch runs on.
//
// The pipeline (CoeffsToSlots first), for n slots out of N/2:
//  1. ModRaise: the input at level 0 (its message polynomial m) is lifted to the top level, where
//     it decrypts to m + q_0 I, with |I| <= (h + 1) / 2 for a secret of Hamming weight h. A dense
//     secret (or a sparse one of weight above 64) is encapsulated (Bossuat, Troncoso-Pastoriza and
//     Hubaux 2022): the input is switched to an ephemeral secret of weight h' (default 32) at
//     level 0, raised, and switched back to the secret key at the top level, two key switches
//     that keep h small for ModRaise and the secret key dense for security.
//  2. SubSum (n < N/2 only): the trace onto the subring of n slots (log2(N / 2n) rotations and
//     additions), so that the slots repeat with period n.
//  3. CoeffsToSlots (homomorphic_dft.hpp): the inverse special FFT in `coeffs_to_slots_levels`
//     levels, leaving t = (m + q_0 I) / q_0, scaled by 1/K', in the slots (in bit-reversed
//     order); the conjugation separates real and imaginary parts: two ciphertexts of n real
//     slots (full slots), or one of 2n slots (sparse).
//  4. EvalMod (eval_mod.hpp): (1/2 pi) sin(2 pi t) ~ m / q_0 slot by slot.
//  5. SlotsToCoeffs: the special FFT in `slots_to_coeffs_levels` levels puts m back.
// Every constant (1/n, 1/K', 1/2, the trace's 1/(N/2n), q_0 / scale) is folded into the DFT's
// diagonals or into a declared scale: the only levels consumed are the DFTs' and EvalMod's, and
// the output is at exactly the standard scale of output_level().
//
// The message: before ModRaise the input is multiplied by the integer that brings its scale
// closest below q_0 / 2^message_ratio_bits, so |m| <= 1 gives |e| <= 2^-message_ratio_bits in
// units of q_0; larger values work with a larger sine error ((2 pi e)^2 / 6 relative), up to
// |e| < 1/4 where the sine folds over (a wrong result). precision_bits() states the model's
// error at |m| = 1.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "oboro/algorithms/eval_mod.hpp"
#include "oboro/algorithms/homomorphic_dft.hpp"
#include "oboro/algorithms/level_plaintexts.hpp"
#include "oboro/ckks/keygen.hpp"

namespace oboro::algorithms {

// Where SlotsToCoeffs runs. CoeffsToSlots first (the default): ModRaise, CoeffsToSlots, EvalMod,
// SlotsToCoeffs, from a ciphertext at any level. SlotsToCoeffs first: the input, at least at
// Bootstrapper::min_input_level(), goes through SlotsToCoeffs on its own lowest levels, then
// ModRaise, CoeffsToSlots and EvalMod; the output keeps SlotsToCoeffs' levels (they were taken
// from the input instead), SlotsToCoeffs runs on the fewest primes, and EvalMod's real and
// imaginary parts are evaluated apart for every slot count.
enum class BootstrapOrder { coeffs_to_slots_first, slots_to_coeffs_first };

// The key-saving tolerance of the default BootstrapConfig::memory (MemoryPolicy). Bootstrapping's
// Galois keys are its largest memory (each over most of Q*P: 140-180 MiB at preset B1), and its
// DFT plans' modelled cost is flat near its least: at B1, 0.2 takes 26 Galois keys of 4.5 GiB
// where the least modelled cost (kKeySavingTolerance, 0.05) takes 42 of 7.0 GiB, for about 3% more
// bootstrap time (docs/bootstrapping.md, Memory). Beyond it the time grows fast (0.5: 22 keys,
// 1.5x), the model's cost of a full rotation being well below its measured one on some machines.
inline constexpr double kBootstrapKeySavingTolerance = 0.2;
// BootstrapConfig::memory: the default (the Galois keys seeded, but for those a pass reads at
// least twice over: the DFTs' chained giant steps, Bootstrapper::galois_key_reads), the same
// plans with every key stored whole (the fastest, Python's memory='fast') and with every key
// seeded (memory='seeded').
inline constexpr MemoryPolicy kDefaultBootstrapMemory{kBootstrapKeySavingTolerance, false, true, 2.0};
inline constexpr MemoryPolicy kFastBootstrapMemory{kBootstrapKeySavingTolerance, false, false, 0.0};
inline constexpr MemoryPolicy kSeededBootstrapMemory{kBootstrapKeySavingTolerance, false, true, 0.0};

struct BootstrapConfig {
    std::optional<size_t> slots;                // n, a power of two <= N/2 (default N/2)
    int coeffs_to_slots_levels = 3;
    int slots_to_coeffs_levels = 3;
    BootstrapOrder order = BootstrapOrder::coeffs_to_slots_first;
    // EvalMod's double angles r (eval_mod.hpp): its cosine's degree grows with K' / 2^r and each
    // double angle takes a level. Automatic (nullopt): the fewest levels, then the fewest double
    // angles, which is r = 0 with a sine of degree 151 at K' = 16.5 (8 levels, like r = 2 with
    // degree 58, and about a bit more precise at N = 2^16; r = 2 is about 10% faster).
    std::optional<int> double_angles;
    std::optional<int> cosine_degree;           // default: EvalMod's choice
    // EvalMod's sine series: 1 term (the sine), or 2 (Jutla and Manohar's series, whose cubic
    // error term cancels, eval_mod.hpp), one level more, for a smaller message ratio without the
    // sine's error on large messages. Automatic (nullopt): 2 with CoeffsToSlots first, else 1:
    // SlotsToCoeffs first (where the ratio of 15 leaves the sine's error far below the noise),
    // two iterations, and parameters of a scale of 2^45 or more (B2, where two iterations are the
    // automatic choice), whose second bootstrap corrects the first's error.
    std::optional<int> eval_mod_terms;
    // log2(q_0 / message scale): larger shrinks the sine's error ((2 pi 2^-r)^2 / 6 relative to a
    // coefficient of the message with one term, (2 pi 2^-r)^4 / 30 with two; the largest
    // coefficient is that of a constant vector of ones), smaller the noise's (EvalMod's noise in
    // units of q_0, times 2^r). Automatic (nullopt), measured at N = 2^16 for every input with
    // |m| <= 1: 8 with two terms (28.5 bits in the mean over random values, 25.4 for a constant
    // vector); 12 with one term (24.7 and 20.8: at 8 the sine leaves 13 bits for a constant vector);
    // 15 with SlotsToCoeffs first, where EvalMod sees the slot values themselves (as large as 1
    // for any data, not only a constant vector): 15 balanced the two errors there (25.7 bits
    // against 23.3 at 13 and 24.5 at 16).
    std::optional<int> message_ratio_bits;
    // The Hamming weight of the ephemeral secret of sparse-secret encapsulation (1..64), used when
    // the secret key is dense or sparse of weight above 64
    int ephemeral_hamming_weight = 32;
    // 1, or 2 for high precision (Bae, Cheon, Cho, Kim and Kim, "META-BTS", CCS 2022): the first
    // bootstrap's error is measured against the input at level 0, scaled up by 2^k and bootstrapped
    // in turn, then taken off; twice the time and the same levels, for about k more bits
    // (iteration_scale_bits()), up to the output level's noise floor, about 13 bits below its
    // scale at N = 2^16. Automatic (nullopt): 2 where that floor lies well beyond one
    // bootstrap's precision, parameters of a scale of at least 2^45 (preset B2's 2^48), else 1
    // (B1's 2^40, where a second iteration would gain about 3 bits for twice the time). With
    // SlotsToCoeffs first, 1 (2 is refused: the comparison would need SlotsToCoeffs again).
    std::optional<int> iterations;
    // Speed against memory: the default keeps every DFT diagonal encoded (under 1 GB at N = 2^16,
    // most of them compact), takes, among the DFT plans within kBootstrapKeySavingTolerance of
    // the least modelled cost, the one with the fewest Galois keys, and keeps the uniform halves
    // of the keys a pass reads less than twice over as seeds (2.8 GiB of keys instead of 4.7 at
    // B1, for a few per cent of the bootstrap's time, docs/bootstrapping.md); kSeededBootstrapMemory
    // seeds every key (2.4 GiB), kFastBootstrapMemory stores them whole;
    // MemoryPolicy::low() also encodes the dense diagonals at each use and takes plans within 2x
    // (fewer keys, more giant rotations).
    MemoryPolicy memory = kDefaultBootstrapMemory;
};

// Every key a bootstrap needs besides the relinearization key (the evaluator's).
struct BootstrapKeys {
    ckks::GaloisKeys galois;  // the rotation_steps() and the conjugation
    std::optional<ckks::EncapsulationKeys> encapsulation;  // when Bootstrapper::encapsulates()
};

class Bootstrapper {
public:
    // ParameterError when the parameters cannot bootstrap: too few levels for the circuit (the
    // message says how many it needs), slots out of range, an ephemeral weight outside 1..64.
    Bootstrapper(ckks::ContextPtr ctx, const BootstrapConfig& config = {});

    const ckks::ContextPtr& context() const { return ctx_; }
    size_t slots() const { return n_; }
    const BootstrapConfig& config() const { return config_; }
    // BootstrapConfig::message_ratio_bits, resolved
    int message_ratio_bits() const { return ratio_bits_; }
    const EvalMod& eval_mod() const { return eval_mod_; }  // its terms(): BootstrapConfig::eval_mod_terms, resolved
    // 1 or 2 (BootstrapConfig::iterations, resolved)
    int iterations() const { return iterations_; }

    BootstrapOrder order() const { return config_.order; }
    // Levels the circuit consumes from the top level (SlotsToCoeffs' too when it runs last) and
    // the level of its output.
    int depth() const { return levels_.top - levels_.out; }
    int output_level() const { return levels_.out; }
    // The lowest level an input may have: 0, or with SlotsToCoeffs first its depth (it runs on the
    // input's levels; the input is dropped to this level first).
    int min_input_level() const { return order() == BootstrapOrder::slots_to_coeffs_first ? stc_.depth() : 0; }
    // The input may be at any level (it is dropped to 0). At level 0 its scale may be at most
    // this (twice q_0 / 2^message_ratio_bits): above it the message cannot be kept that far below
    // q_0. Above level 0 a larger scale (such as the standard scale of a level of 60-bit primes)
    // is brought below it by one rescale on the way down, up to q_1 times the message scale.
    double max_input_scale() const;
    // -log2 of the model's error (EvalMod's approximation) for a coefficient of magnitude 1,
    // relative to it: a bound before noise. The coefficients of n values in the unit disk are
    // about 1/sqrt(n) in size, where the sine's error is far smaller.
    double precision_bits() const;
    // k of the second iteration: the first bootstrap's error is scaled by 2^k before its own
    // bootstrap (0 with one iteration). Its error, about 2^-precision at |m| = 1 with noise, must
    // stay well inside EvalMod's interval after the scaling: k leaves 6 bits of margin.
    int iteration_scale_bits() const;

    // The rotation steps whose Galois keys the circuit needs (each in 1 .. max_slots - 1, one per
    // Galois element, sorted), and the conjugation key.
    std::vector<int64_t> rotation_steps() const;
    static constexpr bool needs_conjugation = true;
    // For each Galois element the circuit uses, the highest level it is used at (keys made at
    // that level are enough, and smaller: KeyGenerator::galois_key(g, level)).
    std::vector<std::pair<uint64_t, int>> galois_key_levels() const;
    // For each of those Galois elements (in the same order), how much of its key one pass of the
    // circuit (ModRaise to SlotsToCoeffs; a bootstrap makes iterations() passes) reads, in units
    // of the key: 1 for each key switch at the key's level, the fraction of the key's words it
    // reads for one below (SlotsToCoeffs' rotations by CoeffsToSlots' steps, at its low levels).
    // A seeded key draws that many copies of its uniform half per pass: MemoryPolicy::whole_key_reads
    // stores the keys read most whole.
    std::vector<std::pair<uint64_t, double>> galois_key_reads() const;
    // Of those keys, how many the memory policy stores whole (seeds_key false).
    size_t whole_galois_keys() const;
    // What one bootstrap performs (its DFTs, trace and key switches; iterations() times).
    OpCounts cost() const;
    // Whether the secret key is switched to an ephemeral sparse one for ModRaise (the secret key is
    // dense, or sparse of Hamming weight above 64).
    bool encapsulates() const { return encapsulates_; }
    // MissingKey (naming `op` and what is missing) unless `keys` hold every key bootstrap() needs
    // besides the evaluator's relinearization key.
    void require_keys(const char* op, const BootstrapKeys& keys) const;
    // The memory of generate_keys()'s keys (the relinearization key, the evaluator's, not counted).
    size_t key_bytes() const;
    // The host memory of the DFTs' diagonals that bootstraps of ciphertexts in host memory keep
    // (encoded at the first bootstrap; compact ones always, dense ones unless the memory policy
    // encodes them at each use), and what they keep now.
    size_t diagonal_bytes() const;
    size_t kept_diagonal_bytes() const { return cts_.kept_plaintext_bytes() + stc_.kept_plaintext_bytes(); }
    // Encodes the diagonals of diagonal_bytes() now (seconds at N = 2^16), so that the first
    // bootstrap takes no longer than the others; ctx.keygen(bootstrap=True) calls it. Safe to call
    // from several threads and more than once (what is encoded is kept).
    void encode_diagonals() const;
    // The keys of bootstrap(): each Galois key made at the highest level it is used at (smaller
    // than keys of the top level), and the encapsulation keys when encapsulates().
    BootstrapKeys generate_keys(ckks::KeyGenerator& keygen) const;
    // Each key of `keys` seeded or stored whole as the memory policy says for its reads
    // (galois_key_reads(); the encapsulation keys are read once a pass): for keys loaded from
    // their bytes, which the loader seeds all alike. Keys without a seed stay whole.
    void apply_memory_policy(BootstrapKeys& keys) const;
    // Whether the memory policy keeps the uniform halves of a key read `reads` times a pass
    // (galois_key_reads) as their seed (MemoryPolicy::seeded_keys and whole_key_reads).
    bool seeds_key(double reads) const;

    // The bootstrap of x (size 2, any level; `slots()` slots, or fewer: a power of two below, at
    // the cost of slots()): same values, at output_level() and the standard scale of that level. ops: an evaluator whose key set has the relinearization
    // key; keys: generate_keys()'s (MissingKey names what is missing).
    template <ckks::Encrypted T> T bootstrap(const CountedOps& ops, const T& x, const BootstrapKeys& keys) const;
    // Two real inputs for the price of one bootstrap and a conjugation: re + i im is bootstrapped
    // (i is the monomial X^(N/2), exact and free at level 0), and its real and imaginary parts
    // are separated after SlotsToCoeffs (the 1/2 of (z + conj z) / 2 folded into the declared
    // scale). Each result is what bootstrap() would return for its input's real part: an
    // imaginary part of one input lands in the other output. The inputs need one slot count and
    // one scale (ValueError otherwise). Their message z has |z| <= sqrt(2) for |re|, |im| <= 1,
    // whose coefficients are the sums of two inputs' coefficients: the sine's error of
    // precision_bits() applies to those sums. "One scale" is to 2^-40 relative, what
    // AutoEvaluator::bring_to leaves when it aligns two levels.
    template <ckks::Encrypted T>
    std::pair<T, T> bootstrap_real_pair(const CountedOps& ops, const T& re, const T& im, const BootstrapKeys& keys) const;
    // Every element of x taken as real: element c paired with element c + ceil(count / 2) by
    // bootstrap_real_pair (an odd last one with itself), so ceil(count / 2) bootstraps instead of
    // count; the results in x's order.
    ckks::CiphertextBatch bootstrap_real(const CountedOps& ops, const ckks::CiphertextBatch& x,
                                         const BootstrapKeys& keys) const;

    // The levels the circuit passes: ModRaise's target, EvalMod's input and output, the output,
    // and the level SlotsToCoeffs starts at (EvalMod's output, or min_input_level()).
    struct Levels {
        int top = 0, eval_mod_in = 0, eval_mod_out = 0, out = 0, stc_in = 0;
    };

private:
    double message_scale_target() const;  // q_0 / 2^message_ratio_bits
    void apply_memory_policy(ckks::KeySwitchKey& key, double reads) const;
    // For each Galois element the circuit uses, the level of each of its key switches in a pass.
    std::map<uint64_t, std::vector<int>> galois_key_use_levels() const;
    // For each of those elements (in order), its key's level (the highest use) and its reads
    // a pass: what galois_key_levels() and galois_key_reads() report, together.
    struct KeyUse {
        uint64_t galois = 0;
        int level = 0;
        double reads = 0;
    };
    std::vector<KeyUse> galois_key_uses() const;
    double one_iteration_bits() const;    // precision_bits() of one iteration: EvalMod's bound at |m| = 1
    // ValueError / MissingKey (naming `op`) when x or the keys cannot be bootstrapped.
    template <ckks::Encrypted T>
    void check_input(const char* op, const ckks::Evaluator& eval, const T& x, const BootstrapKeys& keys) const;
    // x at level 0, multiplied by the integer that brings its scale closest below message_scale_target().
    template <ckks::Encrypted T> T at_message_scale(const ckks::Evaluator& eval, const T& x) const;
    // x at `level` (>= 0), at its scale when that is at most max_input_scale(), else brought below
    // the message scale by an integer multiple and one rescale on the way down (ValueError when
    // there is no level for it, or the scale exceeds q_{level+1} times the message scale).
    template <ckks::Encrypted T> T at_level_for_message(const ckks::Evaluator& eval, const T& x, int level) const;
    // The message ModRaise takes, at level 0 and the message scale: x itself, or with SlotsToCoeffs
    // first x through SlotsToCoeffs.
    template <ckks::Encrypted T> T message_of(const CountedOps& ops, const T& x, const BootstrapKeys& keys) const;
    // ModRaise to SlotsToCoeffs for a at message scale: at output_level() and its standard scale,
    // holding a's values divided by output_divisor (folded into EvalMod's declared scale).
    template <ckks::Encrypted T> T refresh(const CountedOps& ops, T a, const BootstrapKeys& keys, double output_divisor) const;
    // refresh() repeated iterations() times, each further one on the error of the last.
    template <ckks::Encrypted T>
    T refresh_iterated(const CountedOps& ops, const T& a, const BootstrapKeys& keys, double output_divisor) const;

    ckks::ContextPtr ctx_;
    BootstrapConfig config_;
    size_t n_ = 0;
    bool encapsulates_ = false;
    bool full_ = true;          // n == N/2
    bool split_ = true;         // EvalMod on the real and imaginary parts apart (full slots, or SlotsToCoeffs first)
    int iterations_ = 1;
    int ratio_bits_ = 12;
    EvalMod eval_mod_;
    Levels levels_;
    TransformChain cts_, stc_;
    // -i and i (the monomials -X^(N/2) and X^(N/2)) at unit scale, encoded once per level
    std::unique_ptr<LevelPlaintexts> units_;
    std::vector<int64_t> trace_steps_;  // the SubSum rotations n, 2n, .., N/4 (sparse only)
};

}  // namespace oboro::algorithms
