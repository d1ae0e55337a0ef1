// Known answers: digests (XXH64, io/checksum.hpp) of deterministic outputs, recorded in this file.
// Every build runs them, whatever its compiler, flags and CPU: scripts/test.sh builds with GCC and
// with Clang (and its sanitizers), so they show that both compile oboro to the same results, bit
// for bit, and that every instruction set's kernels on this CPU agree with them (the other SIMD
// tests compare the kernels with each other; these compare them with fixed values too).
//
// Covered: the NTT (forward and inverse, each ISA's, at several sizes and prime sizes), ChaCha20
// and the Prng (each compilation of the lane-parallel blocks), the samplers (ternary, sparse,
// Gaussian by table and by Box-Muller, the uniform expansion of a seed), every element-wise kernel
// of every table, and the encoder (encoding fixed values at S1, and decoding them).
//
// The inputs come from splitmix64 (below), not from <random>, whose distributions may differ
// between standard libraries. A digest that changes on purpose (an algorithm that gives other
// outputs) is re-recorded by running this test with OBORO_PRINT_DIGESTS=1, which prints the
// values to paste; a digest that changes otherwise is a bug.
#include <gtest/gtest.h>

#include <cinttypes>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "oboro/backend/cpu/eltwise.hpp"
#include "oboro/backend/cpu/ntt_simd.hpp"
#include "oboro/backend/cpu/poly_ops.hpp"
#include "oboro/ckks/context.hpp"
#include "oboro/ckks/encoder.hpp"
#include "oboro/ckks/sampling.hpp"
#include "oboro/io/checksum.hpp"
#include "oboro/math/modarith.hpp"
#include "oboro/math/ntt.hpp"
#include "oboro/math/primes.hpp"
#include "oboro/math/random.hpp"
#include "oboro/math/rns.hpp"

using namespace oboro;
using backend::cpu::EltwiseKernels;
using backend::cpu::Isa;

namespace {

// The inputs: a fixed, portable sequence.
struct SplitMix64 {
    uint64_t s;
    uint64_t next() {
        uint64_t z = (s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    std::vector<uint64_t> below(size_t n, uint64_t bound) {
        std::vector<uint64_t> v(n);
        for (auto& x : v) x = next() % bound;
        return v;
    }
};

// XXH64 chained over every piece added (each piece's digest seeds the next).
struct Digest {
    uint64_t h = 0;
    template <class T> void add(const T* p, size_t count) { h = io::xxh64(p, count * sizeof(T), h); }
    template <class T, class A> void add(const std::vector<T, A>& v) { add(v.data(), v.size()); }
};

// Compares with the recorded digest, or prints it (OBORO_PRINT_DIGESTS=1: re-recording).
void expect_digest(const char* name, uint64_t got, uint64_t want) {
    if (std::getenv("OBORO_PRINT_DIGESTS")) std::printf("digest %s: 0x%016" PRIx64 "\n", name, got);
    EXPECT_EQ(got, want) << name << ": got 0x" << std::hex << got << ", recorded 0x" << want;
}

const char* isa_name(Isa isa) {
    switch (isa) {
        case Isa::scalar: return "scalar";
        case Isa::avx2: return "avx2";
        case Isa::avx512: return "avx512";
        case Isa::avx512ifma: return "avx512ifma";
    }
    return "?";
}

// The ISAs this CPU runs (a table exists), scalar first.
std::vector<Isa> cpu_isas() {
    std::vector<Isa> out;
    for (Isa isa : {Isa::scalar, Isa::avx2, Isa::avx512, Isa::avx512ifma}) {
        if (backend::cpu::eltwise_kernels(isa)) out.push_back(isa);
        else std::printf("note: this CPU has no %s; its kernels are not checked here\n", isa_name(isa));
    }
    return out;
}

// ---- NTT ---------------------------------------------------------------------------------------

// Forward then inverse of fixed inputs for N = 2^4 .. 2^16 and primes of 30, 40 (IFMA's range),
// 50 and 60 bits: the forward outputs and the round trip (which must give the input back).
TEST(KnownAnswers, Ntt) {
    Digest d;
    std::vector<std::vector<uint64_t>> inputs;
    std::vector<math::NttTables> tables;
    for (int log_n : {4, 10, 13, 16}) {
        for (int bits : {30, 40, 50, 60}) {
            const uint32_t n = uint32_t(1) << log_n;
            const uint64_t q = math::generate_ntt_primes(bits, n, 1)[0];
            tables.emplace_back(q, n);
            SplitMix64 g{uint64_t(log_n * 100 + bits)};
            inputs.push_back(g.below(n, q));
            d.add(&q, 1);
        }
    }
    for (Isa isa : cpu_isas()) {
        Digest di = d;
        for (size_t k = 0; k < tables.size(); ++k) {
            const auto f = backend::cpu::ntt_functions(tables[k].n < 16 ? Isa::scalar : isa, tables[k].q);
            std::vector<uint64_t> a = inputs[k];
            f.forward(a.data(), tables[k]);
            di.add(a);
            f.inverse(a.data(), tables[k]);
            ASSERT_EQ(a, inputs[k]) << isa_name(isa) << " round trip, n=" << tables[k].n << " q=" << tables[k].q;
        }
        expect_digest((std::string("ntt ") + isa_name(isa)).c_str(), di.h, 0x62a572b85c435bfbull);
    }
}

// ---- randomness --------------------------------------------------------------------------------

// The keystream of a fixed seed: every compilation of chacha20_blocks, the one-block function,
// and the Prng's bytes, words, bounded integers and doubles.
TEST(KnownAnswers, ChaCha20AndPrng) {
    const uint32_t key[8] = {0x03020100, 0x07060504, 0x0b0a0908, 0x0f0e0d0c, 0x13121110, 0x17161514, 0x1b1a1918,
                             0x1f1e1d1c};
    const uint32_t nonce[3] = {0x09000000, 0x4a000000, 0};
    for (auto isa : {math::ChachaIsa::baseline, math::ChachaIsa::avx2, math::ChachaIsa::avx512}) {
        const math::ChachaBlocksFn blocks = math::chacha20_blocks_variant(isa);
        if (!blocks) continue;
        Digest d;
        std::vector<uint8_t> out(64 * math::kChachaLanes);
        for (uint32_t counter : {0u, 1u, 1000u}) {
            blocks(key, counter, nonce, out.data());
            d.add(out);
        }
        expect_digest("chacha20_blocks", d.h, 0xab06c8483518260full);
    }
    Digest one;
    uint8_t block[64];
    for (uint32_t counter = 0; counter < 3; ++counter) {
        math::chacha20_block(key, counter, nonce, block);
        one.add(block, 64);
    }
    expect_digest("chacha20_block", one.h, 0x1081905dec185b92ull);

    math::Seed seed;
    for (size_t i = 0; i < seed.size(); ++i) seed[i] = uint8_t(i * 7 + 1);
    Digest d;
    for (uint64_t stream : {uint64_t(0), uint64_t(5), uint64_t(1) << 40}) {
        math::Prng p(seed, stream);
        std::vector<uint8_t> bytes(3000);
        p.fill(bytes.data(), bytes.size());
        d.add(bytes);
        std::vector<uint64_t> words;
        for (int i = 0; i < 100; ++i) words.push_back(p.next_u64());
        for (int i = 0; i < 100; ++i) words.push_back(p.next_u32());
        for (uint64_t bound : {uint64_t(3), uint64_t(1000003), (uint64_t(1) << 61) - 1})
            for (int i = 0; i < 100; ++i) words.push_back(p.uniform(bound));
        d.add(words);
        std::vector<double> doubles;
        for (int i = 0; i < 100; ++i) doubles.push_back(p.uniform_double());
        d.add(doubles);
    }
    expect_digest("prng", d.h, 0x1ec0a7ecf9434194ull);
}

// The samplers from a fixed seed: secrets, errors (the table sampler of sigma 3.19 and Box-Muller
// for flooding widths: floating point), the uniform polynomial a seed expands to, and
// small_to_ntt.
TEST(KnownAnswers, Sampling) {
    math::Seed seed;
    for (size_t i = 0; i < seed.size(); ++i) seed[i] = uint8_t(255 - 3 * i);
    const size_t n = 4096;
    math::Prng p(seed, 1);
    Digest d;
    d.add(ckks::sample_ternary(p, n));
    d.add(ckks::sample_sparse_ternary(p, n, 192));
    d.add(ckks::sample_gaussian(p, n));
    d.add(ckks::sample_gaussian(p, n, 1048576.0));
    std::vector<math::Modulus> mods;
    std::vector<math::NttTables> tables;
    for (int bits : {60, 40, 40}) {
        const auto qs = math::generate_ntt_primes(bits, n, 2);
        const uint64_t q = qs[mods.size() % 2];
        mods.emplace_back(q);
        tables.emplace_back(q, uint32_t(n));
    }
    std::vector<uint64_t> poly(mods.size() * n);
    ckks::expand_uniform(seed, 7, poly.data(), mods.data(), mods.size(), n);
    d.add(poly);
    ckks::small_to_ntt(ckks::sample_gaussian(p, n), ckks::gaussian_bound(ckks::kErrorSigma), poly.data(), mods.data(), tables.data(), mods.size());
    d.add(poly);
    expect_digest("sampling", d.h, 0xca12a11b006f765bull);
}

// ---- element-wise kernels ----------------------------------------------------------------------

// Every kernel of every table this CPU runs, on fixed data modulo a 40-bit prime (the IFMA
// kernels' range) and a 60-bit one, at a length that is not a multiple of any vector width:
// one digest for all tables.
TEST(KnownAnswers, EltwiseKernels) {
    const size_t n = 1029;
    for (Isa isa : cpu_isas()) {
        const EltwiseKernels& k = *backend::cpu::eltwise_kernels(isa);
        Digest d;
        for (int bits : {40, 60}) {
            const uint64_t q = math::generate_ntt_primes(bits, 1024, 1)[0];
            const math::Modulus m(q);
            SplitMix64 g{uint64_t(bits)};
            const auto x = g.below(n, q), y = g.below(n, q), z = g.below(n, q), any = g.below(n, ~uint64_t(0));
            const auto acc_in = g.below(n, 2 * q);
            const uint64_t w = g.next() % q, ws = math::shoup_precompute(w, q);
            std::vector<uint64_t> o(n), o1(n), o2(n);
            k.add(o.data(), x.data(), y.data(), q, n), d.add(o);
            k.sub(o.data(), x.data(), y.data(), q, n), d.add(o);
            k.add_stream(o.data(), x.data(), y.data(), q, n), d.add(o);
            k.sub_stream(o.data(), x.data(), y.data(), q, n), d.add(o);
            k.negate(o.data(), x.data(), q, n), d.add(o);
            k.add_scalar(o.data(), x.data(), w, q, n), d.add(o);
            k.mul(o.data(), x.data(), y.data(), m, n), d.add(o);
            k.mul_stream(o.data(), x.data(), y.data(), m, n), d.add(o);
            o = acc_in;
            k.mul_add(o.data(), x.data(), y.data(), m, n), d.add(o);
            k.mul_scalar(o.data(), any.data(), w, ws, q, n), d.add(o);
            k.sub_mul_scalar(o.data(), x.data(), y.data(), w, ws, q, n), d.add(o);
            o = z;
            k.mul_scalar_add(o.data(), any.data(), w, ws, q, n), d.add(o);
            k.tensor(o.data(), o1.data(), o2.data(), x.data(), y.data(), z.data(), x.data(), m, n);
            d.add(o), d.add(o1), d.add(o2);
            k.tensor_stream(o.data(), o1.data(), o2.data(), z.data(), x.data(), y.data(), z.data(), m, n);
            d.add(o), d.add(o1), d.add(o2);
            // the key-switching inner product over 3 and 20 terms, then accumulated once more
            std::vector<std::vector<uint64_t>> rows;
            for (int j = 0; j < 60; ++j) rows.push_back(g.below(n, q));
            for (size_t terms : {size_t(3), size_t(20)}) {
                std::vector<backend::cpu::DotTerm> t;
                for (size_t j = 0; j < terms; ++j) t.push_back({rows[3 * j].data(), rows[3 * j + 1].data(), rows[3 * j + 2].data()});
                k.dot2(o.data(), o1.data(), t.data(), terms, false, m, n);
                k.dot2(o.data(), o1.data(), t.data(), terms, true, m, n);
                d.add(o), d.add(o1);
            }
            // base conversion: from a 50-bit prime, plain and centred; the weighted sum of 18
            // terms (residues up to 62 bits) with and without the overflow subtraction; the counts
            const uint64_t p = math::generate_ntt_primes(50, 1024, 1)[0];
            const auto xp = g.below(n, p);
            for (bool centered : {false, true}) k.convert_single(o.data(), xp.data(), p, centered, m, n), d.add(o);
            const size_t terms = 18;
            const uint64_t y_bound = uint64_t(1) << 62;
            std::vector<uint64_t> ys(terms * n), ws_(terms);
            for (size_t i = 0; i < terms; ++i) {
                const auto row = g.below(n, uint64_t(1) << 62);
                std::copy(row.begin(), row.end(), ys.begin() + i * n);
                ws_[i] = g.next() % q;
            }
            std::vector<uint8_t> v(n);
            for (auto& c : v) c = uint8_t(g.next() % 19);
            const uint64_t u = g.next() % q, us = math::shoup_precompute(u, q);
            k.weighted_sum(o.data(), ys.data(), n, terms, y_bound, ws_.data(), nullptr, u, us, m, n), d.add(o);
            k.weighted_sum(o.data(), ys.data(), n, terms, y_bound, ws_.data(), v.data(), u, us, m, n), d.add(o);
            std::vector<uint64_t> primes = math::generate_ntt_primes(bits, 1024, 6);
            std::vector<uint64_t> yc(primes.size() * n);
            std::vector<double> inv;
            for (size_t i = 0; i < primes.size(); ++i) {
                const auto row = g.below(n, primes[i]);
                std::copy(row.begin(), row.end(), yc.begin() + i * n);
                inv.push_back(1.0 / double(primes[i]));
            }
            k.overflow_counts(v.data(), yc.data(), n, primes.size(), inv.data(), n), d.add(v);
        }
        expect_digest((std::string("eltwise ") + isa_name(isa)).c_str(), d.h, 0xca2e2cb410e5645aull);
    }
}

// ---- encoder -----------------------------------------------------------------------------------

// Fixed complex values encoded at S1 (every level, full and sparse slots) and decoded again:
// the plaintext words and the decoded doubles' bits. The canonical embedding is floating point
// (the FFT's twiddles come from std::polar), then rounded to integers.
TEST(KnownAnswers, Encoder) {
    const auto ctx = ckks::Context::create(ckks::Parameters::preset("S1"));
    const ckks::Encoder encoder(ctx);
    SplitMix64 g{2024};
    Digest d;
    for (size_t slots : {size_t(8), ctx->n() / 2}) {
        std::vector<std::complex<double>> values(slots);
        for (auto& v : values)
            v = {double(int64_t(g.next() % 2000001) - 1000000) / 1e5, double(int64_t(g.next() % 2001) - 1000) / 7.0};
        for (int level = ctx->max_level(); level >= 0; --level) {
            const ckks::Plaintext pt = encoder.encode(values, level, std::nullopt, slots);
            d.add(pt.data(), pt.word_count());
            d.add(encoder.decode(pt));
        }
    }
    expect_digest("encoder", d.h, 0x6b20ca4afe6b403full);
}

}  // namespace
