#include "oboro/ckks/encryptor.hpp"

#include <cmath>
#include <cstring>

#include "oboro/backend/cpu/encode.hpp"
#include "oboro/backend/cpu/keyswitch.hpp"
#include "oboro/backend/cpu/poly_ops.hpp"
#include "oboro/backend/cpu/public_key_encrypt.hpp"
#include "oboro/ckks/batch_encoder.hpp"
#include "oboro/ckks/evaluator.hpp"
#include "oboro/ckks/sampling.hpp"
#include "oboro/util/error.hpp"
#include "oboro/util/parallel.hpp"

namespace oboro::ckks {

namespace cpu = backend::cpu;

Encryptor::Encryptor(ContextPtr ctx, PublicKey pk) : ctx_(std::move(ctx)), pk_(std::move(pk)) {
    if (pk_->context_id != ctx_->id()) raise<ContextMismatch>("Encryptor: the public key belongs to another parameter set");
}

Encryptor::Encryptor(ContextPtr ctx, SecretKeyPtr sk) : ctx_(std::move(ctx)), sk_(std::move(sk)) {
    check_secret_key(sk_, *ctx_, "Encryptor");
}

void Encryptor::check(const Plaintext& pt) const {
    if (pt.context_id() != ctx_->id()) raise<ContextMismatch>("encrypt: the plaintext belongs to another parameter set");
}

std::optional<math::Seed> Encryptor::encrypt_into(int level, const uint64_t* message, uint64_t* c0, uint64_t* c1,
                                                   math::Prng& prng) const {
    const Context& ctx = *ctx_;
    const size_t n = ctx.n(), nq = size_t(level + 1);
    if (sk_) {
        // (c0, c1) = (-a*s + e + m, a): e and m meet in coefficient form, one NTT for both. a*s
        // gives s away (a is public): its scratch is wiped.
        const math::Seed seed = math::os_random_seed();
        const auto uniform_a = [&] { expand_uniform(seed, 0, c1, ctx.moduli(), nq, n); };
        const auto error_and_message = [&] {
            small_to_limbs(sample_gaussian(prng, n), gaussian_bound(kErrorSigma), c0, ctx.moduli(), nq);
            if (message) cpu::add(c0, c0, message, ctx.moduli(), nq, n);
            cpu::ntt_forward(c0, ctx.ntt_tables(), nq);
        };
        // The two are independent. Too few limbs to split (S1: the NTT's two limbs alone were
        // slower on two threads than on one, the worker woken from sleep for one short loop):
        // they run side by side. Otherwise each spreads its limbs over the pool.
        if (nq * n < cpu::kParallelWords) {
            parallel_for(2, [&](size_t task) { task == 0 ? error_and_message() : uniform_a(); });
        } else {
            uniform_a();
            error_and_message();
        }
        WipedBuffer<uint64_t> as(nq * n);
        cpu::mul(as.data(), c1, sk_->ntt.data(), ctx.moduli(), nq, n);
        cpu::sub(c0, c0, as.data(), ctx.moduli(), nq, n);
        return seed;
    }
    // Over Q_l * P: round((u*b + e0 + P*m) / P) = round((u*b + e0) / P) + m, and
    // round((u*a + e1) / P). The errors (and P*m) stay in coefficient form: the division by P
    // takes them as an addend, so they need no transforms of their own; each ciphertext limb's
    // share runs while the limb is in cache (backend/cpu/public_key_encrypt.hpp).
    const size_t qp = ctx.q_count() + ctx.p_count();
    const auto u_coeffs = sample_ternary(prng, n);
    const auto e0 = sample_gaussian(prng, n);
    const auto e1 = sample_gaussian(prng, n);
    cpu::public_key_encrypt(ctx.ring(), ctx.ring().level(level), u_coeffs.data(), e0.data(), e1.data(),
                            gaussian_bound(kErrorSigma), message, pk_->b(), pk_->a(qp, n), ctx.q_count(), c0, c1);
    return std::nullopt;
}

Ciphertext Encryptor::encrypt_zero(int level, double scale, size_t slots) {
    const Context& ctx = *ctx_;
    if (level < 0 || level > ctx.max_level())
        raise<LevelMismatch>("encrypt: level ", level, " is outside 0..", ctx.max_level());
    Ciphertext ct(ctx, 2, level, scale, slots);
    if (const auto seed = encrypt_into(level, nullptr, ct.mutable_poly(0), ct.mutable_poly(1), prng_))
        ct.set_uniform_seed(*seed);
    return ct;
}

Ciphertext Encryptor::encrypt(const Plaintext& pt) {
    check(pt);
    Ciphertext ct = encrypt_zero(pt.level(), pt.scale(), pt.slots());
    const std::optional<math::Seed> seed = ct.uniform_seed();
    cpu::add(ct.mutable_poly(0), ct.poly(0), pt.poly(0), ctx_->moduli(), pt.limbs(), ctx_->n());
    if (seed) ct.set_uniform_seed(*seed);  // only polynomial 0 changed
    return ct;
}

Ciphertext Encryptor::encrypt(const Encoder& encoder, const std::vector<std::complex<double>>& values,
                              std::optional<int> level, std::optional<double> scale, std::optional<size_t> slots) {
    if (encoder.context()->id() != ctx_->id())
        raise<ContextMismatch>("encrypt: the encoder belongs to another parameter set");
    const EncodingShape shape = encoder.encoding_shape("encrypt", values.size(), level, scale, slots);
    const size_t n = ctx_->n(), nq = size_t(shape.level + 1);
    AlignedBuffer<uint64_t> message(nq * n);
    {
        std::vector<double> coefficients(2 * shape.slots);
        encoder.scaled_coefficients("encrypt", values.data(), values.size(), shape, coefficients.data());
        cpu::write_coefficients(ctx_->ring(), coefficients.data(), shape.slots, shape.level, message.data());
    }
    Ciphertext ct(*ctx_, 2, shape.level, shape.scale, shape.slots);
    if (const auto seed = encrypt_into(shape.level, message.data(), ct.mutable_poly(0), ct.mutable_poly(1), prng_))
        ct.set_uniform_seed(*seed);
    return ct;
}

void Encryptor::reseed_for_testing(const math::Seed& seed) { prng_ = math::Prng(seed); }

CiphertextBatch Encryptor::encrypt_elements(size_t count, const EncodingShape& shape,
                                            const std::function<const uint64_t*(size_t, uint64_t*)>& message,
                                            const PlaintextBatch* plain) {
    const Context& ctx = *ctx_;
    CiphertextBatch out(ctx, count, 2, shape.level, shape.scale, shape.slots);
    // One fresh seed from this encryptor's generator; element c draws from stream c of it, so the
    // elements' randomness is independent and the loop below can run in parallel.
    math::Seed batch_seed;
    prng_.fill(batch_seed.data(), batch_seed.size());
    std::vector<std::optional<math::Seed>> seeds(count);
    const size_t n = ctx.n(), limbs = size_t(shape.level + 1);
    const backend::BatchSpan dst = span_of(out);  // taken once: write access to the batch is not thread-safe
    parallel_for(count, [&](size_t c) {
        math::Prng prng(batch_seed, c);
        AlignedBuffer<uint64_t> buffer(message ? limbs * n : 0);
        uint64_t* c0 = dst.poly(c, 0);
        seeds[c] = encrypt_into(shape.level, message ? message(c, buffer.data()) : nullptr, c0, dst.poly(c, 1), prng);
        if (plain) cpu::add(c0, c0, plain->poly(c, 0), ctx.moduli(), limbs, n);
    });
    for (size_t c = 0; c < seeds.size(); ++c)  // after the writes, which forget seeds
        if (seeds[c]) out.set_uniform_seed(c, *seeds[c]);
    return out;
}

CiphertextBatch Encryptor::encrypt_batch(const PlaintextBatch& pts) {
    if (pts.empty()) raise<ValueError>("encrypt_batch: the plaintext batch is empty");
    if (pts.context_id() != ctx_->id()) raise<ContextMismatch>("encrypt_batch: the plaintexts belong to another parameter set");
    if (pts.device()) raise<ValueError>("encrypt_batch: the plaintexts are in device memory; encryption runs on the CPU");
    return encrypt_elements(pts.count(), EncodingShape{pts.level(), pts.scale(), pts.slots()}, nullptr, &pts);
}

CiphertextBatch Encryptor::encrypt_batch(const Encoder& encoder, std::span<const std::complex<double>> values,
                                         size_t rows, std::optional<int> level, std::optional<double> scale,
                                         std::optional<size_t> slots) {
    if (encoder.context()->id() != ctx_->id())
        raise<ContextMismatch>("encrypt_batch: the encoder belongs to another parameter set");
    const BatchCoefficients host = batch_coefficients("encrypt_batch", encoder, values, rows, level, scale, slots);
    const size_t row_words = 2 * host.shape.slots;
    return encrypt_elements(rows, host.shape, [&](size_t c, uint64_t* buffer) -> const uint64_t* {
        cpu::write_coefficients(ctx_->ring(), host.coefficients.data() + c * row_words, host.shape.slots,
                                host.shape.level, buffer);
        return buffer;
    }, nullptr);
}

Decryptor::Decryptor(ContextPtr ctx, SecretKeyPtr sk) : ctx_(std::move(ctx)), sk_(std::move(sk)) {
    check_secret_key(sk_, *ctx_, "Decryptor");
}

void Decryptor::set_noise_flooding(double flooding_bits) {
    if (!(flooding_bits >= 0 && flooding_bits <= 50))
        raise<ValueError>("set_noise_flooding: ", flooding_bits, " bits is outside 0..50");
    flooding_bits_ = flooding_bits;
}

namespace {
// Decryption takes ciphertexts of size 2, or 3 (a product before relinearization).
void check_decryptable_size(size_t size) {
    if (size < 2 || size > 3) raise<ValueError>("decrypt: a ciphertext of size ", size, " is not supported");
}
}  // namespace

void Decryptor::check(const Ciphertext& ct) const {
    if (ct.context_id() != ctx_->id())
        raise<ContextMismatch>("decrypt: the ciphertext (", describe(ct), ") belongs to another parameter set");
    if (ct.basis() != Basis::q)
        raise<ValueError>("decrypt: the ciphertext (", describe(ct), ") is over the extended basis Q_level * P; "
                          "mod_down it first");
    check_decryptable_size(ct.size());
}

void Decryptor::decrypt_into(const uint64_t* const* polys, size_t size, size_t limbs, uint64_t* out,
                             math::Prng& prng) const {
    const Context& ctx = *ctx_;
    const size_t n = ctx.n(), nq = limbs;
    // Horner: ((c2*s) + c1)*s + c0
    std::memcpy(out, polys[size - 1], nq * n * sizeof(uint64_t));
    for (size_t j = size - 1; j-- > 0;) {
        cpu::mul(out, out, sk_->ntt.data(), ctx.moduli(), nq, n);
        cpu::add(out, out, polys[j], ctx.moduli(), nq, n);
    }
    if (flooding_bits_ > 0) {
        WipedBuffer<uint64_t> noise(nq * n);  // subtracted from a result, it would undo the flooding
        const double sigma = std::exp2(flooding_bits_);
        small_to_ntt(sample_gaussian(prng, n, sigma), gaussian_bound(sigma), noise.data(), ctx.moduli(), ctx.ntt_tables(), nq);
        cpu::add(out, out, noise.data(), ctx.moduli(), nq, n);
    }
}

math::Seed Decryptor::fresh_seed() const {
    math::Seed seed;
    std::lock_guard<std::mutex> lock(prng_mutex_);
    prng_.fill(seed.data(), seed.size());
    return seed;
}

void Decryptor::decrypt_ciphertext(const Ciphertext& ct, uint64_t* out) const {
    const uint64_t* polys[3] = {ct.poly(0), ct.poly(1), ct.size() > 2 ? ct.poly(2) : nullptr};
    math::Prng prng(fresh_seed());
    decrypt_into(polys, ct.size(), ct.limbs(), out, prng);
}

Plaintext Decryptor::decrypt(const Ciphertext& ct) const {
    check(ct);
    Plaintext pt(*ctx_, ct.level(), ct.scale(), ct.slots());
    decrypt_ciphertext(ct, pt.mutable_poly(0));
    return pt;
}

std::vector<std::complex<double>> Decryptor::decrypt_decode(const Ciphertext& ct, const Encoder& encoder) const {
    check(ct);
    WipedBuffer<uint64_t> m(ct.limbs() * ctx_->n());  // m + e: e is a function of the secret
    decrypt_ciphertext(ct, m.data());
    return encoder.decode_poly(m.data(), ct.level(), ct.scale(), ct.slots());
}

std::vector<std::vector<std::complex<double>>> Decryptor::decrypt_decode(const CiphertextBatch& batch,
                                                                         const Encoder& encoder) const {
    if (batch.context_id() != ctx_->id())
        raise<ContextMismatch>("decrypt: the batch (", describe(batch), ") belongs to another parameter set");
    if (batch.basis() != Basis::q)
        raise<ValueError>("decrypt: the batch (", describe(batch), ") is over the extended basis Q_level * P; "
                          "mod_down it first");
    check_decryptable_size(batch.size());
    if (batch.device()) return decrypt_decode(batch.to_host(), encoder);  // one download, not one per element
    const math::Seed batch_seed = fresh_seed();  // element c's flooding noise: stream c of it
    std::vector<std::vector<std::complex<double>>> out(batch.count());
    parallel_for(batch.count(), [&](size_t c) {
        math::Prng prng(batch_seed, c);
        WipedBuffer<uint64_t> m(batch.limbs() * ctx_->n());
        const uint64_t* polys[3] = {batch.poly(c, 0), batch.poly(c, 1), batch.size() > 2 ? batch.poly(c, 2) : nullptr};
        decrypt_into(polys, batch.size(), batch.limbs(), m.data(), prng);
        out[c] = encoder.decode_poly(m.data(), batch.level(), batch.scale(), batch.slots());
    });
    return out;
}

}  // namespace oboro::ckks
