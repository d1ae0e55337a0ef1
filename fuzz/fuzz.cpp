#include "fuzz.hpp"

#include <algorithm>
#include <complex>
#include <vector>

#include "oboro/ckks/batch.hpp"
#include "oboro/ckks/key_set.hpp"

namespace oboro::fuzz {

using namespace oboro::ckks;

Parameters parameters() {
    Parameters p;
    p.log_n = 6;
    p.q_bits = {50, 35, 35};
    p.p_bits = {50, 50};
    p.dnum = 3;
    p.security = SecurityLevel::none;
    return p;
}

Session::Session(ContextPtr context)
    : ctx(std::move(context)),
      keygen(ctx),
      pk(keygen.public_key()),
      rk(keygen.relin_key()),
      gk(keygen.galois_keys({1, -1}, /*conjugation=*/true)),
      encoder(ctx),
      encryptor(ctx, keygen.secret_key()),
      decryptor(ctx, keygen.secret_key()),
      eval(ctx, std::make_shared<const MemoryKeySet>(std::make_shared<const RelinKey>(rk),
                                                     std::make_shared<const GaloisKeys>(gk))) {}

Ciphertext Session::ciphertext(int level, size_t slots) const {
    slots = std::min(slots, ctx->max_slots());
    std::vector<std::complex<double>> values(slots);
    for (size_t i = 0; i < slots; ++i) values[i] = {0.25 * double(i % 4) - 0.5, 0.125};
    return encryptor.encrypt(encoder.encode(values, level, std::nullopt, slots));
}

const Session& fixture() {
    static const Session session(Context::create(parameters()));
    return session;
}

namespace {

// The object written again and read back: what a loader accepts, the writer must take, and the
// record it writes must load.
template <class T, class Save, class Load> void round_trip(const char* what, const T& object, Save&& save, Load&& load) {
    must_work(what, [&] {
        const io::Bytes bytes = save(object);
        (void)load(io::ByteView(bytes));
    });
}

// Each key applied to a fresh ciphertext at the key's level.
void apply_each(const Session& s, const GaloisKeys& gk) {
    for (const auto& entry : gk.keys) {
        must_work("apply_galois with a loaded key", [&] {
            (void)s.eval.apply_galois(s.ciphertext(key_level(*entry.second)), entry.first, gk, "fuzz");
        });
    }
}

}  // namespace

void use_plaintext(const Session& s, const Plaintext& pt) {
    must_work("decode", [&] { decode_unless_wrapped([&] { (void)s.encoder.decode(pt); }); });
    must_work("encrypt and decrypt", [&] { (void)s.decryptor.decrypt(s.encryptor.encrypt(pt)); });
    must_work("add to a ciphertext of its level, scale and slots", [&] {
        const Ciphertext zero = s.encryptor.encrypt_zero(pt.level(), pt.scale(), pt.slots());
        (void)s.eval.add(zero, pt);
        may_refuse("multiply a ciphertext", [&] { (void)s.eval.multiply(zero, pt); });
    });
    round_trip("serialize the plaintext again", pt, [&](const Plaintext& p) { return io::serialize(*s.ctx, p); },
               [&](io::ByteView b) { return io::load_plaintext(*s.ctx, b); });
}

void use_ciphertext(const Session& s, const Ciphertext& ct) {
    must_work("decrypt_decode", [&] { decode_unless_wrapped([&] { (void)s.decryptor.decrypt_decode(ct, s.encoder); }); });
    must_work("add", [&] { (void)s.eval.add(ct, ct); });
    Ciphertext linear = ct;
    if (ct.size() == 3) must_work("relinearize", [&] { linear = s.eval.relinearize(ct); });
    must_work("rotate (one and hoisted) and conjugate", [&] {
        if (linear.slots() > 1) {  // one slot has no rotation but 0 (ValueError)
            (void)s.eval.rotate(linear, 1);
            (void)s.eval.rotate_many(linear, {1, -1});
        }
        (void)s.eval.conjugate(linear);
    });
    must_work("drop to level 0 (and raise again)", [&] {
        const Ciphertext low = s.eval.drop_to_level(linear, 0);
        if (s.ctx->max_level() > 0) (void)s.eval.mod_raise(low);
    });
    // Constants are encoded at the ciphertext's scale, a product's scale may exceed the modulus, a
    // rescale may leave a scale below 1: refusals with typed errors, never anything else.
    may_refuse("add and multiply by constants", [&] {
        (void)s.eval.add(linear, 0.75);
        (void)s.eval.multiply(linear, -1.5);
    });
    may_refuse("multiply, relinearize, rescale", [&] {
        Ciphertext product = s.eval.relinearize(s.eval.multiply(linear, linear));
        if (product.level() > 0) s.eval.rescale_inplace(product);
    });
    round_trip("serialize the ciphertext again", ct, [&](const Ciphertext& c) { return io::serialize(*s.ctx, c); },
               [&](io::ByteView b) { return io::load_ciphertext(*s.ctx, b); });
}

void use_batch(const Session& s, const CiphertextBatch& batch) {
    must_work("decrypt_decode the batch",
              [&] { decode_unless_wrapped([&] { (void)s.decryptor.decrypt_decode(batch, s.encoder); }); });
    must_work("add and rotate the batch", [&] {
        (void)s.eval.add(batch, batch);
        if (batch.size() == 2 && batch.slots() > 1) (void)s.eval.rotate(batch, 1);
    });
    may_refuse("multiply the batch and by a constant", [&] {
        (void)s.eval.multiply(batch, 0.5);
        (void)s.eval.multiply(batch, batch);
    });
    must_work("split the batch", [&] {
        const std::vector<Ciphertext> cts = batch.to_ciphertexts();
        (void)CiphertextBatch::from_ciphertexts(*s.ctx, cts);
    });
    round_trip("serialize the batch again", batch,
               [&](const CiphertextBatch& b) { return io::serialize(*s.ctx, b); },
               [&](io::ByteView b) { return io::load_ciphertext_batch(*s.ctx, b); });
}

void use_public_key(const Session& s, const PublicKey& pk) {
    must_work("encrypt with the public key", [&] {
        Encryptor enc(s.ctx, pk);
        (void)s.decryptor.decrypt(enc.encrypt(s.encoder.encode(std::vector<double>{0.5, -0.25})));
    });
    round_trip("serialize the public key again", pk, [&](const PublicKey& k) { return io::serialize(*s.ctx, k); },
               [&](io::ByteView b) { return io::load_public_key(*s.ctx, b); });
}

void use_relin_key(const Session& s, const RelinKey& rk) {
    must_work("relinearize with the key", [&] {
        const Ciphertext ct = s.ciphertext(key_level(rk));
        (void)s.eval.relinearize(s.eval.multiply(ct, ct), rk);
    });
    round_trip("serialize the relinearization key again", rk,
               [&](const RelinKey& k) { return io::serialize_relin_key(*s.ctx, k); },
               [&](io::ByteView b) { return io::load_relin_key(*s.ctx, b); });
}

void use_galois_keys(const Session& s, const GaloisKeys& gk) {
    apply_each(s, gk);
    round_trip("serialize the Galois keys again", gk, [&](const GaloisKeys& k) { return io::serialize(*s.ctx, k); },
               [&](io::ByteView b) { return io::load_galois_keys(*s.ctx, b); });
}

void use_secret_key(const Session& s, const SecretKeyPtr& sk) {
    must_work("decrypt and encrypt with the secret key", [&] {
        Decryptor dec(s.ctx, sk);
        Encryptor enc(s.ctx, sk);
        (void)dec.decrypt(enc.encrypt(s.encoder.encode(std::vector<double>{0.5, -0.25})));
        (void)dec.decrypt(s.ciphertext(s.ctx->max_level()));
    });
    must_work("make a public key from the secret key", [&] { (void)KeyGenerator(s.ctx, sk).public_key(); });
    round_trip("serialize the secret key again", sk,
               [&](const SecretKeyPtr& k) { return io::serialize_secret_key(*s.ctx, *k); },
               [&](io::ByteView b) { return io::load_secret_key(*s.ctx, b); });
}

void use_bootstrap_keys(const Session& s, const algorithms::BootstrapConfig& config,
                        const algorithms::BootstrapKeys& keys) {
    apply_each(s, keys.galois);
    if (const auto& e = keys.encapsulation) {
        must_work("switch to the ephemeral secret and back", [&] {
            const Ciphertext sparse = s.eval.switch_key(s.ciphertext(0), e->to_ephemeral);
            const int back = key_level(e->from_ephemeral);
            (void)s.eval.switch_key(back > 0 ? s.eval.mod_raise(sparse, back) : sparse, e->from_ephemeral);
        });
    }
    round_trip("serialize the bootstrap keys again", keys,
               [&](const algorithms::BootstrapKeys& k) { return io::serialize(*s.ctx, config, k); },
               [&](io::ByteView b) { return io::load_bootstrap_keys(*s.ctx, b); });
}

}  // namespace oboro::fuzz
