// Shared fixtures for the CKKS tests: a context with all keys for a parameter set, random
// inputs, and precision in bits (-log2 of the maximum absolute error against a double reference).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "oboro/ckks/encoder.hpp"
#include "oboro/ckks/encryptor.hpp"
#include "oboro/ckks/evaluator.hpp"
#include "oboro/ckks/keygen.hpp"
#include "oboro/util/error.hpp"

namespace oboro::test {

using cplx = std::complex<double>;
using namespace oboro::ckks;

// N = 32, moduli {60, 45, 50} bits, one 61-bit special prime, no security check: a ring small
// enough that tests cover every coefficient, with primes above and below the IFMA bound.
inline Parameters small_parameters() {
    Parameters p;
    p.log_n = 5;
    p.q_bits = {60, 45, 50};
    p.p_bits = {61};
    p.security = SecurityLevel::none;
    return p;
}

struct Keys {
    ContextPtr ctx;
    std::unique_ptr<KeyGenerator> keygen;
    PublicKey pk;
    RelinKey rk;
    GaloisKeys gk;
    std::unique_ptr<Encoder> encoder;
    std::unique_ptr<Encryptor> pk_encryptor, sk_encryptor;
    std::unique_ptr<Decryptor> decryptor;
    std::unique_ptr<Evaluator> eval;

    // Context + keys (cached per preset: S4 key generation takes seconds).
    static Keys& get(const std::string& preset) {
        static std::map<std::string, std::unique_ptr<Keys>> cache;
        auto& slot = cache[preset];
        if (!slot) slot = std::make_unique<Keys>(Parameters::preset(preset));
        return *slot;
    }

    explicit Keys(const Parameters& params) {
        ctx = Context::create(params);
        keygen = std::make_unique<KeyGenerator>(ctx);
        pk = keygen->public_key();
        rk = keygen->relin_key();
        const int64_t slots = int64_t(ctx->max_slots());
        gk = keygen->galois_keys({1, -1, 5, slots - 1, slots / 2}, /*conjugation=*/true);
        encoder = std::make_unique<Encoder>(ctx);
        pk_encryptor = std::make_unique<Encryptor>(ctx, pk);
        sk_encryptor = std::make_unique<Encryptor>(ctx, keygen->secret_key());
        decryptor = std::make_unique<Decryptor>(ctx, keygen->secret_key());
        eval = std::make_unique<Evaluator>(ctx);
    }

    Ciphertext encrypt(const std::vector<cplx>& v, std::optional<int> level = std::nullopt, bool with_public_key = true,
                       std::optional<size_t> slots = std::nullopt) {
        Plaintext pt = encoder->encode(v, level, std::nullopt, slots);
        return with_public_key ? pk_encryptor->encrypt(pt) : sk_encryptor->encrypt(pt);
    }
    std::vector<cplx> decrypt(const Ciphertext& ct) { return decryptor->decrypt_decode(ct, *encoder); }
};

inline std::vector<cplx> random_complex(size_t n, double bound, uint64_t seed) {
    std::mt19937_64 gen(seed);  // test inputs only, never keys
    std::uniform_real_distribution<double> d(-bound, bound);
    std::vector<cplx> v(n);
    for (auto& x : v) x = cplx(d(gen), d(gen));
    return v;
}

inline std::vector<cplx> random_real(size_t n, double bound, uint64_t seed) {
    auto v = random_complex(n, bound, seed);
    for (auto& x : v) x = cplx(x.real(), 0);
    return v;
}

// Equal shape (size, level, scale, slots) and equal words in use (size x limbs x n: a reshaped
// ciphertext may keep a larger buffer).
inline bool same_words(const Ciphertext& a, const Ciphertext& b) {
    const size_t words = a.size() * a.limbs() * a.n();
    return a.size() == b.size() && a.level() == b.level() && a.scale() == b.scale() && a.slots() == b.slots() &&
           a.limbs() == b.limbs() && std::equal(a.data(), a.data() + words, b.data());
}

// N = 2^12 without the security check (test speed): `levels` 40-bit primes (not 2^40: scales
// must not drift) over a 60-bit q_0, two 61-bit special primes. For circuits deeper than a preset.
inline Parameters deep_test_parameters(int levels) {
    Parameters p;
    p.log_n = 12;
    p.q_bits = {60};
    for (int i = 0; i < levels; ++i) p.q_bits.push_back(40);
    p.p_bits = {61, 61};
    p.security = SecurityLevel::none;
    return p;
}

// np.roll(x, -k): x rotated left by k (negative: right), as a rotation by k slots does.
inline std::vector<cplx> roll(const std::vector<cplx>& x, int64_t k) {
    std::vector<cplx> r(x.size());
    const int64_t n = int64_t(x.size());
    for (int64_t i = 0; i < n; ++i) r[size_t(i)] = x[size_t(((i + k) % n + n) % n)];
    return r;
}

// -log2(max |got - want|); compares the first want.size() entries. Exact equality gives 60.
inline double precision_bits(const std::vector<cplx>& got, const std::vector<cplx>& want) {
    double err = 0;
    for (size_t i = 0; i < want.size(); ++i) err = std::max(err, std::abs(got[i] - want[i]));
    return err == 0 ? 60.0 : -std::log2(err);
}

// The precision bound (bits) of a fresh public-key encryption at scale 2^40 with a uniform ternary
// secret (docs/precision.md): the rounding error of c1/P times s has a real-part standard deviation
// of N/6 in the slots and a heavy tail whose maximum over the slots lies about 9 of them out, so
// about 40 - log2(9 N / 6) bits (S1 26.4, S2 25.4, S4 23.4) are expected; the bound leaves 1.5
// bits for the tail, which reaches 0.5 below the estimate in some runs.
inline double public_key_fresh_bits_bound(size_t n) { return 40.0 - std::log2(9.0 * double(n) / 6.0) - 1.5; }

}  // namespace oboro::test
