// CKKS parameters: ring degree, modulus chain, special primes, gadget digits, scale, secret
// distribution, and the security level they are checked against.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace oboro::ckks {

enum class SecurityLevel { k128, k192, k256, none };
enum class SecretDistribution { ternary, sparse_ternary };

struct Parameters {
    int log_n = 0;                       // ring degree N = 2^log_n; slots = N/2
    std::vector<int> q_bits;             // ciphertext primes, q_0 first (the last one is dropped first)
    std::vector<int> p_bits;             // special primes for hybrid key switching
    int dnum = 0;                        // gadget digits (at most); 0 = as few as the special primes allow
    // Explicit key-switching digits (optional): the number of ciphertext primes of each digit, from
    // q_0 up, summing to q_bits.size(); dnum then must be 0 or at least their count. Empty: digit_partition()
    // derives them from dnum. The loader of a context stored before the digits were balanced by
    // bits passes that layout here.
    std::vector<int> digit_primes;
    double scale = 0;                    // default encoding scale; 0 = 2^(bits of q_1) (or q_0 if single)
    SecretDistribution secret = SecretDistribution::ternary;
    int hamming_weight = 0;              // for sparse_ternary: number of non-zero coefficients
    SecurityLevel security = SecurityLevel::k128;
    // Explicit primes (optional): when given, the context uses exactly these instead of searching
    // for primes of q_bits / p_bits, one per size, each within a factor 2 of 2^size, NTT-friendly
    // (= 1 mod 2N) and distinct. The loader of a stored context passes the stored primes here, so
    // stored data never depends on the prime search reproducing them.
    std::vector<uint64_t> q_primes;
    std::vector<uint64_t> p_primes;

    uint64_t n() const { return uint64_t(1) << log_n; }
    size_t slots() const { return size_t(1) << (log_n - 1); }
    int max_level() const { return int(q_bits.size()) - 1; }
    int log_qp() const;                 // total bits of Q*P as requested (sum of prime sizes)
    bool explicit_primes() const { return !q_primes.empty() || !p_primes.empty(); }
    // Sets q_primes / p_primes and the sizes q_bits / p_bits that match them (round(log2 q)).
    void use_primes(std::vector<uint64_t> q, std::vector<uint64_t> p);
    // The key-switching digits, as primes per digit from q_0 up: digit_primes when given, else
    // balanced_digits(q_bits, dnum) (dnum == 0: the fewest digits that each fit under P's bits).
    std::vector<int> digit_partition() const;
    int effective_dnum() const;         // the number of digits: digit_partition().size()

    // Throws ParameterError with a message that says what is wrong and what the limit is.
    void validate() const;

    // The reference sets of the papers (see docs/parameters.md): "S1", "S2", "S3", "S4"; the
    // bootstrappable "B1" (N = 2^16, 10 levels of 40 bits left after bootstrapping, 128-bit) and
    // "BT" (N = 2^12, test-only: INSECURE, the same circuit shape in a small ring).
    static Parameters preset(const std::string& name);
    static std::vector<std::string> preset_names();

    std::string describe() const;
};

// Maximum log2(Q*P) for 128/192/256-bit security with a ternary secret, from the
// HomomorphicEncryption.org standard (classical attacks). Returns 0 where the table has no entry.
int max_log_qp(int log_n, SecurityLevel level);
// The same for the secret distribution of `p` (the ternary table above for a uniform ternary
// secret; for a sparse one, the lattice-estimator figures of docs/security.md, which exist for
// 128-bit security and Hamming weight >= 192 only). 0 where no bound is known.
int max_log_qp(const Parameters& p);
// The largest log2 of the modulus of an RLWE sample under a sparse secret of Hamming weight h that
// keeps 128-bit security at N = 2^log_n (docs/security.md; bootstrapping's key to its ephemeral
// secret): 121 bits for h >= 32 and N >= 2^16, 0 where no bound is known.
int max_log_q_sparse_sample(int log_n, int h);

const char* to_string(SecurityLevel level);

// Key-switching digits are consecutive runs of ciphertext primes from q_0 up, given as the number
// of primes of each.
//
// balanced_digits: a split into at most `dnum` digits whose widest digit has the fewest bits, and
// among those the most even one (the least sum of the digits' squared bits; ties to larger digits
// first). A key switch costs about a ModUp and a key inner product per digit that the
// ciphertext's primes meet, and adds noise that grows with the widest digit it meets relative to
// P: digits of equal bits rather than equal counts take B1's 40-bit primes five to a digit beside
// its 61-bit ones four (6 digits at the top instead of 7), and the most even split keeps a digit
// of nearly P's bits off its residual levels, whose scale is the smallest (a split filled from q_0
// up to P's 244 bits meets a 240-bit digit at B1's output level: 0.6 bits less after a rotation
// there, measured on two real inputs in one bootstrap).
std::vector<int> balanced_digits(const std::vector<int>& q_bits, int dnum);
// uniform_digits: ceil(q_count / dnum) primes per digit, the last one shorter (the layout of
// contexts stored before format version 10).
std::vector<int> uniform_digits(size_t q_count, int dnum);
// The fewest uniform digits of p.q_bits with at most the bits of p.p_bits each (what dnum = 0
// chose before format version 10); empty when not even one prime per digit fits.
std::vector<int> fewest_uniform_digits(const Parameters& p);
// Bits of the widest digit of `digits` over q_bits.
int widest_digit_bits(const std::vector<int>& q_bits, const std::vector<int>& digits);

}  // namespace oboro::ckks
