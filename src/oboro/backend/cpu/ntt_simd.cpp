#include "oboro/backend/cpu/ntt_simd.hpp"

#include <immintrin.h>

#include <atomic>

#include "oboro/math/modarith.hpp"

namespace oboro::backend::cpu {

namespace {
std::atomic<bool> g_simd_enabled{true};

#define OBORO_AVX512 __attribute__((target("avx512f,avx512dq")))

// High 64 bits of the 64x64-bit products, lane by lane, from four 32x32-bit products
// (AVX-512 has no 64-bit high multiply).
OBORO_AVX512 inline __m512i mulhi_epu64(__m512i a, __m512i b) {
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

// a * w mod q in [0, 2q) for a fixed w with w_shoup = floor(w * 2^64 / q): the same formula as
// math::mul_shoup_lazy.
OBORO_AVX512 inline __m512i mul_shoup_lazy(__m512i a, __m512i w, __m512i w_shoup, __m512i q) {
    const __m512i qhat = mulhi_epu64(a, w_shoup);
    return _mm512_sub_epi64(_mm512_mullo_epi64(a, w), _mm512_mullo_epi64(qhat, q));
}

// x >= m ? x - m : x, as min(x, x - m) (x - m wraps around when x < m)
OBORO_AVX512 inline __m512i reduce_below(__m512i x, __m512i m) { return _mm512_min_epu64(x, _mm512_sub_epi64(x, m)); }
}  // namespace

bool simd_available() {
    static const bool ok = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
    return ok;
}

void set_simd_enabled(bool enabled) { g_simd_enabled = enabled; }
bool simd_enabled() { return g_simd_enabled && simd_available(); }
bool simd_requested() { return g_simd_enabled; }
const char* ntt_implementation() { return simd_enabled() ? "avx512" : "scalar"; }

OBORO_AVX512 void ntt_forward_avx512(uint64_t* a, const math::NttTables& tb) {
    const uint64_t q = tb.q, two_q = 2 * q;
    const uint32_t n = tb.n;
    const __m512i vq = _mm512_set1_epi64(int64_t(q)), v2q = _mm512_set1_epi64(int64_t(two_q));
    uint32_t t = n;
    uint32_t m = 1;
    // Stages whose butterfly distance t is at least 8: 8 butterflies per vector.
    for (; m < n && (t >> 1) >= 8; m <<= 1) {
        t >>= 1;
        for (uint32_t i = 0; i < m; ++i) {
            const __m512i w = _mm512_set1_epi64(int64_t(tb.psi_rev[m + i]));
            const __m512i ws = _mm512_set1_epi64(int64_t(tb.psi_rev_shoup[m + i]));
            uint64_t* x = a + 2 * i * t;
            uint64_t* y = x + t;
            for (uint32_t j = 0; j < t; j += 8) {
                __m512i u = _mm512_loadu_si512(x + j);
                u = reduce_below(u, v2q);
                const __m512i v = mul_shoup_lazy(_mm512_loadu_si512(y + j), w, ws, vq);
                _mm512_storeu_si512(x + j, _mm512_add_epi64(u, v));
                _mm512_storeu_si512(y + j, _mm512_add_epi64(_mm512_sub_epi64(u, v), v2q));
            }
        }
    }
    // The last stages (t < 8) in scalar code, identical to math::ntt_forward_lazy.
    for (; m < n; m <<= 1) {
        t >>= 1;
        for (uint32_t i = 0; i < m; ++i) {
            const uint64_t s = tb.psi_rev[m + i], s_shoup = tb.psi_rev_shoup[m + i];
            uint64_t* x = a + 2 * i * t;
            uint64_t* y = x + t;
            for (uint32_t j = 0; j < t; ++j) {
                uint64_t u = x[j];
                u = u >= two_q ? u - two_q : u;
                const uint64_t v = math::mul_shoup_lazy(y[j], s, s_shoup, q);
                x[j] = u + v;
                y[j] = u - v + two_q;
            }
        }
    }
    // Final reduction from [0, 4q) to [0, q).
    uint32_t j = 0;
    for (; j + 8 <= n; j += 8) {
        const __m512i v = _mm512_loadu_si512(a + j);
        _mm512_storeu_si512(a + j, reduce_below(reduce_below(v, v2q), vq));
    }
    for (; j < n; ++j) {
        uint64_t v = a[j];
        v = v >= two_q ? v - two_q : v;
        a[j] = v >= q ? v - q : v;
    }
}

OBORO_AVX512 void ntt_inverse_avx512(uint64_t* a, const math::NttTables& tb) {
    const uint64_t q = tb.q, two_q = 2 * q;
    const uint32_t n = tb.n;
    const __m512i vq = _mm512_set1_epi64(int64_t(q)), v2q = _mm512_set1_epi64(int64_t(two_q));
    uint32_t t = 1;
    for (uint32_t m = n; m > 2; m >>= 1) {
        const uint32_t h = m >> 1;
        for (uint32_t i = 0; i < h; ++i) {
            const uint64_t s = tb.psi_inv_rev[h + i], s_shoup = tb.psi_inv_rev_shoup[h + i];
            uint64_t* x = a + 2 * i * t;
            uint64_t* y = x + t;
            if (t >= 8) {
                const __m512i w = _mm512_set1_epi64(int64_t(s)), ws = _mm512_set1_epi64(int64_t(s_shoup));
                for (uint32_t j = 0; j < t; j += 8) {
                    const __m512i u = _mm512_loadu_si512(x + j), v = _mm512_loadu_si512(y + j);
                    _mm512_storeu_si512(x + j, reduce_below(_mm512_add_epi64(u, v), v2q));
                    _mm512_storeu_si512(y + j, mul_shoup_lazy(_mm512_add_epi64(_mm512_sub_epi64(u, v), v2q), w, ws, vq));
                }
            } else {
                for (uint32_t j = 0; j < t; ++j) {
                    const uint64_t u = x[j], v = y[j];
                    const uint64_t sum = u + v;
                    x[j] = sum >= two_q ? sum - two_q : sum;
                    y[j] = math::mul_shoup_lazy(u - v + two_q, s, s_shoup, q);
                }
            }
        }
        t <<= 1;
    }
    // Last stage with n^{-1} folded in (t = n/2 >= 8 for n >= 16).
    uint64_t* x = a;
    uint64_t* y = a + t;
    const __m512i ni = _mm512_set1_epi64(int64_t(tb.n_inv)), nis = _mm512_set1_epi64(int64_t(tb.n_inv_shoup));
    const __m512i li = _mm512_set1_epi64(int64_t(tb.last_inv)), lis = _mm512_set1_epi64(int64_t(tb.last_inv_shoup));
    uint32_t j = 0;
    for (; j + 8 <= t; j += 8) {
        const __m512i u = _mm512_loadu_si512(x + j), v = _mm512_loadu_si512(y + j);
        _mm512_storeu_si512(x + j, reduce_below(mul_shoup_lazy(_mm512_add_epi64(u, v), ni, nis, vq), vq));
        _mm512_storeu_si512(y + j, reduce_below(mul_shoup_lazy(_mm512_add_epi64(_mm512_sub_epi64(u, v), v2q), li, lis, vq), vq));
    }
    for (; j < t; ++j) {
        const uint64_t u = x[j], v = y[j];
        x[j] = math::reduce_once(math::mul_shoup_lazy(u + v, tb.n_inv, tb.n_inv_shoup, q), q);
        y[j] = math::reduce_once(math::mul_shoup_lazy(u - v + two_q, tb.last_inv, tb.last_inv_shoup, q), q);
    }
}

}  // namespace oboro::backend::cpu
