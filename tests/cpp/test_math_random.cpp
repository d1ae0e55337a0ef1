// Tests for src/oboro/math/random.hpp: the ChaCha20 block function against RFC 8439, and the
// Prng built on it (determinism, stream separation, byte order, uniform sampling), plus the OS seed.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <set>
#include <utility>
#include <vector>

#include "oboro/math/random.hpp"

namespace {

using namespace oboro::math;

// 32-bit little-endian words of a byte string, as RFC 8439 loads key and nonce into the state
template <size_t N> std::array<uint32_t, N / 4> le_words(const std::array<uint8_t, N>& b) {
    std::array<uint32_t, N / 4> w{};
    for (size_t i = 0; i < N / 4; ++i)
        w[i] = uint32_t(b[4 * i]) | uint32_t(b[4 * i + 1]) << 8 | uint32_t(b[4 * i + 2]) << 16 |
               uint32_t(b[4 * i + 3]) << 24;
    return w;
}

using Block = std::array<uint8_t, 64>;

Block block(const std::array<uint8_t, 32>& key, uint32_t counter, const std::array<uint8_t, 12>& nonce) {
    const auto k = le_words(key);
    const auto n = le_words(nonce);
    Block out{};
    chacha20_block(k.data(), counter, n.data(), out.data());
    return out;
}

std::array<uint8_t, 32> key_0_to_31() {
    std::array<uint8_t, 32> k{};
    for (int i = 0; i < 32; ++i) k[i] = uint8_t(i);
    return k;
}

// ---- ChaCha20 block function ---------------------------------------------------------------------

// RFC 8439 section 2.3.2: key 00..1f, nonce 00:00:00:09:00:00:00:4a:00:00:00:00, counter 1
TEST(ChaCha20, Rfc8439Section2_3_2) {
    const std::array<uint8_t, 12> nonce = {0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x4a, 0x00, 0x00, 0x00, 0x00};
    const Block want = {0x10, 0xf1, 0xe7, 0xe4, 0xd1, 0x3b, 0x59, 0x15, 0x50, 0x0f, 0xdd, 0x1f, 0xa3,
                        0x20, 0x71, 0xc4, 0xc7, 0xd1, 0xf4, 0xc7, 0x33, 0xc0, 0x68, 0x03, 0x04, 0x22,
                        0xaa, 0x9a, 0xc3, 0xd4, 0x6c, 0x4e, 0xd2, 0x82, 0x64, 0x46, 0x07, 0x9f, 0xaa,
                        0x09, 0x14, 0xc2, 0xd7, 0x05, 0xd9, 0x8b, 0x02, 0xa2, 0xb5, 0x12, 0x9c, 0xd1,
                        0xde, 0x16, 0x4e, 0xb9, 0xcb, 0xd0, 0x83, 0xe8, 0xa2, 0x50, 0x3c, 0x4e};
    EXPECT_EQ(block(key_0_to_31(), 1, nonce), want);
}

const Block kA1Vector1 = {0x76, 0xb8, 0xe0, 0xad, 0xa0, 0xf1, 0x3d, 0x90, 0x40, 0x5d, 0x6a, 0xe5, 0x53,
                          0x86, 0xbd, 0x28, 0xbd, 0xd2, 0x19, 0xb8, 0xa0, 0x8d, 0xed, 0x1a, 0xa8, 0x36,
                          0xef, 0xcc, 0x8b, 0x77, 0x0d, 0xc7, 0xda, 0x41, 0x59, 0x7c, 0x51, 0x57, 0x48,
                          0x8d, 0x77, 0x24, 0xe0, 0x3f, 0xb8, 0xd8, 0x4a, 0x37, 0x6a, 0x43, 0xb8, 0xf4,
                          0x15, 0x18, 0xa1, 0x1c, 0xc3, 0x87, 0xb6, 0x69, 0xb2, 0xee, 0x65, 0x86};
const Block kA1Vector2 = {0x9f, 0x07, 0xe7, 0xbe, 0x55, 0x51, 0x38, 0x7a, 0x98, 0xba, 0x97, 0x7c, 0x73,
                          0x2d, 0x08, 0x0d, 0xcb, 0x0f, 0x29, 0xa0, 0x48, 0xe3, 0x65, 0x69, 0x12, 0xc6,
                          0x53, 0x3e, 0x32, 0xee, 0x7a, 0xed, 0x29, 0xb7, 0x21, 0x76, 0x9c, 0xe6, 0x4e,
                          0x43, 0xd5, 0x71, 0x33, 0xb0, 0x74, 0xd8, 0x39, 0xd5, 0x31, 0xed, 0x1f, 0x28,
                          0x51, 0x0a, 0xfb, 0x45, 0xac, 0xe1, 0x0a, 0x1f, 0x4b, 0x79, 0x4d, 0x6f};

// RFC 8439 appendix A.1, test vectors #1 to #5 (key bits, counter and nonce each exercised)
TEST(ChaCha20, Rfc8439AppendixA1) {
    const std::array<uint8_t, 32> zero_key{};
    const std::array<uint8_t, 12> zero_nonce{};
    EXPECT_EQ(block(zero_key, 0, zero_nonce), kA1Vector1);
    EXPECT_EQ(block(zero_key, 1, zero_nonce), kA1Vector2);

    std::array<uint8_t, 32> key_last_one{};
    key_last_one[31] = 1;
    const Block v3 = {0x3a, 0xeb, 0x52, 0x24, 0xec, 0xf8, 0x49, 0x92, 0x9b, 0x9d, 0x82, 0x8d, 0xb1,
                      0xce, 0xd4, 0xdd, 0x83, 0x20, 0x25, 0xe8, 0x01, 0x8b, 0x81, 0x60, 0xb8, 0x22,
                      0x84, 0xf3, 0xc9, 0x49, 0xaa, 0x5a, 0x8e, 0xca, 0x00, 0xbb, 0xb4, 0xa7, 0x3b,
                      0xda, 0xd1, 0x92, 0xb5, 0xc4, 0x2f, 0x73, 0xf2, 0xfd, 0x4e, 0x27, 0x36, 0x44,
                      0xc8, 0xb3, 0x61, 0x25, 0xa6, 0x4a, 0xdd, 0xeb, 0x00, 0x6c, 0x13, 0xa0};
    EXPECT_EQ(block(key_last_one, 1, zero_nonce), v3);

    std::array<uint8_t, 32> key_ff{};
    key_ff[1] = 0xff;
    const Block v4 = {0x72, 0xd5, 0x4d, 0xfb, 0xf1, 0x2e, 0xc4, 0x4b, 0x36, 0x26, 0x92, 0xdf, 0x94,
                      0x13, 0x7f, 0x32, 0x8f, 0xea, 0x8d, 0xa7, 0x39, 0x90, 0x26, 0x5e, 0xc1, 0xbb,
                      0xbe, 0xa1, 0xae, 0x9a, 0xf0, 0xca, 0x13, 0xb2, 0x5a, 0xa2, 0x6c, 0xb4, 0xa6,
                      0x48, 0xcb, 0x9b, 0x9d, 0x1b, 0xe6, 0x5b, 0x2c, 0x09, 0x24, 0xa6, 0x6c, 0x54,
                      0xd5, 0x45, 0xec, 0x1b, 0x73, 0x74, 0xf4, 0x87, 0x2e, 0x99, 0xf0, 0x96};
    EXPECT_EQ(block(key_ff, 2, zero_nonce), v4);

    std::array<uint8_t, 12> nonce_2{};
    nonce_2[11] = 2;
    const Block v5 = {0xc2, 0xc6, 0x4d, 0x37, 0x8c, 0xd5, 0x36, 0x37, 0x4a, 0xe2, 0x04, 0xb9, 0xef,
                      0x93, 0x3f, 0xcd, 0x1a, 0x8b, 0x22, 0x88, 0xb3, 0xdf, 0xa4, 0x96, 0x72, 0xab,
                      0x76, 0x5b, 0x54, 0xee, 0x27, 0xc7, 0x8a, 0x97, 0x0e, 0x0e, 0x95, 0x5c, 0x14,
                      0xf3, 0xa8, 0x8e, 0x74, 0x1b, 0x97, 0xc2, 0x86, 0xf7, 0x5f, 0x8f, 0xc2, 0x99,
                      0xe8, 0x14, 0x83, 0x62, 0xfa, 0x19, 0x8a, 0x39, 0x53, 0x1b, 0xed, 0x6d};
    EXPECT_EQ(block(zero_key, 0, nonce_2), v5);
}

// The block function is a pure function of its inputs, and every input word matters
TEST(ChaCha20, EveryInputWordMatters) {
    uint32_t key[8] = {1, 2, 3, 4, 5, 6, 7, 8}, nonce[3] = {9, 10, 11};
    uint8_t base[64], again[64], other[64];
    chacha20_block(key, 42, nonce, base);
    chacha20_block(key, 42, nonce, again);
    EXPECT_EQ(std::memcmp(base, again, 64), 0);
    for (int i = 0; i < 8; ++i) {
        key[i] ^= 0x80000000u;
        chacha20_block(key, 42, nonce, other);
        EXPECT_NE(std::memcmp(base, other, 64), 0) << "key word " << i;
        key[i] ^= 0x80000000u;
    }
    for (int i = 0; i < 3; ++i) {
        nonce[i] ^= 1;
        chacha20_block(key, 42, nonce, other);
        EXPECT_NE(std::memcmp(base, other, 64), 0) << "nonce word " << i;
        nonce[i] ^= 1;
    }
    chacha20_block(key, 43, nonce, other);
    EXPECT_NE(std::memcmp(base, other, 64), 0);
}

// The lane-parallel generator makes exactly the blocks of the one-block function, for counters
// at the start, in the middle and at the very top of the 32-bit range: the version chosen for
// this CPU and each compilation this CPU runs (baseline, AVX2, AVX-512).
TEST(ChaCha20, LanesEqualSingleBlocks) {
    const uint32_t key[8] = {0xdeadbeef, 2, 3, 4, 5, 6, 7, 0x80000000}, nonce[3] = {1, 0xffffffff, 3};
    std::vector<std::pair<const char*, ChachaBlocksFn>> versions = {{"chosen", chacha20_blocks}};
    for (auto [name, isa] : {std::pair{"baseline", ChachaIsa::baseline}, {"avx2", ChachaIsa::avx2}, {"avx512", ChachaIsa::avx512}})
        if (ChachaBlocksFn f = chacha20_blocks_variant(isa)) versions.emplace_back(name, f);
        else std::printf("note: this CPU has no %s; that version of chacha20_blocks is not run\n", name);
    ASSERT_NE(chacha20_blocks_variant(ChachaIsa::baseline), nullptr);
    for (auto [name, blocks] : versions) {
        for (uint32_t counter : {0u, 12345u, uint32_t(UINT32_MAX - (kChachaLanes - 1))}) {
            std::vector<uint8_t> lanes(64 * kChachaLanes);
            blocks(key, counter, nonce, lanes.data());
            for (uint32_t b = 0; b < kChachaLanes; ++b) {
                uint8_t want[64];
                chacha20_block(key, counter + b, nonce, want);
                EXPECT_EQ(std::memcmp(lanes.data() + 64 * b, want, 64), 0)
                    << name << ": counter " << counter << " lane " << b;
            }
        }
    }
}

// ---- Prng ----------------------------------------------------------------------------------------

Seed seed_of(uint8_t start) {
    Seed s{};
    for (int i = 0; i < 32; ++i) s[i] = uint8_t(start + i);
    return s;
}

// With the all-zero seed, stream 0, the Prng emits the ChaCha20 keystream for counter 0, 1, ...
// (RFC 8439 A.1 vectors #1 and #2), independent of how the reads are split across blocks. This
// pins the output format: seeds stored in keys/ciphertexts must expand identically forever.
// fill_u64 gives exactly the words of as many next_u64 calls, from any position in the keystream
// (after a next_u32, words straddle the buffer's refills) and across refills.
TEST(Prng, FillU64EqualsNextU64) {
    Seed seed{};
    seed[0] = 42;
    for (const bool offset : {false, true}) {
        Prng a(seed, 3), b(seed, 3);
        if (offset) {
            (void)a.next_u32();
            (void)b.next_u32();
        }
        for (size_t count : {size_t(1), size_t(65), size_t(1000), size_t(7), size_t(4096)}) {
            std::vector<uint64_t> got(count), want(count);
            a.fill_u64(got.data(), count);
            for (auto& w : want) w = b.next_u64();
            ASSERT_EQ(got, want) << "count " << count << " offset " << offset;
        }
    }
}

TEST(Prng, ZeroSeedIsRfcKeystream) {
    Prng p(Seed{}, 0);
    std::vector<uint8_t> got;
    for (size_t len : {1, 15, 16, 30, 2, 64}) {  // 128 bytes, crossing the block boundary mid-read
        std::vector<uint8_t> part(len);
        p.fill(part.data(), len);
        got.insert(got.end(), part.begin(), part.end());
    }
    std::vector<uint8_t> want(kA1Vector1.begin(), kA1Vector1.end());
    want.insert(want.end(), kA1Vector2.begin(), kA1Vector2.end());
    EXPECT_EQ(got, want);
}

// Stream s of a seed is the ChaCha20 keystream with key = seed and nonce words (0, lo(s), hi(s)),
// block counter starting at 0
TEST(Prng, StreamLayout) {
    const Seed seed = seed_of(0x40);
    std::array<uint8_t, 32> key;
    std::memcpy(key.data(), seed.data(), 32);
    const auto kw = le_words(key);
    for (uint64_t stream : {uint64_t(0), uint64_t(1), uint64_t(0xFFFFFFFF), uint64_t(0x123456789ABCDEF0)}) {
        Prng p(seed, stream);
        std::vector<uint8_t> got(64 * 5);
        p.fill(got.data(), got.size());
        const uint32_t nonce[3] = {0, uint32_t(stream), uint32_t(stream >> 32)};
        for (uint32_t ctr = 0; ctr < 5; ++ctr) {
            uint8_t want[64];
            chacha20_block(kw.data(), ctr, nonce, want);
            EXPECT_EQ(std::memcmp(got.data() + 64 * ctr, want, 64), 0) << "stream " << stream << " block " << ctr;
        }
    }
}

// Reads of every size and kind across many internal refills give the keystream block after block
TEST(Prng, StreamAcrossRefills) {
    const Seed seed = seed_of(0x21);
    std::array<uint8_t, 32> key;
    std::memcpy(key.data(), seed.data(), 32);
    const auto kw = le_words(key);
    const uint32_t nonce[3] = {0, 3, 0};
    const size_t blocks = 3 * kChachaLanes + 5;
    std::vector<uint8_t> want(64 * blocks);
    for (uint32_t ctr = 0; ctr < blocks; ++ctr) chacha20_block(kw.data(), ctr, nonce, want.data() + 64 * ctr);
    Prng p(seed, 3);
    std::vector<uint8_t> got;
    for (size_t i = 0; got.size() + 1100 < want.size(); ++i) {
        switch (i % 4) {
            case 0: {
                const uint64_t v = p.next_u64();
                for (int b = 0; b < 8; ++b) got.push_back(uint8_t(v >> (8 * b)));
                break;
            }
            case 1: {
                const uint32_t v = p.next_u32();
                for (int b = 0; b < 4; ++b) got.push_back(uint8_t(v >> (8 * b)));
                break;
            }
            default: {
                std::vector<uint8_t> part(i % 7 == 0 ? 1000 : i % 13);  // some reads span a refill
                p.fill(part.data(), part.size());
                got.insert(got.end(), part.begin(), part.end());
            }
        }
    }
    ASSERT_GT(got.size(), 64 * 2 * kChachaLanes);
    EXPECT_TRUE(std::equal(got.begin(), got.end(), want.begin()));
}

// Same seed and stream -> identical output through every accessor
TEST(Prng, DeterministicForSameSeedAndStream) {
    for (uint64_t stream : {uint64_t(0), uint64_t(7), ~uint64_t(0)}) {
        Prng a(seed_of(3), stream), b(seed_of(3), stream);
        for (int i = 0; i < 1000; ++i) {
            ASSERT_EQ(a.next_u64(), b.next_u64());
            ASSERT_EQ(a.next_u32(), b.next_u32());
            ASSERT_EQ(a.uniform(1000003), b.uniform(1000003));
            ASSERT_EQ(a.uniform_double(), b.uniform_double());
            uint8_t x[13], y[13];
            a.fill(x, 13);
            b.fill(y, 13);
            ASSERT_EQ(std::memcmp(x, y, 13), 0);
        }
    }
}

// Different streams of one seed, and different seeds (one bit apart), give unrelated output
TEST(Prng, DifferentStreamsAndSeedsDiffer) {
    const Seed s = seed_of(9);
    std::set<uint64_t> firsts;
    std::vector<uint64_t> streams = {0, 1, 2, 3, uint64_t(1) << 32, (uint64_t(1) << 32) + 1, ~uint64_t(0)};
    for (uint64_t st : streams) {
        Prng p(s, st);
        uint64_t v[4];
        for (auto& x : v) x = p.next_u64();
        for (auto x : v) firsts.insert(x);
    }
    EXPECT_EQ(firsts.size(), 4 * streams.size());  // no collisions among 28 64-bit outputs
    Seed s2 = s;
    s2[31] ^= 0x80;
    Prng a(s, 0), b(s2, 0);
    int equal_bytes = 0;
    for (int i = 0; i < 256; ++i) {
        uint8_t x, y;
        a.fill(&x, 1);
        b.fill(&y, 1);
        equal_bytes += x == y;
    }
    EXPECT_LT(equal_bytes, 10);  // ~1 expected
}

// next_u64 / next_u32 read the byte stream little-endian, in order, sharing one position with fill
TEST(Prng, WordsAreLittleEndianBytes) {
    Prng a(seed_of(5), 1), b(seed_of(5), 1);
    std::vector<uint8_t> bytes(3 + 8 + 4 + 8);
    b.fill(bytes.data(), bytes.size());
    uint8_t first3[3];
    a.fill(first3, 3);
    EXPECT_EQ(std::memcmp(first3, bytes.data(), 3), 0);
    uint64_t want64 = 0;
    for (int i = 7; i >= 0; --i) want64 = (want64 << 8) | bytes[3 + i];
    EXPECT_EQ(a.next_u64(), want64);
    uint32_t want32 = 0;
    for (int i = 3; i >= 0; --i) want32 = (want32 << 8) | bytes[11 + i];
    EXPECT_EQ(a.next_u32(), want32);
    // uniform_double takes the top 53 bits of the next u64
    uint64_t next = 0;
    for (int i = 7; i >= 0; --i) next = (next << 8) | bytes[15 + i];
    EXPECT_EQ(a.uniform_double(), double(next >> 11) * 0x1.0p-53);
}

// uniform(bound) always lies in [0, bound), for tiny, power-of-two, just-above-power-of-two,
// NTT-prime-sized and full-width bounds; uniform(1) == 0
TEST(Prng, UniformStaysBelowBound) {
    Prng p(seed_of(11), 0);
    const std::vector<uint64_t> bounds = {1, 2, 3, 5, 7, 8, 9, 1000, (uint64_t(1) << 32) + 1, uint64_t(1) << 40,
                                          4611686018427387847ull /* 2^62 - 57 */, (uint64_t(1) << 62) - 1,
                                          (uint64_t(1) << 63) + 1, ~uint64_t(0)};
    for (uint64_t b : bounds) {
        uint64_t mx = 0;
        for (int i = 0; i < 5000; ++i) {
            const uint64_t v = p.uniform(b);
            ASSERT_LT(v, b) << "bound " << b;
            mx = std::max(mx, v);
        }
        if (b > 1 && b <= 1000) {
            EXPECT_EQ(mx, b - 1) << "bound " << b;  // the largest small value is reachable
        } else if (b > 1000) {
            EXPECT_GT(mx, b - b / 100) << "bound " << b;  // the top of the range is hit
        }
    }
    for (int i = 0; i < 100; ++i) EXPECT_EQ(p.uniform(1), 0u);
}

// uniform_fill gives the values of as many uniform() calls and leaves the generator where they
// would: for every kind of bound (NTT primes just below and just above a power of two: almost no
// draw rejected, and about half; either side of 2^63, where the AVX2 path's signed compares stop),
// counts around the groups of 4 and 8 words of its SIMD paths and that
// cross several refills, and a stream that an odd next_u32 left off a word boundary (a word
// straddling the refill)
TEST(Prng, UniformFillEqualsRepeatedUniform) {
    const std::vector<uint64_t> bounds = {1,
                                          2,
                                          5,
                                          1000,
                                          (uint64_t(1) << 39) + 123,
                                          (uint64_t(1) << 40) - 87,
                                          (uint64_t(1) << 61) - 1 - 123456,
                                          4611686018427387847ull,
                                          (uint64_t(1) << 63) - 25,
                                          uint64_t(1) << 63,
                                          (uint64_t(1) << 63) + 1,
                                          ~uint64_t(0)};
    for (uint64_t b : bounds) {
        for (size_t count : {size_t(0), size_t(1), size_t(7), size_t(8), size_t(9), size_t(17), size_t(127), size_t(128),
                             size_t(129), size_t(5000)}) {
            for (bool misaligned : {false, true}) {
                Prng one(seed_of(12), 3), fill(seed_of(12), 3);
                if (misaligned) {
                    (void)one.next_u32();
                    (void)fill.next_u32();
                }
                std::vector<uint64_t> want(count), got(count + 1, 77);
                for (auto& v : want) v = one.uniform(b);
                fill.uniform_fill(b, got.data(), count);
                for (size_t i = 0; i < count; ++i) ASSERT_EQ(got[i], want[i]) << "bound " << b << " value " << i;
                EXPECT_EQ(got[count], 77u);  // nothing written past count
                EXPECT_EQ(fill.next_u64(), one.next_u64()) << "bound " << b << " count " << count;
            }
        }
    }
}

// position() counts every byte handed out (rejected draws too), and a generator moved there by
// seek() continues with the same bytes: at the start, inside a block, at a block and a refill
// boundary, across the 2^32-block counter wrap (nonce word 0 carries it, as refill does), and
// for values of uniform_fill after some were drawn.
TEST(Prng, PositionAndSeek) {
    Prng p(seed_of(0x44), 9);
    EXPECT_EQ(p.position(), 0u);
    std::vector<uint8_t> bytes(3 * 64 * kChachaLanes + 100);
    p.fill(bytes.data(), bytes.size());
    EXPECT_EQ(p.position(), bytes.size());
    for (uint64_t at : {uint64_t(0), uint64_t(5), uint64_t(64), uint64_t(64 * kChachaLanes - 3),
                        uint64_t(64 * kChachaLanes), uint64_t(2 * 64 * kChachaLanes + 17)}) {
        Prng q(seed_of(0x44), 9);
        q.seek(at);
        EXPECT_EQ(q.position(), at);
        std::vector<uint8_t> rest(bytes.size() - at);
        q.fill(rest.data(), rest.size());
        EXPECT_TRUE(std::equal(rest.begin(), rest.end(), bytes.begin() + ptrdiff_t(at))) << "seek to " << at;
        EXPECT_EQ(q.position(), bytes.size());
    }
    // Across the counter wrap: block 2^32 - 3 onwards, one block at a time as the reference.
    const Seed seed = seed_of(0x45);
    std::array<uint8_t, 32> key;
    std::memcpy(key.data(), seed.data(), 32);
    const auto kw = le_words(key);
    const uint64_t first = (uint64_t(1) << 32) - 3;
    std::vector<uint8_t> want(64 * 6);
    for (uint64_t b = 0; b < 6; ++b) {
        const uint64_t block_index = first + b;
        const uint32_t nonce[3] = {uint32_t(block_index >> 32), 2, 0};
        chacha20_block(kw.data(), uint32_t(block_index), nonce, want.data() + 64 * b);
    }
    Prng w(seed, 2);
    w.seek(first * 64 + 10);
    std::vector<uint8_t> got(want.size() - 10);
    w.fill(got.data(), got.size());
    EXPECT_TRUE(std::equal(got.begin(), got.end(), want.begin() + 10));
    EXPECT_EQ(w.position(), (first + 6) * 64);
    // uniform_fill from a recorded position
    const uint64_t bound = (uint64_t(1) << 61) - 1 - 123456;
    Prng a(seed_of(0x46), 1);
    std::vector<uint64_t> head(333), tail(1000);
    a.uniform_fill(bound, head.data(), head.size());
    const uint64_t at = a.position();
    a.uniform_fill(bound, tail.data(), tail.size());
    Prng b(seed_of(0x46), 1);
    b.seek(at);
    std::vector<uint64_t> again(tail.size());
    b.uniform_fill(bound, again.data(), again.size());
    EXPECT_EQ(again, tail);
}

// chi-square statistic of counts against the uniform distribution
double chi_square(const std::vector<uint64_t>& counts, double expected) {
    double chi = 0;
    for (uint64_t c : counts) chi += (double(c) - expected) * (double(c) - expected) / expected;
    return chi;
}

// uniform(7) and uniform(5) (5 is the worst case for rejection: mask 7) are roughly uniform:
// chi-square with a generous bound (fixed seed, so deterministic)
TEST(Prng, UniformSmallBoundsChiSquare) {
    Prng p(seed_of(13), 0);
    for (uint64_t bound : {uint64_t(5), uint64_t(7), uint64_t(10)}) {
        const int draws = 70000;
        std::vector<uint64_t> counts(bound, 0);
        for (int i = 0; i < draws; ++i) ++counts[p.uniform(bound)];
        // df = bound - 1 <= 9; P(chi2_9 > 40) ~ 7e-6
        EXPECT_LT(chi_square(counts, double(draws) / double(bound)), 40.0) << "bound " << bound;
    }
}

// No modulo bias for a bound that does not divide 2^64: bound = 3 * 2^61, split in three equal
// thirds (a naive `x % bound` would give the thirds probabilities 0.4 / 0.4 / 0.2)
TEST(Prng, UniformLargeBoundHasNoModuloBias) {
    Prng p(seed_of(17), 0);
    const uint64_t third = uint64_t(1) << 61, bound = 3 * third;
    std::vector<uint64_t> counts(3, 0);
    const int draws = 60000;
    for (int i = 0; i < draws; ++i) ++counts[p.uniform(bound) / third];
    EXPECT_LT(chi_square(counts, draws / 3.0), 30.0);
}

// The byte stream is roughly uniform over 256 values
TEST(Prng, BytesChiSquare) {
    Prng p(seed_of(19), 0);
    std::vector<uint8_t> buf(1 << 18);
    p.fill(buf.data(), buf.size());
    std::vector<uint64_t> counts(256, 0);
    for (uint8_t b : buf) ++counts[b];
    // df = 255: mean 255, sd ~22.6; 400 is > 6 sd
    EXPECT_LT(chi_square(counts, buf.size() / 256.0), 400.0);
}

// uniform_double is in [0, 1), a multiple of 2^-53, with mean ~1/2 and variance ~1/12
TEST(Prng, UniformDouble) {
    Prng p(seed_of(23), 0);
    const int draws = 100000;
    double sum = 0, sum2 = 0, mn = 1, mx = 0;
    for (int i = 0; i < draws; ++i) {
        const double u = p.uniform_double();
        ASSERT_GE(u, 0.0);
        ASSERT_LT(u, 1.0);
        const double scaled = std::ldexp(u, 53);
        ASSERT_EQ(scaled, std::floor(scaled));  // exactly k * 2^-53
        sum += u;
        sum2 += u * u;
        mn = std::min(mn, u);
        mx = std::max(mx, u);
    }
    const double mean = sum / draws, var = sum2 / draws - mean * mean;
    EXPECT_NEAR(mean, 0.5, 0.005);        // sd of the mean ~ 0.0009
    EXPECT_NEAR(var, 1.0 / 12.0, 0.002);
    EXPECT_LT(mn, 0.001);
    EXPECT_GT(mx, 0.999);
}

// ---- OS randomness -------------------------------------------------------------------------------

// Two OS seeds differ (probability of a false failure: 2^-256) and are not all zero
TEST(OsRandom, SeedsDiffer) {
    const Seed a = os_random_seed(), b = os_random_seed();
    EXPECT_NE(a, b);
    EXPECT_NE(a, Seed{});
    // default-constructed generators are seeded from the OS, so they differ too
    Prng p, q;
    EXPECT_NE(p.next_u64(), q.next_u64());
}

// os_random_bytes fills buffers of any length (0, odd, large) with non-constant data
TEST(OsRandom, BytesFillBuffers) {
    os_random_bytes(nullptr, 0);  // no-op
    std::vector<uint8_t> buf(1 << 16, 0);
    os_random_bytes(buf.data(), buf.size());
    std::vector<uint64_t> counts(256, 0);
    for (uint8_t x : buf) ++counts[x];
    EXPECT_LT(chi_square(counts, buf.size() / 256.0), 400.0);
    uint8_t small[9] = {}, small2[9] = {};
    os_random_bytes(small, 9);
    os_random_bytes(small2, 9);
    EXPECT_NE(std::memcmp(small, small2, 9), 0);  // false failure probability 2^-72
}

}  // namespace
