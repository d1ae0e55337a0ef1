#include "oboro/math/random.hpp"

#include <sys/random.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "oboro/util/error.hpp"
#include "oboro/util/simd_target.hpp"
#include "oboro/util/wipe.hpp"

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
inline uint64_t load_le64(const uint8_t* p) { return uint64_t(load_le32(p)) | uint64_t(load_le32(p + 4)) << 32; }
// One word store where the host is little-endian: four byte stores per word were most of the time
// of the lane-parallel blocks (the vectorizer cannot merge them across the lanes' stride).
inline void store_le32(uint8_t* p, uint32_t v) {
    if constexpr (std::endian::native == std::endian::little) {
        std::memcpy(p, &v, 4);
    } else {
        for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i));
    }
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

namespace {
// One quarter round on kChachaLanes independent states (row r of a state is x[r][0..lanes)).
inline void quarter_round_lanes(uint32_t* __restrict a, uint32_t* __restrict b, uint32_t* __restrict c,
                                uint32_t* __restrict d) {
    for (size_t l = 0; l < kChachaLanes; ++l) {
        a[l] += b[l]; d[l] ^= a[l]; d[l] = rotl(d[l], 16);
        c[l] += d[l]; b[l] ^= c[l]; b[l] = rotl(b[l], 12);
        a[l] += b[l]; d[l] ^= a[l]; d[l] = rotl(d[l], 8);
        c[l] += d[l]; b[l] ^= c[l]; b[l] = rotl(b[l], 7);
    }
}

// The lane-parallel blocks, written once and inlined (always) into one function per instruction
// set below, so that the compiler vectorizes the same loops for each of them.
[[gnu::always_inline]] inline void chacha20_blocks_body(const uint32_t key[8], uint32_t counter, const uint32_t nonce[3],
                                                        uint8_t out[64 * kChachaLanes]) {
    const uint32_t init[16] = {0x61707865, 0x3320646e, 0x79622d32, 0x6b206574,
                               key[0], key[1], key[2], key[3], key[4], key[5], key[6], key[7],
                               0, nonce[0], nonce[1], nonce[2]};
    alignas(64) uint32_t x[16][kChachaLanes];
    for (size_t w = 0; w < 16; ++w)
        for (size_t l = 0; l < kChachaLanes; ++l) x[w][l] = init[w];
    for (size_t l = 0; l < kChachaLanes; ++l) x[12][l] = counter + uint32_t(l);
    for (int i = 0; i < 10; ++i) {
        quarter_round_lanes(x[0], x[4], x[8], x[12]);
        quarter_round_lanes(x[1], x[5], x[9], x[13]);
        quarter_round_lanes(x[2], x[6], x[10], x[14]);
        quarter_round_lanes(x[3], x[7], x[11], x[15]);
        quarter_round_lanes(x[0], x[5], x[10], x[15]);
        quarter_round_lanes(x[1], x[6], x[11], x[12]);
        quarter_round_lanes(x[2], x[7], x[8], x[13]);
        quarter_round_lanes(x[3], x[4], x[9], x[14]);
    }
    for (size_t l = 0; l < kChachaLanes; ++l) {
        uint8_t* o = out + 64 * l;
        for (size_t w = 0; w < 16; ++w) {
            const uint32_t v = x[w][l] + (w == 12 ? counter + uint32_t(l) : init[w]);
            store_le32(o + 4 * w, v);
        }
    }
}

void chacha20_blocks_baseline(const uint32_t key[8], uint32_t counter, const uint32_t nonce[3], uint8_t out[64 * kChachaLanes]) {
    chacha20_blocks_body(key, counter, nonce, out);
}
}  // namespace

// The AVX2 and AVX-512 versions, compiled for their instruction set by simd_target.hpp's region
// (not GCC's target_clones: Clang 14 accepts that attribute but, on a function declared in a
// header and called in this file, silently emits only the first clone, AVX-512, under the plain
// name). They are called only after the run-time check of chacha20_blocks_variant.
#if defined(__x86_64__) && defined(__GNUC__)
OBORO_SIMD_TARGET_BEGIN("avx2")
namespace {
// Eight blocks at a time with the state in registers, as the AVX-512 version below: word w of
// every block in one vector, rotations by 16 and 8 as byte shuffles (AVX2 has no vector rotate),
// the result transposed in registers. The compiler's vectorization of chacha20_blocks_body keeps
// the state in memory: on an AMD EPYC (Zen 3) 7.6 ns per 8 bytes of keystream against 4.2-4.4
// with this.
inline __m256i rotl_avx2(__m256i v, int s) { return _mm256_or_si256(_mm256_slli_epi32(v, s), _mm256_srli_epi32(v, 32 - s)); }

inline void quarter_round_avx2(__m256i& a, __m256i& b, __m256i& c, __m256i& d, __m256i rot16, __m256i rot8) {
    a = _mm256_add_epi32(a, b); d = _mm256_shuffle_epi8(_mm256_xor_si256(d, a), rot16);
    c = _mm256_add_epi32(c, d); b = rotl_avx2(_mm256_xor_si256(b, c), 12);
    a = _mm256_add_epi32(a, b); d = _mm256_shuffle_epi8(_mm256_xor_si256(d, a), rot8);
    c = _mm256_add_epi32(c, d); b = rotl_avx2(_mm256_xor_si256(b, c), 7);
}

// Rows r[0..8) (word w0 + k of the eight blocks) to the eight blocks' words w0 .. w0 + 7, stored
// at out + 64 * block + 4 * w0.
inline void store_transposed_avx2(const __m256i* r, uint8_t* out, int w0) {
    __m256i t[8], u[8];
    for (int k = 0; k < 8; k += 2) {
        t[k] = _mm256_unpacklo_epi32(r[k], r[k + 1]);      // blocks 0, 1 | 4, 5 of rows k, k + 1
        t[k + 1] = _mm256_unpackhi_epi32(r[k], r[k + 1]);  // blocks 2, 3 | 6, 7
    }
    for (int g = 0; g < 8; g += 4) {  // rows g .. g + 3 of block b | b + 4 in u[g + b]
        u[g + 0] = _mm256_unpacklo_epi64(t[g], t[g + 2]);
        u[g + 1] = _mm256_unpackhi_epi64(t[g], t[g + 2]);
        u[g + 2] = _mm256_unpacklo_epi64(t[g + 1], t[g + 3]);
        u[g + 3] = _mm256_unpackhi_epi64(t[g + 1], t[g + 3]);
    }
    for (int b = 0; b < 4; ++b) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 64 * b + 4 * w0), _mm256_permute2x128_si256(u[b], u[4 + b], 0x20));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 64 * (b + 4) + 4 * w0), _mm256_permute2x128_si256(u[b], u[4 + b], 0x31));
    }
}

// uniform_fill's rejection sampling, 4 candidate words at a time (as accept_below_avx512 does 8):
// masked, compared with the bound, and the accepted ones moved to the front of the vector by a
// permutation of its 32-bit halves looked up from the 4-bit mask, then stored whole; the lanes
// past the accepted ones are overwritten by the next group or by the caller's scalar loop, so at
// least 4 words must be free at out + written. AVX2 compares signed words only: the bound and
// the masked words must be below 2^63 (uniform_fill checks it).
size_t accept_below_avx2(const uint8_t* in, size_t groups, uint64_t mask, uint64_t bound, uint64_t* out,
                         size_t max_out, size_t* groups_done) {
    // for each mask of accepted lanes, the 32-bit halves of those lanes first, in order
    static constexpr auto kCompress = [] {
        std::array<std::array<int32_t, 8>, 16> table{};
        for (int keep = 0; keep < 16; ++keep) {
            int next = 0;
            for (int lane = 0; lane < 4; ++lane)
                if (keep >> lane & 1) {
                    table[keep][next++] = 2 * lane;
                    table[keep][next++] = 2 * lane + 1;
                }
        }
        return table;
    }();
    const __m256i vmask = _mm256_set1_epi64x(int64_t(mask)), vbound = _mm256_set1_epi64x(int64_t(bound));
    size_t written = 0, g = 0;
    for (; g < groups && max_out - written >= 4; ++g) {
        const __m256i v = _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + 32 * g)), vmask);
        const int keep = _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(vbound, v)));
        const __m256i order = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kCompress[size_t(keep)].data()));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + written), _mm256_permutevar8x32_epi32(v, order));
        written += size_t(std::popcount(unsigned(keep)));
    }
    *groups_done = g;
    return written;
}

void chacha20_blocks_avx2(const uint32_t key[8], uint32_t counter, const uint32_t nonce[3], uint8_t out[64 * kChachaLanes]) {
    static_assert(kChachaLanes % 8 == 0, "eight blocks per pass of 256-bit vectors");
    const uint32_t init[16] = {0x61707865, 0x3320646e, 0x79622d32, 0x6b206574,
                               key[0], key[1], key[2], key[3], key[4], key[5], key[6], key[7],
                               counter, nonce[0], nonce[1], nonce[2]};
    const __m256i rot16 = _mm256_setr_epi8(2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13,
                                           2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13);
    const __m256i rot8 = _mm256_setr_epi8(3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14,
                                          3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14);
    for (size_t pass = 0; pass < kChachaLanes / 8; ++pass) {
        const __m256i counters = _mm256_add_epi32(_mm256_set1_epi32(int(init[12] + 8 * pass)),
                                                  _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        __m256i x[16];
        for (int w = 0; w < 16; ++w) x[w] = w == 12 ? counters : _mm256_set1_epi32(int(init[w]));
        for (int i = 0; i < 10; ++i) {
            quarter_round_avx2(x[0], x[4], x[8], x[12], rot16, rot8);
            quarter_round_avx2(x[1], x[5], x[9], x[13], rot16, rot8);
            quarter_round_avx2(x[2], x[6], x[10], x[14], rot16, rot8);
            quarter_round_avx2(x[3], x[7], x[11], x[15], rot16, rot8);
            quarter_round_avx2(x[0], x[5], x[10], x[15], rot16, rot8);
            quarter_round_avx2(x[1], x[6], x[11], x[12], rot16, rot8);
            quarter_round_avx2(x[2], x[7], x[8], x[13], rot16, rot8);
            quarter_round_avx2(x[3], x[4], x[9], x[14], rot16, rot8);
        }
        for (int w = 0; w < 16; ++w) x[w] = _mm256_add_epi32(x[w], w == 12 ? counters : _mm256_set1_epi32(int(init[w])));
        uint8_t* o = out + 64 * 8 * pass;
        store_transposed_avx2(x, o, 0);
        store_transposed_avx2(x + 8, o, 8);
    }
}
}  // namespace
OBORO_SIMD_TARGET_END

OBORO_SIMD_TARGET_BEGIN("avx512f")
namespace {
// The 16 blocks with the state in registers (word w of every block in one vector, rotations by
// vprold) and the result transposed in registers to block order: the compiler's vectorization of
// chacha20_blocks_body keeps the state in memory and stores the output word by word, at about
// half this speed.
inline void quarter_round_avx512(__m512i& a, __m512i& b, __m512i& c, __m512i& d) {
    a = _mm512_add_epi32(a, b); d = _mm512_rol_epi32(_mm512_xor_si512(d, a), 16);
    c = _mm512_add_epi32(c, d); b = _mm512_rol_epi32(_mm512_xor_si512(b, c), 12);
    a = _mm512_add_epi32(a, b); d = _mm512_rol_epi32(_mm512_xor_si512(d, a), 8);
    c = _mm512_add_epi32(c, d); b = _mm512_rol_epi32(_mm512_xor_si512(b, c), 7);
}

void chacha20_blocks_avx512(const uint32_t key[8], uint32_t counter, const uint32_t nonce[3], uint8_t out[64 * kChachaLanes]) {
    static_assert(kChachaLanes == 16, "one 32-bit lane of a 512-bit vector per block");
    const uint32_t init[16] = {0x61707865, 0x3320646e, 0x79622d32, 0x6b206574,
                               key[0], key[1], key[2], key[3], key[4], key[5], key[6], key[7],
                               counter, nonce[0], nonce[1], nonce[2]};
    __m512i start[16], x[16];
    for (int w = 0; w < 16; ++w) start[w] = _mm512_set1_epi32(int(init[w]));
    start[12] = _mm512_add_epi32(start[12], _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    for (int w = 0; w < 16; ++w) x[w] = start[w];
    for (int i = 0; i < 10; ++i) {
        quarter_round_avx512(x[0], x[4], x[8], x[12]);
        quarter_round_avx512(x[1], x[5], x[9], x[13]);
        quarter_round_avx512(x[2], x[6], x[10], x[14]);
        quarter_round_avx512(x[3], x[7], x[11], x[15]);
        quarter_round_avx512(x[0], x[5], x[10], x[15]);
        quarter_round_avx512(x[1], x[6], x[11], x[12]);
        quarter_round_avx512(x[2], x[7], x[8], x[13]);
        quarter_round_avx512(x[3], x[4], x[9], x[14]);
    }
    for (int w = 0; w < 16; ++w) x[w] = _mm512_add_epi32(x[w], start[w]);
    // Transpose the 16 x 16 words (rows: words, columns: blocks). t: pairs of rows interleaved;
    // u[4g + c]: rows 4g..4g+3 of the columns c, c+4, c+8, c+12 (one per 128-bit lane).
    __m512i t[16], u[16];
    for (int r = 0; r < 16; r += 2) {
        t[r] = _mm512_unpacklo_epi32(x[r], x[r + 1]);
        t[r + 1] = _mm512_unpackhi_epi32(x[r], x[r + 1]);
    }
    for (int g = 0; g < 4; ++g) {
        const __m512i* tg = t + 4 * g;
        u[4 * g + 0] = _mm512_unpacklo_epi64(tg[0], tg[2]);
        u[4 * g + 1] = _mm512_unpackhi_epi64(tg[0], tg[2]);
        u[4 * g + 2] = _mm512_unpacklo_epi64(tg[1], tg[3]);
        u[4 * g + 3] = _mm512_unpackhi_epi64(tg[1], tg[3]);
    }
    for (int c = 0; c < 4; ++c) {
        // rows 0-7 and 8-15 of the columns c and c + 8 (lanes 0, 2), c + 4 and c + 12 (lanes 1, 3)
        const __m512i lo_even = _mm512_shuffle_i32x4(u[c], u[4 + c], 0x88), lo_odd = _mm512_shuffle_i32x4(u[c], u[4 + c], 0xdd);
        const __m512i hi_even = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0x88), hi_odd = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0xdd);
        _mm512_storeu_si512(out + 64 * c, _mm512_shuffle_i32x4(lo_even, hi_even, 0x88));
        _mm512_storeu_si512(out + 64 * (c + 8), _mm512_shuffle_i32x4(lo_even, hi_even, 0xdd));
        _mm512_storeu_si512(out + 64 * (c + 4), _mm512_shuffle_i32x4(lo_odd, hi_odd, 0x88));
        _mm512_storeu_si512(out + 64 * (c + 12), _mm512_shuffle_i32x4(lo_odd, hi_odd, 0xdd));
    }
}

// uniform_fill's rejection sampling, 8 candidate words at a time: masked, compared with the
// bound, and the accepted ones stored in order by one compress store.
size_t accept_below_avx512(const uint8_t* in, size_t groups, uint64_t mask, uint64_t bound, uint64_t* out,
                           size_t max_out, size_t* groups_done) {
    const __m512i vmask = _mm512_set1_epi64(int64_t(mask)), vbound = _mm512_set1_epi64(int64_t(bound));
    size_t written = 0, g = 0;
    for (; g < groups && max_out - written >= 8; ++g) {
        const __m512i v = _mm512_and_si512(_mm512_loadu_si512(in + 64 * g), vmask);
        const __mmask8 keep = _mm512_cmplt_epu64_mask(v, vbound);
        _mm512_mask_compressstoreu_epi64(out + written, keep, v);
        written += size_t(std::popcount(unsigned(keep)));
    }
    *groups_done = g;
    return written;
}
}  // namespace
OBORO_SIMD_TARGET_END
#endif

bool cpu_runs(ChachaIsa isa) {
    switch (isa) {
        case ChachaIsa::baseline: return true;
#if defined(__x86_64__) && defined(__GNUC__)
        // __builtin_cpu_supports also checks that the OS saves the vector registers.
        case ChachaIsa::avx2: return __builtin_cpu_supports("avx2");
        case ChachaIsa::avx512: return __builtin_cpu_supports("avx512f");
#else
        case ChachaIsa::avx2:
        case ChachaIsa::avx512: return false;
#endif
    }
    return false;
}

ChachaBlocksFn chacha20_blocks_variant(ChachaIsa isa) {
    if (!cpu_runs(isa)) return nullptr;
    switch (isa) {
        case ChachaIsa::baseline: return chacha20_blocks_baseline;
#if defined(__x86_64__) && defined(__GNUC__)
        case ChachaIsa::avx2: return chacha20_blocks_avx2;
        case ChachaIsa::avx512: return chacha20_blocks_avx512;
#else
        case ChachaIsa::avx2:
        case ChachaIsa::avx512: return nullptr;
#endif
    }
    return nullptr;
}

void chacha20_blocks(const uint32_t key[8], uint32_t counter, const uint32_t nonce[3], uint8_t out[64 * kChachaLanes]) {
    // Chosen once per process, the widest the CPU runs.
    static const ChachaBlocksFn best = widest_variant(chacha20_blocks_variant);
    best(key, counter, nonce, out);
}

Prng::Prng() : Prng(os_random_seed(), 0) {}

Prng::Prng(const Seed& seed, uint64_t stream_id) {
    for (int i = 0; i < 8; ++i) key_[i] = load_le32(seed.data() + 4 * i);
    nonce_[0] = 0;
    nonce_[1] = uint32_t(stream_id);
    nonce_[2] = uint32_t(stream_id >> 32);
}

Prng::~Prng() {
    wipe(key_, sizeof(key_));
    wipe(nonce_, sizeof(nonce_));
    wipe(buffer_, sizeof(buffer_));
}

void Prng::refill() {
    if (counter_ <= UINT32_MAX - (kChachaLanes - 1)) {
        chacha20_blocks(key_, counter_, nonce_, buffer_);
        counter_ += uint32_t(kChachaLanes);
        if (counter_ == 0) ++nonce_[0];
    } else {
        // The counter wraps inside this batch: block by block, moving to the next nonce word
        // after 2^32 blocks (as a generator that makes one block at a time would).
        for (size_t b = 0; b < kChachaLanes; ++b) {
            chacha20_block(key_, counter_, nonce_, buffer_ + 64 * b);
            if (++counter_ == 0) ++nonce_[0];
        }
    }
    pos_ = 0;
}

uint64_t Prng::position() const {
    // counter_ (with nonce_[0] above it: refill's wrap) is the block after the buffer's; before
    // the first refill it is 0 with the buffer spent, and the sum wraps to 0.
    const uint64_t next_block = uint64_t(nonce_[0]) << 32 | counter_;
    return next_block * 64 - kBufferBytes + pos_;
}

void Prng::seek(uint64_t position) {
    const uint64_t block = position / 64;
    counter_ = uint32_t(block);
    nonce_[0] = uint32_t(block >> 32);
    refill();
    pos_ = size_t(position % 64);
}

void Prng::fill(uint8_t* buf, size_t len) {
    while (len > 0) {
        if (pos_ == kBufferBytes) refill();
        const size_t take = std::min(len, kBufferBytes - pos_);
        std::memcpy(buf, buffer_ + pos_, take);
        pos_ += take;
        buf += take;
        len -= take;
    }
}

uint64_t Prng::next_u64() {
    if (pos_ + 8 <= kBufferBytes) {  // the common case: no refill inside the word
        const uint64_t v = load_le64(buffer_ + pos_);
        pos_ += 8;
        return v;
    }
    uint8_t b[8];
    fill(b, 8);
    return load_le64(b);
}

void Prng::fill_u64(uint64_t* out, size_t count) {
    size_t i = 0;
    while (i < count) {
        if (pos_ + 8 > kBufferBytes) {  // a word across the refill: next_u64's slow path
            out[i++] = next_u64();
            continue;
        }
        const size_t words = std::min(count - i, (kBufferBytes - pos_) / 8);
        for (size_t k = 0; k < words; ++k) out[i + k] = load_le64(buffer_ + pos_ + 8 * k);
        pos_ += 8 * words;
        i += words;
    }
}

uint32_t Prng::next_u32() {
    if (pos_ + 4 <= kBufferBytes) {
        const uint32_t v = load_le32(buffer_ + pos_);
        pos_ += 4;
        return v;
    }
    uint8_t b[4];
    fill(b, 4);
    return load_le32(b);
}

namespace {
// The bits uniform(bound) draws: as many as bound - 1 has.
uint64_t draw_mask(uint64_t bound) {
    uint64_t mask = bound - 1;
    mask |= mask >> 1; mask |= mask >> 2; mask |= mask >> 4;
    mask |= mask >> 8; mask |= mask >> 16; mask |= mask >> 32;
    return mask;
}
}  // namespace

uint64_t Prng::uniform(uint64_t bound) {
    if (bound <= 1) return 0;
    // Draw as many bits as bound needs and reject values >= bound: no modulo bias, and for the
    // NTT primes (just below a power of two) almost no draw is rejected.
    const uint64_t mask = draw_mask(bound);
    uint64_t v;
    do { v = next_u64() & mask; } while (v >= bound);
    return v;
}

void Prng::uniform_fill(uint64_t bound, uint64_t* out, size_t count) {
    if (bound <= 1) {
        std::fill(out, out + count, 0);
        return;
    }
    const uint64_t mask = draw_mask(bound);
#if defined(__x86_64__) && defined(__GNUC__)
    static const bool avx512 = cpu_runs(ChachaIsa::avx512);
    static const bool avx2 = cpu_runs(ChachaIsa::avx2);
    const bool avx2_compares = avx2 && !avx512 && bound < (uint64_t(1) << 63);
#endif
    size_t i = 0;
    while (i < count) {
        // Groups of 8 words while 8 more values are wanted (the same words taken in the same
        // order as one at a time: a group can only complete what is left).
#if defined(__x86_64__) && defined(__GNUC__)
        if (avx512) {
            size_t groups = 0;
            i += accept_below_avx512(buffer_ + pos_, (kBufferBytes - pos_) / 64, mask, bound, out + i, count - i, &groups);
            pos_ += 64 * groups;
        } else if (avx2_compares) {
            size_t groups = 0;
            i += accept_below_avx2(buffer_ + pos_, (kBufferBytes - pos_) / 32, mask, bound, out + i, count - i, &groups);
            pos_ += 32 * groups;
        }
#endif
        // Whole words straight from the buffer, then one next_u64 for the refill (or a word that
        // straddles it).
        // Branch-free: every word is written, and kept (i advances) when it is below the bound.
        // For a prime just above a power of two half the words are rejected, at random, and a
        // branch on each mispredicted about every other word.
        while (i < count && pos_ + 8 <= kBufferBytes) {
            const uint64_t v = load_le64(buffer_ + pos_) & mask;
            pos_ += 8;
            out[i] = v;
            i += v < bound ? 1 : 0;
        }
        if (i < count) {
            const uint64_t v = next_u64() & mask;
            if (v < bound) out[i++] = v;
        }
    }
}

double Prng::uniform_double() { return double(next_u64() >> 11) * 0x1.0p-53; }

}  // namespace oboro::math
