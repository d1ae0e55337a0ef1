#include "oboro/math/random.hpp"

#include <sys/random.h>

#include <cerrno>
#include <cstring>

#include "oboro/util/error.hpp"

namespace oboro::math {

void os_random_bytes(uint8_t* buf, size_t len) {
    size_t done = 0;
    while (done < len) {
        const ssize_t got = getrandom(buf + done, len - done, 0);
        if (got < 0) {
            if (errno == EINTR) continue;
            raise<Error>("randomness: the operating system CSPRNG failed (getrandom: ", std::strerror(errno), ")");
        }
        done += size_t(got);
    }
}

Seed os_random_seed() {
    Seed s;
    os_random_bytes(s.data(), s.size());
    return s;
}

namespace {
inline uint32_t rotl(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }
inline void quarter_round(uint32_t& a, uint32_t& b, uint32_t& c, uint32_t& d) {
    a += b; d ^= a; d = rotl(d, 16);
    c += d; b ^= c; b = rotl(b, 12);
    a += b; d ^= a; d = rotl(d, 8);
    c += d; b ^= c; b = rotl(b, 7);
}
inline uint32_t load_le32(const uint8_t* p) {
    return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
}  // namespace

void chacha20_block(const uint32_t key[8], uint32_t counter, const uint32_t nonce[3], uint8_t out[64]) {
    uint32_t s[16] = {0x61707865, 0x3320646e, 0x79622d32, 0x6b206574,
                      key[0], key[1], key[2], key[3], key[4], key[5], key[6], key[7],
                      counter, nonce[0], nonce[1], nonce[2]};
    uint32_t x[16];
    std::memcpy(x, s, sizeof x);
    for (int i = 0; i < 10; ++i) {
        quarter_round(x[0], x[4], x[8], x[12]);
        quarter_round(x[1], x[5], x[9], x[13]);
        quarter_round(x[2], x[6], x[10], x[14]);
        quarter_round(x[3], x[7], x[11], x[15]);
        quarter_round(x[0], x[5], x[10], x[15]);
        quarter_round(x[1], x[6], x[11], x[12]);
        quarter_round(x[2], x[7], x[8], x[13]);
        quarter_round(x[3], x[4], x[9], x[14]);
    }
    for (int i = 0; i < 16; ++i) {
        const uint32_t v = x[i] + s[i];
        out[4 * i] = uint8_t(v);
        out[4 * i + 1] = uint8_t(v >> 8);
        out[4 * i + 2] = uint8_t(v >> 16);
        out[4 * i + 3] = uint8_t(v >> 24);
    }
}

Prng::Prng() : Prng(os_random_seed(), 0) {}

Prng::Prng(const Seed& seed, uint64_t stream_id) {
    for (int i = 0; i < 8; ++i) key_[i] = load_le32(seed.data() + 4 * i);
    nonce_[0] = 0;
    nonce_[1] = uint32_t(stream_id);
    nonce_[2] = uint32_t(stream_id >> 32);
}

void Prng::refill() {
    chacha20_block(key_, counter_, nonce_, block_);
    if (++counter_ == 0) ++nonce_[0];  // 2^32 blocks per nonce; move to the next nonce word
    pos_ = 0;
}

void Prng::fill(uint8_t* buf, size_t len) {
    while (len > 0) {
        if (pos_ == 64) refill();
        const size_t take = std::min(len, size_t(64) - pos_);
        std::memcpy(buf, block_ + pos_, take);
        pos_ += take;
        buf += take;
        len -= take;
    }
}

uint64_t Prng::next_u64() {
    uint8_t b[8];
    fill(b, 8);
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | b[i];
    return v;
}

uint32_t Prng::next_u32() {
    uint8_t b[4];
    fill(b, 4);
    return load_le32(b);
}

uint64_t Prng::uniform(uint64_t bound) {
    if (bound <= 1) return 0;
    // Draw as many bits as bound needs and reject values >= bound: no modulo bias, and for the
    // NTT primes (just below a power of two) almost no draw is rejected.
    uint64_t mask = bound - 1;
    mask |= mask >> 1; mask |= mask >> 2; mask |= mask >> 4;
    mask |= mask >> 8; mask |= mask >> 16; mask |= mask >> 32;
    uint64_t v;
    do { v = next_u64() & mask; } while (v >= bound);
    return v;
}

double Prng::uniform_double() { return double(next_u64() >> 11) * 0x1.0p-53; }

}  // namespace oboro::math
