#include "oboro/backend/cpu/encode.hpp"

#include "oboro/backend/cpu/poly_ops.hpp"
#include "oboro/backend/subring_layout.hpp"
#include "oboro/math/modarith.hpp"

namespace oboro::backend::cpu {

void write_plaintext(const Ring& ring, const double* coefficients, size_t slots, int level, uint64_t* out) {
    const size_t n = ring.n(), limbs = size_t(level + 1);
    for (size_t i = 0; i < limbs; ++i) {
        const math::Barrett<uint64_t>& br = ring.moduli()[i].barrett;
        for (size_t k = 0; k < n; ++k)
            out[i * n + k] = math::reduce_integral_double(subring_coefficient(coefficients, slots, n, k), br);
    }
    ntt_forward(out, ring.ntt_tables(), limbs);
}

}  // namespace oboro::backend::cpu
