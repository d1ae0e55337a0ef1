#include "oboro/ckks/sampling.hpp"

#include <algorithm>
#include <cmath>

#include "oboro/backend/cpu/poly_ops.hpp"
#include "oboro/util/error.hpp"
#include "oboro/util/simd_target.hpp"
#include "oboro/util/wipe.hpp"

namespace oboro::ckks {

SecretVector<int8_t> sample_ternary(math::Prng& prng, size_t n) {
    SecretVector<int8_t> s(n);
    // uniform_fill: the values of one uniform(3) per coefficient, without a call per value
    constexpr size_t kChunk = 1024;
    uint64_t draws[kChunk];  // secret: wiped below
    for (size_t b = 0; b < n; b += kChunk) {
        const size_t count = std::min(kChunk, n - b);
        prng.uniform_fill(3, draws, count);
        for (size_t j = 0; j < count; ++j) s[b + j] = int8_t(int(draws[j]) - 1);
    }
    wipe(draws, sizeof draws);
    return s;
}

SecretVector<int8_t> sample_sparse_ternary(math::Prng& prng, size_t n, int h) {
    if (h <= 0 || size_t(h) > n) raise<ParameterError>("sparse secret: hamming weight ", h, " not in 1..", n);
    SecretVector<int8_t> s(n, 0);
    // Floyd's algorithm: h distinct positions, each subset equally likely.
    for (size_t j = n - size_t(h); j < n; ++j) {
        const size_t t = size_t(prng.uniform(j + 1));
        const size_t pos = s[t] != 0 ? j : t;
        s[pos] = (prng.next_u32() & 1) ? 1 : -1;
    }
    return s;
}

namespace {
// Cumulative distribution of |X| for the rounded Gaussian of width sigma, cut at 6 sigma, in
// units of 2^-64: table[k] = floor(2^64 * P(|X| <= k)) for the folded distribution.
std::vector<uint64_t> folded_cdt(double sigma) {
    const int bound = int(gaussian_bound(sigma));
    std::vector<double> p(size_t(bound) + 1);
    double total = 0;
    for (int k = 0; k <= bound; ++k) {
        // P(round(X) = k) for X ~ N(0, sigma^2), folded onto k >= 0
        const double lo = (k - 0.5) / (sigma * std::sqrt(2.0)), hi = (k + 0.5) / (sigma * std::sqrt(2.0));
        const double mass = 0.5 * (std::erf(hi) - std::erf(lo));
        p[size_t(k)] = k == 0 ? mass : 2 * mass;
        total += p[size_t(k)];
    }
    std::vector<uint64_t> table;
    double acc = 0;
    for (int k = 0; k < bound; ++k) {
        acc += p[size_t(k)] / total;
        table.push_back(acc >= 1.0 ? UINT64_MAX : uint64_t(std::ldexp(acc, 64)));
    }
    return table;
}

// The inversion of the table (cdt_invert_variant): every sample compared with every entry in one
// pass per entry (no branch on the secret values), written once and compiled for each instruction
// set below, where the compiler vectorizes the comparisons (SSE2 has no 64-bit unsigned
// comparison: scalar there).
[[gnu::always_inline]] inline void cdt_magnitudes_body(const uint64_t* __restrict u, size_t count,
                                                       const uint64_t* __restrict table, size_t entries,
                                                       int64_t* __restrict mag) {
    for (size_t j = 0; j < count; ++j) mag[j] = 0;
    for (size_t t = 0; t < entries; ++t)
        for (size_t j = 0; j < count; ++j) mag[j] += u[j] >= table[t] ? 1 : 0;
}
void cdt_magnitudes_baseline(const uint64_t* u, size_t count, const uint64_t* table, size_t entries, int64_t* mag) {
    cdt_magnitudes_body(u, count, table, entries, mag);
}
}  // namespace

#if defined(__x86_64__) && defined(__GNUC__)
OBORO_SIMD_TARGET_BEGIN("avx2")
namespace {
void cdt_magnitudes_avx2(const uint64_t* u, size_t count, const uint64_t* table, size_t entries, int64_t* mag) {
    cdt_magnitudes_body(u, count, table, entries, mag);
}
}  // namespace
OBORO_SIMD_TARGET_END

OBORO_SIMD_TARGET_BEGIN("avx512f")
namespace {
void cdt_magnitudes_avx512(const uint64_t* u, size_t count, const uint64_t* table, size_t entries, int64_t* mag) {
    cdt_magnitudes_body(u, count, table, entries, mag);
}
}  // namespace
OBORO_SIMD_TARGET_END
#endif

CdtInvertFn cdt_invert_variant(math::ChachaIsa isa) {
    if (!math::cpu_runs(isa)) return nullptr;
    switch (isa) {
        case math::ChachaIsa::baseline: return cdt_magnitudes_baseline;
#if defined(__x86_64__) && defined(__GNUC__)
        case math::ChachaIsa::avx2: return cdt_magnitudes_avx2;
        case math::ChachaIsa::avx512: return cdt_magnitudes_avx512;
#else
        case math::ChachaIsa::avx2:
        case math::ChachaIsa::avx512: return nullptr;
#endif
    }
    return nullptr;
}

SecretVector<int64_t> sample_gaussian(math::Prng& prng, size_t n, double sigma) {
    SecretVector<int64_t> e(n);
    if (sigma == kErrorSigma) {
        // The error distribution: inversion of a precomputed cumulative table (about 20 entries)
        // scanned in full for every sample, so the time does not depend on the value drawn.
        static const std::vector<uint64_t> table = folded_cdt(kErrorSigma);
        // Per block of 64 samples the generator gives the first sample's word, the block's word
        // of 64 signs, then the other samples' words (the order that keys made from a seed depend
        // on). A block's words are drawn at once and inverted by the table's widest compilation.
        static const CdtInvertFn invert = math::widest_variant(cdt_invert_variant);  // chosen once per process
        constexpr size_t kBlock = 64;
        uint64_t words[kBlock + 1];  // secret: wiped below
        int64_t mag[kBlock];
        for (size_t b = 0; b < n; b += kBlock) {
            const size_t count = std::min(kBlock, n - b);
            prng.fill_u64(words, count + 1);
            const uint64_t signs = words[1];
            words[1] = words[0];  // the samples' words, now words[1 .. count]
            const uint64_t* u = words + 1;
            invert(u, count, table.data(), table.size(), mag);
            for (size_t j = 0; j < count; ++j) e[b + j] = mag[j] * (int64_t((signs >> j) & 1) * 2 - 1);
        }
        wipe(words, sizeof words);
        wipe(mag, sizeof mag);
        return e;
    }
    // Other widths (noise flooding): Box-Muller, two normals from two uniforms, tails cut at 6 sigma.
    const double bound = 6 * sigma;
    for (size_t i = 0; i < n; i += 2) {
        double z0, z1;
        do {
            const double u1 = 1.0 - prng.uniform_double();  // (0, 1]
            const double u2 = prng.uniform_double();
            const double r = sigma * std::sqrt(-2.0 * std::log(u1));
            z0 = r * std::cos(2 * M_PI * u2);
            z1 = r * std::sin(2 * M_PI * u2);
        } while (std::fabs(z0) > bound || std::fabs(z1) > bound);
        e[i] = std::llround(z0);
        if (i + 1 < n) e[i + 1] = std::llround(z1);
    }
    return e;
}

namespace {
template <typename T>
void small_to_limbs_of(std::span<const T> coeffs, uint64_t bound, uint64_t* out, const math::Modulus* mods,
                       size_t limbs) {
    // constant time: the coefficients are secret (key, error, encryption randomness)
    const size_t n = coeffs.size();
    for (size_t i = 0; i < limbs; ++i) backend::cpu::signed_to_limb(coeffs.data(), bound, mods[i], out + i * n, n);
}
}  // namespace

void small_to_limbs(std::span<const int8_t> coeffs, uint64_t* out, const math::Modulus* mods, size_t limbs) {
    small_to_limbs_of(coeffs, 128, out, mods, limbs);
}

void small_to_limbs(std::span<const int64_t> coeffs, uint64_t bound, uint64_t* out, const math::Modulus* mods,
                    size_t limbs) {
    small_to_limbs_of(coeffs, bound, out, mods, limbs);
}

void small_to_ntt(std::span<const int8_t> coeffs, uint64_t* out, const math::Modulus* mods,
                  const math::NttTables* tables, size_t limbs) {
    small_to_limbs(coeffs, out, mods, limbs);
    backend::cpu::ntt_forward(out, tables, limbs);
}

void small_to_ntt(std::span<const int64_t> coeffs, uint64_t bound, uint64_t* out, const math::Modulus* mods,
                  const math::NttTables* tables, size_t limbs) {
    small_to_limbs(coeffs, bound, out, mods, limbs);
    backend::cpu::ntt_forward(out, tables, limbs);
}

void sample_uniform(math::Prng& prng, uint64_t* out, const math::Modulus* mods, size_t limbs, size_t n) {
    for (size_t i = 0; i < limbs; ++i) prng.uniform_fill(mods[i].value, out + i * n, n);
}

void expand_uniform(const math::Seed& seed, uint64_t stream, uint64_t* out, const math::Modulus* mods, size_t limbs,
                    size_t n, uint64_t* limb_positions) {
    math::Prng prng(seed, stream);
    for (size_t i = 0; i < limbs; ++i) {
        if (limb_positions) limb_positions[i] = prng.position();
        sample_uniform(prng, out + i * n, mods + i, 1, n);
    }
}

}  // namespace oboro::ckks
