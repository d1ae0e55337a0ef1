// NTT-friendly primes: q prime with q = 1 mod 2N, so that Z_q has a primitive 2N-th root of unity
// and the negacyclic NTT of length N exists.
#pragma once

#include <cstdint>
#include <vector>

namespace oboro::math {

// Deterministic Miller-Rabin for 64-bit integers.
bool is_prime(uint64_t n);

// `count` distinct primes q < 2^bits with q = 1 mod 2n, largest first, none of them in `exclude`.
// Throws ParameterError when not enough primes of that size exist.
std::vector<uint64_t> generate_ntt_primes(int bits, uint64_t n, int count,
                                          const std::vector<uint64_t>& exclude = {});

// `count` distinct primes q = 1 mod 2n as close as possible to 2^bits, alternately just below and
// just above it (below first), none in `exclude`. Primes above 2^bits stay below
// 2^bits * (1 + 2^-10); when those run out the rest come from below, down to 2^(bits-1). A chain of such primes keeps the CKKS scale
// close to 2^bits through many rescalings: the drifts of neighbouring primes cancel.
std::vector<uint64_t> generate_ntt_primes_near(int bits, uint64_t n, int count,
                                               const std::vector<uint64_t>& exclude = {});

// Returns the smallest primitive 2n-th root of unity mod q (q prime, q = 1 mod 2n, n a power of
// two; other n raise ParameterError).
uint64_t primitive_root_2n(uint64_t q, uint64_t n);

}  // namespace oboro::math
