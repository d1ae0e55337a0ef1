#include "oboro/backend/cpu/ntt_simd.hpp"

#include <atomic>

#include "oboro/math/modarith.hpp"
#include "oboro/math/ntt.hpp"

namespace oboro::backend::cpu {
namespace {
std::atomic<bool> g_simd_enabled{true};
}  // namespace

bool simd_available() {
    static const bool ok = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
    return ok;
}

bool ifma_available() {
    static const bool ok = simd_available() && __builtin_cpu_supports("avx512ifma");
    return ok;
}

void set_simd_enabled(bool enabled) { g_simd_enabled = enabled; }
bool simd_enabled() { return g_simd_enabled && simd_available(); }
bool simd_requested() { return g_simd_enabled; }

}  // namespace oboro::backend::cpu

#include "oboro/util/simd_target.hpp"

OBORO_SIMD_TARGET_BEGIN("avx512f,avx512dq")

#include "oboro/backend/cpu/ntt_avx512_stages.hpp"

namespace oboro::backend::cpu {
namespace {

// The high 64 bits of the 64x64-bit products, lane by lane, from three 32x32-bit products
// (AVX-512 has no 64-bit high multiply), low by 0, 1 or 2: a*b = hh*2^64 + (lh + hl)*2^32 + ll,
// and the carry that the low 32 bits of lh and hl and the high 32 bits of ll would add to the high
// word (their sum is below 3*2^32) is left out. That drops the fourth product and five of the
// exact form's additions, shifts and masks.
inline __m512i mulhi_epu64_low_by_2(__m512i a, __m512i b) {
    const __m512i a_hi = _mm512_srli_epi64(a, 32), b_hi = _mm512_srli_epi64(b, 32);
    const __m512i lh = _mm512_mul_epu32(a, b_hi);
    const __m512i hl = _mm512_mul_epu32(a_hi, b);
    const __m512i hh = _mm512_mul_epu32(a_hi, b_hi);
    return _mm512_add_epi64(hh, _mm512_add_epi64(_mm512_srli_epi64(lh, 32), _mm512_srli_epi64(hl, 32)));
}

// 64-bit Shoup products for any prime below 2^62. math::mul_shoup_lazy's quotient
// floor(a*w_shoup/2^64) leaves a*w - quotient*q in [0, 2q); a quotient low by at most 2 leaves it
// in [0, 4q) (below 2^64, so the wrapped 64-bit arithmetic is exact), and one conditional
// subtraction of 2q brings it back to [0, 2q), the bound the butterflies need. The canonical
// outputs of the transform are the same as with the exact quotient.
struct Shoup64 {
    __m512i q, two_q;
    explicit Shoup64(uint64_t modulus)
        : q(_mm512_set1_epi64(int64_t(modulus))), two_q(_mm512_set1_epi64(int64_t(2 * modulus))) {}
    __m512i companion(__m512i w_shoup) const { return w_shoup; }
    __m512i mul_lazy(__m512i a, __m512i w, __m512i w_shoup) const {
        const __m512i qhat = mulhi_epu64_low_by_2(a, w_shoup);
        return reduce_below(_mm512_sub_epi64(_mm512_mullo_epi64(a, w), _mm512_mullo_epi64(qhat, q)), two_q);
    }
};

}  // namespace

void ntt_forward_avx512(uint64_t* a, const math::NttTables& t) { ntt_forward_stages<Shoup64>(a, t); }
void ntt_inverse_avx512(uint64_t* a, const math::NttTables& t) { ntt_inverse_stages<Shoup64>(a, t); }

}  // namespace oboro::backend::cpu

OBORO_SIMD_TARGET_END
