#include "oboro/ckks/parameters.hpp"

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <numeric>
#include <sstream>

#include "oboro/math/modarith.hpp"
#include "oboro/math/primes.hpp"
#include "oboro/util/error.hpp"

namespace oboro::ckks {

int max_log_qp(int log_n, SecurityLevel level) {
    // HE standard (Albrecht et al. 2018, Table 1, ternary secret, classical). The 128-bit entries
    // for 2^16 and 2^17 follow the same estimator and are the ones used by OpenFHE and Lattigo.
    switch (level) {
        case SecurityLevel::k128:
            switch (log_n) {
                case 10: return 27; case 11: return 54; case 12: return 109; case 13: return 218;
                case 14: return 438; case 15: return 881; case 16: return 1747; case 17: return 3523;
                default: return 0;
            }
        case SecurityLevel::k192:
            switch (log_n) {
                case 10: return 19; case 11: return 37; case 12: return 75; case 13: return 152;
                case 14: return 305; case 15: return 611; default: return 0;
            }
        case SecurityLevel::k256:
            switch (log_n) {
                case 10: return 14; case 11: return 29; case 12: return 58; case 13: return 118;
                case 14: return 237; case 15: return 476; default: return 0;
            }
        case SecurityLevel::none: return 0;
    }
    return 0;
}

int max_log_qp(const Parameters& p) {
    if (p.secret == SecretDistribution::ternary) return max_log_qp(p.log_n, p.security);
    // Sparse ternary, weight >= 192, 128-bit: the largest modulus the lattice estimator (through
    // SparseLWEkit) puts above 128 bits, against the hybrid attacks that exploit sparsity: 2^15:
    // 777 bits (132.6), 2^16: 1555 (133.8), 2^17: 3104 (135.7). A heavier secret is at least as
    // secure; a dense one is bounded by the ternary table.
    if (p.security != SecurityLevel::k128 || p.hamming_weight < 192) return 0;
    const int dense = max_log_qp(p.log_n, p.security);
    switch (p.log_n) {
        case 15: return std::min(dense, 777);
        case 16: return std::min(dense, 1555);
        case 17: return std::min(dense, 3104);
        default: return 0;
    }
}

int max_log_q_sparse_sample(int log_n, int h) {
    // the lattice estimator gives 171.9 bits at N = 2^16, h = 32, log q = 121 (SparseLWEkit);
    // a larger N or weight only adds security
    return log_n >= 16 && h >= 32 ? 121 : 0;
}

const char* to_string(SecurityLevel level) {
    switch (level) {
        case SecurityLevel::k128: return "128-bit";
        case SecurityLevel::k192: return "192-bit";
        case SecurityLevel::k256: return "256-bit";
        case SecurityLevel::none: return "none (INSECURE, explicitly requested)";
    }
    return "?";
}

namespace {
// The greedy split from q_0 up under `cap` bits per digit (cap >= every prime's bits): each digit
// takes primes while its bits stay within the cap, which gives the fewest digits for the cap.
std::vector<int> greedy_digits(const std::vector<int>& q_bits, int cap) {
    std::vector<int> digits;
    int bits = 0;
    for (int b : q_bits) {
        if (digits.empty() || bits + b > cap) {
            digits.push_back(0);
            bits = 0;
        }
        ++digits.back();
        bits += b;
    }
    return digits;
}

// The most even split of q_bits into at most `most` digits of at most `cap` bits each: the least
// sum of the digits' squared bits, ties to the larger digits first (fewer digits at the low
// levels). By dynamic programming over the chain's suffixes (64 primes at most).
std::vector<int> most_even_digits(const std::vector<int>& q_bits, int most, int cap) {
    struct Best {
        bool found = false;
        int64_t cost = 0;
        std::vector<int> digits;
    };
    const size_t n = q_bits.size();
    // best[k][i]: the suffix from prime i in at most k digits
    std::vector<std::vector<Best>> best(size_t(most) + 1, std::vector<Best>(n + 1));
    for (size_t k = 0; k <= size_t(most); ++k) best[k][n].found = true;
    for (size_t k = 1; k <= size_t(most); ++k)
        for (size_t i = n; i-- > 0;) {
            Best& b = best[k][i];
            int64_t bits = 0;
            for (size_t end = i + 1; end <= n; ++end) {
                bits += q_bits[end - 1];
                if (bits > cap) break;
                const Best& rest = best[k - 1][end];
                if (!rest.found) continue;
                std::vector<int> digits = {int(end - i)};
                digits.insert(digits.end(), rest.digits.begin(), rest.digits.end());
                const int64_t cost = bits * bits + rest.cost;
                if (!b.found || cost < b.cost || (cost == b.cost && digits > b.digits)) {
                    b.found = true;
                    b.cost = cost;
                    b.digits = std::move(digits);
                }
            }
        }
    return best[size_t(most)][0].digits;
}

int special_bits(const Parameters& p) { return std::accumulate(p.p_bits.begin(), p.p_bits.end(), 0); }
}  // namespace

std::vector<int> balanced_digits(const std::vector<int>& q_bits, int dnum) {
    if (q_bits.empty() || dnum < 1) raise<ParameterError>("balanced_digits: needs primes and dnum >= 1, got dnum = ", dnum);
    // The fewest digits under a cap fall as the cap grows: the least cap that gives at most dnum
    // digits, by bisection between the widest prime (one prime per digit) and the whole chain.
    int lo = *std::max_element(q_bits.begin(), q_bits.end());
    int hi = std::accumulate(q_bits.begin(), q_bits.end(), 0);
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (greedy_digits(q_bits, mid).size() <= size_t(dnum)) hi = mid;
        else lo = mid + 1;
    }
    return most_even_digits(q_bits, std::min(dnum, int(q_bits.size())), lo);
}

std::vector<int> uniform_digits(size_t q_count, int dnum) {
    const size_t alpha = (q_count + size_t(dnum) - 1) / size_t(dnum);
    std::vector<int> digits;
    for (size_t begin = 0; begin < q_count; begin += alpha) digits.push_back(int(std::min(alpha, q_count - begin)));
    return digits;
}

std::vector<int> fewest_uniform_digits(const Parameters& p) {
    const int p_total = special_bits(p);
    for (int d = 1; d <= int(p.q_bits.size()); ++d)
        if (std::vector<int> digits = uniform_digits(p.q_bits.size(), d); widest_digit_bits(p.q_bits, digits) <= p_total)
            return digits;
    return {};
}

int widest_digit_bits(const std::vector<int>& q_bits, const std::vector<int>& digits) {
    int widest = 0;
    size_t i = 0;
    for (int d : digits) {
        int bits = 0;
        for (int k = 0; k < d && i < q_bits.size(); ++k) bits += q_bits[i++];
        widest = std::max(widest, bits);
    }
    return widest;
}

std::vector<int> Parameters::digit_partition() const {
    if (!digit_primes.empty()) return digit_primes;
    if (dnum > 0) return balanced_digits(q_bits, dnum);
    // The fewest digits (cheapest key switching) whose every digit fits under P.
    const int p_total = special_bits(*this);
    if (q_bits.empty() || *std::max_element(q_bits.begin(), q_bits.end()) > p_total)
        raise<ParameterError>("parameters: even one prime per digit exceeds the ", p_total,
                              " bits of the special primes; use larger or more special primes");
    return balanced_digits(q_bits, int(greedy_digits(q_bits, p_total).size()));
}

int Parameters::effective_dnum() const { return int(digit_partition().size()); }

int Parameters::log_qp() const {
    return std::accumulate(q_bits.begin(), q_bits.end(), 0) + std::accumulate(p_bits.begin(), p_bits.end(), 0);
}

void Parameters::use_primes(std::vector<uint64_t> q, std::vector<uint64_t> p) {
    const auto size_of = [](uint64_t prime) { return prime ? int(std::lround(std::log2(double(prime)))) : 0; };
    q_bits.clear();
    p_bits.clear();
    for (uint64_t x : q) q_bits.push_back(size_of(x));
    for (uint64_t x : p) p_bits.push_back(size_of(x));
    q_primes = std::move(q);
    p_primes = std::move(p);
}

namespace {
// ParameterError unless the explicit primes agree with their sizes and can serve as NTT moduli.
void validate_primes(const Parameters& params) {
    if (params.q_primes.size() != params.q_bits.size() || params.p_primes.size() != params.p_bits.size())
        raise<ParameterError>("parameters: ", params.q_primes.size(), " + ", params.p_primes.size(),
                              " explicit primes for ", params.q_bits.size(), " + ", params.p_bits.size(),
                              " prime sizes (give every prime of the chain and of P, or none)");
    const uint64_t two_n = 2 * params.n();
    std::vector<uint64_t> seen;
    const auto check = [&](const char* what, uint64_t prime, int bits) {
        if (prime >= (uint64_t(1) << math::max_modulus_bits<uint64_t>))
            raise<ParameterError>("parameters: the ", what, " ", prime, " has more than ",
                                  math::max_modulus_bits<uint64_t>, " bits");
        const double log2_prime = std::log2(double(prime));
        if (!(std::fabs(log2_prime - bits) < 1))
            raise<ParameterError>("parameters: the ", what, " ", prime, " (2^", log2_prime, ") is not of its size, ",
                                  bits, " bits");
        if (prime % two_n != 1)
            raise<ParameterError>("parameters: the ", what, " ", prime, " is not 1 mod 2N = ", two_n,
                                  " (the NTT of length N needs it)");
        if (!math::is_prime(prime)) raise<ParameterError>("parameters: the ", what, " ", prime, " is not prime");
        if (std::find(seen.begin(), seen.end(), prime) != seen.end())
            raise<ParameterError>("parameters: the ", what, " ", prime, " appears twice (the primes must be distinct)");
        seen.push_back(prime);
    };
    for (size_t i = 0; i < params.q_primes.size(); ++i) check("ciphertext prime", params.q_primes[i], params.q_bits[i]);
    for (size_t i = 0; i < params.p_primes.size(); ++i) check("special prime", params.p_primes[i], params.p_bits[i]);
}

// log2 of Q*P for explicit primes (their real size, which the security bound applies to).
double log2_explicit_qp(const Parameters& params) {
    double bits = 0;
    for (uint64_t x : params.q_primes) bits += std::log2(double(x));
    for (uint64_t x : params.p_primes) bits += std::log2(double(x));
    return bits;
}
}  // namespace

void Parameters::validate() const {
    constexpr int max_bits = math::max_modulus_bits<uint64_t>;
    if (log_n < 1 || log_n > 17)
        raise<ParameterError>("parameters: N = 2^", log_n, " is out of range (N must be a power of two, 2^1 .. 2^17)");
    if (q_bits.empty()) raise<ParameterError>("parameters: the modulus chain q_bits is empty");
    if (p_bits.empty())
        raise<ParameterError>("parameters: at least one special prime (p_bits) is needed for key switching");
    for (int b : q_bits)
        if (b < 20 || b > max_bits)
            raise<ParameterError>("parameters: a ", b, "-bit ciphertext prime is not allowed (each prime must have 20..",
                                  max_bits, " bits)");
    for (int b : p_bits)
        if (b < 20 || b > max_bits)
            raise<ParameterError>("parameters: a ", b, "-bit special prime is not allowed (each prime must have 20..",
                                  max_bits, " bits)");
    if (q_bits.size() > 64) raise<ParameterError>("parameters: the chain has ", q_bits.size(), " primes (at most 64)");
    if (dnum < 0 || dnum > int(q_bits.size()))
        raise<ParameterError>("parameters: dnum = ", dnum, " must be in 1..", q_bits.size(), " (or 0 for automatic)");
    if (!digit_primes.empty()) {
        size_t total = 0;
        for (int d : digit_primes) {
            if (d < 1) raise<ParameterError>("parameters: a key-switching digit of ", d, " primes (digit_primes must be positive)");
            total += size_t(d);
        }
        if (total != q_bits.size())
            raise<ParameterError>("parameters: digit_primes covers ", total, " primes but the chain has ", q_bits.size());
        if (dnum != 0 && size_t(dnum) < digit_primes.size())
            raise<ParameterError>("parameters: dnum = ", dnum, " but digit_primes gives ", digit_primes.size(),
                                  " digits (dnum is the most digits: set it to 0 or at least their count)");
    }
    if (dnum == 0 && digit_primes.empty()) {
        (void)digit_partition();  // throws if no digit split fits under P
    } else {
        const int p_total = special_bits(*this);
        const std::vector<int> digits = digit_partition();
        const int widest = widest_digit_bits(q_bits, digits);
        if (widest > p_total)
            raise<ParameterError>("parameters: with dnum = ", digits.size(), " a key-switching digit has ", widest,
                                  " bits but the special primes only ", p_total,
                                  " bits; key switching would add large noise. Use a larger dnum or more special primes");
    }
    if (secret == SecretDistribution::sparse_ternary && (hamming_weight <= 0 || uint64_t(hamming_weight) > n()))
        raise<ParameterError>("parameters: sparse ternary secret needs 0 < hamming_weight <= N, got ", hamming_weight);
    if (scale != 0 && !(std::isfinite(scale) && scale >= 1))
        raise<ParameterError>("parameters: scale ", scale, " must be a finite number >= 1 (or 0 for the default)");
    if (explicit_primes()) validate_primes(*this);
    if (security != SecurityLevel::none) {
        const int limit = max_log_qp(*this);
        if (limit == 0 && secret == SecretDistribution::sparse_ternary)
            raise<ParameterError>("parameters: no ", to_string(security), " bound is known for a sparse secret of "
                                  "hamming_weight ", hamming_weight, " at N = 2^", log_n,
                                  " (known: 128-bit, weight >= 192, N = 2^15 .. 2^17; docs/security.md); use a "
                                  "uniform ternary secret or set security to none explicitly");
        if (limit == 0)
            raise<ParameterError>("parameters: the HE standard gives no ", to_string(security), " bound for N = 2^",
                                  log_n, "; use a larger N or set security to none explicitly");
        const double bits = explicit_primes() ? log2_explicit_qp(*this) : double(log_qp());
        if (bits > limit)
            raise<ParameterError>("parameters: log2(QP) = ", bits, " bits exceeds the ", to_string(security),
                                  " security limit of ", limit, " bits for N = 2^", log_n,
                                  secret == SecretDistribution::sparse_ternary ? " (sparse secret)" : " (HE standard)",
                                  "; use fewer or smaller primes, a larger N, or set security to "
                                  "none explicitly");
    }
}

Parameters Parameters::preset(const std::string& name) {
    Parameters p;
    if (name == "S1") {  // paper 000: N=8192, {60,40,60}, scale 2^40
        p.log_n = 13; p.q_bits = {60, 40}; p.p_bits = {60};
    } else if (name == "S2") {  // paper 003: N=16384, {60,40,40,40,60}, scale 2^40
        p.log_n = 14; p.q_bits = {60, 40, 40, 40}; p.p_bits = {60};
    } else if (name == "S3") {  // paper 004: logN=15, scale 2^40, 9 levels, 10 special primes
        p.log_n = 15; p.q_bits = std::vector<int>(10, 40); p.q_bits[0] = 60; p.p_bits = std::vector<int>(10, 40);
    } else if (name == "S4") {  // paper 002 (deep): N=65536, {60, 20 x 40}, 6 x 60-bit special primes, dnum 3
        p.log_n = 16; p.q_bits = std::vector<int>(21, 40); p.q_bits[0] = 60; p.p_bits = std::vector<int>(6, 60);
        p.dnum = 3;
    } else if (name == "B1" || name == "BT") {
        // Bootstrappable: the residual levels {60, 40 x L} (q_0 of 60 bits keeps the message 2^8
        // below it at a 2^52 scale), SlotsToCoeffs 3 x 45, EvalMod 8 x 61 and one of the 40-bit
        // primes (a sine of degree 151, or a cosine of degree 58 and 2 double angles, for the
        // ephemeral secret of weight 32, and the product of the two-term sine series),
        // CoeffsToSlots 3 x 61, which leaves L = 10 levels (B1); a sparse secret key of weight 192
        // (its rescaling noise is 4 bits below a dense one's), checked against the sparse bound of
        // 1555 bits at 2^16 (1550 here). EvalMod's noise, which sets the precision, falls with the
        // size of its primes: 61 bits against 60 gained a bit (measured).
        const bool test = name == "BT";
        p.log_n = test ? 12 : 16;
        p.q_bits = {60};
        p.q_bits.insert(p.q_bits.end(), test ? 3 : 11, 40);
        p.q_bits.insert(p.q_bits.end(), 3, 45);
        p.q_bits.insert(p.q_bits.end(), 8 + 3, 61);
        // P = 244 bits; dnum automatic: the fewest digits of at most 244 bits (B1: 6, of 5, 5, 5,
        // 4, 4 and 3 primes from q_0 up, where equal counts took 7 of 4; BT: 5)
        p.p_bits = {61, 61, 61, 61};
        p.secret = SecretDistribution::sparse_ternary;
        p.hamming_weight = 192;
        if (test) p.security = SecurityLevel::none;
    } else if (name == "B2") {
        // Bootstrappable, high precision: B1's circuit with EvalMod's one term (the automatic choice
        // with two iterations) under residual levels {60, 48 x 9}. The output level's scale of
        // 2^48 lowers the noise floor by 8 bits, which two bootstrap iterations (the
        // Bootstrapper's automatic choice at this scale) then reach. q_0 stays at
        // 60 bits: the key to the ephemeral secret spans q_0 and one special prime, at most 121
        // bits for weight 32. 1542 bits against the sparse bound of 1555.
        p.log_n = 16;
        p.q_bits = {60};
        p.q_bits.insert(p.q_bits.end(), 9, 48);
        p.q_bits.insert(p.q_bits.end(), 3, 45);
        p.q_bits.insert(p.q_bits.end(), 8 + 3, 61);
        p.p_bits = {61, 61, 61, 61};  // dnum automatic: 6 digits of 4 primes
        p.secret = SecretDistribution::sparse_ternary;
        p.hamming_weight = 192;
        p.scale = 0x1p48;
        return p;
    } else {
        raise<ParameterError>("parameters: unknown preset '", name, "' (known: S1, S2, S3, S4, B1, B2, BT)");
    }
    p.scale = 0x1p40;
    return p;
}

std::vector<std::string> Parameters::preset_names() { return {"S1", "S2", "S3", "S4", "B1", "B2", "BT"}; }

std::string Parameters::describe() const {
    std::ostringstream os;
    os << "N=2^" << log_n << " slots=" << slots() << " levels=" << max_level() << " q_bits={";
    for (size_t i = 0; i < q_bits.size(); ++i) os << (i ? "," : "") << q_bits[i];
    os << "} p_bits={";
    for (size_t i = 0; i < p_bits.size(); ++i) os << (i ? "," : "") << p_bits[i];
    os << "} dnum=" << effective_dnum() << " log2(QP)=" << log_qp() << " security=" << to_string(security);
    return os.str();
}

}  // namespace oboro::ckks
