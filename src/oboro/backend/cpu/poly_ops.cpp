#include "oboro/backend/cpu/poly_ops.hpp"

#include "oboro/backend/cpu/ntt_simd.hpp"

#include "oboro/math/modarith.hpp"
#include "oboro/util/parallel.hpp"

namespace oboro::backend::cpu {

using namespace oboro::math;

namespace {

// Element-wise loops without 64x64-bit products vectorize: each gets AVX-512, AVX2 and generic
// versions, chosen at load time for the CPU at hand (GCC function multi-versioning).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define OBORO_SIMD_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define OBORO_SIMD_CLONES
#endif

// Branch-free forms of the conditional subtraction, so that the loops vectorize.
OBORO_SIMD_CLONES void add_limb(uint64_t* d, const uint64_t* x, const uint64_t* y, uint64_t q, size_t n) {
    for (size_t k = 0; k < n; ++k) {
        const uint64_t s = x[k] + y[k];
        d[k] = s >= q ? s - q : s;
    }
}

OBORO_SIMD_CLONES void sub_limb(uint64_t* d, const uint64_t* x, const uint64_t* y, uint64_t q, size_t n) {
    for (size_t k = 0; k < n; ++k) {
        const uint64_t s = x[k] - y[k];
        d[k] = x[k] >= y[k] ? s : s + q;
    }
}

OBORO_SIMD_CLONES void negate_limb(uint64_t* d, const uint64_t* x, uint64_t q, size_t n) {
    for (size_t k = 0; k < n; ++k) d[k] = x[k] == 0 ? 0 : q - x[k];
}

OBORO_SIMD_CLONES void add_scalar_limb(uint64_t* d, const uint64_t* x, uint64_t w, uint64_t q, size_t n) {
    for (size_t k = 0; k < n; ++k) {
        const uint64_t s = x[k] + w;
        d[k] = s >= q ? s - q : s;
    }
}

// Run body(limb) for every limb; element-wise kernels are cheap, so small inputs stay inline.
template <typename F> void for_each_limb(size_t limbs, size_t n, F&& body) {
    if (limbs * n < (size_t(1) << 15)) {
        for (size_t i = 0; i < limbs; ++i) body(i);
    } else {
        parallel_for(limbs, body);
    }
}
}  // namespace

void add(uint64_t* dst, const uint64_t* a, const uint64_t* b, const Modulus* mods, size_t limbs, size_t n) {
    for_each_limb(limbs, n, [&](size_t i) { add_limb(dst + i * n, a + i * n, b + i * n, mods[i].value, n); });
}

void sub(uint64_t* dst, const uint64_t* a, const uint64_t* b, const Modulus* mods, size_t limbs, size_t n) {
    for_each_limb(limbs, n, [&](size_t i) { sub_limb(dst + i * n, a + i * n, b + i * n, mods[i].value, n); });
}

void negate(uint64_t* dst, const uint64_t* a, const Modulus* mods, size_t limbs, size_t n) {
    for_each_limb(limbs, n, [&](size_t i) { negate_limb(dst + i * n, a + i * n, mods[i].value, n); });
}

void mul(uint64_t* dst, const uint64_t* a, const uint64_t* b, const Modulus* mods, size_t limbs, size_t n) {
    for_each_limb(limbs, n, [&](size_t i) {
        const Barrett<uint64_t>& br = mods[i].barrett;
        const uint64_t *x = a + i * n, *y = b + i * n;
        uint64_t* d = dst + i * n;
        for (size_t k = 0; k < n; ++k) d[k] = br.mul(x[k], y[k]);
    });
}

void mul_add(uint64_t* dst, const uint64_t* a, const uint64_t* b, const Modulus* mods, size_t limbs, size_t n) {
    for_each_limb(limbs, n, [&](size_t i) {
        const Barrett<uint64_t>& br = mods[i].barrett;
        const uint64_t *x = a + i * n, *y = b + i * n;
        uint64_t* d = dst + i * n;
        // one reduction of (a*b + d) instead of reducing the product and then adding
        for (size_t k = 0; k < n; ++k) d[k] = br.reduce(mul_wide(x[k], y[k]) + d[k]);
    });
}

void mul_scalar(uint64_t* dst, const uint64_t* a, const uint64_t* s, const Modulus* mods, size_t limbs, size_t n) {
    for_each_limb(limbs, n, [&](size_t i) {
        const uint64_t q = mods[i].value, w = s[i], ws = shoup_precompute(w, q);
        const uint64_t* x = a + i * n;
        uint64_t* d = dst + i * n;
        for (size_t k = 0; k < n; ++k) d[k] = mul_shoup(x[k], w, ws, q);
    });
}

void add_scalar(uint64_t* dst, const uint64_t* a, const uint64_t* s, const Modulus* mods, size_t limbs, size_t n) {
    for_each_limb(limbs, n, [&](size_t i) { add_scalar_limb(dst + i * n, a + i * n, s[i], mods[i].value, n); });
}

void sub_mul_scalar(uint64_t* dst, const uint64_t* a, const uint64_t* b, const uint64_t* s, const Modulus* mods,
                    size_t limbs, size_t n) {
    for_each_limb(limbs, n, [&](size_t i) {
        const uint64_t q = mods[i].value, w = s[i], ws = shoup_precompute(w, q);
        const uint64_t *x = a + i * n, *y = b + i * n;
        uint64_t* d = dst + i * n;
        // x - y + q is in (0, 2q): Shoup accepts any word, so no reduction before multiplying
        for (size_t k = 0; k < n; ++k) d[k] = mul_shoup(x[k] - y[k] + q, w, ws, q);
    });
}

void tensor(uint64_t* d0, uint64_t* d1, uint64_t* d2, const uint64_t* a0, const uint64_t* a1, const uint64_t* b0,
            const uint64_t* b1, const Modulus* mods, size_t limbs, size_t n) {
    for_each_limb(limbs, n, [&](size_t i) {
        const Barrett<uint64_t>& br = mods[i].barrett;
        const uint64_t q = mods[i].value;
        const size_t off = i * n;
        for (size_t k = 0; k < n; ++k) {
            const uint64_t x0 = a0[off + k], x1 = a1[off + k], y0 = b0[off + k], y1 = b1[off + k];
            const uint64_t p00 = br.mul(x0, y0), p11 = br.mul(x1, y1);
            const uint64_t cross = br.mul(add_mod(x0, x1, q), add_mod(y0, y1, q));
            d0[off + k] = p00;
            d1[off + k] = sub_mod(sub_mod(cross, p00, q), p11, q);
            d2[off + k] = p11;
        }
    });
}

void ntt_forward_limb(uint64_t* a, const NttTables& table) {
    if (table.n >= 16 && simd_enabled()) ntt_forward_avx512(a, table);
    else math::ntt_forward(a, table);
}

void ntt_inverse_limb(uint64_t* a, const NttTables& table) {
    if (table.n >= 16 && simd_enabled()) ntt_inverse_avx512(a, table);
    else math::ntt_inverse(a, table);
}

void ntt_forward(uint64_t* data, const NttTables* tables, size_t limbs) {
    if (limbs == 0) return;
    const size_t n = tables[0].n;
    parallel_for(limbs, [&](size_t i) { ntt_forward_limb(data + i * n, tables[i]); });
}

void ntt_inverse(uint64_t* data, const NttTables* tables, size_t limbs) {
    if (limbs == 0) return;
    const size_t n = tables[0].n;
    parallel_for(limbs, [&](size_t i) { ntt_inverse_limb(data + i * n, tables[i]); });
}

void permute(uint64_t* dst, const uint64_t* src, const uint32_t* perm, size_t limbs, size_t n) {
    for_each_limb(limbs, n, [&](size_t i) {
        const uint64_t* s = src + i * n;
        uint64_t* d = dst + i * n;
        for (size_t k = 0; k < n; ++k) d[k] = s[perm[k]];
    });
}

void broadcast_reduce(uint64_t* dst, const uint64_t* src, const Modulus* mods, size_t limbs, size_t n) {
    for_each_limb(limbs, n, [&](size_t i) {
        const Barrett<uint64_t>& br = mods[i].barrett;
        uint64_t* d = dst + i * n;
        for (size_t k = 0; k < n; ++k) d[k] = br.reduce_word(src[k]);
    });
}

}  // namespace oboro::backend::cpu
