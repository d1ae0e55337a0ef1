// The secret key (keys.hpp): one shared, immutable object whose memory bypasses the block cache
// and is wiped when freed; the scratch derived from it (key generation, decryption) never reaches
// the next buffer of the cache; keys made from a seed (KeyGenerator::from_seed_for_testing) are
// bit-identical for the same seed and differ for another.
#include <deque>
#include <type_traits>

#include "ckks_test_util.hpp"
#include "error_test_util.hpp"
#include "oboro/backend/cpu/poly_ops.hpp"
#include "oboro/io/serialize.hpp"
#include "oboro/util/memory_pool.hpp"

using namespace oboro;
using namespace oboro::test;

static_assert(!std::is_copy_constructible_v<SecretKey> && !std::is_copy_assignable_v<SecretKey>,
              "the secret key is shared, never copied");
static_assert(!std::is_copy_constructible_v<KeyGenerator> && std::is_move_constructible_v<KeyGenerator>,
              "a copied key generator would draw the same errors and seeds as the original");

namespace {

// The test's own copies of secrets, in secret memory: a copy freed into the heap would be found
// by the checks below in the next fresh block.
using Words = SecretVector<uint64_t>;

// How many words of `got` equal the non-zero word of `secret` at the same position.
size_t shared_words(const uint64_t* got, const Words& secret) {
    size_t found = 0;
    for (size_t i = 0; i < secret.size(); ++i) found += secret[i] != 0 && got[i] == secret[i];
    return found;
}

// The blocks the cache holds for buffers of `words` words (those of that size and up to twice it),
// handed out as the next buffers of that size would get them: wherever a freed secret went in the
// cache, one of these holds it. (Only cached blocks: a fresh block from the system allocator may
// hold anything the process freed into the heap, which is not the cache's doing.)
std::vector<AlignedBuffer<uint64_t>> cached_blocks(size_t words) {
    std::vector<AlignedBuffer<uint64_t>> out;
    while (out.size() < 64) {
        const size_t hits = pool_stats().hits;
        AlignedBuffer<uint64_t> b(words);
        if (pool_stats().hits == hits) break;  // a fresh block: no more cached ones of this size
        out.push_back(std::move(b));
    }
    return out;
}

struct Named {
    const char* name;
    const Words* words;
};

// Fails for every secret (all of one size) that a block of the cache holds (and, with
// `some_cached`, when the cache holds no block of their size: the check would look nowhere).
// Call it once per state of the cache: it leaves the fresh block it ends on in the cache.
void expect_not_in_the_pool(const std::vector<Named>& secrets, bool some_cached = false) {
    const auto blocks = cached_blocks(secrets.at(0).words->size());
    if (some_cached) EXPECT_FALSE(blocks.empty());
    for (const auto& [name, words] : secrets) {
        ASSERT_EQ(words->size(), secrets[0].words->size()) << name;
        for (const auto& b : blocks) EXPECT_EQ(shared_words(b.data(), *words), 0u) << name;
    }
}

Words words_of(const uint64_t* p, size_t count) { return Words(p, p + count); }

math::Seed seed_of(uint8_t first) {
    math::Seed s{};
    for (size_t i = 0; i < s.size(); ++i) s[i] = uint8_t(first + i);
    return s;
}

}  // namespace

TEST(SecretKey, OneObjectSharedByEveryUser) {
    const ContextPtr ctx = Context::create(small_parameters());
    KeyGenerator keygen(ctx);
    const SecretKeyPtr& sk = keygen.secret_key();
    Encryptor encryptor(ctx, sk);
    Decryptor decryptor(ctx, sk);
    KeyGenerator more(ctx, sk);
    EXPECT_EQ(more.secret_key().get(), sk.get());
    EXPECT_EQ(sk.use_count(), 4);  // the generators, the encryptor and the decryptor: one key, no copies
    const Encoder encoder(ctx);
    const auto v = random_complex(ctx->max_slots(), 1.0, 1);
    EXPECT_GE(precision_bits(decryptor.decrypt_decode(encryptor.encrypt(encoder.encode(v)), encoder), v), 25.0);
}

TEST(SecretKey, NullKeysAreRefused) {
    const ContextPtr ctx = Context::create(small_parameters());
    EXPECT_ERROR(ValueError, (void)Encryptor(ctx, SecretKeyPtr()), "Encryptor", "null");
    EXPECT_ERROR(ValueError, (void)Decryptor(ctx, SecretKeyPtr()), "Decryptor", "null");
    EXPECT_ERROR(ValueError, (void)KeyGenerator(ctx, SecretKeyPtr()), "KeyGenerator", "null");
}

TEST(SecretKey, FromCoefficients) {
    const ContextPtr ctx = Context::create(small_parameters());
    const KeyGenerator keygen(ctx);
    const SecretKey& sk = *keygen.secret_key();
    const SecretKeyPtr again = secret_key_from_coefficients(*ctx, SecretVector<int8_t>(sk.coeffs.begin(), sk.coeffs.end()));
    EXPECT_EQ(again->coeffs, sk.coeffs);
    EXPECT_EQ(again->context_id, ctx->id());
    ASSERT_EQ(again->ntt.size(), sk.ntt.size());
    EXPECT_TRUE(std::equal(sk.ntt.data(), sk.ntt.data() + sk.ntt.size(), again->ntt.data()));
    EXPECT_ERROR(ValueError, secret_key_from_coefficients(*ctx, SecretVector<int8_t>(ctx->n() - 1)), "31 coefficients");
    SecretVector<int8_t> two(ctx->n(), 0);
    two[7] = 2;
    EXPECT_ERROR(ValueError, secret_key_from_coefficients(*ctx, two), "not -1, 0 or 1");
    two[7] = -2;
    EXPECT_ERROR(ValueError, secret_key_from_coefficients(*ctx, two), "not -1, 0 or 1");
}

// The key itself lives outside the block cache: once its last owner is gone, no block of the cache
// holds it (an AlignedBuffer there would have passed to the next buffer of its size).
TEST(SecretKey, ItsMemoryNeverGoesBackToThePool) {
    const ContextPtr ctx = Context::create(Parameters::preset("S1"));
    pool_trim();
    Words s;
    {
        KeyGenerator keygen(ctx);
        const SecretKey& sk = *keygen.secret_key();
        ASSERT_GE(sk.ntt.size() * sizeof(uint64_t), kPooledBytes);  // a size the cache would keep
        s = words_of(sk.ntt.data(), sk.ntt.size());
        Decryptor decryptor(ctx, keygen.secret_key());
        Encryptor encryptor(ctx, keygen.secret_key());
    }
    expect_not_in_the_pool({{"s", &s}});
}

// s^2 (relinearization), s(X^g) (Galois keys) and the products a*s of every RLWE sample (which,
// with the public a and b, give the error and so s) are wiped or kept out of the cache.
TEST(SecretKey, KeyGenerationTemporariesDoNotReachThePool) {
    const ContextPtr ctx = Context::create(Parameters::preset("S1"));
    KeyGenerator keygen(ctx);
    const SecretKey& sk = *keygen.secret_key();
    const size_t n = ctx->n(), limbs = ctx->q_count() + ctx->p_count(), words = limbs * n;
    const auto basis = key_basis(*ctx, ctx->max_level(), ctx->p_count());
    const uint64_t g = ctx->galois_element(1);
    Words s2(words), s_g(words);
    backend::cpu::mul(s2.data(), sk.ntt.data(), sk.ntt.data(), basis.data(), limbs, n);
    backend::cpu::permute(s_g.data(), sk.ntt.data(), ctx->automorphism_permutation(g).data(), limbs, n);

    pool_trim();
    const PublicKey pk = keygen.public_key();
    const RelinKey rk = keygen.relin_key();
    const GaloisKeys gk = keygen.galois_keys({1});
    const EncapsulationKeys ek = keygen.encapsulation_keys(8);

    const Words s = words_of(sk.ntt.data(), words);
    std::vector<Named> secrets = {{"s", &s}, {"s^2", &s2}, {"s(X^g)", &s_g}};
    std::deque<Words> products;  // a*s of every RLWE sample (a deque: the addresses stay)
    const auto add_a_times_s = [&](const char* name, const uint64_t* a) {
        Words& as = products.emplace_back(words);
        backend::cpu::mul(as.data(), a, sk.ntt.data(), basis.data(), limbs, n);
        secrets.push_back({name, &as});
    };
    add_a_times_s("a*s of the public key", pk.a(limbs, n));
    const auto add_key = [&](const char* name, const KeySwitchKey& key) {
        std::vector<uint64_t> a(key.qp_limbs * n);
        for (size_t j = 0; j < key.digits; ++j) {
            key.load(j, 1, a.data());
            add_a_times_s(name, a.data());
        }
    };
    add_key("a_j*s of the relinearization key", rk);
    add_key("a_j*s of the Galois key", gk.at(g));
    add_key("a_j*s of the key from the ephemeral secret", ek.from_ephemeral);
    expect_not_in_the_pool(secrets);  // (they used to be cached blocks; now none of their size is)
}

// m + e of a decryption (in NTT form, and in coefficients once decoding has transformed it in
// place) is wiped before its buffer goes back to the cache, for a ciphertext and for a batch.
TEST(SecretKey, DecryptionScratchIsWipedBeforeItIsReused) {
    Keys& k = Keys::get("S1");
    const size_t n = k.ctx->n();
    const auto v = random_complex(k.ctx->max_slots(), 1.0, 2);
    const Ciphertext ct = k.encrypt(v);
    const size_t limbs = ct.limbs();
    const Plaintext m = k.decryptor->decrypt(ct);  // the caller's copy: the same words, no flooding
    const Words ntt = words_of(m.poly(0), limbs * n);
    Words coeffs = ntt;
    backend::cpu::ntt_inverse(coeffs.data(), k.ctx->ntt_tables(), limbs);

    pool_trim();
    EXPECT_GE(precision_bits(k.decryptor->decrypt_decode(ct, *k.encoder), v), 20.0);
    expect_not_in_the_pool({{"m + e", &ntt}, {"m + e in coefficients", &coeffs}}, true);

    pool_trim();
    const std::vector<Ciphertext> cts = {ct, ct};
    const CiphertextBatch batch = CiphertextBatch::from_ciphertexts(*k.ctx, cts);
    for (const auto& got : k.decryptor->decrypt_decode(batch, *k.encoder)) EXPECT_GE(precision_bits(got, v), 20.0);
    expect_not_in_the_pool({{"m + e (batch)", &ntt}, {"m + e in coefficients (batch)", &coeffs}}, true);
}

// ---- keys from a seed ------------------------------------------------------------------------

namespace {

// Every key a generator makes, serialized (uncompressed: every word, not only the seeds), in a
// fixed order of calls.
std::vector<io::Bytes> all_keys(const ContextPtr& ctx, KeyGenerator& keygen) {
    std::vector<io::Bytes> out;
    out.push_back(io::serialize_secret_key(*ctx, *keygen.secret_key()));
    out.push_back(io::serialize(*ctx, keygen.public_key(), false));
    out.push_back(io::serialize_relin_key(*ctx, keygen.relin_key(), false));
    out.push_back(io::serialize_relin_key(*ctx, keygen.relin_key(0), false));
    out.push_back(io::serialize(*ctx, keygen.galois_keys({1, -1, 3}, true), false));
    const EncapsulationKeys ek = keygen.encapsulation_keys(4);
    GaloisKeys as_keys;  // the two switching keys, serialized through a key set
    as_keys.context_id = ctx->id();
    as_keys.add(3, ek.to_ephemeral);
    as_keys.add(5, ek.from_ephemeral);
    out.push_back(io::serialize(*ctx, as_keys, false));
    return out;
}

Parameters sparse_parameters() {
    Parameters p = small_parameters();
    p.secret = SecretDistribution::sparse_ternary;
    p.hamming_weight = 8;
    return p;
}

}  // namespace

TEST(SeededKeys, TheSameSeedGivesBitIdenticalKeysInAnotherContext) {
    for (const Parameters& params : {small_parameters(), sparse_parameters(), Parameters::preset("S1")}) {
        const ContextPtr a = Context::create(params), b = Context::create(params);
        KeyGenerator ka = KeyGenerator::from_seed_for_testing(a, seed_of(1));
        KeyGenerator kb = KeyGenerator::from_seed_for_testing(b, seed_of(1));
        const std::vector<io::Bytes> keys_a = all_keys(a, ka), keys_b = all_keys(b, kb);
        ASSERT_EQ(keys_a.size(), keys_b.size());
        for (size_t i = 0; i < keys_a.size(); ++i) EXPECT_EQ(keys_a[i], keys_b[i]) << "key " << i << ", N = 2^" << params.log_n;
    }
}

TEST(SeededKeys, AnotherSeedGivesOtherKeys) {
    const ContextPtr ctx = Context::create(small_parameters());
    KeyGenerator ka = KeyGenerator::from_seed_for_testing(ctx, seed_of(1));
    math::Seed other = seed_of(1);
    other[31] ^= 1;  // one bit
    KeyGenerator kb = KeyGenerator::from_seed_for_testing(ctx, other);
    const std::vector<io::Bytes> keys_a = all_keys(ctx, ka), keys_b = all_keys(ctx, kb);
    for (size_t i = 0; i < keys_a.size(); ++i) EXPECT_NE(keys_a[i], keys_b[i]) << "key " << i;
    // the default generator draws from the operating system: two of them differ too
    KeyGenerator k1(ctx), k2(ctx);
    EXPECT_NE(k1.secret_key()->coeffs, k2.secret_key()->coeffs);
}

TEST(SeededKeys, SeededKeysWork) {
    const ContextPtr ctx = Context::create(Parameters::preset("S1"));
    KeyGenerator keygen = KeyGenerator::from_seed_for_testing(ctx, seed_of(7));
    const Encoder encoder(ctx);
    Encryptor encryptor(ctx, keygen.public_key());
    const Decryptor decryptor(ctx, keygen.secret_key());
    const RelinKey rk = keygen.relin_key();
    const GaloisKeys gk = keygen.galois_keys({1});
    const Evaluator eval(ctx);
    const auto v = random_real(ctx->max_slots(), 1.0, 3);
    const Ciphertext ct = encryptor.encrypt(encoder.encode(v));
    std::vector<cplx> want(v.size());
    for (size_t i = 0; i < v.size(); ++i) want[i] = v[(i + 1) % v.size()] * v[(i + 1) % v.size()];
    EXPECT_GE(precision_bits(decryptor.decrypt_decode(eval.rotate(eval.multiply_relin_rescale(ct, ct, rk), 1, gk), encoder), want),
              20.0);
}
