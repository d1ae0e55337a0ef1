#include "oboro/math/ntt.hpp"

#include "oboro/math/modarith.hpp"
#include "oboro/math/ntt_butterfly.hpp"
#include "oboro/math/primes.hpp"
#include "oboro/util/error.hpp"

namespace oboro::math {

namespace {
// n^{-1} and n^{-1} psi_inv_rev[1] (the inverse's last stage) from t's q, n and inverse table.
void set_inverse_scaling(NttTables& t, const Barrett<uint64_t>& br) {
    t.n_inv = inv_mod<uint64_t>(t.n % t.q, t.q);
    t.n_inv_shoup = shoup_precompute(t.n_inv, t.q);
    t.last_inv = br.mul(t.n_inv, t.psi_inv_rev[1]);
    t.last_inv_shoup = shoup_precompute(t.last_inv, t.q);
}
}  // namespace

NttTables::NttTables(uint64_t modulus, uint32_t degree) : q(modulus), n(degree) {
    if (degree < 2 || (degree & (degree - 1)) != 0)
        raise<ParameterError>("NTT: degree ", degree, " is not a power of two >= 2");
    if (modulus >> max_modulus_bits<uint64_t>)
        raise<ParameterError>("NTT: modulus ", modulus, " exceeds ", max_modulus_bits<uint64_t>, " bits");
    while ((1u << log_n) < n) ++log_n;
    psi = primitive_root_2n(q, n);
    const uint64_t psi_inv = inv_mod<uint64_t>(psi, q);
    psi_rev.resize(n); psi_rev_shoup.resize(n); psi_inv_rev.resize(n); psi_inv_rev_shoup.resize(n);
    const Barrett<uint64_t> br(q);
    uint64_t pw = 1, pw_inv = 1;
    for (uint32_t i = 0; i < n; ++i) {
        const uint32_t r = bit_reverse(i, log_n);
        psi_rev[r] = pw;
        psi_inv_rev[r] = pw_inv;
        pw = br.mul(pw, psi);
        pw_inv = br.mul(pw_inv, psi_inv);
    }
    for (uint32_t i = 0; i < n; ++i) {
        psi_rev_shoup[i] = shoup_precompute(psi_rev[i], q);
        psi_inv_rev_shoup[i] = shoup_precompute(psi_inv_rev[i], q);
    }
    set_inverse_scaling(*this, br);
}

NttTables::NttTables(const NttTables& full, uint32_t degree) : q(full.q), n(degree) {
    if (degree < 2 || (degree & (degree - 1)) != 0 || degree > full.n)
        raise<ParameterError>("NTT: degree ", degree, " is not a power of two in 2..", full.n);
    while ((1u << log_n) < n) ++log_n;
    const Barrett<uint64_t> br(q);
    psi = full.psi;
    for (uint32_t m = full.n; m > n; m >>= 1) psi = br.mul(psi, psi);
    psi_rev.assign(full.psi_rev.begin(), full.psi_rev.begin() + n);
    psi_rev_shoup.assign(full.psi_rev_shoup.begin(), full.psi_rev_shoup.begin() + n);
    psi_inv_rev.assign(full.psi_inv_rev.begin(), full.psi_inv_rev.begin() + n);
    psi_inv_rev_shoup.assign(full.psi_inv_rev_shoup.begin(), full.psi_inv_rev_shoup.begin() + n);
    set_inverse_scaling(*this, br);
}

void ntt_forward_lazy(uint64_t* a, const NttTables& tb) {
    const uint64_t q = tb.q;
    const uint32_t n = tb.n;
    const uint64_t* w = tb.psi_rev.data();
    const uint64_t* ws = tb.psi_rev_shoup.data();
    uint32_t t = n;
    for (uint32_t m = 1; m < n; m <<= 1) {
        t >>= 1;
        for (uint32_t i = 0; i < m; ++i) {
            const uint64_t s = w[m + i], s_shoup = ws[m + i];
            uint64_t* x = a + 2 * i * t;
            uint64_t* y = x + t;
            for (uint32_t j = 0; j < t; ++j) ntt_forward_butterfly(x[j], y[j], s, s_shoup, q);
        }
    }
}

void ntt_forward(uint64_t* a, const NttTables& tb) {
    ntt_forward_lazy(a, tb);
    for (uint32_t j = 0; j < tb.n; ++j) a[j] = ntt_forward_final_reduce(a[j], tb.q);
}

void ntt_inverse(uint64_t* a, const NttTables& tb) {
    const uint64_t q = tb.q;
    const uint32_t n = tb.n;
    const uint64_t* w = tb.psi_inv_rev.data();
    const uint64_t* ws = tb.psi_inv_rev_shoup.data();
    uint32_t t = 1;
    for (uint32_t m = n; m > 2; m >>= 1) {
        const uint32_t h = m >> 1;
        for (uint32_t i = 0; i < h; ++i) {
            const uint64_t s = w[h + i], s_shoup = ws[h + i];
            uint64_t* x = a + 2 * i * t;
            uint64_t* y = x + t;
            for (uint32_t j = 0; j < t; ++j) ntt_inverse_butterfly(x[j], y[j], s, s_shoup, q);
        }
        t <<= 1;
    }
    // Last stage (m = 2) with n^{-1} folded in, output reduced to [0, q).
    uint64_t* x = a;
    uint64_t* y = a + t;
    for (uint32_t j = 0; j < t; ++j)
        ntt_inverse_last_butterfly(x[j], y[j], tb.n_inv, tb.n_inv_shoup, tb.last_inv, tb.last_inv_shoup, q);
}

}  // namespace oboro::math
