// Switching keys whose uniform halves a_j are left out of memory and drawn again from their seed
// at each key switch (KeySwitchKey::seed_a_halves, backend/key_switch_key.hpp): half the memory,
// the same words, and key switches that give exactly the ciphertexts of the stored keys, on the
// CPU and the emulated GPU queue, for 8-byte and packed limbs, keys made below the top level,
// hoisted rotations that read several keys per limb, and keys loaded from a file. What cannot be
// seeded (a key loaded from a file that stored its a_j) is a typed error.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "ckks_test_util.hpp"
#include "error_test_util.hpp"
#include "oboro/backend/cuda/emulated_queue.hpp"
#include "oboro/ckks/batch.hpp"
#include "oboro/ckks/key_set.hpp"
#include "oboro/io/serialize.hpp"

namespace oboro::test {
namespace {

// Limbs of 61 bits (words of 8 bytes, read in place when stored) and of 40 (packed in 5 bytes),
// two-prime digits.
Parameters mixed_widths() {
    Parameters p;
    p.log_n = 12;
    p.q_bits = {61, 40, 40, 61, 40};
    p.p_bits = {61, 61};
    p.dnum = 3;
    p.scale = 0x1p40;
    p.security = SecurityLevel::none;
    return p;
}

KeySwitchKey seeded(const KeySwitchKey& key) {
    KeySwitchKey copy = key;
    copy.seed_a_halves();
    return copy;
}

GaloisKeys seeded(const GaloisKeys& keys) {
    GaloisKeys out;
    out.context_id = keys.context_id;
    for (const auto& [g, key] : keys.keys) out.add(g, seeded(*key));
    return out;
}

std::shared_ptr<const MemoryKeySet> key_set(const RelinKey& rk, const GaloisKeys& gk) {
    return std::make_shared<const MemoryKeySet>(std::make_shared<const RelinKey>(rk),
                                                std::make_shared<const GaloisKeys>(gk));
}

class SeededKeys : public ::testing::TestWithParam<std::string> {
protected:
    Keys& keys() {
        if (GetParam() == "mixed") {
            static Keys k(mixed_widths());
            return k;
        }
        return Keys::get(GetParam());
    }
};

// Half the stored bytes, the same words (whole limbs and from inside a limb), the same uid.
TEST_P(SeededKeys, SameWordsInHalfTheMemory) {
    Keys& k = keys();
    for (const KeySwitchKey* key : {static_cast<const KeySwitchKey*>(&k.rk), k.gk.keys.begin()->second.get()}) {
        const KeySwitchKey s = seeded(*key);
        EXPECT_TRUE(key->a_stored());
        EXPECT_FALSE(s.a_stored());
        EXPECT_EQ(s.data.size() * 2, key->data.size());
        EXPECT_EQ(s.view().bytes() * 2, key->view().bytes());
        EXPECT_EQ(s.uid, key->uid);
        const auto want = key->words(), got = s.words();
        ASSERT_EQ(got.size(), want.size());
        EXPECT_TRUE(std::equal(got.data(), got.data() + got.size(), want.data()));
        const size_t n = key->n, last = key->qp_limbs - 1, j = key->digits - 1;
        std::vector<uint64_t> part(n / 2);
        s.view().unpack(j, 1, last, n / 4, n / 2, part.data());
        const uint64_t* a = want.data() + ((2 * j + 1) * key->qp_limbs + last) * n;
        EXPECT_TRUE(std::equal(part.begin(), part.end(), a + n / 4));
        KeySwitchKey twice = s;
        twice.seed_a_halves();  // nothing more to do
        EXPECT_EQ(twice.data.size(), s.data.size());
    }
}

// A seeded key stored whole again (KeySwitchKey::store_a_halves, as bootstrapping's memory policy
// does for the keys it uses most) holds the bytes of the key that was never seeded, keeps its uid,
// and can be seeded once more.
TEST_P(SeededKeys, StoredWholeAgainHoldsTheOriginalBytes) {
    Keys& k = keys();
    for (const KeySwitchKey* key : {static_cast<const KeySwitchKey*>(&k.rk), k.gk.keys.begin()->second.get()}) {
        KeySwitchKey again = seeded(*key);
        again.store_a_halves();
        EXPECT_TRUE(again.a_stored());
        EXPECT_EQ(again.uid, key->uid);
        ASSERT_EQ(again.data.size(), key->data.size());
        EXPECT_TRUE(std::equal(again.data.data(), again.data.data() + again.data.size(), key->data.data()));
        const size_t bytes = again.data.size();
        again.store_a_halves();  // nothing more to do
        EXPECT_EQ(again.data.size(), bytes);
        again.seed_a_halves();
        EXPECT_EQ(again.data.size() * 2, key->data.size());
        const auto want = key->words(), got = again.words();
        EXPECT_TRUE(std::equal(got.data(), got.data() + got.size(), want.data()));
    }
}

// Every key switch gives the stored keys' ciphertext word for word: relinearization, a rotation,
// the conjugation, hoisted rotations (several keys per limb), a rotated sum, a batch, below the
// key's level, and on the emulated GPU queue (which uploads the key's words).
TEST_P(SeededKeys, KeySwitchesGiveTheSameWords) {
    Keys& k = keys();
    const Context& ctx = *k.ctx;
    const Evaluator full(k.ctx, key_set(k.rk, k.gk)), lean(k.ctx, key_set(seeded(k.rk), seeded(k.gk)));
    const size_t slots = ctx.max_slots();
    const auto x = random_complex(slots, 1.0, 21), y = random_complex(slots, 1.0, 22);
    const Ciphertext cx = k.encrypt(x), cy = k.encrypt(y);
    EXPECT_TRUE(same_words(lean.multiply_relin_rescale(cx, cy), full.multiply_relin_rescale(cx, cy)));
    EXPECT_TRUE(same_words(lean.rotate(cx, 1), full.rotate(cx, 1)));
    EXPECT_TRUE(same_words(lean.conjugate(cx), full.conjugate(cx)));
    const std::vector<int64_t> steps = {0, 1, -1, 5};
    const auto many_lean = lean.rotate_many(cx, steps), many_full = full.rotate_many(cx, steps);
    for (size_t r = 0; r < steps.size(); ++r) EXPECT_TRUE(same_words(many_lean[r], many_full[r])) << steps[r];
    EXPECT_TRUE(same_words(lean.rotate_sum(cx, steps), full.rotate_sum(cx, steps)));
    const Ciphertext low = full.drop_to_level(cx, 0);
    EXPECT_TRUE(same_words(lean.rotate(low, -1), full.rotate(low, -1)));
    const auto batch = CiphertextBatch::from_ciphertexts(ctx, std::vector<Ciphertext>{cx, cy});
    EXPECT_TRUE(same_words(lean.rotate(batch, 5).at(1), full.rotate(batch, 5).at(1)));
    EXPECT_GE(precision_bits(k.decrypt(lean.rotate(cx, 1)), roll(x, 1)), 19);

    const auto emulated = oboro::cuda::make_emulated_queue();
    const Evaluator dev = lean.on(emulated);
    const auto dx = CiphertextBatch::from_ciphertexts(ctx, std::vector<Ciphertext>{cx, cy}).to_device(emulated);
    EXPECT_TRUE(same_words(dev.rotate(dx, 1).to_host().at(0), full.rotate(cx, 1)));
    EXPECT_TRUE(same_words(dev.relinearize(dev.multiply(dx, dx)).to_host().at(1), full.relinearize(full.multiply(cy, cy))));
}

INSTANTIATE_TEST_SUITE_P(Presets, SeededKeys, ::testing::Values("S1", "S2", "mixed"));

// A key made below the top level and over part of the special primes, seeded, switches the same.
TEST(SeededKeysAt, ALowerLevel) {
    Keys& k = Keys::get("S2");
    const Context& ctx = *k.ctx;
    const int level = 1;
    const GaloisKeys gk = k.keygen->galois_keys({1, 3}, true, level);
    const Evaluator ev(k.ctx);
    const Ciphertext cx = ev.drop_to_level(k.encrypt(random_complex(ctx.max_slots(), 1.0, 23)), level);
    const GaloisKeys lean = seeded(gk);
    const auto a = ev.rotate_many(cx, {1, 3}, lean), b = ev.rotate_many(cx, {1, 3}, gk);
    EXPECT_TRUE(same_words(a[0], b[0]));
    EXPECT_TRUE(same_words(a[1], b[1]));
    EXPECT_TRUE(same_words(ev.conjugate(ev.drop_to_level(cx, 0), lean), ev.conjugate(ev.drop_to_level(cx, 0), gk)));
}

// A seeded key serializes as the stored one does (the seed, or every word), and a key loaded from
// its seed can be seeded again; one loaded from every word cannot (it has no seed): a ValueError,
// as is storing an a_j into a seeded key.
TEST(SeededKeysIo, SerializeAndLoad) {
    Keys& k = Keys::get("S2");
    const Context& ctx = *k.ctx;
    const RelinKey lean = seeded(k.rk);
    for (bool compress : {true, false}) {
        const io::Bytes a = io::serialize_relin_key(ctx, lean, compress), b = io::serialize_relin_key(ctx, k.rk, compress);
        EXPECT_EQ(a, b) << compress;
    }
    RelinKey from_seed = io::load_relin_key(ctx, io::serialize_relin_key(ctx, k.rk, true));
    from_seed.seed_a_halves();
    const auto w = from_seed.words(), want = k.rk.words();
    EXPECT_TRUE(std::equal(w.data(), w.data() + w.size(), want.data()));
    RelinKey from_words = io::load_relin_key(ctx, io::serialize_relin_key(ctx, k.rk, false));
    EXPECT_ERROR(ValueError, from_words.seed_a_halves(), "seed_a_halves", "no seed");
    RelinKey s = seeded(k.rk);
    const std::vector<uint64_t> words(s.qp_limbs * s.n, 0);
    EXPECT_ERROR(ValueError, s.store(0, 1, words.data()), "not stored");
}

}  // namespace
}  // namespace oboro::test
