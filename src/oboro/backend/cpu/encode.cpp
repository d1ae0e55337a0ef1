#include "oboro/backend/cpu/encode.hpp"

#include "oboro/backend/cpu/poly_ops.hpp"
#include "oboro/backend/subring_layout.hpp"
#include "oboro/math/modarith.hpp"

namespace oboro::backend::cpu {

void write_plaintext(const Ring& ring, const double* coefficients, size_t slots, int level, uint64_t* out,
                     size_t special) {
    const size_t n = ring.n(), nq = size_t(level + 1);
    auto reduce = [&](uint64_t* limb, const math::Modulus& m) {
        for (size_t k = 0; k < n; ++k)
            limb[k] = math::reduce_integral_double(subring_coefficient(coefficients, slots, n, k), m.barrett);
    };
    for (size_t i = 0; i < nq; ++i) reduce(out + i * n, ring.moduli()[i]);
    for (size_t j = 0; j < special; ++j) reduce(out + (nq + j) * n, ring.p_moduli()[j]);
    ntt_forward(out, ring.ntt_tables(), nq);
    ntt_forward(out + nq * n, ring.p_ntt_tables(), special);
}

}  // namespace oboro::backend::cpu
