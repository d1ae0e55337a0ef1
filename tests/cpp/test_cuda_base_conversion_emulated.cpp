// The CUDA fast base conversion kernels (base_conversion_kernels.hpp) through the CPU grid
// emulator, bit for bit against math::BaseConverter::convert / convert_centered: random bases from
// 1 to 17 source primes (17: the 128-bit sum is reduced midway), the converters of a real context
// (ModUp digits, ModDown from several special primes), non-contiguous targets, several polynomials.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cuda_emulated_util.hpp"
#include "oboro/backend/cuda/base_conversion_kernels.hpp"
#include "oboro/ckks/context.hpp"
#include "oboro/math/primes.hpp"
#include "oboro/math/random.hpp"

namespace {

namespace kernels = oboro::cuda::kernels;
namespace math = oboro::math;

// Runs the emulated conversion of `polys` polynomials (in: polys x k limbs), targets at out_limbs
// of polynomials of out_limb_count limbs (or contiguous when out_limbs is empty).
std::vector<uint64_t> emulated(const math::BaseConverter& c, bool centered, const std::vector<uint64_t>& in,
                               uint32_t polys, uint32_t n, const std::vector<uint32_t>& out_limbs = {},
                               uint32_t out_limb_count = 0) {
    const kernels::BaseConvHostData h(c);
    const uint32_t k = uint32_t(c.from().size()), m = uint32_t(c.to().size());
    if (out_limbs.empty()) out_limb_count = m;
    std::vector<uint64_t> out(size_t(polys) * out_limb_count * n, 0xABCD),
        scratch(kernels::base_conversion_scratch_words(polys, k, n), 0);
    kernels::BaseConvArgs a;
    a.conv = h.view();
    a.centered = centered;
    a.n = n;
    a.polys = polys;
    a.in = in.data();
    a.in_poly_stride = uint64_t(k) * n;
    a.out = out.data();
    a.out_poly_stride = uint64_t(out_limb_count) * n;
    a.out_limbs = out_limbs.empty() ? nullptr : out_limbs.data();
    a.scratch = scratch.data();
    oboro::test::cuda_emu::emulate_base_conversion(a);
    return out;
}

// The CPU converter on each polynomial.
std::vector<uint64_t> reference(const math::BaseConverter& c, bool centered, const std::vector<uint64_t>& in,
                                uint32_t polys, uint32_t n) {
    const size_t k = c.from().size(), m = c.to().size();
    std::vector<uint64_t> out(polys * m * n), scratch(k * n);
    for (uint32_t p = 0; p < polys; ++p) {
        if (centered) c.convert_centered(in.data() + p * k * n, n, out.data() + p * m * n, n, n, scratch.data());
        else c.convert(in.data() + p * k * n, n, out.data() + p * m * n, n, n, scratch.data());
    }
    return out;
}

// Random canonical residues, with 0, q-1, and the values around q/2 (where the centred
// representative switches sign) among them.
std::vector<uint64_t> random_input(const math::RnsBase& from, uint32_t polys, uint32_t n, uint8_t tag) {
    math::Seed s{};
    s[0] = tag;
    math::Prng prng(s);
    const size_t k = from.size();
    std::vector<uint64_t> v(polys * k * n);
    for (size_t r = 0; r < polys * k; ++r) {
        const uint64_t q = from[r % k];
        for (uint32_t c = 0; c < n; ++c) {
            uint64_t x = prng.uniform(q);
            if (c == 0) x = 0;
            if (c == 1) x = q - 1;
            if (c == 2) x = q / 2;
            if (c == 3) x = q / 2 + 1;
            v[r * n + c] = x;
        }
    }
    return v;
}

TEST(CudaBaseConversionEmulated, RandomBasesMatchCpu) {
    const uint32_t n = 64, polys = 3;
    for (uint32_t k : {1u, 2u, 3u, 7u, 17u})
        for (uint32_t m : {1u, 4u}) {
            // source and target primes distinct, of mixed sizes
            std::vector<uint64_t> from, to;
            const int sizes[] = {60, 50, 40, 61, 36, 58, 45};
            for (uint32_t i = 0; i < k; ++i) {
                std::vector<uint64_t> used = from;
                from.push_back(math::generate_ntt_primes(sizes[i % 7], n, 1, used)[0]);
            }
            for (uint32_t j = 0; j < m; ++j) {
                std::vector<uint64_t> used = from;
                used.insert(used.end(), to.begin(), to.end());
                to.push_back(math::generate_ntt_primes(sizes[(j + 3) % 7], n, 1, used)[0]);
            }
            const math::BaseConverter c{math::RnsBase(from), math::RnsBase(to)};
            const auto in = random_input(c.from(), polys, n, uint8_t(k * 10 + m));
            for (bool centered : {false, true}) {
                SCOPED_TRACE("k " + std::to_string(k) + " m " + std::to_string(m) + (centered ? " centred" : ""));
                ASSERT_EQ(emulated(c, centered, in, polys, n), reference(c, centered, in, polys, n));
            }
        }
}

// The conversions key switching uses, from a context with multi-prime digits and two special
// primes: every digit's ModUp conversion (targets written around the digit's own limbs in an
// extended polynomial, as mod_up lays them out) and ModDown's P -> Q.
TEST(CudaBaseConversionEmulated, ContextConvertersMatchCpu) {
    oboro::ckks::Parameters p;
    p.log_n = 7;
    p.q_bits = {60, 40, 40, 40, 40, 40};
    p.p_bits = {61, 61};
    p.dnum = 3;
    p.security = oboro::ckks::SecurityLevel::none;
    const auto ctx = oboro::ckks::Context::create(p);
    const uint32_t n = uint32_t(ctx->n()), polys = 2;
    size_t multi_prime_digits = 0;
    for (int level = ctx->max_level(); level >= 0; level -= 2) {
        const auto& lc = ctx->level(level);
        const uint32_t nq = uint32_t(level) + 1, ext = nq + uint32_t(ctx->p_count());
        for (const auto& d : lc.digits) {
            SCOPED_TRACE("level " + std::to_string(level) + " digit " + std::to_string(d.begin));
            const auto& c = d.to_others;
            multi_prime_digits += c.from().size() > 1;
            std::vector<uint32_t> limbs;  // every limb of the extended polynomial but the digit's
            for (uint32_t i = 0; i < ext; ++i)
                if (i < d.begin || i >= d.end) limbs.push_back(i);
            ASSERT_EQ(limbs.size(), c.to().size());
            const auto in = random_input(c.from(), polys, n, uint8_t(level * 8 + d.begin));
            const auto out = emulated(c, true, in, polys, n, limbs, ext);
            const auto expect = reference(c, true, in, polys, n);
            for (uint32_t q = 0; q < polys; ++q)
                for (size_t j = 0; j < limbs.size(); ++j)
                    for (uint32_t col = 0; col < n; ++col)
                        ASSERT_EQ(out[(size_t(q) * ext + limbs[j]) * n + col], expect[(q * limbs.size() + j) * n + col]);
            // the digit's own limbs are not touched
            for (uint32_t q = 0; q < polys; ++q)
                for (uint32_t col = 0; col < n; ++col) ASSERT_EQ(out[(size_t(q) * ext + d.begin) * n + col], 0xABCDu);
        }
        const auto in = random_input(lc.p_to_q.from(), polys, n, uint8_t(200 + level));
        EXPECT_EQ(emulated(lc.p_to_q, true, in, polys, n), reference(lc.p_to_q, true, in, polys, n));
    }
    EXPECT_GE(multi_prime_digits, 4u);
}

}  // namespace
