#include "oboro/ckks/keys.hpp"

#include <atomic>
#include <cstring>

#include "oboro/util/error.hpp"

namespace oboro::ckks {

uint64_t new_key_uid() {
    static std::atomic<uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
}

void KeySwitchKey::name_words() {
    uid = new_key_uid();
    alive = std::make_shared<const char>(0);
}

KeySwitchKey KeySwitchKey::allocate(const std::vector<math::Modulus>& basis, size_t special, size_t digits, size_t n) {
    if (special > basis.size()) raise<ValueError>("KeySwitchKey: ", special, " special primes of ", basis.size());
    KeySwitchKey key;
    key.digits = digits;
    key.qp_limbs = basis.size();
    key.special = special;
    key.n = n;
    key.limb_offsets.assign(1, 0);
    for (const math::Modulus& m : basis) {
        key.limb_offsets.push_back(key.limb_offsets.back() + backend::key_word_bytes(m.value));
        key.moduli.push_back(m.value);
    }
    key.data = KeyBuffer<uint8_t>(2 * digits * size_t(key.limb_offsets.back()) * n);
    return key;
}

void KeySwitchKey::store(size_t digit, size_t half, const uint64_t* words) {
    if (half == 1 && a_seeded_)
        raise<ValueError>("KeySwitchKey::store: the key's a halves are not stored (they are drawn from its seed)");
    forget_name();
    const backend::KeySwitchKeyView v = view();
    for (size_t k = 0; k < qp_limbs; ++k)
        backend::pack_key_words(words + k * n, n, v.word_bytes(k), const_cast<uint8_t*>(v.limb(digit, half, k)));
}

void KeySwitchKey::load(size_t digit, size_t half, uint64_t* words) const {
    const backend::KeySwitchKeyView v = view();
    for (size_t k = 0; k < qp_limbs; ++k) v.unpack(digit, half, k, 0, n, words + k * n);
}

AlignedBuffer<uint64_t> KeySwitchKey::words() const {
    AlignedBuffer<uint64_t> out(2 * digits * qp_limbs * n);
    view().unpack_all(out.data());
    return out;
}

void KeySwitchKey::seed_a_halves() {
    if (a_seeded_) return;
    if (!a_seed || a_positions.size() != digits * qp_limbs)
        raise<ValueError>("KeySwitchKey::seed_a_halves: the key has no seed for its a halves (keys made by KeyGenerator "
                          "or loaded from a file that stored the seed have one)");
    const size_t poly = view().poly_bytes();
    KeyBuffer<uint8_t> b_only(digits * poly);
    for (size_t j = 0; j < digits; ++j) std::memcpy(b_only.data() + j * poly, data.data() + 2 * j * poly, poly);
    data = std::move(b_only);
    a_seeded_ = true;
}

void KeySwitchKey::store_a_halves() {
    if (!a_seeded_) return;
    const backend::KeySwitchKeyView seeded = view();
    const size_t poly = seeded.poly_bytes();
    KeyBuffer<uint8_t> both(2 * digits * poly);
    AlignedBuffer<uint64_t> words(n);
    for (size_t j = 0; j < digits; ++j) {
        std::memcpy(both.data() + 2 * j * poly, data.data() + j * poly, poly);
        for (size_t k = 0; k < qp_limbs; ++k) {
            seeded.unpack(j, 1, k, 0, n, words.data());
            backend::pack_key_words(words.data(), n, seeded.word_bytes(k),
                                    both.data() + (2 * j + 1) * poly + size_t(limb_offsets[k]) * n);
        }
    }
    // the same words: the key keeps its uid
    data = std::move(both);
    a_seeded_ = false;
}

}  // namespace oboro::ckks
