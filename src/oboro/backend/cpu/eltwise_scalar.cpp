// The scalar element-wise kernels: the reference every SIMD table is tested against, and the
// fallback for CPUs without AVX2. Plain loops over math/modarith.hpp.
#include "oboro/backend/cpu/eltwise.hpp"
#include "oboro/backend/key_switch_key.hpp"
#include "oboro/backend/cpu/word_barrett.hpp"
#include "oboro/math/modarith.hpp"

namespace oboro::backend::cpu {

using namespace oboro::math;

namespace {

void add(uint64_t* d, const uint64_t* x, const uint64_t* y, uint64_t q, size_t n) {
    for (size_t k = 0; k < n; ++k) d[k] = add_mod(x[k], y[k], q);
}

void sub(uint64_t* d, const uint64_t* x, const uint64_t* y, uint64_t q, size_t n) {
    for (size_t k = 0; k < n; ++k) d[k] = sub_mod(x[k], y[k], q);
}

void negate(uint64_t* d, const uint64_t* x, uint64_t q, size_t n) {
    for (size_t k = 0; k < n; ++k) d[k] = neg_mod(x[k], q);
}

void add_scalar(uint64_t* d, const uint64_t* x, uint64_t w, uint64_t q, size_t n) {
    for (size_t k = 0; k < n; ++k) d[k] = add_mod(x[k], w, q);
}

void mul(uint64_t* d, const uint64_t* x, const uint64_t* y, const Modulus& m, size_t n) {
    for (size_t k = 0; k < n; ++k) d[k] = m.barrett.mul(x[k], y[k]);
}

void mul_add(uint64_t* acc, const uint64_t* x, const uint64_t* y, const Modulus& m, size_t n) {
    // one reduction of (x*y + acc) instead of reducing the product and then adding
    for (size_t k = 0; k < n; ++k) acc[k] = m.barrett.reduce(mul_wide(x[k], y[k]) + acc[k]);
}

void mul_scalar(uint64_t* d, const uint64_t* x, uint64_t w, uint64_t ws, uint64_t q, size_t n) {
    for (size_t k = 0; k < n; ++k) d[k] = mul_shoup(x[k], w, ws, q);
}

void sub_mul_scalar(uint64_t* d, const uint64_t* x, const uint64_t* y, uint64_t w, uint64_t ws, uint64_t q,
                    size_t n) {
    // x - y + q is in (0, 2q): Shoup accepts any word, so no reduction before multiplying
    for (size_t k = 0; k < n; ++k) d[k] = mul_shoup(x[k] - y[k] + q, w, ws, q);
}

void mul_scalar_add(uint64_t* acc, const uint64_t* x, uint64_t w, uint64_t ws, uint64_t q, size_t n) {
    for (size_t k = 0; k < n; ++k) acc[k] = add_mod(acc[k], mul_shoup(x[k], w, ws, q), q);
}

void tensor(uint64_t* d0, uint64_t* d1, uint64_t* d2, const uint64_t* x0, const uint64_t* x1, const uint64_t* y0,
            const uint64_t* y1, const Modulus& m, size_t n) {
    for (size_t k = 0; k < n; ++k) tensor_karatsuba(x0[k], x1[k], y0[k], y1[k], m.barrett, d0[k], d1[k], d2[k]);
}

void dot2(uint64_t* o0, uint64_t* o1, const DotTerm* terms, size_t count, bool accumulate, const Modulus& m,
          size_t n) {
    const Barrett<uint64_t>& br = m.barrett;
    const size_t chunk = lazy_product_terms(m.value);
    for (size_t k = 0; k < n; ++k) {
        unsigned __int128 s0 = accumulate ? o0[k] : 0, s1 = accumulate ? o1[k] : 0;
        for (size_t j = 0; j < count; ++j) {
            if (j != 0 && j % chunk == 0) {  // keep the 128-bit sums from overflowing
                s0 = br.reduce(s0);
                s1 = br.reduce(s1);
            }
            const DotTerm& t = terms[j];
            const uint64_t v = t.x[k];
            s0 += mul_wide(v, t.y0[k]);
            s1 += mul_wide(v, t.y1[k]);
        }
        o0[k] = br.reduce(s0);
        o1[k] = br.reduce(s1);
    }
}

void convert_single(uint64_t* d, const uint64_t* x, uint64_t p, bool centered, const Modulus& m, size_t n) {
    const uint64_t p_mod_t = m.barrett.reduce_word(p);
    for (size_t k = 0; k < n; ++k) d[k] = convert_from_one_prime(x[k], p, p_mod_t, centered, m.barrett);
}

void weighted_sum(uint64_t* d, const uint64_t* y, size_t stride, size_t terms, uint64_t /*y_bound*/, const uint64_t* w,
                  const uint8_t* v, uint64_t u, uint64_t u_shoup, const Modulus& m, size_t n) {
    const Barrett<uint64_t>& br = m.barrett;
    const uint64_t t = m.value;
    for (size_t c = 0; c < n; ++c) {
        unsigned __int128 acc = 0;
        for (size_t i = 0; i < terms; ++i) {
            acc += mul_wide(y[i * stride + c], w[i]);  // < 2^124: 16 terms fit in 128 bits
            if ((i & 15) == 15) acc = br.reduce(acc);
        }
        const uint64_t r = br.reduce(acc);
        d[c] = v ? sub_mod(r, mul_shoup(uint64_t(v[c]), u, u_shoup, t), t) : r;
    }
}

}  // namespace

void unpack_key_words_portable(uint64_t* d, const uint8_t* limb, size_t n, uint32_t width, size_t begin,
                               size_t count) {
    unpack_key_words(limb, n, width, begin, count, d);
}

void permute_automorphism_portable(uint64_t* d, const uint64_t* x, const uint32_t* perm, size_t n) {
    for (size_t k = 0; k < n; ++k) d[k] = x[perm[k]];
}

void overflow_counts_portable(uint8_t* v, const uint64_t* y, size_t stride, size_t terms, const double* inv,
                              size_t n) {
    for (size_t c = 0; c < n; ++c) v[c] = uint8_t(math::conversion_overflow(y + c, stride, inv, terms));
}

namespace {
// (no streaming stores in portable code: the *_stream kernels are the ordinary ones)
const EltwiseKernels kTable{"scalar",   add,    sub,        add,        sub,            mul,
                            tensor,     negate, add_scalar, mul,        mul_add,        mul_scalar,
                            sub_mul_scalar, mul_scalar_add, tensor, dot2, convert_single, weighted_sum};
}  // namespace

const EltwiseKernels& scalar_kernels() { return kTable; }

}  // namespace oboro::backend::cpu
