#include "oboro/math/primes.hpp"

#include <algorithm>

#include "oboro/math/modarith.hpp"
#include "oboro/util/error.hpp"

namespace oboro::math {

namespace {
uint64_t mulmod_u128(uint64_t a, uint64_t b, uint64_t m) {
    return uint64_t((unsigned __int128)a * b % m);
}
uint64_t powmod_u128(uint64_t b, uint64_t e, uint64_t m) {
    uint64_t r = 1 % m;
    b %= m;
    while (e) {
        if (e & 1) r = mulmod_u128(r, b, m);
        b = mulmod_u128(b, b, m);
        e >>= 1;
    }
    return r;
}
void check_prime_request(int bits, uint64_t n) {
    if (n == 0 || (n & (n - 1)) != 0) raise<ParameterError>("prime generation: n = ", n, " is not a power of two");
    if (bits < 2 || bits > max_modulus_bits<uint64_t>)
        raise<ParameterError>("prime generation: a ", bits, "-bit prime is not supported (allowed: 2..",
                              max_modulus_bits<uint64_t>, " bits)");
}
}  // namespace

bool is_prime(uint64_t n) {
    if (n < 2) return false;
    for (uint64_t p : {2ull, 3ull, 5ull, 7ull, 11ull, 13ull, 17ull, 19ull, 23ull, 29ull, 31ull, 37ull}) {
        if (n % p == 0) return n == p;
    }
    uint64_t d = n - 1;
    int s = 0;
    while ((d & 1) == 0) { d >>= 1; ++s; }
    // These 12 bases are a deterministic witness set for all n < 3.3e24.
    for (uint64_t a : {2ull, 3ull, 5ull, 7ull, 11ull, 13ull, 17ull, 19ull, 23ull, 29ull, 31ull, 37ull}) {
        uint64_t x = powmod_u128(a, d, n);
        if (x == 1 || x == n - 1) continue;
        bool composite = true;
        for (int r = 1; r < s; ++r) {
            x = mulmod_u128(x, x, n);
            if (x == n - 1) { composite = false; break; }
        }
        if (composite) return false;
    }
    return true;
}

std::vector<uint64_t> generate_ntt_primes(int bits, uint64_t n, int count,
                                          const std::vector<uint64_t>& exclude) {
    check_prime_request(bits, n);
    const uint64_t step = 2 * n;
    const uint64_t upper = uint64_t(1) << bits;  // exclusive
    const uint64_t lower = uint64_t(1) << (bits - 1);
    std::vector<uint64_t> out;
    // Largest candidate below 2^bits with q = 1 mod 2n.
    uint64_t q = ((upper - 1) / step) * step + 1;
    if (q >= upper) q -= step;
    while (int(out.size()) < count && q > lower) {
        if (is_prime(q) && std::find(exclude.begin(), exclude.end(), q) == exclude.end()) out.push_back(q);
        if (q < step) break;
        q -= step;
    }
    if (int(out.size()) < count)
        raise<ParameterError>("prime generation: only ", out.size(), " distinct ", bits,
                              "-bit primes q = 1 mod ", step, " exist, ", count, " requested");
    return out;
}

std::vector<uint64_t> generate_ntt_primes_near(int bits, uint64_t n, int count,
                                               const std::vector<uint64_t>& exclude) {
    check_prime_request(bits, n);
    const uint64_t step = 2 * n;
    const uint64_t center = uint64_t(1) << bits;
    // Primes above 2^bits stay within 2^bits * (1 + 2^-10), so that a "b-bit" prime is never
    // more than 0.0015 bits wider than asked (and below the word's headroom, 2^62).
    const uint64_t ceiling = std::min(uint64_t(1) << max_modulus_bits<uint64_t>, center + (center >> 10));
    const uint64_t floor = uint64_t(1) << (bits - 1);
    uint64_t below = center + 1 - step;  // candidates = 1 mod 2n on each side of 2^bits
    uint64_t above = center + 1;
    bool below_open = below > floor && below < center, above_open = above < ceiling;
    auto usable = [&](uint64_t q) { return is_prime(q) && std::find(exclude.begin(), exclude.end(), q) == exclude.end(); };
    auto next_below = [&]() -> uint64_t {
        while (below_open) {
            const uint64_t q = below;
            if (below <= floor + step) below_open = false; else below -= step;
            if (usable(q)) return q;
        }
        return 0;
    };
    auto next_above = [&]() -> uint64_t {
        while (above_open) {
            const uint64_t q = above;
            if (above + step >= ceiling) above_open = false; else above += step;
            if (usable(q)) return q;
        }
        return 0;
    };
    std::vector<uint64_t> out;
    for (int i = 0; int(out.size()) < count; ++i) {
        uint64_t q = (i % 2 == 0) ? next_below() : next_above();
        if (q == 0) q = (i % 2 == 0) ? next_above() : next_below();
        if (q == 0) break;
        out.push_back(q);
    }
    if (int(out.size()) < count)
        raise<ParameterError>("prime generation: only ", out.size(), " distinct primes q = 1 mod ", step, " near 2^",
                              bits, " exist, ", count, " requested");
    return out;
}

uint64_t primitive_root_2n(uint64_t q, uint64_t n) {
    // g^((q-1)/2n) is a 2n-th root of unity; for n a power of two it is primitive iff its n-th
    // power is -1 (the only prime dividing 2n is 2).
    if (n == 0 || (n & (n - 1)) != 0) raise<ParameterError>("primitive_root_2n: n = ", n, " is not a power of two");
    const uint64_t order = 2 * n;
    if ((q - 1) % order != 0) raise<ParameterError>("modulus ", q, " is not 1 mod ", order);
    uint64_t best = 0;
    for (uint64_t g = 2; g < q; ++g) {
        uint64_t root = powmod_u128(g, (q - 1) / order, q);
        if (powmod_u128(root, n, q) == q - 1) {
            // Take the smallest among the primitive roots root^(odd) for reproducible tables.
            best = root;
            uint64_t sq = mulmod_u128(root, root, q);
            uint64_t cur = root;
            for (uint64_t k = 1; k < order; k += 2) {
                if (cur < best) best = cur;
                cur = mulmod_u128(cur, sq, q);
            }
            return best;
        }
    }
    raise<ParameterError>("no primitive 2n-th root of unity mod ", q);
}

}  // namespace oboro::math
