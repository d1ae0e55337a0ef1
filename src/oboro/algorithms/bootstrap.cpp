#include "oboro/algorithms/bootstrap.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <numeric>
#include <string>

#include "oboro/algorithms/level_plaintexts.hpp"
#include "oboro/algorithms/requirements.hpp"
#include "oboro/ckks/encoder.hpp"
#include "oboro/util/error.hpp"

namespace oboro::algorithms {

using cplx = std::complex<double>;

namespace {

size_t checked_slots(const ckks::Context& ctx, const BootstrapConfig& config) {
    const size_t n = config.slots.value_or(ctx.max_slots());
    if (n < 2 || n > ctx.max_slots() || !ckks::is_power_of_two(n))
        raise<ParameterError>("Bootstrapper: slots = ", n, " must be a power of two in [2, N/2 = ", ctx.max_slots(), "]");
    if (config.coeffs_to_slots_levels < 1 || config.slots_to_coeffs_levels < 1)
        raise<ParameterError>("Bootstrapper: CoeffsToSlots and SlotsToCoeffs take at least one level each");
    if (config.message_ratio_bits && (*config.message_ratio_bits < 4 || *config.message_ratio_bits > 40))
        raise<ParameterError>("Bootstrapper: message_ratio_bits = ", *config.message_ratio_bits, " (4..40)");
    if (config.iterations && *config.iterations != 1 && *config.iterations != 2)
        raise<ParameterError>("Bootstrapper: iterations = ", *config.iterations, " (1, or 2 for high precision)");
    return n;
}

// The largest secret weight ModRaise works with directly: EvalMod's degree grows with the bound
// on the integers it removes, h / 2.
constexpr int kMaxModRaiseWeight = 64;

bool needs_encapsulation(const ckks::Parameters& p) {
    return p.secret != ckks::SecretDistribution::sparse_ternary || p.hamming_weight > kMaxModRaiseWeight;
}

// The integers ModRaise adds are bounded by the secret it sees (the secret key, or the ephemeral
// one): |c0 + c1 s| <= (h + 1) q_0 / 2 for centred c0, c1 and a ternary s of Hamming weight h,
// so |I| <= h / 2 (plus the message), always: no failure probability comes from this bound.
double integer_bound(const ckks::Context& ctx, const BootstrapConfig& c) {
    const ckks::Parameters& p = ctx.params();
    if (!needs_encapsulation(p)) return p.hamming_weight / 2.0;
    if (c.ephemeral_hamming_weight < 1 || c.ephemeral_hamming_weight > kMaxModRaiseWeight)
        raise<ParameterError>("Bootstrapper: the ephemeral secret's Hamming weight ", c.ephemeral_hamming_weight,
                              " must be in 1..", kMaxModRaiseWeight);
    // the key to the ephemeral secret is an RLWE sample under it over q_0 and the fewest special
    // primes: its modulus must keep the sparse secret's security (docs/security.md)
    if (p.security != ckks::SecurityLevel::none) {
        const size_t special = ckks::fewest_special_primes(ctx, 0);
        const int bits = p.q_bits[0] + ckks::special_prime_bits(ctx, special);
        const int limit = ckks::max_log_q_sparse_sample(p.log_n, c.ephemeral_hamming_weight);
        if (bits > limit)
            raise<ParameterError>("Bootstrapper: the key to the ephemeral secret of Hamming weight ",
                                  c.ephemeral_hamming_weight, " spans q_0 and ", special, " special prime",
                                  special == 1 ? "" : "s", " (", bits, " bits); ",
                                  limit ? "128-bit security allows at most " + std::to_string(limit) + " bits"
                                        : std::string("no 128-bit security bound is known for it"),
                                  " at N = 2^", p.log_n,
                                  " (docs/security.md). Use N >= 2^16, a weight >= 32 or a smaller q_0");
    }
    return c.ephemeral_hamming_weight / 2.0;
}

// The levels of the DFTs: at most one per butterfly stage.
int dft_levels(int requested, size_t n) { return std::min(requested, int(std::log2(double(n)))); }

Bootstrapper::Levels layout(const ckks::Context& ctx, const BootstrapConfig& c, size_t n, const EvalMod& em) {
    Bootstrapper::Levels l;
    const bool stc_first = c.order == BootstrapOrder::slots_to_coeffs_first;
    const int stc = dft_levels(c.slots_to_coeffs_levels, n);
    l.top = ctx.max_level();
    l.eval_mod_in = l.top - dft_levels(c.coeffs_to_slots_levels, n);
    l.eval_mod_out = l.eval_mod_in - em.depth();
    l.out = stc_first ? l.eval_mod_out : l.eval_mod_out - stc;
    l.stc_in = stc_first ? stc : l.eval_mod_out;
    if (stc_first && stc >= l.top)
        raise<ParameterError>("Bootstrapper: SlotsToCoeffs first runs on levels ", stc, " .. 1 of the input, but the "
                              "parameters have ", l.top, "; add ciphertext primes or choose fewer DFT levels");
    if (l.out < 0)
        raise<ParameterError>("Bootstrapper: the circuit consumes ", l.top - l.out, " levels (CoeffsToSlots ",
                              dft_levels(c.coeffs_to_slots_levels, n), ", EvalMod ", em.depth(), ", SlotsToCoeffs ",
                              dft_levels(c.slots_to_coeffs_levels, n), ") but the parameters have ", l.top,
                              "; add ciphertext primes or choose fewer DFT levels");
    return l;
}

ComplexDiagonals diagonal_matrix(std::vector<cplx> d) {
    ComplexDiagonals m;
    m[0] = std::move(d);
    return m;
}

// `split`: EvalMod takes the real and imaginary parts apart (full slots, or SlotsToCoeffs first);
// otherwise (sparse slots) the last step packs them into 2n real slots of one ciphertext.
std::vector<TransformChain::Step> coeffs_to_slots_steps(const BootstrapConfig& c, size_t n, double constant,
                                                        bool split) {
    std::vector<ComplexDiagonals> groups =
        merge_stages(dft_stages(n, DftDirection::coeffs_to_slots), dft_levels(c.coeffs_to_slots_levels, n), n);
    // the constant spread evenly over the levels: each level's diagonals keep entries of similar
    // size, so that none loses more of its relative precision to the encoding's rounding
    const double per_level = std::pow(constant, 1.0 / double(groups.size()));
    for (auto& g : groups) g = scaled(std::move(g), per_level);
    std::vector<TransformChain::Step> steps;
    for (auto& g : groups) steps.push_back({std::move(g), n});
    if (!split) {
        // sparse: the last step writes w to slots [0, n) and -i w to [n, 2n), so that x + conj(x)
        // holds the real parts, then the imaginary parts, of w in 2n real slots
        std::vector<cplx> rows(2 * n, cplx(1, 0));
        std::fill(rows.begin() + long(n), rows.end(), cplx(0, -1));
        steps.back() = {compose(diagonal_matrix(std::move(rows)), periodic_extension(steps.back().matrix, n), 2 * n),
                        2 * n};
    }
    return steps;
}

// log2 of the factor by which EvalMod's output scale exceeds the output's (SlotsToCoeffs brings it
// back down). At the output's scale, the rounding noise of EvalMod's last rescale (about sqrt(h/12)
// per coefficient) would be spread by the DFT over every slot: about N times the noise over the
// scale instead of sqrt(N) times, 2^-22 at N = 2^16 whatever the message ratio (measured). A gain
// of sqrt(N) * 2^4 puts it below the other terms; any gain from 2^4 to 2^14 measured the same at
// N = 2^12.
int slots_to_coeffs_gain_bits(const ckks::Context& ctx) { return (ctx.log_n() + 1) / 2 + 4; }

// After EvalMod (CoeffsToSlots first) it takes EvalMod's gain back and, for sparse slots, gathers
// the real and imaginary parts from 2n slots; run first, it is the plain transform on n slots.
std::vector<TransformChain::Step> slots_to_coeffs_steps(const ckks::Context& ctx, const BootstrapConfig& c, size_t n) {
    std::vector<ComplexDiagonals> groups =
        merge_stages(dft_stages(n, DftDirection::slots_to_coeffs), dft_levels(c.slots_to_coeffs_levels, n), n);
    std::vector<TransformChain::Step> steps;
    if (c.order == BootstrapOrder::slots_to_coeffs_first) {
        for (auto& g : groups) steps.push_back({std::move(g), n});
        return steps;
    }
    // the gain taken back evenly over the levels (scale factors of the diagonals' encoding)
    const double per_level = std::exp2(-double(slots_to_coeffs_gain_bits(ctx)) / double(groups.size()));
    for (auto& g : groups) steps.push_back({std::move(g), n, per_level});
    if (n < ctx.max_slots()) {
        // sparse: the first step reads the real parts from slots [0, n) and the imaginary parts
        // from [n, 2n): u[l] = v[l mod n] + i v[(l mod n) + n], repeated with period n
        std::vector<cplx> same(2 * n, cplx(1, 0)), across(2 * n, cplx(0, 1));
        std::fill(same.begin() + long(n), same.end(), cplx(0, 1));
        std::fill(across.begin() + long(n), across.end(), cplx(1, 0));
        ComplexDiagonals gather;
        gather[0] = std::move(same);
        gather[int64_t(n)] = std::move(across);
        steps.front() = {compose(periodic_extension(steps.front().matrix, n), gather, 2 * n), 2 * n, per_level};
    }
    return steps;
}

// How far apart (relative) the scales of bootstrap_real_pair's two inputs may be.
constexpr double kPairScaleTolerance = 0x1p-40;

// The DFTs keep their baby-step rotations over Q * P (double hoisting).
constexpr Hoisting kDftHoisting = Hoisting::mod_up_and_mod_down;

// The scale from which two iterations are the automatic choice (BootstrapConfig::iterations).
constexpr double kTwoIterationsScale = 0x1p45;

// Whether the parameters' scale is one where two iterations are expected: the output level's noise
// floor lies well beyond one bootstrap's precision there. The parameters' scale (that of every
// level of the presets) stands for the output level's, which the layout gives only after EvalMod
// is made, and EvalMod's terms depend on this too: one rule for both.
bool two_iterations_scale(const ckks::Context& ctx) { return ctx.params().scale >= kTwoIterationsScale; }

// The automatic message ratios (BootstrapConfig::message_ratio_bits).
constexpr int kTwoTermRatioBits = 8;
constexpr int kRatioBits = 12;
constexpr int kSlotsToCoeffsFirstRatioBits = 15;

// BootstrapConfig::eval_mod_terms, resolved: at a two-iteration scale (B2) one term whatever the
// iterations, so that asking for one or two changes the time only, not the levels.
int eval_mod_terms(const ckks::Context& ctx, const BootstrapConfig& c) {
    if (c.eval_mod_terms) return *c.eval_mod_terms;
    const bool one = c.order == BootstrapOrder::slots_to_coeffs_first || c.iterations == 2 || two_iterations_scale(ctx);
    return one ? 1 : 2;
}

}  // namespace

Bootstrapper::Bootstrapper(ckks::ContextPtr ctx, const BootstrapConfig& config)
    : ctx_(std::move(ctx)),
      config_(config),
      n_(checked_slots(*ctx_, config)),
      encapsulates_(needs_encapsulation(ctx_->params())),
      full_(n_ == ctx_->max_slots()),
      split_(full_ || config.order == BootstrapOrder::slots_to_coeffs_first),
      eval_mod_(integer_bound(*ctx_, config), config.double_angles, config.cosine_degree, eval_mod_terms(*ctx_, config)),
      levels_(layout(*ctx_, config_, n_, eval_mod_)),
      cts_([&] {
          // The raised ciphertext is declared at scale S_0 = q_{EvalMod input} (EvalMod's powers
          // then keep their scale); its slots hold E(q_0 t) / S_0 (times N / 2n after the trace).
          // CoeffsToSlots must leave t / K' / 2 (x + conj(x) doubles it).
          const double s0 = double(ctx_->q()[size_t(levels_.eval_mod_in)]), q0 = double(ctx_->q()[0]);
          const double gap = double(ctx_->max_slots() / n_);
          const double constant = s0 / (2 * q0 * gap * eval_mod_.interval());
          return TransformChain(ctx_, coeffs_to_slots_steps(config_, n_, constant, split_), kDftHoisting,
                                config_.memory);
      }()),
      stc_(ctx_, slots_to_coeffs_steps(*ctx_, config_, n_), kDftHoisting, config_.memory) {
    const bool stc_first = config_.order == BootstrapOrder::slots_to_coeffs_first;
    ratio_bits_ = config_.message_ratio_bits.value_or(stc_first              ? kSlotsToCoeffsFirstRatioBits
                                                      : eval_mod_.terms() == 2 ? kTwoTermRatioBits
                                                                               : kRatioBits);
    units_ = std::make_unique<LevelPlaintexts>(
        ctx_, std::vector<std::vector<cplx>>{std::vector<cplx>(n_, cplx(0, -1)), std::vector<cplx>(n_, cplx(0, 1))}, n_,
        ckks::Basis::q, PlaintextScale::unit);
    if (!full_)
        for (size_t step = n_; step < ctx_->max_slots(); step *= 2) trace_steps_.push_back(int64_t(step));
    if (stc_first && config_.iterations.value_or(1) != 1)
        raise<ParameterError>("Bootstrapper: SlotsToCoeffs first takes one iteration (comparing the output with the "
                              "input would need SlotsToCoeffs again); use CoeffsToSlots first for two");
    iterations_ = config_.iterations.value_or(!stc_first && two_iterations_scale(*ctx_) ? 2 : 1);
    if (iterations_ > 1 && output_level() < 1)
        raise<ParameterError>("Bootstrapper: ", iterations_, " iterations compare the output with the input at "
                              "level 0, which takes one rescale: they need an output level of at least 1 (this circuit "
                              "leaves ", output_level(), ")");
}

double Bootstrapper::max_input_scale() const {
    // twice the target message scale: the primes are below their nominal powers of two, so a
    // scale of 2^(60 - r) with q_0 just below 2^60 must pass for a ratio of 2^r
    return 2 * message_scale_target();
}

double Bootstrapper::message_scale_target() const {
    return double(ctx_->q()[0]) / std::ldexp(1.0, ratio_bits_);
}

double Bootstrapper::one_iteration_bits() const {
    const double e = std::ldexp(1.0, -ratio_bits_);
    return -std::log2(eval_mod_.approximation_error(e) / e);
}

double Bootstrapper::precision_bits() const {
    const double one = one_iteration_bits();
    if (iterations_ == 1) return one;
    // the second bootstrap's input: the first's error, 2^-one at most, times 2^k; its own
    // approximation error, divided by 2^k on the way out
    const double e = std::ldexp(1.0, -ratio_bits_);
    const double k = std::ldexp(1.0, iteration_scale_bits());
    return -std::log2(eval_mod_.approximation_error(e * k * std::exp2(-one)) / (e * k));
}

int Bootstrapper::iteration_scale_bits() const {
    if (iterations_ == 1) return 0;
    return std::max(0, int(std::floor(one_iteration_bits())) - 6);
}

std::vector<int64_t> Bootstrapper::rotation_steps() const {
    std::vector<int64_t> steps = cts_.rotation_steps();
    for (int64_t k : stc_.rotation_steps()) steps.push_back(k);
    for (int64_t k : trace_steps_) steps.push_back(k);
    // The transforms' plans may name one rotation twice (-256 and 1792 with 2048 slots): one key.
    for (int64_t& k : steps) k = ckks::canonical_step(k, ctx_->max_slots());
    std::sort(steps.begin(), steps.end());
    steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
    return steps;
}

std::map<uint64_t, std::vector<int>> Bootstrapper::galois_key_use_levels() const {
    const Levels& l = levels_;
    std::map<uint64_t, std::vector<int>> at;
    const auto use = [&](int64_t step, size_t count, int level) {
        at[ctx_->galois_element(step)].insert(at[ctx_->galois_element(step)].end(), count, level);
    };
    for (int64_t k : trace_steps_) use(k, 1, l.top);
    for (int i = 0; i < cts_.depth(); ++i)
        for (const auto& [k, count] : cts_.key_uses(size_t(i))) use(k, count, l.top - i);
    at[ctx_->conjugation_element()].push_back(l.eval_mod_in);
    for (int i = 0; i < stc_.depth(); ++i)
        for (const auto& [k, count] : stc_.key_uses(size_t(i))) use(k, count, l.stc_in - i);
    return at;
}

namespace {
// The words of a switching key's uniform half at `level` (over all of P) that a key switch at
// that level reads: the digits of the level times its limbs and the special ones
double uniform_words(const ckks::Context& ctx, int level) {
    return double(ctx.ring().digits_at(level) * (size_t(level) + 1 + ctx.p_count()));
}
}  // namespace

std::vector<Bootstrapper::KeyUse> Bootstrapper::galois_key_uses() const {
    std::vector<KeyUse> out;
    for (const auto& [g, levels] : galois_key_use_levels()) {
        const int level = *std::max_element(levels.begin(), levels.end());
        double reads = 0;
        for (int at : levels) reads += uniform_words(*ctx_, at) / uniform_words(*ctx_, level);
        out.push_back({g, level, reads});
    }
    return out;
}

std::vector<std::pair<uint64_t, int>> Bootstrapper::galois_key_levels() const {
    std::vector<std::pair<uint64_t, int>> out;
    for (const KeyUse& u : galois_key_uses()) out.emplace_back(u.galois, u.level);
    return out;
}

std::vector<std::pair<uint64_t, double>> Bootstrapper::galois_key_reads() const {
    std::vector<std::pair<uint64_t, double>> out;
    for (const KeyUse& u : galois_key_uses()) out.emplace_back(u.galois, u.reads);
    return out;
}

size_t Bootstrapper::whole_galois_keys() const {
    size_t whole = 0;
    for (const KeyUse& u : galois_key_uses()) whole += seeds_key(u.reads) ? 0 : 1;
    return whole;
}

bool Bootstrapper::seeds_key(double reads) const {
    const MemoryPolicy& m = config_.memory;
    return m.seeded_keys && !(m.whole_key_reads > 0 && reads >= m.whole_key_reads);
}

void Bootstrapper::apply_memory_policy(ckks::KeySwitchKey& key, double reads) const {
    if (!seeds_key(reads)) key.store_a_halves();
    else if (key.a_seed) key.seed_a_halves();  // a key without a seed (stored whole in its bytes) stays whole
}

void Bootstrapper::apply_memory_policy(BootstrapKeys& keys) const {
    for (const KeyUse& u : galois_key_uses()) {
        auto it = keys.galois.keys.find(u.galois);
        if (it == keys.galois.keys.end()) continue;
        const ckks::KeySwitchKey& key = *it->second;
        const bool seed = seeds_key(u.reads) && key.a_seed;
        if (seed == !key.a_stored()) continue;  // as the policy says already: the key is shared, not copied
        ckks::KeySwitchKey changed = key;
        apply_memory_policy(changed, u.reads);
        it->second = std::make_shared<const ckks::KeySwitchKey>(std::move(changed));
    }
    if (keys.encapsulation)  // each used once a pass, at its level
        for (ckks::KeySwitchKey* key : {&keys.encapsulation->to_ephemeral, &keys.encapsulation->from_ephemeral})
            apply_memory_policy(*key, 1.0);
}

OpCounts Bootstrapper::cost() const {
    OpCounts c = cts_.cost();
    c += stc_.cost();
    const OpCounts trace{trace_steps_.size(), trace_steps_.size(), 0, 0, 0, 0,
                         {trace_steps_.size(), trace_steps_.size(), trace_steps_.size()}};
    c += trace;
    c.rot += 1;  // the conjugation
    c.key_switch += {1, 1, 1};
    if (encapsulates_) c.key_switch += {2, 2, 2};  // to the ephemeral secret and back
    return repeated(c, uint64_t(iterations_));
}

size_t Bootstrapper::key_bytes() const {
    const ckks::Context& ctx = *ctx_;
    // a seeded key keeps its b_j alone: half of it
    const auto held = [&](size_t whole, double reads) { return seeds_key(reads) ? whole / 2 : whole; };
    size_t bytes = 0;
    for (const KeyUse& u : galois_key_uses()) bytes += held(ckks::switching_key_bytes(ctx, u.level, ctx.p_count()), u.reads);
    if (encapsulates_)  // to the ephemeral secret at level 0 over the fewest special primes, back at the top
        bytes += held(ckks::switching_key_bytes(ctx, 0, ckks::fewest_special_primes(ctx, 0)), 1.0) +
                 held(ckks::switching_key_bytes(ctx, levels_.top, ctx.p_count()), 1.0);
    return bytes;
}

size_t Bootstrapper::diagonal_bytes() const {
    return cts_.plaintext_bytes(levels_.top) + stc_.plaintext_bytes(levels_.stc_in);
}

void Bootstrapper::encode_diagonals() const {
    cts_.encode_diagonals(levels_.top);
    stc_.encode_diagonals(levels_.stc_in);
}

BootstrapKeys Bootstrapper::generate_keys(ckks::KeyGenerator& keygen) const {
    BootstrapKeys keys;
    keys.galois.context_id = ctx_->id();
    // one key at a time: the memory of its a_j goes back before the next key is made
    const auto as_policy = [&](ckks::KeySwitchKey key, double reads) {
        apply_memory_policy(key, reads);
        return key;
    };
    for (const KeyUse& u : galois_key_uses()) keys.galois.add(u.galois, as_policy(keygen.galois_key(u.galois, u.level), u.reads));
    if (encapsulates_) {
        ckks::EncapsulationKeys e = keygen.encapsulation_keys(config_.ephemeral_hamming_weight, levels_.top);
        e.to_ephemeral = as_policy(std::move(e.to_ephemeral), 1.0);
        e.from_ephemeral = as_policy(std::move(e.from_ephemeral), 1.0);
        keys.encapsulation = std::move(e);
    }
    return keys;
}

void Bootstrapper::require_keys(const char* op, const BootstrapKeys& bk) const {
    const ckks::Context& ctx = *ctx_;
    require_rotation_keys(op, ctx, bk.galois, rotation_steps(), "Bootstrapper::rotation_steps");
    if (!bk.galois.has(ctx.conjugation_element()))
        raise<MissingKey>(op, ": the conjugation key is missing (generate the Galois keys with conjugation)");
    if (encapsulates_ && !bk.encapsulation)
        raise<MissingKey>(op, ": the secret key is not sparse enough for ModRaise and the encapsulation keys are "
                              "missing (Bootstrapper::generate_keys makes them)");
    if (encapsulates_ && bk.encapsulation->ephemeral_hamming_weight > config_.ephemeral_hamming_weight)
        raise<ValueError>(op, ": the encapsulation keys' ephemeral secret has Hamming weight ",
                          bk.encapsulation->ephemeral_hamming_weight, " but EvalMod was built for at most ",
                          config_.ephemeral_hamming_weight);
}

template <ckks::Encrypted T>
void Bootstrapper::check_input(const char* op, const ckks::Evaluator& eval, const T& x, const BootstrapKeys& bk) const {
    const ckks::Context& ctx = *ctx_;
    if (x.size() != 2) raise<ValueError>(op, ": the input has size ", x.size(), "; relinearize it first");
    // fewer slots m | n: the message lies in the subring of m slots, inside that of n, and reads
    // as n slots repeating with period m
    if (x.slots() > n_ || n_ % x.slots() != 0)
        raise<ValueError>(op, ": the input has ", x.slots(), " slots; this bootstrapper takes ", n_,
                          " or a power of two below (make one with slots = ", x.slots(), ")");
    require_keys(op, bk);
    if (!(eval.keys() && eval.keys()->relin_key()))
        raise<MissingKey>(op, ": EvalMod takes ciphertext products and the evaluator has no relinearization key");
    const int base = min_input_level();
    if (x.level() < base)
        raise<ValueError>(op, ": the input is at level ", x.level(), " but SlotsToCoeffs first runs on its levels ",
                          base, " .. 1: bootstrap it at level ", base, " or above");
    // at the lowest level the scale must already be small enough; above it, one rescale on the
    // way down brings it there (at_level_for_message) unless it exceeds the message scale times
    // the prime above
    const bool at_base = x.level() == base;
    const double limit = at_base ? max_input_scale() : message_scale_target() * double(ctx.q()[size_t(base) + 1]);
    if (x.scale() > limit)
        raise<ValueError>(op, ": the input's scale 2^", std::log2(x.scale()), " exceeds 2^", std::log2(limit),
                          at_base ? " at level " + std::to_string(base) + " (q_0 / 2^"
                                  : " (q_0 q_" + std::to_string(base + 1) + " / 2^",
                          ratio_bits_, "): the message would not stay small against q_0; rescale it first");
}

template <ckks::Encrypted T>
T Bootstrapper::at_level_for_message(const ckks::Evaluator& eval, const T& x, int level) const {
    T a = x;
    if (a.level() > level && a.scale() > max_input_scale()) {
        // too large (the standard scale of a level of 60-bit primes): an integer multiple and one
        // rescale by q_{level+1} bring it just below the message scale, exactly
        if (a.level() > level + 1) a = eval.drop_to_level(a, level + 1);
        const double k = std::floor(message_scale_target() * double(ctx_->q()[size_t(level) + 1]) / a.scale());
        eval.multiply_integer_inplace(a, int64_t(k));
        a.set_scale(a.scale() * k);
        eval.rescale_inplace(a);
    }
    if (a.level() > level) a = eval.drop_to_level(a, level);
    return a;
}

template <ckks::Encrypted T> T Bootstrapper::at_message_scale(const ckks::Evaluator& eval, const T& x) const {
    // the message at scale just below q_0 / 2^ratio: the integer multiple keeps every bit
    T a = at_level_for_message(eval, x, 0);
    a.set_slots(n_);
    const double factor = std::floor(message_scale_target() / a.scale());
    if (factor >= 2) {
        eval.multiply_integer_inplace(a, int64_t(factor));
        a.set_scale(a.scale() * factor);
    }
    return a;
}

template <ckks::Encrypted T>
T Bootstrapper::refresh(const CountedOps& ops, T a, const BootstrapKeys& bk, double output_divisor) const {
    const char* op = "bootstrap";
    const ckks::Evaluator& eval = ops.eval();
    const ckks::Context& ctx = *ctx_;
    const ckks::GaloisKeys& keys = bk.galois;
    const Levels& l = levels_;
    const double message_scale = a.scale();

    T raised = encapsulates_
                   ? eval.switch_key(eval.mod_raise(eval.switch_key(a, bk.encapsulation->to_ephemeral, op), l.top),
                                     bk.encapsulation->from_ephemeral, op)
                   : eval.mod_raise(a, l.top);
    raised.set_scale(double(ctx.q()[size_t(l.eval_mod_in)]));  // S_0, see the constructor
    for (int64_t k : trace_steps_)
        eval.add_inplace(raised, eval.apply_galois(raised, ctx.galois_element(k), keys, op));

    const T u = cts_.apply(ops, std::move(raised), keys);
    const T conj = eval.conjugate(u, keys);
    // EvalMod's output scale: the values it leaves are the message times message_scale / q_0, so
    // this scale declares them as the message (divided by output_divisor) at the output's standard
    // scale, times the gain that SlotsToCoeffs takes back when it runs last
    const bool stc_last = order() == BootstrapOrder::coeffs_to_slots_first;
    const double eval_mod_scale = ctx.standard_scale(l.out) * double(ctx.q()[0]) / message_scale *
                                  (stc_last ? std::exp2(slots_to_coeffs_gain_bits(ctx)) : 1.0) / output_divisor;
    T w;
    if (split_) {
        T re = eval.add(u, conj);
        T im = eval.sub(u, conj);
        eval.multiply_inplace(im, units_->operands_for(im)[0]);  // -i (u - conj u) = 2 Im u
        // one after the other: as one batch of two on two threads (each thread a part's key
        // switches whole) they measured no faster (docs/bootstrapping.md) for both parts' powers
        // alive at once
        re = eval_mod_.apply(ops, re, eval_mod_scale);
        im = eval_mod_.apply(ops, im, eval_mod_scale);
        eval.multiply_inplace(im, units_->operands_for(im)[1]);
        w = eval.add(re, im);
    } else {
        w = eval_mod_.apply(ops, eval.add(u, conj), eval_mod_scale);
    }
    T out = stc_last ? stc_.apply(ops, std::move(w), keys) : std::move(w);
    out.set_scale(ctx.standard_scale(l.out));
    return out;
}

template <ckks::Encrypted T>
T Bootstrapper::message_of(const CountedOps& ops, const T& x, const BootstrapKeys& bk) const {
    const ckks::Evaluator& eval = ops.eval();
    if (order() == BootstrapOrder::coeffs_to_slots_first) return at_message_scale(eval, x);
    // SlotsToCoeffs on the input's lowest levels: its slots become the coefficients (in the
    // subring of n slots) that ModRaise and CoeffsToSlots take, and it lands at level 0
    T a = at_level_for_message(eval, x, min_input_level());
    a.set_slots(n_);
    return at_message_scale(eval, stc_.apply(ops, std::move(a), bk.galois));
}

template <ckks::Encrypted T>
T Bootstrapper::refresh_iterated(const CountedOps& ops, const T& a, const BootstrapKeys& bk, double output_divisor) const {
    const ckks::Evaluator& eval = ops.eval();
    T out = refresh(ops, a, bk, output_divisor);
    if (iterations_ == 1) return out;
    // out holds a / output_divisor: at level 0 and scale a.scale() * output_divisor (an exact
    // integer factor and one rescale, to 2^-40 relative) its polynomial is a's, up to the first
    // bootstrap's error, and declared at a's scale it reads as a's values plus that error.
    T back = eval.rescale_to(out.level() > 1 ? eval.drop_to_level(out, 1) : out, 0, a.scale() * output_divisor);
    back.set_scale(a.scale());
    T error = eval.sub(a, back);  // minus the first bootstrap's error, at a's level and scale
    const int k = iteration_scale_bits();
    eval.multiply_integer_inplace(error, int64_t(1) << k);
    // the error's bootstrap, divided by output_divisor 2^k on the way out, corrects out
    eval.add_inplace(out, refresh(ops, std::move(error), bk, output_divisor * std::ldexp(1.0, k)));
    return out;
}

template <ckks::Encrypted T>
T Bootstrapper::bootstrap(const CountedOps& ops, const T& x, const BootstrapKeys& bk) const {
    check_input("bootstrap", ops.eval(), x, bk);
    T out = refresh_iterated(ops, message_of(ops, x, bk), bk, 1.0);
    out.set_slots(x.slots());
    return out;
}

template <ckks::Encrypted T>
std::pair<T, T> Bootstrapper::bootstrap_real_pair(const CountedOps& ops, const T& re, const T& im,
                                                  const BootstrapKeys& bk) const {
    const char* op = "bootstrap_real_pair";
    const ckks::Evaluator& eval = ops.eval();
    check_input(op, eval, re, bk);
    check_input(op, eval, im, bk);
    if (re.slots() != im.slots())
        raise<ValueError>(op, ": the two inputs have ", re.slots(), " and ", im.slots(), " slots; pair ciphertexts of "
                          "one slot count");
    // z = re + i im at the level the message is formed at, 0 or SlotsToCoeffs' input level (i is
    // the monomial X^(N/2): no level, no noise), which needs one scale: equal to 2^-40 relative
    // (what an exact alignment of two levels leaves, as AutoEvaluator::bring_to does), im then
    // declared at re's, a change far below the precision
    if (std::abs(re.scale() - im.scale()) > re.scale() * kPairScaleTolerance) {
        char scales[96];
        std::snprintf(scales, sizeof scales, "%.17g and %.17g", re.scale(), im.scale());
        raise<ValueError>(op, ": the two inputs have different scales (", scales,
                          "); pair ciphertexts of one scale (or bootstrap them one by one)");
    }
    const int base = min_input_level();
    T z = at_level_for_message(eval, re, base);
    T im_at_re_scale = im;
    im_at_re_scale.set_scale(re.scale());
    T b = at_level_for_message(eval, im_at_re_scale, base);
    z.set_slots(n_);
    b.set_slots(n_);
    eval.multiply_inplace(b, units_->operands_for(b)[1]);
    eval.add_inplace(z, b);
    // the bootstrap of z / 2, then re = z/2 + conj(z/2) and im = -i (z/2 - conj(z/2))
    const T half = refresh_iterated(ops, message_of(ops, z, bk), bk, 2.0);
    const T conj = eval.conjugate(half, bk.galois);
    std::pair<T, T> out{eval.add(half, conj), eval.sub(half, conj)};
    eval.multiply_inplace(out.second, units_->operands_for(out.second)[0]);
    out.first.set_slots(re.slots());
    out.second.set_slots(re.slots());
    return out;
}

ckks::CiphertextBatch Bootstrapper::bootstrap_real(const CountedOps& ops, const ckks::CiphertextBatch& x,
                                                   const BootstrapKeys& bk) const {
    const size_t count = x.count();
    if (count < 2) return bootstrap(ops, x, bk);
    const ckks::Context& ctx = *ctx_;
    // element c with element c + h; an odd last one goes with itself (its second output is dropped)
    const size_t h = (count + 1) / 2;
    std::vector<size_t> first(h), second(h);
    std::iota(first.begin(), first.end(), size_t(0));
    std::iota(second.begin(), second.end(), h);
    if (count % 2 == 1) second.back() = h - 1;
    const auto [re, im] = bootstrap_real_pair(ops, x.select(ctx, first), x.select(ctx, second), bk);
    std::vector<size_t> rest(count - h);
    std::iota(rest.begin(), rest.end(), size_t(0));
    const ckks::CiphertextBatch tail = im.select(ctx, rest);
    const ckks::CiphertextBatch* parts[] = {&re, &tail};
    return ckks::CiphertextBatch::concatenate(ctx, parts);
}

template ckks::Ciphertext Bootstrapper::bootstrap(const CountedOps&, const ckks::Ciphertext&,
                                                  const BootstrapKeys&) const;
template ckks::CiphertextBatch Bootstrapper::bootstrap(const CountedOps&, const ckks::CiphertextBatch&,
                                                       const BootstrapKeys&) const;
template std::pair<ckks::Ciphertext, ckks::Ciphertext> Bootstrapper::bootstrap_real_pair(
    const CountedOps&, const ckks::Ciphertext&, const ckks::Ciphertext&, const BootstrapKeys&) const;
template std::pair<ckks::CiphertextBatch, ckks::CiphertextBatch> Bootstrapper::bootstrap_real_pair(
    const CountedOps&, const ckks::CiphertextBatch&, const ckks::CiphertextBatch&, const BootstrapKeys&) const;

}  // namespace oboro::algorithms
