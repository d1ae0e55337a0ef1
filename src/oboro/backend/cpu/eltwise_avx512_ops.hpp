// The AVX-512 vector operations of eltwise_simd.hpp (8 lanes of 64 bits), for the AVX-512 table
// (eltwise_avx512.cpp) and the AVX-512 IFMA table built on it (eltwise_avx512ifma.cpp).
// AVX-512F/DQ have a 64-bit low multiply (vpmullq), unsigned 64-bit compares into mask registers
// and an unsigned 64-bit min, but still no 64-bit high multiply: that one comes from four
// vpmuludq (eltwise_simd.hpp).
//
// Include it only after an OBORO_SIMD_TARGET_BEGIN that enables AVX-512F/DQ; it has internal
// linkage, so each file's copy is compiled for that file's target.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

namespace oboro::backend::cpu {
namespace {

struct Avx512Ops {
    using reg = __m512i;
    using count = __m128i;
    static constexpr size_t lanes = 8;

    static reg load(const uint64_t* p) { return _mm512_loadu_si512(p); }
    static void store(uint64_t* p, reg v) { _mm512_storeu_si512(p, v); }
    static void stream(uint64_t* p, reg v) { _mm512_stream_si512(reinterpret_cast<__m512i*>(p), v); }
    static void store_fence() { _mm_sfence(); }
    static reg set1(uint64_t v) { return _mm512_set1_epi64(static_cast<long long>(v)); }
    static reg zero() { return _mm512_setzero_si512(); }
    static reg add(reg a, reg b) { return _mm512_add_epi64(a, b); }
    static reg sub(reg a, reg b) { return _mm512_sub_epi64(a, b); }
    static reg and_(reg a, reg b) { return _mm512_and_si512(a, b); }
    static reg or_(reg a, reg b) { return _mm512_or_si512(a, b); }
    static reg srli32(reg a) { return _mm512_srli_epi64(a, 32); }
    static reg slli32(reg a) { return _mm512_slli_epi64(a, 32); }
    static count shift_count(int s) { return _mm_cvtsi32_si128(s); }
    static reg sll(reg a, count c) { return _mm512_sll_epi64(a, c); }
    static reg srl(reg a, count c) { return _mm512_srl_epi64(a, c); }
    static reg mul32(reg a, reg b) { return _mm512_mul_epu32(a, b); }
    static reg mullo(reg a, reg b) { return _mm512_mullo_epi64(a, b); }

    // x >= m ? x - m : x as min(x, x - m): when x < m, x - m wraps above x (valid for any x, m)
    static reg cond_sub(reg x, reg m) { return _mm512_min_epu64(x, sub(x, m)); }

    // x - y, or x - y + q where it wrapped (then d + q < d)
    static reg sub_mod(reg x, reg y, reg q) {
        const reg d = sub(x, y);
        return _mm512_min_epu64(d, add(d, q));
    }

    static reg neg_mod(reg x, reg q) { return _mm512_maskz_sub_epi64(_mm512_test_epi64_mask(x, x), q, x); }

    static void add_carry(reg& hi, reg& lo, reg v) {
        lo = add(lo, v);
        const __mmask8 carry = _mm512_cmplt_epu64_mask(lo, v);
        hi = _mm512_mask_add_epi64(hi, carry, hi, set1(1));
    }
};

}  // namespace
}  // namespace oboro::backend::cpu
