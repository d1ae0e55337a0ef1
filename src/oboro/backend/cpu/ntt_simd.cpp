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
const char* ntt_implementation() {
    return !simd_enabled() ? "scalar" : ifma_available() ? "avx512+ifma" : "avx512";
}

}  // namespace oboro::backend::cpu

#include "oboro/backend/cpu/simd_target.hpp"

OBORO_SIMD_TARGET_BEGIN("avx512f,avx512dq")

#include "oboro/backend/cpu/ntt_avx512_stages.hpp"

namespace oboro::backend::cpu {
namespace {

// High 64 bits of the 64x64-bit products, lane by lane, from four 32x32-bit products
// (AVX-512 has no 64-bit high multiply).
inline __m512i mulhi_epu64(__m512i a, __m512i b) {
    const __m512i lo_mask = _mm512_set1_epi64(0xffffffff);
    const __m512i a_hi = _mm512_srli_epi64(a, 32), b_hi = _mm512_srli_epi64(b, 32);
    const __m512i ll = _mm512_mul_epu32(a, b);
    const __m512i lh = _mm512_mul_epu32(a, b_hi);
    const __m512i hl = _mm512_mul_epu32(a_hi, b);
    const __m512i hh = _mm512_mul_epu32(a_hi, b_hi);
    const __m512i mid = _mm512_add_epi64(_mm512_add_epi64(_mm512_srli_epi64(ll, 32), _mm512_and_si512(lh, lo_mask)),
                                         _mm512_and_si512(hl, lo_mask));
    return _mm512_add_epi64(_mm512_add_epi64(hh, _mm512_srli_epi64(lh, 32)),
                            _mm512_add_epi64(_mm512_srli_epi64(hl, 32), _mm512_srli_epi64(mid, 32)));
}

// 64-bit Shoup products, the same formula as math::mul_shoup_lazy: any prime below 2^62.
struct Shoup64 {
    __m512i q;
    explicit Shoup64(uint64_t modulus) : q(_mm512_set1_epi64(int64_t(modulus))) {}
    __m512i companion(__m512i w_shoup) const { return w_shoup; }
    __m512i mul_lazy(__m512i a, __m512i w, __m512i w_shoup) const {
        const __m512i qhat = mulhi_epu64(a, w_shoup);
        return _mm512_sub_epi64(_mm512_mullo_epi64(a, w), _mm512_mullo_epi64(qhat, q));
    }
};

}  // namespace

void ntt_forward_avx512(uint64_t* a, const math::NttTables& t) { ntt_forward_stages<Shoup64>(a, t); }
void ntt_inverse_avx512(uint64_t* a, const math::NttTables& t) { ntt_inverse_stages<Shoup64>(a, t); }

}  // namespace oboro::backend::cpu

OBORO_SIMD_TARGET_END
