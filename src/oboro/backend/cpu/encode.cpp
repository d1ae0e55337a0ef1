#include "oboro/backend/cpu/encode.hpp"

#include <cmath>
#include <utility>
#include <vector>

#include "oboro/backend/cpu/poly_ops.hpp"
#include "oboro/backend/subring_layout.hpp"
#include "oboro/math/modarith.hpp"
#include "oboro/math/rns.hpp"
#include "oboro/util/parallel.hpp"

namespace oboro::backend::cpu {

namespace {
// The coefficients placed once for all limbs: as signed words at their polynomial positions
// (subring_position; zero elsewhere). A magnitude of 2^63 or more (a huge value at a high level)
// has no word: it is listed with its position and reduced from the double by each limb.
struct Placed {
    std::vector<int64_t> words;                          // n
    std::vector<std::pair<size_t, double>> large;        // (position, coefficient)
    uint64_t max_magnitude = 0;                          // of the words
};

Placed place(const double* coefficients, size_t slots, size_t n) {
    Placed p;
    p.words.assign(n, 0);
    for (size_t s = 0; s < 2 * slots; ++s) {
        const double c = coefficients[s];
        const size_t position = size_t(subring_position(s, slots, n));
        if (!(std::fabs(c) < 9223372036854775808.0)) {  // 2^63
            p.large.emplace_back(position, c);
            continue;
        }
        const int64_t w = int64_t(c);  // exact: c is an integer
        p.words[position] = w;
        const uint64_t magnitude = w < 0 ? uint64_t(0) - uint64_t(w) : uint64_t(w);
        if (magnitude > p.max_magnitude) p.max_magnitude = magnitude;
    }
    return p;
}

// One limb of the placed coefficients: the words without a branch per coefficient (random signs
// would defeat the branch predictor and cost more than the limb's NTT), then the large ones.
void write_limb(const Placed& placed, size_t n, const math::Modulus& m, uint64_t* limb) {
    signed_to_limb(placed.words.data(), placed.max_magnitude, m, limb, n);
    for (const auto& [position, c] : placed.large) limb[position] = math::reduce_integral_double(c, m.barrett);
}

// The limbs of write_plaintext, transformed or not: `words` = N words each, or the 2 * slots
// words of its runs (write_plaintext_runs: the transform of that size, math::NttTables(full, words)).
void write_limbs(const Ring& ring, const double* coefficients, size_t slots, int level, uint64_t* out, size_t special,
                 bool ntt, size_t words) {
    const size_t nq = size_t(level + 1), limbs = nq + special;
    const Placed placed = place(coefficients, slots, words);
    const auto limb = [&](size_t i) {
        const bool q_limb = i < nq;
        const math::Modulus& m = q_limb ? ring.moduli()[i] : ring.p_moduli()[i - nq];
        uint64_t* o = out + i * words;
        write_limb(placed, words, m, o);
        if (!ntt) return;
        const math::NttTables& full = q_limb ? ring.ntt_tables()[i] : ring.p_ntt_tables()[i - nq];
        if (words == full.n) ntt_forward_limb(o, full);
        else ntt_forward_limb(o, math::NttTables(full, uint32_t(words)));
    };
    if (limbs * words < kParallelWords) {
        for (size_t i = 0; i < limbs; ++i) limb(i);
    } else {
        parallel_for(limbs, limb);
    }
}
}  // namespace

void write_plaintext(const Ring& ring, const double* coefficients, size_t slots, int level, uint64_t* out,
                     size_t special) {
    write_limbs(ring, coefficients, slots, level, out, special, true, ring.n());
}

void write_plaintext_runs(const Ring& ring, const double* coefficients, size_t slots, int level, uint64_t* out,
                          size_t special) {
    write_limbs(ring, coefficients, slots, level, out, special, true, 2 * slots);
}

void write_coefficients(const Ring& ring, const double* coefficients, size_t slots, int level, uint64_t* out) {
    write_limbs(ring, coefficients, slots, level, out, 0, false, ring.n());
}

}  // namespace oboro::backend::cpu
