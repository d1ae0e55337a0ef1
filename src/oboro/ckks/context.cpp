#include "oboro/ckks/context.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "oboro/math/modarith.hpp"
#include "oboro/math/primes.hpp"
#include "oboro/util/error.hpp"

namespace oboro::ckks {

using namespace oboro::math;

namespace {
// Ciphertext primes: for each bit size, primes alternately just below and above 2^bits, so that
// the scale stays near 2^bits after many rescalings.
std::vector<uint64_t> chain_primes(const std::vector<int>& bits, uint64_t n, std::vector<uint64_t>& used) {
    std::map<int, std::vector<uint64_t>> by_size;
    for (int b : bits) {
        if (by_size.count(b)) continue;
        const int count = int(std::count(bits.begin(), bits.end(), b));
        by_size[b] = generate_ntt_primes_near(b, n, count, used);
        used.insert(used.end(), by_size[b].begin(), by_size[b].end());
    }
    std::map<int, size_t> taken;
    std::vector<uint64_t> out;
    for (int b : bits) out.push_back(by_size[b][taken[b]++]);
    return out;
}

// Special primes (and the fallback chain): the largest unused primes below 2^bits.
std::vector<uint64_t> special_primes(const std::vector<int>& bits, uint64_t n, std::vector<uint64_t>& used) {
    std::vector<uint64_t> out;
    for (int b : bits) {
        const uint64_t q = generate_ntt_primes(b, n, 1, used)[0];
        used.push_back(q);
        out.push_back(q);
    }
    return out;
}

uint64_t fnv1a(uint64_t h, uint64_t v) {
    for (int i = 0; i < 8; ++i) {
        h ^= (v >> (8 * i)) & 0xff;
        h *= 0x100000001b3ull;
    }
    return h;
}
}  // namespace

Context::Context(const Parameters& params) : params_(params) {
    params_.validate();
    const size_t n = size_t(params_.n());
    const std::vector<int> digits = params_.digit_partition();
    std::vector<uint64_t> used;
    std::vector<uint64_t> q = params_.explicit_primes() ? params_.q_primes : chain_primes(params_.q_bits, n, used);
    std::vector<uint64_t> p = params_.explicit_primes() ? params_.p_primes : special_primes(params_.p_bits, n, used);
    // Primes just above 2^bits can push the real log2(QP) a hair over a set that sits exactly at
    // the security bound; then every prime is taken below 2^bits instead (real <= nominal).
    // (Explicit primes were checked against the bound with their real size by validate().)
    if (!params_.explicit_primes() && params_.security != SecurityLevel::none &&
        log2_product(q, q.size()) + log2_product(p, p.size()) > double(max_log_qp(params_.log_n, params_.security))) {
        used.clear();
        q = special_primes(params_.q_bits, n, used);
        p = special_primes(params_.p_bits, n, used);
    }
    scale_ = params_.scale > 0 ? params_.scale : std::ldexp(1.0, params_.q_bits.size() > 1 ? params_.q_bits[1] : params_.q_bits[0]);

    uint64_t id = 0xcbf29ce484222325ull;
    id = fnv1a(id, n);
    // The dnum asked for (or the digits' number), and a split other than the uniform one for it
    // (the only one before format version 10), so that keys made with one split are never taken
    // for keys of another while stored contexts keep their fingerprints.
    const int dnum_asked = params_.dnum > 0 ? params_.dnum : int(digits.size());
    id = fnv1a(id, uint64_t(dnum_asked));
    if (digits != uniform_digits(q.size(), dnum_asked))
        for (int d : digits) id = fnv1a(id, 0xd161700000000ull + uint64_t(d));
    for (uint64_t m : q) id = fnv1a(id, m);
    id = fnv1a(id, 0xffff);
    for (uint64_t m : p) id = fnv1a(id, m);

    for (size_t l = 0; l < q.size(); ++l)
        crt_.push_back(std::make_unique<CrtReconstructor>(RnsBase(std::vector<uint64_t>(q.begin(), q.begin() + long(l + 1)))));
    ring_ = std::make_unique<backend::Ring>(n, std::move(q), std::move(p),
                                            std::vector<size_t>(digits.begin(), digits.end()), id);

    // The standard scales: anchored at level 0 on the parameters' scale and computed upwards as
    // D_l = sqrt(D_{l-1} q_l), which stays within a fraction of a bit of D_0 when the primes have
    // about scale_bits bits (computing downwards from the top would double any deviation at every
    // level); then recomputed downwards with the very operations of multiply + rescale, so that
    // the product of two standard ciphertexts is bit for bit the standard scale of the level below.
    const int top = max_level();
    std::vector<double> up(size_t(top) + 1);
    up[0] = scale_;
    for (int l = 1; l <= top; ++l) up[size_t(l)] = std::sqrt(up[size_t(l) - 1] * double(this->q()[size_t(l)]));
    standard_scales_.assign(up.size(), 0.0);
    standard_scales_[size_t(top)] = up[size_t(top)];
    for (int l = top; l >= 1; --l)
        standard_scales_[size_t(l) - 1] =
            standard_scales_[size_t(l)] * standard_scales_[size_t(l)] / double(this->q()[size_t(l)]);
}

double Context::log2_product(const std::vector<uint64_t>& primes, size_t count) {
    double bits = 0;
    for (size_t i = 0; i < count; ++i) bits += std::log2(double(primes[i]));
    return bits;
}

double Context::actual_log_qp() const { return log2_q(max_level()) + log2_p(); }

double Context::log2_q(int level) const { return log2_product(q(), size_t(level + 1)); }

double Context::log2_p() const { return log2_product(p(), p().size()); }

uint64_t Context::galois_element(int64_t steps) const {
    const uint64_t slots = n() / 2, two_n = 2 * n();
    int64_t s = steps % int64_t(slots);
    if (s < 0) s += int64_t(slots);
    // 5 generates the rotation subgroup of (Z/2N)^*, of order N/2: g = 5^s mod 2N by squaring
    // (the key checks call this for every step of every operation; a loop of s products cost up to
    // N/2 multiplications each time).
    uint64_t g = 1, base = 5;
    for (uint64_t e = uint64_t(s); e; e >>= 1, base = (base * base) % two_n)
        if (e & 1) g = (g * base) % two_n;
    return g;
}

}  // namespace oboro::ckks
