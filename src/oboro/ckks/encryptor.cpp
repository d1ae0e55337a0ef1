#include "oboro/ckks/encryptor.hpp"

#include <cmath>
#include <cstring>

#include "oboro/backend/cpu/poly_ops.hpp"
#include "oboro/ckks/evaluator.hpp"
#include "oboro/ckks/keyswitch.hpp"
#include "oboro/ckks/sampling.hpp"
#include "oboro/util/error.hpp"

namespace oboro::ckks {

namespace cpu = backend::cpu;

Encryptor::Encryptor(ContextPtr ctx, PublicKey pk) : ctx_(std::move(ctx)), pk_(std::move(pk)) {
    if (pk_->context_id != ctx_->id()) raise<ContextMismatch>("Encryptor: the public key belongs to another parameter set");
}

Encryptor::Encryptor(ContextPtr ctx, SecretKey sk) : ctx_(std::move(ctx)), sk_(std::move(sk)) {
    if (sk_->context_id != ctx_->id()) raise<ContextMismatch>("Encryptor: the secret key belongs to another parameter set");
}

void Encryptor::check(const Plaintext& pt) const {
    if (pt.context_id() != ctx_->id()) raise<ContextMismatch>("encrypt: the plaintext belongs to another parameter set");
}

Ciphertext Encryptor::encrypt_zero(int level, double scale, size_t slots) {
    const Context& ctx = *ctx_;
    const size_t n = ctx.n(), nq = size_t(level + 1);
    if (level < 0 || level > ctx.max_level())
        raise<LevelMismatch>("encrypt: level ", level, " is outside 0..", ctx.max_level());
    Ciphertext ct(ctx, 2, level, scale, slots);
    if (sk_) {
        // (c0, c1) = (-a*s + e, a)
        const math::Seed seed = math::os_random_seed();
        expand_uniform(seed, 0, ct.poly(1), ctx.moduli(), nq, n);
        small_to_ntt(sample_gaussian(prng_, n), ct.poly(0), ctx.moduli(), ctx.ntt_tables(), nq);
        AlignedBuffer<uint64_t> as(nq * n);
        cpu::mul(as.data(), ct.poly(1), sk_->ntt.data(), ctx.moduli(), nq, n);
        cpu::sub(ct.poly(0), ct.poly(0), as.data(), ctx.moduli(), nq, n);
        ct.set_uniform_seed(seed);
        return ct;
    }
    // Over Q_l * P: (u*b + e0, u*a + e1), then divide by P.
    const size_t k = ctx.p_count(), ne = nq + k, qp = ctx.q_count() + k;
    AlignedBuffer<uint64_t> u(ne * n), e(ne * n), ext(2 * ne * n);
    const auto u_coeffs = sample_ternary(prng_, n);
    small_to_ntt(u_coeffs, u.data(), ctx.moduli(), ctx.ntt_tables(), nq);
    small_to_ntt(u_coeffs, u.data() + nq * n, ctx.p_moduli(), ctx.p_ntt_tables(), k);
    for (int part = 0; part < 2; ++part) {
        const uint64_t* key = part == 0 ? pk_->b() : pk_->a(qp, n);
        uint64_t* out = ext.data() + size_t(part) * ne * n;
        const auto e_coeffs = sample_gaussian(prng_, n);
        small_to_ntt(e_coeffs, e.data(), ctx.moduli(), ctx.ntt_tables(), nq);
        small_to_ntt(e_coeffs, e.data() + nq * n, ctx.p_moduli(), ctx.p_ntt_tables(), k);
        // the key's limbs: q_0..q_l, then the special primes at q_count..
        cpu::mul(out, u.data(), key, ctx.moduli(), nq, n);
        cpu::mul(out + nq * n, u.data() + nq * n, key + ctx.q_count() * n, ctx.p_moduli(), k, n);
        cpu::add(out, out, e.data(), ctx.moduli(), nq, n);
        cpu::add(out + nq * n, out + nq * n, e.data() + nq * n, ctx.p_moduli(), k, n);
        mod_down(ctx, level, out, ct.poly(size_t(part)));
    }
    return ct;
}

Ciphertext Encryptor::encrypt(const Plaintext& pt) {
    check(pt);
    Ciphertext ct = encrypt_zero(pt.level(), pt.scale(), pt.slots());
    const std::optional<math::Seed> seed = ct.uniform_seed();
    cpu::add(ct.poly(0), ct.poly(0), pt.poly(0), ctx_->moduli(), pt.limbs(), ctx_->n());
    if (seed) ct.set_uniform_seed(*seed);  // only polynomial 0 changed
    return ct;
}

Decryptor::Decryptor(ContextPtr ctx, SecretKey sk) : ctx_(std::move(ctx)), sk_(std::move(sk)) {
    if (sk_.context_id != ctx_->id()) raise<ContextMismatch>("Decryptor: the secret key belongs to another parameter set");
}

void Decryptor::set_noise_flooding(double flooding_bits) {
    if (!(flooding_bits >= 0 && flooding_bits <= 50))
        raise<ValueError>("set_noise_flooding: ", flooding_bits, " bits is outside 0..50");
    flooding_bits_ = flooding_bits;
}

void Decryptor::decrypt_into(const Ciphertext& ct, uint64_t* out) const {
    const Context& ctx = *ctx_;
    if (ct.context_id() != ctx.id())
        raise<ContextMismatch>("decrypt: the ciphertext (", describe(ct), ") belongs to another parameter set");
    if (ct.size() < 2 || ct.size() > 3) raise<ValueError>("decrypt: a ciphertext of size ", ct.size(), " is not supported");
    const size_t n = ctx.n(), nq = ct.limbs();
    // Horner: ((c2*s) + c1)*s + c0
    std::memcpy(out, ct.poly(ct.size() - 1), nq * n * sizeof(uint64_t));
    for (size_t j = ct.size() - 1; j-- > 0;) {
        cpu::mul(out, out, sk_.ntt.data(), ctx.moduli(), nq, n);
        cpu::add(out, out, ct.poly(j), ctx.moduli(), nq, n);
    }
    if (flooding_bits_ > 0) {
        AlignedBuffer<uint64_t> noise(nq * n);
        small_to_ntt(sample_gaussian(prng_, n, std::exp2(flooding_bits_)), noise.data(), ctx.moduli(), ctx.ntt_tables(), nq);
        cpu::add(out, out, noise.data(), ctx.moduli(), nq, n);
    }
}

Plaintext Decryptor::decrypt(const Ciphertext& ct) const {
    Plaintext pt(*ctx_, ct.level(), ct.scale(), ct.slots());
    decrypt_into(ct, pt.poly(0));
    return pt;
}

std::vector<std::complex<double>> Decryptor::decrypt_decode(const Ciphertext& ct, const Encoder& encoder) const {
    AlignedBuffer<uint64_t> m(ct.limbs() * ctx_->n());
    decrypt_into(ct, m.data());
    return encoder.decode_poly(m.data(), ct.level(), ct.scale(), ct.slots());
}

}  // namespace oboro::ckks
