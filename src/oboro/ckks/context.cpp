#include "oboro/ckks/context.hpp"

#include <algorithm>
#include <cmath>

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
    n_ = size_t(params_.n());
    dnum_ = params_.effective_dnum();
    alpha_ = size_t(ckks::digit_size(params_.q_bits.size(), dnum_));
    std::vector<uint64_t> used;
    q_ = chain_primes(params_.q_bits, n_, used);
    p_ = special_primes(params_.p_bits, n_, used);
    // Primes just above 2^bits can push the real log2(QP) a hair over a set that sits exactly at
    // the security bound; then every prime is taken below 2^bits instead (real <= nominal).
    if (params_.security != SecurityLevel::none && actual_log_qp() > double(max_log_qp(params_.log_n, params_.security))) {
        used.clear();
        q_ = special_primes(params_.q_bits, n_, used);
        p_ = special_primes(params_.p_bits, n_, used);
    }
    scale_ = params_.scale > 0 ? params_.scale : std::ldexp(1.0, params_.q_bits.size() > 1 ? params_.q_bits[1] : params_.q_bits[0]);

    for (uint64_t m : q_) mods_.emplace_back(m);
    for (uint64_t m : p_) mods_.emplace_back(m);
    ntt_.reserve(mods_.size());
    for (const auto& m : mods_) ntt_.emplace_back(m.value, uint32_t(n_));

    id_ = 0xcbf29ce484222325ull;
    id_ = fnv1a(id_, n_);
    id_ = fnv1a(id_, uint64_t(dnum_));
    for (uint64_t m : q_) id_ = fnv1a(id_, m);
    id_ = fnv1a(id_, 0xffff);
    for (uint64_t m : p_) id_ = fnv1a(id_, m);

    for (uint64_t qi : q_) {
        const Barrett<uint64_t> br(qi);
        uint64_t prod = 1;
        for (uint64_t pj : p_) prod = br.mul(prod, br.reduce_word(pj));
        p_mod_q_.push_back(prod);
    }
    const RnsBase p_base(p_);
    levels_.resize(q_.size());
    for (size_t l = 0; l < q_.size(); ++l) {
        LevelConstants& lc = levels_[l];
        const size_t nq = l + 1;
        for (size_t begin = 0; begin < nq; begin += alpha_) {
            DigitConversion d;
            d.begin = begin;
            d.end = std::min(nq, begin + alpha_);
            std::vector<uint64_t> digit(q_.begin() + long(d.begin), q_.begin() + long(d.end));
            std::vector<uint64_t> others;
            for (size_t i = 0; i < nq; ++i)
                if (i < d.begin || i >= d.end) others.push_back(q_[i]);
            others.insert(others.end(), p_.begin(), p_.end());
            d.to_others = BaseConverter(RnsBase(digit), RnsBase(others));
            lc.digits.push_back(std::move(d));
        }
        const std::vector<uint64_t> q_level(q_.begin(), q_.begin() + long(nq));
        const RnsBase q_base(q_level);
        lc.p_to_q = BaseConverter(p_base, q_base);
        for (size_t i = 0; i < nq; ++i) lc.p_inv.push_back(inv_mod<uint64_t>(p_mod_q_[i], q_[i]));
        if (l >= 1) {
            const RnsBase q_below(std::vector<uint64_t>(q_.begin(), q_.begin() + long(l)));
            std::vector<uint64_t> qlp = {q_[l]};
            qlp.insert(qlp.end(), p_.begin(), p_.end());
            lc.ql_to_q = BaseConverter(RnsBase({q_[l]}), q_below);
            lc.qlp_to_q = BaseConverter(RnsBase(qlp), q_below);
            for (size_t i = 0; i < l; ++i) {
                const Barrett<uint64_t> br(q_[i]);
                const uint64_t ql_inv = inv_mod<uint64_t>(br.reduce_word(q_[l]), q_[i]);
                lc.inv_last.push_back(ql_inv);
                lc.qlp_inv.push_back(br.mul(ql_inv, lc.p_inv[i]));
            }
        }
        lc.crt = std::make_unique<CrtReconstructor>(q_base);
    }
}

double Context::actual_log_qp() const {
    double bits = 0;
    for (uint64_t m : q_) bits += std::log2(double(m));
    for (uint64_t m : p_) bits += std::log2(double(m));
    return bits;
}

double Context::log2_q(int level) const {
    double bits = 0;
    for (int i = 0; i <= level; ++i) bits += std::log2(double(q_[size_t(i)]));
    return bits;
}

uint64_t Context::galois_element(int64_t steps) const {
    const uint64_t slots = n_ / 2, two_n = 2 * n_;
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

const std::vector<uint32_t>& Context::automorphism_permutation(uint64_t galois) const {
    std::lock_guard<std::mutex> lock(perm_mutex_);
    auto it = perms_.find(galois);
    if (it != perms_.end()) return *it->second;
    // NTT slot i holds a(psi^(2*bitrev(i)+1)); (a o X^g)(psi^e) = a(psi^(g*e)), so slot i of the
    // result is the input slot whose exponent is g*(2*bitrev(i)+1) mod 2N.
    const int log_n = params_.log_n;
    const uint64_t two_n = 2 * n_;
    auto perm = std::make_unique<std::vector<uint32_t>>(n_);
    for (uint32_t i = 0; i < n_; ++i) {
        const uint64_t e = 2 * uint64_t(bit_reverse(i, log_n)) + 1;
        const uint64_t ge = (galois * e) % two_n;
        (*perm)[i] = bit_reverse(uint32_t((ge - 1) / 2), log_n);
    }
    return *perms_.emplace(galois, std::move(perm)).first->second;
}

}  // namespace oboro::ckks
