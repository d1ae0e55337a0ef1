// A hybrid key-switching key as the kernels read it: a view of its stored words and their layout,
// with no CKKS types. ckks::KeySwitchKey (ckks/keys.hpp) owns the words and hands out this view.
//
// Layout: [digit][b, a][limb] for each digit j the polynomials b_j then a_j, each of qp_limbs
// limbs in NTT form: the key's ciphertext primes q_0 .. q_{qp_limbs - special - 1} (all of Q, or
// the first ones for a key made at a lower level), then its `special` special primes p_0 ..
// p_{special-1} (all of the ring's, or the first ones for a key made over a part of P).
//
// Packed words: a limb's n words are stored in the bytes its prime needs (key_word_bytes): 5
// below 2^40, 6 below 2^48, 8 otherwise. A packed limb is planar, n low 32-bit halves, then n
// high parts of 1 or 2 bytes, so that unpacking is two widening loads, a shift and an or, which
// every compiler vectorizes. Keys are most of a CKKS process's memory (a key set of 23 keys at
// N = 2^16 with 21 levels, 20 of them of 40 bits, takes 23% less) and every key switch reads one
// whole key, so the kernels read the packed words and unpack a block at a time, in cache.
//
// Seeded uniform halves: the a_j of a key drawn from a seed (ckks::expand_uniform, stream j) may
// be left out of memory, the layout then [digit][b][limb]; a key switch draws each limb of a_j
// again from its recorded place in the stream. Half the key's memory, for the ChaCha20 stream of
// every a_j at each use: about twice the inner product's time (docs/benchmarks/keyswitch.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "oboro/math/random.hpp"

namespace oboro::backend {

// The bytes a key word of a limb with this modulus is stored in.
inline uint32_t key_word_bytes(uint64_t modulus) {
    if (modulus <= (uint64_t(1) << 40)) return 5;
    if (modulus <= (uint64_t(1) << 48)) return 6;
    return 8;
}

// Stores the n words of one limb, each below 2^(8 * width) (below a modulus of key_word_bytes =
// width), in `width` bytes each, planar.
inline void pack_key_words(const uint64_t* words, size_t n, uint32_t width, uint8_t* out) {
    if (width == 8) {
        std::memcpy(out, words, n * sizeof(uint64_t));
        return;
    }
    uint32_t* lo = reinterpret_cast<uint32_t*>(out);
    for (size_t k = 0; k < n; ++k) lo[k] = uint32_t(words[k]);
    if (width == 5) {
        uint8_t* hi = out + 4 * n;
        for (size_t k = 0; k < n; ++k) hi[k] = uint8_t(words[k] >> 32);
    } else {
        uint16_t* hi = reinterpret_cast<uint16_t*>(out + 4 * n);
        for (size_t k = 0; k < n; ++k) hi[k] = uint16_t(words[k] >> 32);
    }
}

// Words begin .. begin + count of a limb of n words packed by pack_key_words.
inline void unpack_key_words(const uint8_t* limb, size_t n, uint32_t width, size_t begin, size_t count,
                             uint64_t* __restrict out) {
    if (width == 8) {
        std::memcpy(out, limb + begin * sizeof(uint64_t), count * sizeof(uint64_t));
        return;
    }
    const uint32_t* __restrict lo = reinterpret_cast<const uint32_t*>(limb) + begin;
    if (width == 5) {
        const uint8_t* __restrict hi = limb + 4 * n + begin;
        for (size_t k = 0; k < count; ++k) out[k] = uint64_t(lo[k]) | uint64_t(hi[k]) << 32;
    } else {
        const uint16_t* __restrict hi = reinterpret_cast<const uint16_t*>(limb + 4 * n) + begin;
        for (size_t k = 0; k < count; ++k) out[k] = uint64_t(lo[k]) | uint64_t(hi[k]) << 32;
    }
}

struct KeySwitchKeyView {
    const uint8_t* data = nullptr;
    // limb_offsets[k]: the bytes per coefficient of limbs 0 .. k-1 (qp_limbs + 1 entries), so
    // that limb k's words take limb_offsets[k + 1] - limb_offsets[k] bytes each.
    const uint32_t* limb_offsets = nullptr;
    size_t digits = 0;
    size_t qp_limbs = 0;
    size_t n = 0;
    // Identifies the key's contents for caches (a device's copy of the key): two views with the
    // same non-zero uid have the same words. 0: unknown, never cached.
    uint64_t uid = 0;
    size_t special = 0;
    // Expires when every copy of the key is gone (ckks::KeySwitchKey::alive): a cache's copy of
    // the words may go then. Empty for a view without a uid.
    std::weak_ptr<const void> alive;

    // Set when the a_j are not stored (seeded halves, above): limb k of a_j is the next words
    // of uniform_fill(moduli[k]) from stream j of *a_seed at byte a_positions[j * qp_limbs + k].
    const math::Seed* a_seed = nullptr;
    const uint64_t* a_positions = nullptr;
    const uint64_t* moduli = nullptr;

    bool a_stored() const { return a_seed == nullptr; }
    size_t stored_halves() const { return a_stored() ? 2 : 1; }
    uint32_t word_bytes(size_t limb) const { return limb_offsets[limb + 1] - limb_offsets[limb]; }
    size_t poly_bytes() const { return size_t(limb_offsets[qp_limbs]) * n; }
    // Limb `limb` of b_digit (half 0) or a_digit (half 1, a stored one), packed.
    const uint8_t* limb(size_t digit, size_t half, size_t limb) const {
        return data + (stored_halves() * digit + half) * poly_bytes() + size_t(limb_offsets[limb]) * n;
    }
    // A generator at the first word of limb `limb` of a_digit when it is not stored: its
    // uniform_fill(moduli[limb]) gives that limb's words in order.
    math::Prng a_stream(size_t digit, size_t limb) const {
        math::Prng g(*a_seed, digit);
        g.seek(a_positions[digit * qp_limbs + limb]);
        return g;
    }
    // Words begin .. begin + count of that limb (of a seeded a_digit, drawn again from the limb's
    // first word: the key-switching kernels draw whole limbs in order from a_stream instead).
    void unpack(size_t digit, size_t half, size_t limb_index, size_t begin, size_t count, uint64_t* out) const {
        if (half == 1 && !a_stored()) {
            math::Prng g = a_stream(digit, limb_index);
            std::vector<uint64_t> skipped(begin);
            g.uniform_fill(moduli[limb_index], skipped.data(), begin);
            g.uniform_fill(moduli[limb_index], out, count);
            return;
        }
        unpack_key_words(limb(digit, half, limb_index), n, word_bytes(limb_index), begin, count, out);
    }
    // The whole key as 64-bit words, [digit][b, a][limb][n] (words() of them): what a device
    // copy holds.
    void unpack_all(uint64_t* out) const {
        for (size_t p = 0; p < 2 * digits; ++p)
            for (size_t k = 0; k < qp_limbs; ++k) unpack(p / 2, p % 2, k, 0, n, out + (p * qp_limbs + k) * n);
    }
    std::vector<uint64_t> unpacked() const {
        std::vector<uint64_t> out(words());
        unpack_all(out.data());
        return out;
    }
    size_t words() const { return 2 * digits * qp_limbs * n; }
    // The memory of the stored words.
    size_t bytes() const { return stored_halves() * digits * poly_bytes(); }
    // The key's ciphertext limbs (its level + 1).
    size_t q_limbs() const { return qp_limbs - special; }
    // The key limb that holds limb i of a polynomial extended to Q_level * P' (level + 1 ciphertext
    // limbs, then the key's special limbs).
    size_t key_limb(size_t i, int level) const {
        const size_t nq = size_t(level + 1);
        return i < nq ? i : q_limbs() + (i - nq);
    }
};

}  // namespace oboro::backend
