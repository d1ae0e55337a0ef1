// Cryptographic randomness.
//
// Seeds come from the operating system's CSPRNG (getrandom(2)); they are expanded with the
// ChaCha20 stream cipher (RFC 8439) used as a deterministic random bit generator. The same
// generator expands stored 32-byte seeds, so the uniformly random half of a key or of a
// symmetric ciphertext can be kept as its seed. rand(), mt19937 and friends are never used.
#pragma once

#include <array>
#include <cstdint>
#include <cstddef>

namespace oboro::math {

using Seed = std::array<uint8_t, 32>;

// 32 bytes from the OS CSPRNG. Throws oboro::Error if the OS cannot provide them.
Seed os_random_seed();

// Fills buf with bytes from the OS CSPRNG.
void os_random_bytes(uint8_t* buf, size_t len);

// The ChaCha20 block function: 64 bytes of keystream for (key, counter, nonce). Exposed for tests
// against the RFC 8439 vectors.
void chacha20_block(const uint32_t key[8], uint32_t counter, const uint32_t nonce[3], uint8_t out[64]);

// kChachaLanes consecutive blocks (counters counter .. counter + kChachaLanes - 1, which must not
// wrap), computed lane-parallel across blocks (AVX-512 and AVX2 with intrinsics, the state in
// registers; SSE2 as the compiler vectorizes it; chosen once per process for the CPU); the bytes are
// those of kChachaLanes calls of chacha20_block.
constexpr size_t kChachaLanes = 16;
void chacha20_blocks(const uint32_t key[8], uint32_t counter, const uint32_t nonce[3],
                     uint8_t out[64 * kChachaLanes]);

// Each compilation of chacha20_blocks, for tests (every one must give the same bytes): nullptr
// when this CPU cannot run that instruction set. baseline is the build's own target (SSE2 on x86-64).
enum class ChachaIsa { baseline, avx2, avx512 };
using ChachaBlocksFn = void (*)(const uint32_t key[8], uint32_t counter, const uint32_t nonce[3],
                                uint8_t out[64 * kChachaLanes]);
ChachaBlocksFn chacha20_blocks_variant(ChachaIsa isa);

// Whether this CPU (and its OS, which must save the vector registers) runs `isa`; the baseline
// always. The kernels compiled per ChachaIsa (ChaCha20's, the error sampler's table inversion)
// return their variant only where this holds.
bool cpu_runs(ChachaIsa isa);
// The widest of a kernel's compilations this CPU runs: `variant` (nullptr where the CPU lacks the
// instruction set, as chacha20_blocks_variant) tried from AVX-512 down to the baseline.
template <typename Fn> Fn widest_variant(Fn (*variant)(ChachaIsa)) {
    for (ChachaIsa isa : {ChachaIsa::avx512, ChachaIsa::avx2})
        if (Fn f = variant(isa)) return f;
    return variant(ChachaIsa::baseline);
}

class Prng {
public:
    // A generator seeded from the OS.
    Prng();
    // A deterministic generator expanding `seed` (stream `stream_id` of that seed).
    explicit Prng(const Seed& seed, uint64_t stream_id = 0);
    Prng(const Prng&) = default;
    Prng& operator=(const Prng&) = default;
    // Wipes the key and the unread keystream: from them every earlier output can be computed
    // again (ChaCha20 is a counter mode), and a key generator's outputs include the secret key.
    ~Prng();

    void fill(uint8_t* buf, size_t len);
    uint64_t next_u64();
    // out[0..count) = count calls of next_u64, the same values, without a call per value.
    void fill_u64(uint64_t* out, size_t count);
    uint32_t next_u32();
    // Uniform in [0, bound) by rejection sampling (no modulo bias).
    uint64_t uniform(uint64_t bound);
    // out[0..count) = count calls of uniform(bound), the same values, without a call per value
    // (with AVX-512, 8 candidate words at a time).
    void uniform_fill(uint64_t bound, uint64_t* out, size_t count);
    // Uniform double in [0, 1) with 53 random bits.
    double uniform_double();

    // The bytes of the stream handed out so far (a uniform_fill's rejected words included), and
    // the generator moved to the byte `position` of its stream: what it hands out next is what a
    // generator of the same seed and stream hands out after that many bytes. A key whose uniform
    // half is regenerated at each use records where each of its limbs begins.
    uint64_t position() const;
    void seek(uint64_t position);

private:
    // The keystream is produced kChachaLanes blocks at a time; the bytes handed out are the same
    // as block after block (the stored seeds of keys and ciphertexts depend on that).
    static constexpr size_t kBufferBytes = 64 * kChachaLanes;
    void refill();
    uint32_t key_[8];
    uint32_t nonce_[3];
    uint32_t counter_ = 0;
    alignas(64) uint8_t buffer_[kBufferBytes];
    size_t pos_ = kBufferBytes;
};

}  // namespace oboro::math
