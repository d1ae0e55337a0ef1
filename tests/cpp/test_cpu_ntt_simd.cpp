// The SIMD NTTs (AVX2: double precision below 2^50, 64-bit above; AVX-512 64-bit, and IFMA for primes below 2^50) against the scalar reference, bit for bit,
// including inputs at the lazy bounds (forward: [0, 4q), inverse: [0, 2q)). Each is skipped with a message on CPUs
// without its instruction set.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "oboro/backend/cpu/ntt_simd.hpp"
#include "oboro/backend/cpu/poly_ops.hpp"
#include "oboro/math/primes.hpp"

using namespace oboro;

namespace {
std::vector<uint64_t> random_words(size_t n, uint64_t bound, uint64_t seed) {
    std::mt19937_64 gen(seed);
    std::uniform_int_distribution<uint64_t> d(0, bound - 1);
    std::vector<uint64_t> v(n);
    for (auto& x : v) x = d(gen);
    return v;
}
}  // namespace

using NttKernel = void (*)(uint64_t*, const math::NttTables&);

// `forward` / `inverse` against the scalar NTT on every size and prime width up to max_bits,
// with inputs up to the lazy bounds and the largest word of each bound. The sizes fall below, at
// and above the cache block the transforms run their inner stages in (kNttBlockWords, 2048).
static void expect_matches_scalar(NttKernel forward, NttKernel inverse, int max_bits) {
    for (uint32_t n : {16u, 32u, 1024u, 2048u, 4096u, 8192u, 65536u}) {
        for (int bits : {30, 40, 41, 49, 50, 51, 60, 61, 62}) {
            if (bits > max_bits) continue;
            const uint64_t q = math::generate_ntt_primes(bits, n, 1)[0];
            const math::NttTables t(q, n);
            for (uint64_t bound : {q, 2 * q, 4 * q}) {
                auto a = random_words(n, bound, n * 131 + uint64_t(bits));
                a[0] = bound - 1;
                a[n / 2] = bound - 1;
                auto b = a;
                math::ntt_forward(a.data(), t);
                forward(b.data(), t);
                ASSERT_EQ(a, b) << "forward n=" << n << " bits=" << bits << " input bound " << bound / q << "q";
            }
            for (uint64_t bound : {q, 2 * q}) {
                auto a = random_words(n, bound, n * 137 + uint64_t(bits));
                a[n - 1] = bound - 1;
                a[n / 2 - 1] = bound - 1;
                auto b = a;
                math::ntt_inverse(a.data(), t);
                inverse(b.data(), t);
                ASSERT_EQ(a, b) << "inverse n=" << n << " bits=" << bits << " input bound " << bound / q << "q";
            }
        }
    }
}

TEST(NttSimd, MatchesScalarBitForBit) {
    if (!backend::cpu::simd_available()) GTEST_SKIP() << "SKIPPED: this CPU has no AVX-512 (the scalar NTT is used)";
    expect_matches_scalar(backend::cpu::ntt_forward_avx512, backend::cpu::ntt_inverse_avx512, 62);
}

TEST(NttSimd, Avx2MatchesScalarBitForBit) {
    if (!backend::cpu::avx2_available()) GTEST_SKIP() << "SKIPPED: this CPU has no AVX2 (the scalar NTT is used)";
    expect_matches_scalar(backend::cpu::ntt_forward_avx2, backend::cpu::ntt_inverse_avx2, 62);
}

TEST(NttSimd, IfmaMatchesScalarBitForBit) {
    if (!backend::cpu::ifma_available())
        GTEST_SKIP() << "SKIPPED: this CPU has no AVX-512 IFMA (the 64-bit AVX-512 NTT is used for every prime)";
    expect_matches_scalar(backend::cpu::ntt_forward_ifma, backend::cpu::ntt_inverse_ifma,
                          backend::cpu::kIfmaModulusBits);
}

TEST(NttSimd, DispatchCanBeTurnedOff) {
    backend::cpu::set_simd_enabled(false);
    EXPECT_STREQ(backend::cpu::ntt_implementation(), "scalar");
    backend::cpu::set_simd_enabled(true);
    EXPECT_STREQ(backend::cpu::ntt_implementation(), backend::cpu::ifma_available()   ? "avx512+ifma"
                                                     : backend::cpu::simd_available() ? "avx512"
                                                     : backend::cpu::avx2_available() ? "avx2"
                                                                                      : "scalar");
}
