#include "oboro/backend/cpu/encode.hpp"

#include <cmath>
#include <cstring>
#include <vector>

#include "oboro/backend/cpu/poly_ops.hpp"
#include "oboro/backend/subring_layout.hpp"
#include "oboro/math/modarith.hpp"
#include "oboro/util/parallel.hpp"

namespace oboro::backend::cpu {

namespace {
// A coefficient split once into sign and magnitude, so that each limb only reduces a word. A
// magnitude of 2^63 or more (a huge value at a high level) is left to reduce_integral_double.
struct Split {
    uint64_t magnitude = 0;
    bool negative = false;
    bool large = false;
};

Split split(double c) {
    Split s;
    s.negative = std::signbit(c);
    const double a = std::fabs(c);
    s.large = !(a < 9223372036854775808.0);  // 2^63
    if (!s.large) s.magnitude = uint64_t(a);
    return s;
}

// Limb `limb` (zeroed outside the subring) of the 2 * slots coefficients split into `values`.
// A function of its own, with a restrict-qualified output and the modulus by value, so that the
// stores into the limb do not force the compiler to reload everything else.
void write_limb(const double* coefficients, const Split* values, size_t slots, size_t n,
                const math::Barrett<uint64_t> barrett, uint64_t* __restrict limb) {
    const size_t gap = n / 2 / slots;
    if (gap > 1) std::memset(limb, 0, n * sizeof(uint64_t));
    for (size_t s = 0; s < 2 * slots; ++s) {
        const Split v = values[s];
        uint64_t r;
        if (v.large) {
            r = math::reduce_integral_double(coefficients[s], barrett);
        } else {
            r = barrett.reduce_word(v.magnitude);
            if (v.negative) r = math::neg_mod(r, barrett.q);
        }
        limb[subring_position(s, slots, n)] = r;
    }
}
}  // namespace

void write_plaintext(const Ring& ring, const double* coefficients, size_t slots, int level, uint64_t* out,
                     size_t special) {
    const size_t n = ring.n(), nq = size_t(level + 1);
    std::vector<Split> values(2 * slots);
    for (size_t s = 0; s < 2 * slots; ++s) values[s] = split(coefficients[s]);
    parallel_for(nq + special, [&](size_t i) {
        const bool q_limb = i < nq;
        const math::Modulus& m = q_limb ? ring.moduli()[i] : ring.p_moduli()[i - nq];
        write_limb(coefficients, values.data(), slots, n, m.barrett, out + i * n);
        ntt_forward_limb(out + i * n, q_limb ? ring.ntt_tables()[i] : ring.p_ntt_tables()[i - nq]);
    });
}

}  // namespace oboro::backend::cpu
