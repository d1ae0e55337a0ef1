#include "oboro/ckks/sampling.hpp"

#include <cmath>

#include "oboro/backend/cpu/poly_ops.hpp"
#include "oboro/util/error.hpp"

namespace oboro::ckks {

std::vector<int8_t> sample_ternary(math::Prng& prng, size_t n) {
    std::vector<int8_t> s(n);
    for (auto& c : s) c = int8_t(int(prng.uniform(3)) - 1);
    return s;
}

std::vector<int8_t> sample_sparse_ternary(math::Prng& prng, size_t n, int h) {
    if (h <= 0 || size_t(h) > n) raise<ParameterError>("sparse secret: hamming weight ", h, " not in 1..", n);
    std::vector<int8_t> s(n, 0);
    // Floyd's algorithm: h distinct positions, each subset equally likely.
    for (size_t j = n - size_t(h); j < n; ++j) {
        const size_t t = size_t(prng.uniform(j + 1));
        const size_t pos = s[t] != 0 ? j : t;
        s[pos] = (prng.next_u32() & 1) ? 1 : -1;
    }
    return s;
}

std::vector<int64_t> sample_gaussian(math::Prng& prng, size_t n, double sigma) {
    std::vector<int64_t> e(n);
    const double bound = 6 * sigma;
    for (size_t i = 0; i < n; i += 2) {
        // Box-Muller: two independent normals from two uniforms; redraw the rare tail values.
        double z0, z1;
        do {
            const double u1 = 1.0 - prng.uniform_double();  // (0, 1]
            const double u2 = prng.uniform_double();
            const double r = sigma * std::sqrt(-2.0 * std::log(u1));
            z0 = r * std::cos(2 * M_PI * u2);
            z1 = r * std::sin(2 * M_PI * u2);
        } while (std::fabs(z0) > bound || std::fabs(z1) > bound);
        e[i] = std::llround(z0);
        if (i + 1 < n) e[i + 1] = std::llround(z1);
    }
    return e;
}

template <typename T>
void small_to_ntt(const std::vector<T>& coeffs, uint64_t* out, const math::Modulus* mods,
                  const math::NttTables* tables, size_t limbs) {
    const size_t n = coeffs.size();
    for (size_t i = 0; i < limbs; ++i) {
        const uint64_t q = mods[i].value;
        uint64_t* o = out + i * n;
        for (size_t k = 0; k < n; ++k) {
            const int64_t c = int64_t(coeffs[k]);
            o[k] = c >= 0 ? uint64_t(c) % q : q - uint64_t(-c) % q;
            if (o[k] == q) o[k] = 0;
        }
    }
    backend::cpu::ntt_forward(out, tables, limbs);
}

template void small_to_ntt<int8_t>(const std::vector<int8_t>&, uint64_t*, const math::Modulus*, const math::NttTables*, size_t);
template void small_to_ntt<int64_t>(const std::vector<int64_t>&, uint64_t*, const math::Modulus*, const math::NttTables*, size_t);

void sample_uniform(math::Prng& prng, uint64_t* out, const math::Modulus* mods, size_t limbs, size_t n) {
    for (size_t i = 0; i < limbs; ++i) {
        const uint64_t q = mods[i].value;
        uint64_t* o = out + i * n;
        for (size_t k = 0; k < n; ++k) o[k] = prng.uniform(q);
    }
}

}  // namespace oboro::ckks
