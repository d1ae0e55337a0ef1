#include "oboro/math/rns.hpp"

#include <cmath>

#include "oboro/util/error.hpp"

namespace oboro::math {

RnsBase::RnsBase(std::vector<uint64_t> moduli) : values_(std::move(moduli)) {
    const size_t k = values_.size();
    for (uint64_t q : values_) {
        if (q < 2 || (q >> max_modulus_bits<uint64_t>))
            raise<ParameterError>("RNS base: modulus ", q, " out of range");
        moduli_.emplace_back(q);
    }
    qhat_inv_.resize(k);
    qhat_inv_shoup_.resize(k);
    for (size_t i = 0; i < k; ++i) {
        const Barrett<uint64_t>& br = moduli_[i].barrett;
        uint64_t prod = 1;
        for (size_t j = 0; j < k; ++j) {
            if (j == i) continue;
            const uint64_t r = br.reduce_word(values_[j]);
            if (r == 0) raise<ParameterError>("RNS base: moduli ", values_[i], " and ", values_[j], " are not coprime");
            prod = br.mul(prod, r);
        }
        qhat_inv_[i] = inv_mod<uint64_t>(prod, values_[i]);
        qhat_inv_shoup_[i] = shoup_precompute(qhat_inv_[i], values_[i]);
    }
}

namespace {
// Pointers to `count` output limbs laid out `stride` words apart.
std::vector<uint64_t*> strided(uint64_t* out, size_t stride, size_t count) {
    std::vector<uint64_t*> outs(count);
    for (size_t j = 0; j < count; ++j) outs[j] = out + j * stride;
    return outs;
}
}  // namespace

BaseConverter::BaseConverter(const RnsBase& from, const RnsBase& to) : from_(from), to_(to) {
    const size_t k = from.size(), m = to.size();
    qhat_mod_t_.resize(k * m);
    for (size_t j = 0; j < m; ++j) {
        const Barrett<uint64_t>& br = to.modulus(j).barrett;
        for (size_t i = 0; i < k; ++i) {
            uint64_t prod = 1;
            for (size_t l = 0; l < k; ++l)
                if (l != i) prod = br.mul(prod, br.reduce_word(from[l]));
            qhat_mod_t_[j * k + i] = prod;
        }
        uint64_t q_mod = 1;
        for (size_t l = 0; l < k; ++l) q_mod = br.mul(q_mod, br.reduce_word(from[l]));
        q_mod_t_.push_back(q_mod);
    }
    for (size_t i = 0; i < k; ++i) inv_from_.push_back(1.0 / double(from[i]));
}

void BaseConverter::convert(const uint64_t* in, size_t in_stride, uint64_t* out, size_t out_stride, size_t n,
                            uint64_t* scratch) const {
    convert_impl(in, in_stride, strided(out, out_stride, to_.size()).data(), n, scratch, false);
}

void BaseConverter::convert(const uint64_t* in, size_t in_stride, uint64_t* const* outs, size_t n,
                            uint64_t* scratch) const {
    convert_impl(in, in_stride, outs, n, scratch, false);
}

void BaseConverter::convert_centered(const uint64_t* in, size_t in_stride, uint64_t* out, size_t out_stride,
                                     size_t n, uint64_t* scratch) const {
    convert_impl(in, in_stride, strided(out, out_stride, to_.size()).data(), n, scratch, true);
}

void BaseConverter::convert_centered(const uint64_t* in, size_t in_stride, uint64_t* const* outs, size_t n,
                                     uint64_t* scratch) const {
    convert_impl(in, in_stride, outs, n, scratch, true);
}

void BaseConverter::centered_overflow(const uint64_t* y, size_t n, uint8_t* v) const {
    for (size_t c = 0; c < n; ++c) v[c] = uint8_t(conversion_overflow(y + c, n, inv_from_.data(), from_.size()));
}

void BaseConverter::convert_impl(const uint64_t* in, size_t in_stride, uint64_t* const* outs, size_t n,
                                 uint64_t* scratch, bool centered) const {
    const size_t k = from_.size(), m = to_.size();
    if (k == 1) {
        // One source prime (single-prime digits, one special prime): the value is x itself, or
        // x - q for the centred representative when x > q/2.
        const uint64_t q = from_[0];
        for (size_t j = 0; j < m; ++j) {
            const Barrett<uint64_t>& br = to_.modulus(j).barrett;
            const uint64_t q_mod_t = br.reduce_word(q);
            uint64_t* o = outs[j];
            for (size_t c = 0; c < n; ++c) o[c] = convert_from_one_prime(in[c], q, q_mod_t, centered, br);
        }
        return;
    }
    // y_i = [x_i * (Q/q_i)^{-1}]_{q_i}
    for (size_t i = 0; i < k; ++i) {
        const uint64_t q = from_[i], w = from_.punctured_inv(i), ws = from_.punctured_inv_shoup(i);
        const uint64_t* x = in + i * in_stride;
        uint64_t* y = scratch + i * n;
        for (size_t c = 0; c < n; ++c) y[c] = mul_shoup(x[c], w, ws, q);
    }
    // Centred: v_c = round(sum_i y_i / q_i) is the number of Q's to subtract to land in
    // [-Q/2, Q/2); estimated in double precision (an error only matters at exact ties).
    std::vector<uint8_t> v;
    if (centered) {
        v.resize(n);
        centered_overflow(scratch, n, v.data());
    }
    // out_j = sum_i y_i * (Q/q_i mod t_j) [- v * Q mod t_j] mod t_j
    std::vector<uint64_t> v_times_q(k + 1);
    for (size_t j = 0; j < m; ++j) {
        const Barrett<uint64_t>& br = to_.modulus(j).barrett;
        const uint64_t t = to_[j];
        const uint64_t* row = qhat_mod_t_.data() + j * k;
        for (size_t e = 0; e <= k; ++e) v_times_q[e] = conversion_correction(uint32_t(e), q_mod_t_[j], br);
        uint64_t* o = outs[j];
        for (size_t c = 0; c < n; ++c) {
            const uint64_t r = conversion_sum(scratch + c, n, row, k, br);
            o[c] = centered ? sub_mod(r, v_times_q[v[c]], t) : r;
        }
    }
}

}  // namespace oboro::math
