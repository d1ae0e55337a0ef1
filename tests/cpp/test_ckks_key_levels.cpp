// Keys behind the KeySet interface, and switching keys made at a chosen level of Q and over a
// chosen number of special primes (keys.hpp): smaller keys that switch ciphertexts at their level
// and below, with the precision of full keys; a key below the operand's level, or over too few
// special primes for the level's digits, is a typed error naming what would do; they serialize and
// load back to the same words; the emulated GPU queue gives the CPU's words with them; an
// evaluator holding a key set uses them for every operation.
#include <gtest/gtest.h>

#include <vector>

#include "ckks_test_util.hpp"
#include "error_test_util.hpp"
#include "oboro/backend/cuda/emulated_queue.hpp"
#include "oboro/ckks/batch.hpp"
#include "oboro/ckks/key_set.hpp"
#include "oboro/io/serialize.hpp"

namespace oboro::test {
namespace {

bool same_key(const KeySwitchKey& a, const KeySwitchKey& b) {
    return a.digits == b.digits && a.qp_limbs == b.qp_limbs && a.special == b.special &&
           std::equal(a.data.data(), a.data.data() + a.data.size(), b.data.data(), b.data.data() + b.data.size());
}

// A key limb's words take the bytes its prime needs: 5 up to 2^40, 6 up to 2^48, else 8; they
// come back exactly, whole or a block at a time, at the edges of each width.
TEST(PackedKeys, WordsComeBackExactly) {
    EXPECT_EQ(backend::key_word_bytes(uint64_t(1) << 40), 5u);
    EXPECT_EQ(backend::key_word_bytes((uint64_t(1) << 40) + 1), 6u);
    EXPECT_EQ(backend::key_word_bytes(uint64_t(1) << 48), 6u);
    EXPECT_EQ(backend::key_word_bytes((uint64_t(1) << 48) + 1), 8u);
    EXPECT_EQ(backend::key_word_bytes(0xffffffffffe8001ull), 8u);
    const size_t n = 256;
    math::Prng prng(math::Seed{}, 7);
    for (uint64_t q : {uint64_t(0xffffe80001), uint64_t(0x10000048001), uint64_t(0xfffffffd8001),
                       uint64_t(0xffffffffffe8001)}) {
        const uint32_t width = backend::key_word_bytes(q);
        std::vector<uint64_t> words(n);
        for (auto& w : words) w = prng.uniform(q);
        words[0] = 0;
        words[1] = q - 1;
        std::vector<uint8_t> packed(width * n + 7);
        backend::pack_key_words(words.data(), n, width, packed.data());
        std::vector<uint64_t> back(n, 1);
        backend::unpack_key_words(packed.data(), n, width, 0, n, back.data());
        EXPECT_EQ(back, words) << "q = " << q;
        for (size_t begin : {size_t(0), size_t(16), size_t(200)}) {
            std::vector<uint64_t> part(n - begin, 1);
            backend::unpack_key_words(packed.data(), n, width, begin, n - begin, part.data());
            EXPECT_TRUE(std::equal(part.begin(), part.end(), words.begin() + long(begin))) << "q = " << q << " from " << begin;
        }
    }
}

// A key stores what it was given and its memory is the packed size: at S4 (20 primes of 40 bits,
// 7 of 60), 23% less than 8 bytes a word.
TEST(PackedKeys, KeyStoresItsWordsInTheBytesOfItsPrimes) {
    Keys& k = Keys::get("S2");
    const Context& ctx = *k.ctx;
    const auto words = k.rk.words();
    ASSERT_EQ(words.size(), k.rk.view().words());
    KeySwitchKey copy = KeySwitchKey::allocate(key_basis(ctx, ctx.max_level(), ctx.p_count()), ctx.p_count(),
                                               k.rk.digits, ctx.n());
    for (size_t p = 0; p < 2 * copy.digits; ++p) copy.store(p / 2, p % 2, words.data() + p * copy.qp_limbs * copy.n);
    EXPECT_TRUE(std::equal(copy.data.data(), copy.data.data() + copy.data.size(), k.rk.data.data()));
    std::vector<uint64_t> a(copy.qp_limbs * copy.n);
    copy.load(1, 1, a.data());
    EXPECT_TRUE(std::equal(a.begin(), a.end(), words.data() + 3 * copy.qp_limbs * copy.n));
    EXPECT_EQ(k.rk.data.size(), switching_key_bytes(ctx, ctx.max_level(), ctx.p_count()));

    const Context s4(Parameters::preset("S4"));
    size_t bytes = 0;
    for (const auto& m : key_basis(s4, s4.max_level(), s4.p_count())) bytes += backend::key_word_bytes(m.value);
    EXPECT_EQ(switching_key_bytes(s4, s4.max_level(), s4.p_count()), 2 * s4.num_digits() * bytes * s4.n());
    EXPECT_LT(double(bytes), 0.78 * 8 * double(s4.q_count() + s4.p_count()));
}

TEST(KeyLevels, KeysMadeAtALevelSwitchThatLevelAndBelow) {
    Keys& k = Keys::get("S2");  // levels 0..3, one prime per digit
    const Context& ctx = *k.ctx;
    const int level = 1;
    const RelinKey rk = k.keygen->relin_key(level);
    const GaloisKeys gk = k.keygen->galois_keys({1}, /*conjugation=*/false, level);
    EXPECT_EQ(key_level(rk), level);
    EXPECT_EQ(rk.qp_limbs, size_t(level + 1) + ctx.p_count());
    EXPECT_EQ(rk.digits, ctx.ring().digits_at(level));
    EXPECT_LT(rk.data.size(), k.rk.data.size() / 2);  // a quarter of the top level's words here
    const std::shared_ptr<const MemoryKeySet> keys = std::make_shared<const MemoryKeySet>(
        std::make_shared<const RelinKey>(rk), std::make_shared<const GaloisKeys>(gk));
    const Evaluator ev(k.ctx, keys);

    const size_t slots = ctx.max_slots();
    const auto x = random_complex(slots, 1.0, 1), y = random_complex(slots, 1.0, 2);
    const Ciphertext cx = ev.drop_to_level(k.encrypt(x), level), cy = ev.drop_to_level(k.encrypt(y), level);
    std::vector<cplx> xy(slots);
    for (size_t i = 0; i < slots; ++i) xy[i] = x[i] * y[i];
    EXPECT_GE(precision_bits(k.decrypt(ev.multiply_relin_rescale(cx, cy)), xy), 19);
    EXPECT_GE(precision_bits(k.decrypt(ev.relinearize(ev.multiply(cx, cy))), xy), 19);
    EXPECT_GE(precision_bits(k.decrypt(ev.rotate(cx, 1)), roll(x, 1)), 19);
    const Ciphertext low = ev.drop_to_level(cx, 0);  // and below its level
    EXPECT_GE(precision_bits(k.decrypt(ev.rotate(low, 1)), roll(x, 1)), 19);
    const auto batch = CiphertextBatch::from_ciphertexts(ctx, std::vector<Ciphertext>{cx, cy});
    const CiphertextBatch rb = ev.rotate(batch, 1);
    EXPECT_GE(precision_bits(k.decrypt(rb.at(1)), roll(y, 1)), 19);
    const std::vector<Ciphertext> many = ev.rotate_many(cx, {0, 1});
    EXPECT_GE(precision_bits(k.decrypt(many[1]), roll(x, 1)), 19);

    // above the key's level: a typed error naming both levels, before any work
    const Ciphertext top = k.encrypt(x);
    EXPECT_ERROR(LevelMismatch, ev.rotate(top, 1), "rotate", "up to level 1", "level 3");
    EXPECT_ERROR(LevelMismatch, ev.multiply_relin_rescale(top, top), "multiply_relin_rescale", "up to level 1");
    EXPECT_ERROR(LevelMismatch, k.keygen->relin_key(4), "level 4", "0..3");
    EXPECT_ERROR(MissingKey, ev.rotate(cx, 5), "rotate", "by 5");
}

TEST(KeyLevels, ReducedKeysSerializeAndLoadBack) {
    Keys& k = Keys::get("S2");
    const Context& ctx = *k.ctx;
    for (int level : {0, 2}) {
        SCOPED_TRACE(level);
        const RelinKey rk = k.keygen->relin_key(level);
        GaloisKeys gk = k.keygen->galois_keys({1, 5}, true, level);
        gk.add(ctx.galois_element(2), k.keygen->galois_key(ctx.galois_element(2)));  // mixed levels
        for (bool compress : {true, false}) {
            const RelinKey rk2 = io::load_relin_key(ctx, io::serialize_relin_key(ctx, rk, compress));
            EXPECT_TRUE(same_key(rk, rk2));
            EXPECT_NE(rk2.uid, rk.uid);  // a loaded key is a new object for device caches
            const GaloisKeys gk2 = io::load_galois_keys(ctx, io::serialize(ctx, gk, compress));
            ASSERT_EQ(gk2.keys.size(), gk.keys.size());
            for (const auto& [g, key] : gk.keys) EXPECT_TRUE(same_key(*key, gk2.at(g))) << g;
        }
        // a seeded key stores the seed instead of its a_j: about half the bytes
        EXPECT_LT(double(io::serialize_relin_key(ctx, rk, true).size()),
                  0.55 * double(io::serialize_relin_key(ctx, rk, false).size()));
    }
    // top-level keys are written exactly as before key levels existed (no level field)
    const io::Bytes full = io::serialize_relin_key(ctx, k.rk, false);
    const io::Bytes reduced = io::serialize_relin_key(ctx, k.keygen->relin_key(2), false);
    EXPECT_LT(reduced.size(), full.size());
}

// Two-prime digits (dnum 2) and three special primes: at level 0 the one digit is q_0 (60 bits),
// which one special prime covers; at level 1 the digit q_0 q_1 (100 bits) needs two.
Parameters two_prime_digits() {
    Parameters p;
    p.log_n = 12;
    p.q_bits = {60, 40, 40, 40};
    p.p_bits = {60, 60, 60};
    p.dnum = 2;
    p.scale = 0x1p40;
    p.security = SecurityLevel::none;
    return p;
}

TEST(KeyLevels, KeysOverPartOfTheSpecialPrimes) {
    Keys k(two_prime_digits());
    const Context& ctx = *k.ctx;
    ASSERT_EQ(ctx.p_count(), 3u);
    ASSERT_EQ(ctx.digit_primes(), (std::vector<size_t>{2, 2}));
    const int level = 1;
    const RelinKey rk = k.keygen->relin_key(level, 2), rk_full = k.keygen->relin_key(level);
    EXPECT_EQ(rk.special, 2u);
    EXPECT_EQ(rk.qp_limbs, size_t(level + 1) + 2);
    EXPECT_EQ(key_level(rk), level);
    EXPECT_EQ(rk.view().words() * 5, rk_full.view().words() * 4);  // 4 limbs instead of 5
    // one 60-bit special prime less: 8 bytes less per coefficient
    EXPECT_EQ(rk_full.data.size() - rk.data.size(), 2 * rk.digits * 8 * ctx.n());
    EXPECT_EQ(rk.data.size(), switching_key_bytes(ctx, level, 2));
    const GaloisKeys gk = k.keygen->galois_keys({1, -1, 5}, /*conjugation=*/true, level, 2);
    const Evaluator ev(k.ctx, std::make_shared<const MemoryKeySet>(std::make_shared<const RelinKey>(rk),
                                                                  std::make_shared<const GaloisKeys>(gk)));
    const size_t slots = ctx.max_slots();
    const auto x = random_complex(slots, 1.0, 11), y = random_complex(slots, 1.0, 12);
    const Ciphertext cx = ev.drop_to_level(k.encrypt(x), level), cy = ev.drop_to_level(k.encrypt(y), level);
    std::vector<cplx> xy(slots), sum(slots), conj(slots);
    for (size_t i = 0; i < slots; ++i) {
        xy[i] = x[i] * y[i];
        sum[i] = x[i] + x[(i + 1) % slots] + x[(i + 5) % slots];
        conj[i] = std::conj(x[i]);
    }
    EXPECT_GE(precision_bits(k.decrypt(ev.multiply_relin_rescale(cx, cy)), xy), 19);
    EXPECT_GE(precision_bits(k.decrypt(ev.rescale(ev.relinearize(ev.multiply(cx, cy)))), xy), 19);
    EXPECT_GE(precision_bits(k.decrypt(ev.rotate(cx, -1)), roll(x, -1)), 19);
    EXPECT_GE(precision_bits(k.decrypt(ev.conjugate(cx)), conj), 19);
    EXPECT_GE(precision_bits(k.decrypt(ev.rotate_many(cx, {0, 1, 5})[2]), roll(x, 5)), 19);
    EXPECT_GE(precision_bits(k.decrypt(ev.rotate_sum(cx, {0, 1, 5})), sum), 18);
    EXPECT_GE(precision_bits(k.decrypt(ev.rotate(ev.drop_to_level(cx, 0), 1)), roll(x, 1)), 19);  // and below

    // one special prime covers the digit of level 0
    const GaloisKeys g0 = k.keygen->galois_keys({1}, false, 0, 1);
    EXPECT_EQ(g0.keys.begin()->second->qp_limbs, 2u);
    EXPECT_GE(precision_bits(k.decrypt(ev.rotate(ev.drop_to_level(cx, 0), 1, g0)), roll(x, 1)), 19);

    // too few special primes for the digits, or none: a ValueError naming the count that does
    EXPECT_ERROR(ValueError, k.keygen->relin_key(level, 1), "1 special prime", "100-bit digits of level 1",
                 "at least 2");
    EXPECT_ERROR(ValueError, k.keygen->galois_keys({1}, false, 3, 4), "4 special primes", "1..3");
    EXPECT_ERROR(ValueError, k.keygen->relin_key(0, 0), "0 special primes");
    // hoisted rotations share one decomposition: their keys must share the special primes
    GaloisKeys mixed = gk;
    mixed.keys.erase(ctx.galois_element(5));
    k.keygen->add_galois_keys(mixed, {5}, false, level);  // over all three
    EXPECT_ERROR(ValueError, ev.rotate_many(cx, {1, 5}, mixed), "rotate_many", "rotation by 5", "3 special primes",
                 "the others are over 2");
    EXPECT_ERROR(ValueError, ev.rotate_sum(cx, {1, 5}, mixed), "rotate_sum", "rotation by 5");
    EXPECT_ERROR(ValueError, ev.rotate_many_extended(cx, {1}), "rotate_many_extended", "over 2 special primes",
                 "needs 3");
    // one rotation per element may mix them
    const auto batch = CiphertextBatch::from_ciphertexts(ctx, std::vector<Ciphertext>{cx, cy, cx});
    const CiphertextBatch rb = ev.rotate(batch, std::vector<int64_t>{1, 5, -1}, mixed);
    EXPECT_GE(precision_bits(k.decrypt(rb.at(1)), roll(y, 5)), 19);
    EXPECT_GE(precision_bits(k.decrypt(rb.at(2)), roll(x, -1)), 19);

    // the emulated GPU queue: the CPU's words with keys over two special primes
    const auto emulated = oboro::cuda::make_emulated_queue();
    const Evaluator dev = ev.on(emulated);
    const auto dx = CiphertextBatch::from_ciphertexts(ctx, std::vector<Ciphertext>{cx, cy}).to_device(emulated);
    const auto dy = CiphertextBatch::from_ciphertexts(ctx, std::vector<Ciphertext>{cy, cx}).to_device(emulated);
    EXPECT_TRUE(same_words(dev.multiply_relin_rescale(dx, dy).to_host().at(0), ev.multiply_relin_rescale(cx, cy)));
    EXPECT_TRUE(same_words(dev.relinearize(dev.multiply(dx, dy)).to_host().at(1),
                           ev.relinearize(ev.multiply(cy, cx))));
    EXPECT_TRUE(same_words(dev.rotate_many(dx, {1, 5})[1].to_host().at(0), ev.rotate_many(cx, {1, 5})[1]));
    EXPECT_TRUE(same_words(dev.rotate_sum(dx, {0, 1, 5}).to_host().at(1), ev.rotate_sum(cy, {0, 1, 5})));
    const auto dm = CiphertextBatch::from_ciphertexts(ctx, std::vector<Ciphertext>{cx, cy, cx}).to_device(emulated);
    const CiphertextBatch drb = dev.rotate(dm, std::vector<int64_t>{1, 5, -1}, mixed).to_host();
    for (size_t c = 0; c < 3; ++c) EXPECT_TRUE(same_words(drb.at(c), rb.at(c))) << c;

    // they serialize with their special primes and load back to the same words
    for (bool compress : {true, false}) {
        EXPECT_TRUE(same_key(rk, io::load_relin_key(ctx, io::serialize_relin_key(ctx, rk, compress))));
        const GaloisKeys back = io::load_galois_keys(ctx, io::serialize(ctx, mixed, compress));
        for (const auto& [g, key] : mixed.keys) EXPECT_TRUE(same_key(*key, back.at(g))) << g;
    }
}

// The evaluator's own key set and explicit keys give the same words.
TEST(KeySets, OwnKeysAndExplicitKeysAgree) {
    Keys& k = Keys::get("S1");
    const auto keys = std::make_shared<const MemoryKeySet>(std::make_shared<const RelinKey>(k.rk),
                                                           std::make_shared<const GaloisKeys>(k.gk));
    const Evaluator own(k.ctx, keys), plain(k.ctx);
    const Ciphertext a = k.encrypt(random_complex(16, 1.0, 3)), b = k.encrypt(random_complex(16, 1.0, 4));
    auto same = [](const Ciphertext& x, const Ciphertext& y) {
        return std::equal(x.data(), x.data() + x.word_count(), y.data(), y.data() + y.word_count());
    };
    EXPECT_TRUE(same(own.multiply_relin_rescale(a, b), plain.multiply_relin_rescale(a, b, k.rk)));
    EXPECT_TRUE(same(own.rotate(a, -1), plain.rotate(a, -1, k.gk)));
    EXPECT_TRUE(same(own.conjugate(a), plain.conjugate(a, k.gk)));
    EXPECT_TRUE(same(own.rotate_sum(a, {0, 1, 5}), plain.rotate_sum(a, {0, 1, 5}, k.gk)));
    EXPECT_ERROR(MissingKey, plain.rotate(a, 1), "rotate", "by 1");
    EXPECT_ERROR(MissingKey, plain.relinearize(plain.multiply(a, b)), "relinearize", "no relinearization key");
}

}  // namespace
}  // namespace oboro::test
