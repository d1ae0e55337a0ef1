#include "oboro/backend/ring.hpp"

#include <algorithm>

#include "oboro/math/modarith.hpp"
#include "oboro/util/error.hpp"

namespace oboro::backend {

using namespace oboro::math;

Ring::Ring(size_t n, std::vector<uint64_t> q, std::vector<uint64_t> p, std::vector<size_t> digit_primes, uint64_t id)
    : n_(n), digit_primes_(std::move(digit_primes)), id_(id), q_(std::move(q)), p_(std::move(p)) {
    size_t covered = 0;
    for (size_t d : digit_primes_) {
        if (d == 0) raise<ParameterError>("Ring: a key-switching digit without primes");
        covered += d;
        max_digit_primes_ = std::max(max_digit_primes_, d);
    }
    if (covered != q_.size())
        raise<ParameterError>("Ring: the key-switching digits cover ", covered, " primes of ", q_.size());
    while ((size_t(1) << log_n_) < n_) ++log_n_;
    for (uint64_t m : q_) mods_.emplace_back(m);
    for (uint64_t m : p_) mods_.emplace_back(m);
    ntt_.reserve(mods_.size());
    for (const auto& m : mods_) ntt_.emplace_back(m.value, uint32_t(n_));
    levels_.reserve(q_.size());
    for (size_t l = 0; l < q_.size(); ++l) levels_.push_back(make_level(int(l), p_.size()));
}

LevelConstants Ring::make_level(int level, size_t special) const {
    const size_t l = size_t(level), nq = l + 1;
    const std::vector<uint64_t> p(p_.begin(), p_.begin() + long(special));
    LevelConstants lc;
    lc.level = level;
    lc.special = special;
    for (size_t j = 0, begin = 0; begin < nq; begin += digit_primes_[j++]) {
        DigitConversion d;
        d.begin = begin;
        d.end = std::min(nq, begin + digit_primes_[j]);
        std::vector<uint64_t> digit(q_.begin() + long(d.begin), q_.begin() + long(d.end));
        std::vector<uint64_t> others;
        for (size_t i = 0; i < nq; ++i)
            if (i < d.begin || i >= d.end) others.push_back(q_[i]);
        others.insert(others.end(), p.begin(), p.end());
        d.to_others = BaseConverter(RnsBase(digit), RnsBase(others));
        lc.digits.push_back(std::move(d));
    }
    const RnsBase q_base(std::vector<uint64_t>(q_.begin(), q_.begin() + long(nq)));
    lc.p_to_q = BaseConverter(RnsBase(p), q_base);
    for (size_t i = 0; i < nq; ++i) {
        const Barrett<uint64_t> br(q_[i]);
        uint64_t prod = 1;
        for (uint64_t pj : p) prod = br.mul(prod, br.reduce_word(pj));
        lc.p_mod_q.push_back(prod);
        lc.p_inv.push_back(inv_mod<uint64_t>(prod, q_[i]));
    }
    if (l >= 1) {
        const RnsBase q_below(std::vector<uint64_t>(q_.begin(), q_.begin() + long(l)));
        std::vector<uint64_t> qlp = {q_[l]};
        qlp.insert(qlp.end(), p.begin(), p.end());
        lc.ql_to_q = BaseConverter(RnsBase({q_[l]}), q_below);
        lc.qlp_to_q = BaseConverter(RnsBase(qlp), q_below);
        for (size_t i = 0; i < l; ++i) {
            const Barrett<uint64_t> br(q_[i]);
            const uint64_t ql_inv = inv_mod<uint64_t>(br.reduce_word(q_[l]), q_[i]);
            lc.inv_last.push_back(ql_inv);
            lc.qlp_inv.push_back(br.mul(ql_inv, lc.p_inv[i]));
        }
    }
    return lc;
}

const LevelConstants& Ring::key_switch_level(int l, size_t special) const {
    if (special == 0 || special > p_.size() || l < 0 || size_t(l) >= q_.size())
        raise<ValueError>("key switching at level ", l, " over ", special, " special primes: the ring has levels 0..",
                          q_.size() - 1, " and ", p_.size(), " special primes");
    if (special == p_.size()) return levels_[size_t(l)];
    std::lock_guard<std::mutex> lock(level_mutex_);
    auto& slot = partial_levels_[{l, special}];
    if (!slot) slot = std::make_unique<LevelConstants>(make_level(l, special));
    return *slot;
}

const std::vector<uint32_t>& Ring::automorphism_permutation(uint64_t galois) const {
    std::lock_guard<std::mutex> lock(perm_mutex_);
    auto it = perms_.find(galois);
    if (it != perms_.end()) return *it->second;
    // NTT slot i holds a(psi^(2*bitrev(i)+1)); (a o X^g)(psi^e) = a(psi^(g*e)), so slot i of the
    // result is the input slot whose exponent is g*(2*bitrev(i)+1) mod 2N.
    const uint64_t mask = 2 * n_ - 1;  // mod 2N, a power of two
    auto perm = std::make_unique<std::vector<uint32_t>>(n_);
    for (uint32_t i = 0; i < n_; ++i) {
        const uint64_t e = 2 * uint64_t(bit_reverse(i, log_n_)) + 1;
        const uint64_t ge = (galois * e) & mask;
        (*perm)[i] = bit_reverse(uint32_t((ge - 1) / 2), log_n_);
    }
    return *perms_.emplace(galois, std::move(perm)).first->second;
}

}  // namespace oboro::backend
