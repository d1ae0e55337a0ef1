// Samplers for secrets, errors and uniform masks, and their conversion to RNS/NTT form.
// All randomness comes from math::Prng (ChaCha20 seeded from the OS CSPRNG). Samples of the secret
// distributions (ternary secrets, errors, flooding noise) are SecretVectors: knowing the error of a
// key, or of a secret-key encryption of a known message, gives the secret key, so their memory
// is wiped when they die (util/secret_memory.hpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <span>

#include "oboro/math/ntt.hpp"
#include "oboro/math/random.hpp"
#include "oboro/math/rns.hpp"
#include "oboro/util/secret_memory.hpp"

namespace oboro::ckks {

inline constexpr double kErrorSigma = 3.19;  // HE standard error width

// Uniform ternary: each coefficient -1, 0, 1 with probability 1/3.
SecretVector<int8_t> sample_ternary(math::Prng& prng, size_t n);
// Exactly h non-zero coefficients (+-1 each with probability 1/2) at uniformly random positions.
SecretVector<int8_t> sample_sparse_ternary(math::Prng& prng, size_t n, int h);
// Rounded Gaussian of standard deviation sigma, tails cut at 6 sigma. The error width kErrorSigma
// uses a cumulative-table sampler whose time does not depend on the sample; other widths (noise
// flooding) use Box-Muller.
SecretVector<int64_t> sample_gaussian(math::Prng& prng, size_t n, double sigma = kErrorSigma);
// sample_gaussian's inversion of its cumulative table for a block of count <= 64 uniform words:
// mag[j] = the number of the `entries` table entries at or below u[j]. Each compilation, for
// tests (every one must give the same magnitudes): nullptr when this CPU cannot run that
// instruction set (math::ChachaIsa names the ones the library compiles its kernels for).
using CdtInvertFn = void (*)(const uint64_t* u, size_t count, const uint64_t* table, size_t entries, int64_t* mag);
CdtInvertFn cdt_invert_variant(math::ChachaIsa isa);
// The largest magnitude sample_gaussian returns for `sigma` (the cut at 6 sigma, rounded up).
inline uint64_t gaussian_bound(double sigma) { return uint64_t(std::ceil(6 * sigma)); }

// Writes a polynomial with small signed coefficients into `limbs` limbs (canonical residues,
// coefficient form). `bound`: the largest magnitude the coefficients' distribution can give
// (gaussian_bound; public, never the samples' own maximum, which is secret): limbs whose modulus
// exceeds it need no reduction. mods may be a sub-range of the context's (e.g. only the P primes).
void small_to_limbs(std::span<const int8_t> coeffs, uint64_t* out, const math::Modulus* mods, size_t limbs);
void small_to_limbs(std::span<const int64_t> coeffs, uint64_t bound, uint64_t* out, const math::Modulus* mods,
                    size_t limbs);
// The same, transformed to NTT form (tables: those of mods).
void small_to_ntt(std::span<const int8_t> coeffs, uint64_t* out, const math::Modulus* mods,
                  const math::NttTables* tables, size_t limbs);
void small_to_ntt(std::span<const int64_t> coeffs, uint64_t bound, uint64_t* out, const math::Modulus* mods,
                  const math::NttTables* tables, size_t limbs);

// Uniform polynomial mod each modulus, directly in NTT form (the NTT is a bijection).
void sample_uniform(math::Prng& prng, uint64_t* out, const math::Modulus* mods, size_t limbs, size_t n);
// The uniform polynomial that stream `stream` of `seed` expands to (sample_uniform with
// math::Prng(seed, stream)). Keys and secret-key ciphertexts draw their "a" this way, so that
// serialization can store the seed instead (io/serialize.hpp). limb_positions (limbs entries, when
// given): the stream's byte position at the start of each limb (a key's a_positions).
void expand_uniform(const math::Seed& seed, uint64_t stream, uint64_t* out, const math::Modulus* mods, size_t limbs,
                    size_t n, uint64_t* limb_positions = nullptr);

}  // namespace oboro::ckks
