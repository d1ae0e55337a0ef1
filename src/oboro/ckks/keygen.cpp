#include "oboro/ckks/keygen.hpp"

#include <algorithm>
#include <numeric>

#include "oboro/backend/cpu/poly_ops.hpp"
#include "oboro/ckks/sampling.hpp"
#include "oboro/math/modarith.hpp"
#include "oboro/util/error.hpp"
#include "oboro/util/parallel.hpp"

namespace oboro::ckks {

namespace cpu = backend::cpu;

std::vector<math::Modulus> key_basis(const Context& ctx, int level, size_t special) {
    std::vector<math::Modulus> basis(ctx.moduli(), ctx.moduli() + size_t(level + 1));
    basis.insert(basis.end(), ctx.p_moduli(), ctx.p_moduli() + special);
    return basis;
}

namespace {
size_t qp_limbs(const Context& ctx) { return ctx.q_count() + ctx.p_count(); }

int checked_level(const Context& ctx, std::optional<int> level, const char* op) {
    if (!level) return ctx.max_level();
    if (*level < 0 || *level > ctx.max_level())
        raise<LevelMismatch>(op, ": level ", *level, " is outside 0..", ctx.max_level());
    return *level;
}

int widest_digit_bits(const Context& ctx, int level) {
    const std::vector<int>& q_bits = ctx.params().q_bits;
    int digit_bits = 0;
    for (const auto& d : ctx.ring().level(level).digits)
        digit_bits = std::max(digit_bits, std::accumulate(q_bits.begin() + long(d.begin), q_bits.begin() + long(d.end), 0));
    return digit_bits;
}

}  // namespace

int special_prime_bits(const Context& ctx, size_t count) {
    const std::vector<int>& p_bits = ctx.params().p_bits;
    return std::accumulate(p_bits.begin(), p_bits.begin() + long(count), 0);
}

size_t switching_key_bytes(const Context& ctx, int level, size_t special) {
    size_t coefficient_bytes = 0;
    for (const math::Modulus& m : key_basis(ctx, level, special)) coefficient_bytes += backend::key_word_bytes(m.value);
    return 2 * ctx.ring().digits_at(level) * coefficient_bytes * ctx.n();
}

size_t fewest_special_primes(const Context& ctx, int level) {
    const int digit_bits = widest_digit_bits(ctx, level);
    size_t enough = 1;
    while (enough < ctx.p_count() && special_prime_bits(ctx, enough) < digit_bits) ++enough;
    return enough;
}

namespace {

// The special primes of a key at `level` (all by default): 1 .. p_count, and enough that their
// product P' covers every digit of Q_level in bits, as the parameters' check does for all of P
// (Parameters::validate), or the ModDown's error (about the digit over P' times the key's noise)
// would reach the message.
size_t checked_special(const Context& ctx, int level, std::optional<size_t> special, const char* op) {
    const size_t k = ctx.p_count();
    if (!special) return k;
    if (*special < 1 || *special > k)
        raise<ValueError>(op, ": ", *special, " special primes; these parameters have 1..", k);
    const int digit_bits = widest_digit_bits(ctx, level);
    if (special_prime_bits(ctx, *special) < digit_bits)
        raise<ValueError>(op, ": ", *special, " special prime", *special == 1 ? "" : "s", " (",
                          special_prime_bits(ctx, *special), " bits) cannot switch the ", digit_bits,
                          "-bit digits of level ", level, " without losing the message's low bits; take at least ",
                          fewest_special_primes(ctx, level), " at this level");
    return *special;
}

// The limbs of a polynomial over all of Q*P that a key made at `level` over `special` special
// primes spans: q_0 .. q_level and p_0 .. p_{special-1}, negated when `negated` (rlwe_sample's
// -s). Its inputs are secrets (s, s^2, s(X^g), another secret), so the copy is wiped before its
// block goes back to the cache.
WipedBuffer<uint64_t> restricted(const Context& ctx, const uint64_t* full, int level, size_t special,
                                 bool negated = false) {
    const size_t n = ctx.n(), nq = size_t(level + 1);
    WipedBuffer<uint64_t> out((nq + special) * n);
    const uint64_t* p_part = full + ctx.q_count() * n;
    if (negated) {
        cpu::negate(out.data(), full, ctx.moduli(), nq, n);
        cpu::negate(out.data() + nq * n, p_part, ctx.p_moduli(), special, n);
    } else {
        std::copy(full, full + nq * n, out.data());
        std::copy(p_part, p_part + special * n, out.data() + nq * n);
    }
    return out;
}

// Whether a key made at `level` over `special` special primes spans all of Q*P: a polynomial
// over Q*P is then already over the key's basis, in its order, and needs no restricted copy.
bool whole_basis(const Context& ctx, int level, size_t special) {
    return size_t(level) + 1 == ctx.q_count() && special == ctx.p_count();
}

// b = e - a*s over Q_level*P' (NTT form; minus_s: -s restricted to that basis), with a (written
// to `a`) expanded from stream `stream` of `a_seed` so that it can be stored as the seed: one
// fused pass, b = e + a*(-s), with no a*s of its own to wipe. e gives s away (b and a are
// public): it lives in secret memory (sample_gaussian's SecretVector). a_positions: where each
// limb of a begins in the stream (expand_uniform), when given.
void rlwe_sample(const Context& ctx, int level, size_t special, const SecretVector<int64_t>& e,
                 const math::Seed& a_seed, uint64_t stream, const uint64_t* minus_s, uint64_t* b, uint64_t* a,
                 uint64_t* a_positions = nullptr) {
    const size_t n = ctx.n(), nq = size_t(level + 1), k = special, limbs = nq + k;
    const std::vector<math::Modulus> basis = key_basis(ctx, level, special);
    expand_uniform(a_seed, stream, a, basis.data(), limbs, n, a_positions);
    small_to_ntt(e, gaussian_bound(kErrorSigma), b, ctx.moduli(), ctx.ntt_tables(), nq);
    small_to_ntt(e, gaussian_bound(kErrorSigma), b + nq * n, ctx.p_moduli(), ctx.p_ntt_tables(), k);
    cpu::mul_add(b, a, minus_s, basis.data(), limbs, n);
}
}  // namespace

SecretKeyPtr secret_key_from_coefficients(const Context& ctx, SecretVector<int8_t> coeffs) {
    if (coeffs.size() != ctx.n())
        raise<ValueError>("secret key: ", coeffs.size(), " coefficients, not N = ", ctx.n());
    // Checked without a branch on any coefficient (the rest of the secret's handling is constant
    // time, small_to_ntt): c + 1 is 0, 1 or 2 for a ternary c.
    uint8_t outside = 0;
    for (int8_t c : coeffs) outside |= uint8_t(uint8_t(c + 1) > 2);
    if (outside) raise<ValueError>("secret key: a coefficient is not -1, 0 or 1");
    auto sk = std::make_shared<SecretKey>();
    sk->coeffs.assign(coeffs.begin(), coeffs.end());  // into locked pages; `coeffs` is wiped as it goes
    sk->ntt = LockedSecretBuffer<uint64_t>(qp_limbs(ctx) * ctx.n());
    small_to_ntt(sk->coeffs, sk->ntt.data(), ctx.moduli(), ctx.ntt_tables(), qp_limbs(ctx));
    sk->context_id = ctx.id();
    return sk;
}

void check_secret_key(const SecretKeyPtr& sk, const Context& ctx, const char* who) {
    if (!sk) raise<ValueError>(who, ": no secret key (a null pointer)");
    if (sk->context_id != ctx.id()) raise<ContextMismatch>(who, ": the secret key belongs to another parameter set");
}

KeyGenerator::KeyGenerator(ContextPtr ctx) : KeyGenerator(std::move(ctx), math::Prng()) {}

KeyGenerator KeyGenerator::from_seed_for_testing(ContextPtr ctx, const math::Seed& seed) {
    return KeyGenerator(std::move(ctx), math::Prng(seed));
}

KeyGenerator::KeyGenerator(ContextPtr ctx, math::Prng prng) : ctx_(std::move(ctx)), prng_(prng) {
    const Parameters& p = ctx_->params();
    sk_ = secret_key_from_coefficients(*ctx_, p.secret == SecretDistribution::sparse_ternary
                                                  ? sample_sparse_ternary(prng_, ctx_->n(), p.hamming_weight)
                                                  : sample_ternary(prng_, ctx_->n()));
}

KeyGenerator::KeyGenerator(ContextPtr ctx, SecretKeyPtr sk) : KeyGenerator(std::move(ctx), std::move(sk), math::Prng()) {}

KeyGenerator::KeyGenerator(ContextPtr ctx, SecretKeyPtr sk, math::Prng prng)
    : ctx_(std::move(ctx)), prng_(prng), sk_(std::move(sk)) {
    check_secret_key(sk_, *ctx_, "KeyGenerator");
}

PublicKey KeyGenerator::public_key() {
    const size_t n = ctx_->n(), limbs = qp_limbs(*ctx_);
    PublicKey pk;
    pk.data = AlignedBuffer<uint64_t>(2 * limbs * n);
    pk.a_seed = fresh_seed();
    const WipedBuffer<uint64_t> minus_s = restricted(*ctx_, sk_->ntt.data(), ctx_->max_level(), ctx_->p_count(), true);
    rlwe_sample(*ctx_, ctx_->max_level(), ctx_->p_count(), sample_gaussian(prng_, n), *pk.a_seed, 0, minus_s.data(),
                pk.data.data(), pk.data.data() + limbs * n);
    pk.context_id = ctx_->id();
    return pk;
}

KeySwitchKey KeyGenerator::switching_key(const uint64_t* s_from, std::optional<int> level_opt,
                                         std::optional<size_t> special_opt) {
    const Context& ctx = *ctx_;
    const int level = checked_level(ctx, level_opt, "switching_key");
    const size_t special = checked_special(ctx, level, special_opt, "switching_key");
    const size_t n = ctx.n(), nq = size_t(level + 1), limbs = nq + special;
    const backend::LevelConstants& constants = ctx.ring().key_switch_level(level, special);
    const std::vector<uint64_t>& p_mod_q = constants.p_mod_q;
    const WipedBuffer<uint64_t> minus_s = restricted(ctx, sk_->ntt.data(), level, special, true);
    WipedBuffer<uint64_t> from_copy;
    const uint64_t* from = s_from;
    if (!whole_basis(ctx, level, special)) {
        from_copy = restricted(ctx, s_from, level, special);
        from = from_copy.data();
    }
    KeySwitchKey key = KeySwitchKey::allocate(key_basis(ctx, level, special), special, ctx.ring().digits_at(level), n);
    key.context_id = ctx.id();
    key.a_seed = fresh_seed();
    key.a_positions.resize(key.digits * limbs);
    // The errors come from the generator's stream in digit order, as one digit after the other
    // would draw them (a generator made from a seed makes the same key); everything else of a
    // digit is its own, so the digits run over the pool.
    std::vector<SecretVector<int64_t>> errors;
    for (size_t j = 0; j < key.digits; ++j) errors.push_back(sample_gaussian(prng_, n));
    parallel_for(key.digits, [&](size_t j) {
        // (b_j, a_j) as words, then packed into the key
        AlignedBuffer<uint64_t> ba(2 * limbs * n);
        uint64_t* b = ba.data();
        rlwe_sample(ctx, level, special, errors[j], *key.a_seed, j, minus_s.data(), b, b + limbs * n,
                    key.a_positions.data() + j * limbs);
        // + P' * s_from on the primes of digit j (P' = 0 mod each of its special primes).
        for (size_t i = constants.digits[j].begin; i < constants.digits[j].end; ++i) {
            const math::Modulus& m = ctx.moduli()[i];
            const uint64_t p_mod = p_mod_q[i];
            const uint64_t p_shoup = math::shoup_precompute(p_mod, m.value);
            uint64_t* bi = b + i * n;
            const uint64_t* si = from + i * n;
            for (size_t c = 0; c < n; ++c)
                bi[c] = math::add_mod(bi[c], math::mul_shoup(si[c], p_mod, p_shoup, m.value), m.value);
        }
        key.store(j, 0, b);
        key.store(j, 1, b + limbs * n);
    });
    key.name_words();
    return key;
}

EncapsulationKeys KeyGenerator::encapsulation_keys(int ephemeral_hamming_weight, std::optional<int> from_level) {
    const Context& ctx = *ctx_;
    if (ephemeral_hamming_weight < 1 || uint64_t(ephemeral_hamming_weight) > ctx.n())
        raise<ValueError>("encapsulation_keys: the ephemeral secret's Hamming weight ", ephemeral_hamming_weight,
                          " is outside 1..N = ", ctx.n());
    const int level = checked_level(ctx, from_level, "encapsulation_keys");
    // s' is a SecretKey like s: its memory is wiped when the last pointer to it goes, at the end
    // of this call.
    SecretKeyPtr ephemeral =
        secret_key_from_coefficients(ctx, sample_sparse_ternary(prng_, ctx.n(), ephemeral_hamming_weight));
    EncapsulationKeys keys;
    keys.ephemeral_hamming_weight = ephemeral_hamming_weight;
    keys.from_ephemeral = switching_key(ephemeral->ntt.data(), level);
    // The key to s' is an RLWE sample under s' itself: made over the smallest modulus that
    // switches level 0 (q_0 and the fewest special primes), where a sparse secret keeps its
    // security (docs/security.md). Its errors and seed come from a seed of this generator's
    // stream, so that a generator made from a seed makes the same keys again.
    KeyGenerator to_sparse(ctx_, std::move(ephemeral), math::Prng(fresh_seed()));
    keys.to_ephemeral = to_sparse.switching_key(sk_->ntt.data(), 0, fewest_special_primes(ctx, 0));
    return keys;
}

math::Seed KeyGenerator::fresh_seed() {
    math::Seed seed;
    prng_.fill(seed.data(), seed.size());
    return seed;
}

RelinKey KeyGenerator::relin_key(std::optional<int> level, std::optional<size_t> special) {
    const size_t n = ctx_->n(), limbs = qp_limbs(*ctx_);
    WipedBuffer<uint64_t> s2(limbs * n);
    cpu::mul(s2.data(), sk_->ntt.data(), sk_->ntt.data(), ctx_->moduli(), limbs, n);
    return switching_key(s2.data(), level, special);
}

KeySwitchKey KeyGenerator::galois_key(uint64_t galois, std::optional<int> level, std::optional<size_t> special) {
    const size_t n = ctx_->n(), limbs = qp_limbs(*ctx_);
    if ((galois & 1) == 0 || galois >= 2 * n)
        raise<ValueError>("galois_key: ", galois, " is not a Galois element (odd, below 2N = ", 2 * n, ")");
    // A ciphertext rotated by X -> X^g decrypts under s(X^g); switch from that key back to s.
    WipedBuffer<uint64_t> s_g(limbs * n);
    cpu::permute(s_g.data(), sk_->ntt.data(), ctx_->automorphism_permutation(galois).data(), limbs, n);
    return switching_key(s_g.data(), level, special);
}

void KeyGenerator::add_galois_keys(GaloisKeys& keys, const std::vector<int64_t>& steps, bool conjugation,
                                   std::optional<int> level, std::optional<size_t> special) {
    checked_special(*ctx_, checked_level(*ctx_, level, "add_galois_keys"), special, "add_galois_keys");
    if (keys.context_id == 0) keys.context_id = ctx_->id();
    if (keys.context_id != ctx_->id()) raise<ContextMismatch>("add_galois_keys: the key set belongs to another parameter set");
    std::vector<uint64_t> elements;
    for (int64_t s : steps) {
        const uint64_t g = ctx_->galois_element(s);
        if (g != 1) elements.push_back(g);
    }
    if (conjugation) elements.push_back(ctx_->conjugation_element());
    for (uint64_t g : elements)
        if (!keys.has(g)) keys.add(g, galois_key(g, level, special));
}

GaloisKeys KeyGenerator::galois_keys(const std::vector<int64_t>& steps, bool conjugation, std::optional<int> level,
                                     std::optional<size_t> special) {
    GaloisKeys keys;
    add_galois_keys(keys, steps, conjugation, level, special);
    return keys;
}

}  // namespace oboro::ckks
