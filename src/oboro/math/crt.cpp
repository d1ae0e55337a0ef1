#include "oboro/math/crt.hpp"

#include <algorithm>
#include <cmath>

#include "oboro/util/parallel.hpp"

namespace oboro::math {

namespace {
using u128 = unsigned __int128;

// acc[0..len) *= m (acc must have a spare top word)
void mul_word(uint64_t* acc, size_t len, uint64_t m) {
    uint64_t carry = 0;
    for (size_t w = 0; w < len; ++w) {
        const u128 p = (u128)acc[w] * m + carry;
        acc[w] = uint64_t(p);
        carry = uint64_t(p >> 64);
    }
}

// a >= b ?
bool geq(const uint64_t* a, const uint64_t* b, size_t len) {
    for (size_t w = len; w-- > 0;) {
        if (a[w] != b[w]) return a[w] > b[w];
    }
    return true;
}

// a = b - a (b >= a), in place
void subtract_from(uint64_t* a, const uint64_t* b, size_t len) {
    uint64_t borrow = 0;
    for (size_t w = 0; w < len; ++w) {
        const u128 d = (u128)b[w] - a[w] - borrow;
        a[w] = uint64_t(d);
        borrow = uint64_t(d >> 64) ? 1 : 0;
    }
}

unsigned __int128 low_128(const uint64_t* a, size_t len) {
    return len > 1 ? (unsigned __int128)a[1] << 64 | a[0] : a[0];
}

long double words_to_long_double(const uint64_t* a, size_t len) {
    long double v = 0;
    for (size_t w = len; w-- > 0;) v = v * 18446744073709551616.0L + (long double)a[w];
    return v;
}
}  // namespace

CrtReconstructor::CrtReconstructor(const RnsBase& base) : base_(base) {
    const size_t k = base.size();
    words_ = k + 1;
    q_words_.assign(words_, 0);
    q_words_[0] = 1;
    for (size_t i = 0; i < k; ++i) mul_word(q_words_.data(), words_, base[i]);
    half_q_words_ = q_words_;
    for (size_t w = 0; w < words_; ++w) {  // shift right by one bit
        half_q_words_[w] = (q_words_[w] >> 1) | (w + 1 < words_ ? (q_words_[w + 1] << 63) : 0);
    }
    qhat_words_.assign(k * words_, 0);
    for (size_t i = 0; i < k; ++i) {
        uint64_t* qh = qhat_words_.data() + i * words_;
        qh[0] = 1;
        for (size_t j = 0; j < k; ++j)
            if (j != i) mul_word(qh, words_, base[j]);
        qhat_low_.push_back(low_128(qh, words_));
        inverse_q_.push_back(1.0 / double(base[i]));
    }
    q_low_ = low_128(q_words_.data(), words_);
    widest_ = size_t(std::max_element(base.values().begin(), base.values().end()) - base.values().begin());
    const bool q_below_2_128 = std::all_of(q_words_.begin() + std::min<size_t>(2, words_), q_words_.end(),
                                           [](uint64_t w) { return w == 0; });
    const unsigned __int128 max_signed = ~(unsigned __int128)0 >> 1;
    small_limit_ = q_below_2_128 ? low_128(half_q_words_.data(), words_) : max_signed;
}

bool CrtReconstructor::matches(unsigned __int128 magnitude, bool negative, const uint64_t* residues,
                               size_t stride) const {
    const bool one_word = (magnitude >> 64) == 0;  // the usual case: one word, reduced with one product
    for (size_t i = 0; i < base_.size(); ++i) {
        const Barrett<uint64_t>& br = base_.modulus(i).barrett;
        const uint64_t r = one_word ? br.reduce_word(uint64_t(magnitude)) : br.reduce(magnitude);
        if ((negative ? neg_mod(r, base_[i]) : r) != residues[i * stride]) return false;
    }
    return true;
}

bool CrtReconstructor::reconstruct_small(const uint64_t* residues, size_t stride, unsigned __int128& magnitude,
                                         bool& negative) const {
    // The centred residue of the widest prime, if every other residue agrees.
    const uint64_t r = residues[widest_ * stride], q = base_[widest_];
    negative = r > q / 2;
    magnitude = negative ? q - r : r;
    if (matches(magnitude, negative, residues, stride)) return true;
    // The CRT sum modulo 2^128, less the estimated multiple of Q.
    const size_t k = base_.size();
    unsigned __int128 x = 0;
    double quotient = 0;
    for (size_t i = 0; i < k; ++i) {
        const uint64_t y = mul_shoup(residues[i * stride], base_.punctured_inv(i), base_.punctured_inv_shoup(i), base_[i]);
        x += qhat_low_[i] * y;
        quotient += double(y) * inverse_q_[i];
    }
    x -= q_low_ * (unsigned __int128)(uint64_t(quotient + 0.5));
    negative = x >> 127;
    magnitude = negative ? -x : x;
    return magnitude <= small_limit_ && matches(magnitude, negative, residues, stride);
}

void CrtReconstructor::reconstruct(const uint64_t* residues, size_t stride, uint64_t* acc, bool& negative) const {
    const size_t k = base_.size();
    std::fill(acc, acc + words_ + 1, 0);
    // acc = sum_i [x_i * (Q/q_i)^{-1}]_{q_i} * (Q/q_i)  <  k * Q
    for (size_t i = 0; i < k; ++i) {
        const uint64_t y = mul_shoup(residues[i * stride], base_.punctured_inv(i), base_.punctured_inv_shoup(i), base_[i]);
        const uint64_t* qh = qhat_words_.data() + i * words_;
        uint64_t carry = 0;
        for (size_t w = 0; w < words_; ++w) {
            const u128 p = (u128)qh[w] * y + acc[w] + carry;
            acc[w] = uint64_t(p);
            carry = uint64_t(p >> 64);
        }
        acc[words_] += carry;
    }
    while (acc[words_] != 0 || geq(acc, q_words_.data(), words_)) {
        // subtract Q (including the spare top word)
        uint64_t borrow = 0;
        for (size_t w = 0; w < words_; ++w) {
            const u128 d = (u128)acc[w] - q_words_[w] - borrow;
            acc[w] = uint64_t(d);
            borrow = uint64_t(d >> 64) ? 1 : 0;
        }
        acc[words_] -= borrow;
    }
    negative = !geq(half_q_words_.data(), acc, words_);  // acc > Q/2
    if (negative) subtract_from(acc, q_words_.data(), words_);
}

long double CrtReconstructor::to_long_double(const uint64_t* residues) const {
    std::vector<uint64_t> acc(words_ + 1);
    bool negative = false;
    reconstruct(residues, 1, acc.data(), negative);
    const long double mag = words_to_long_double(acc.data(), words_);
    return negative ? -mag : mag;
}

void CrtReconstructor::to_double(const uint64_t* limbs, size_t stride, size_t n, double multiplier, double* out) const {
    // Chunks of coefficients over the pool: each value is independent, and a chunk of this size
    // is tens of microseconds of work even on one limb.
    constexpr size_t chunk = 2048;
    parallel_for((n + chunk - 1) / chunk, [&](size_t c0) {
        std::vector<uint64_t> acc(words_ + 1);
        for (size_t c = c0 * chunk; c < std::min(n, (c0 + 1) * chunk); ++c) {
            bool negative = false;
            unsigned __int128 small = 0;
            long double mag;
            if (reconstruct_small(limbs + c, stride, small, negative)) {
                // rounded once, as words_to_long_double rounds a two-word value
                mag = (small >> 64) == 0 ? (long double)uint64_t(small) : (long double)small;
            } else {
                reconstruct(limbs + c, stride, acc.data(), negative);
                mag = words_to_long_double(acc.data(), words_);
            }
            out[c] = double((negative ? -mag : mag) * (long double)multiplier);
        }
    });
}

}  // namespace oboro::math
