// Fuzzing loop for the loaders: thousands of random mutations (bit flips, byte overwrites,
// truncation, extension, duplicated and deleted ranges) of every serialized object type. Half of
// the mutants are re-sealed (payload size and checksum fixed up) so that they get past the
// checksum and exercise the field validation. A load must either succeed or throw
// SerializationError: any other exception, a crash, or (under AddressSanitizer, see
// scripts/test.sh) an invalid memory access fails the test.
//
// OBORO_FUZZ_ITERATIONS overrides the number of mutants per object type (default 3000).
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <random>

#include "io_test_util.hpp"
#include "oboro/ckks/encoder.hpp"
#include "oboro/ckks/encryptor.hpp"
#include "oboro/ckks/keygen.hpp"
#include "oboro/io/serialize.hpp"
#include "oboro/util/error.hpp"

namespace oboro::test {
namespace {

using namespace oboro::ckks;
using io::Bytes;

size_t iterations() {
    const char* env = std::getenv("OBORO_FUZZ_ITERATIONS");
    return env ? size_t(std::strtoul(env, nullptr, 10)) : 3000;
}

Bytes mutate(const Bytes& in, std::mt19937_64& gen) {
    Bytes b = in;
    auto pick = [&](size_t n) { return n == 0 ? size_t(0) : size_t(gen() % n); };
    const int kinds = 1 + int(gen() % 3);
    for (int k = 0; k < kinds; ++k) {
        switch (gen() % 6) {
            case 0:  // bit flip, biased to the header and the start of the payload where the fields are
                if (!b.empty()) b[gen() % 2 ? pick(std::min<size_t>(b.size(), 96)) : pick(b.size())] ^= uint8_t(1u << (gen() % 8));
                break;
            case 1:  // byte overwrite with an interesting value
                if (!b.empty()) {
                    const uint8_t values[] = {0, 1, 0x7f, 0x80, 0xff};
                    b[pick(std::min<size_t>(b.size(), 128))] = values[gen() % 5];
                }
                break;
            case 2:  // truncation
                b.resize(pick(b.size() + 1));
                break;
            case 3:  // extension with random bytes
                for (size_t i = 0, n = 1 + pick(64); i < n; ++i) b.push_back(uint8_t(gen()));
                break;
            case 4:  // delete a range
                if (b.size() > 2) {
                    const size_t at = pick(b.size() - 1), len = 1 + pick(std::min<size_t>(b.size() - at - 1, 64));
                    b.erase(b.begin() + long(at), b.begin() + long(at + len));
                }
                break;
            case 5:  // duplicate a range
                if (b.size() > 2) {
                    const size_t at = pick(b.size() - 1), len = 1 + pick(std::min<size_t>(b.size() - at - 1, 64));
                    Bytes range(b.begin() + long(at), b.begin() + long(at + len));
                    b.insert(b.begin() + long(pick(b.size())), range.begin(), range.end());
                }
                break;
        }
    }
    if (gen() % 2) reseal(b);
    return b;
}

struct Outcome {
    size_t loaded = 0, rejected = 0;
};

// Every mutant of `original` must load or raise SerializationError.
Outcome fuzz(const char* name, const Bytes& original, const std::function<void(const Bytes&)>& load, uint64_t seed,
             size_t count) {
    std::mt19937_64 gen(seed);  // mutations only, no key material
    Outcome out;
    for (size_t i = 0; i < count; ++i) {
        const Bytes b = mutate(original, gen);
        try {
            load(b);
            ++out.loaded;
        } catch (const SerializationError&) {
            ++out.rejected;
        } catch (const std::exception& e) {
            ADD_FAILURE() << name << " mutant " << i << " raised a non-SerializationError: " << e.what();
            return out;
        }
    }
    std::printf("[ fuzz ] %-14s %zu mutants: %zu rejected, %zu loaded (mutations that left a valid object)\n", name,
                count, out.rejected, out.loaded);
    return out;
}

TEST(SerializeFuzz, EveryLoaderRejectsMutantsCleanly) {
    const ContextPtr ctx = Context::create(tiny_parameters());
    KeyGenerator keygen(ctx);
    Encoder encoder(ctx);
    Encryptor sk_enc(ctx, keygen.secret_key());
    Encryptor pk_enc(ctx, keygen.public_key());
    const Plaintext pt = encoder.encode(std::vector<std::complex<double>>(8, {0.25, -0.5}), std::nullopt, std::nullopt, 8);
    const size_t n = iterations();
    const Context& c = *ctx;

    const Bytes ctx_bytes = io::serialize(c, "tiny");
    const Bytes seeded_ct = io::serialize(c, sk_enc.encrypt(pt), io::ArrayInfo{7, {2, 4}, false});
    const Bytes full_ct = io::serialize(c, pk_enc.encrypt(pt));
    const Bytes pt_bytes = io::serialize(c, pt);
    const Bytes pk_bytes = io::serialize(c, keygen.public_key());
    const Bytes rk_bytes = io::serialize_relin_key(c, keygen.relin_key(), /*compress=*/false);
    const Bytes gk_bytes = io::serialize(c, keygen.galois_keys({1, -1}, true));
    const Bytes sk_bytes = io::serialize_secret_key(c, *keygen.secret_key());
    const Bytes bundle = io::make_bundle({ctx_bytes, pk_bytes, sk_bytes});
    const std::vector<Ciphertext> elements = {sk_enc.encrypt(pt), pk_enc.encrypt(pt), sk_enc.encrypt(pt)};
    const Bytes batch = io::serialize(c, CiphertextBatch::from_ciphertexts(c, elements), io::ArrayInfo{7, {8}, true});
    const Bytes matrix = io::serialize_matrix(
        c, io::MatrixLayout{io::MatrixMethod::block, 3, 2, 2, 2, 1, 7}, std::span(elements).first(2));

    algorithms::BootstrapKeys bk;  // keys of two levels and the encapsulation keys: every field
    bk.galois = keygen.galois_keys({1}, true);
    keygen.add_galois_keys(bk.galois, {2}, false, 0);
    bk.encapsulation = keygen.encapsulation_keys(4);
    algorithms::BootstrapConfig config;
    config.slots = 8;
    config.cosine_degree = 31;
    const Bytes boot = io::serialize(c, config, bk);

    fuzz("context", ctx_bytes, [](const Bytes& b) { io::load_context(b); }, 1, n / 4);
    fuzz("ciphertext+seed", seeded_ct, [&](const Bytes& b) { io::load_ciphertext(c, b); }, 2, n);
    fuzz("ciphertext", full_ct, [&](const Bytes& b) { io::load_ciphertext(c, b); }, 3, n);
    fuzz("plaintext", pt_bytes, [&](const Bytes& b) { io::load_plaintext(c, b); }, 4, n);
    fuzz("public key", pk_bytes, [&](const Bytes& b) { io::load_public_key(c, b); }, 5, n);
    fuzz("relin key", rk_bytes, [&](const Bytes& b) { io::load_relin_key(c, b); }, 6, n / 2);
    fuzz("Galois keys", gk_bytes, [&](const Bytes& b) { io::load_galois_keys(c, b); }, 7, n / 2);
    fuzz("secret key", sk_bytes, [&](const Bytes& b) { io::load_secret_key(c, b); }, 8, n);
    fuzz("bundle", bundle,
         [&](const Bytes& b) {
             for (io::ByteView part : io::split_bundle(b)) (void)io::peek_type(part);
         },
         9, n);
    fuzz("batch", batch, [&](const Bytes& b) { io::load_ciphertext_batch(c, b); }, 10, n / 2);
    fuzz("matrix", matrix, [&](const Bytes& b) { io::load_matrix(c, b, nullptr); }, 11, n / 2);
    fuzz("bootstrap keys", boot, [&](const Bytes& b) { io::load_bootstrap_keys(c, b); }, 12, n / 2);
}

}  // namespace
}  // namespace oboro::test
