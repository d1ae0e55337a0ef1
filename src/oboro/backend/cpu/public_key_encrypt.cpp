#include "oboro/backend/cpu/public_key_encrypt.hpp"

#include "oboro/backend/cpu/poly_ops.hpp"
#include "oboro/math/modarith.hpp"
#include "oboro/util/buffer.hpp"
#include "oboro/util/parallel.hpp"

namespace oboro::backend::cpu {

void public_key_encrypt(const Ring& ring, const LevelConstants& lc, const int8_t* u, const int64_t* e0,
                        const int64_t* e1, uint64_t error_bound, const uint64_t* message, const uint64_t* pk_b,
                        const uint64_t* pk_a, size_t pk_q_limbs, uint64_t* c0, uint64_t* c1) {
    const size_t n = ring.n(), nq = size_t(lc.level + 1), k = lc.special;
    const math::BaseConverter& converter = lc.p_to_q;
    const uint64_t* keys[2] = {pk_b, pk_a};
    const int64_t* errors[2] = {e0, e1};
    uint64_t* outs[2] = {c0, c1};
    // The special limbs of each half in coefficient form with the error added (the limbs the
    // division by P converts), then the conversion's first half on them.
    const size_t prepared_words = base_convert_scratch_words(k, n);
    AlignedBuffer<uint64_t> special(2 * k * n), prepared(2 * prepared_words);
    parallel_for(k, [&](size_t j) {
        const math::Modulus& p = ring.p_moduli()[j];
        const math::NttTables& table = ring.p_ntt_tables()[j];
        AlignedBuffer<uint64_t> uj(n), e(n);
        signed_to_limb(u, 128, p, uj.data(), n);
        ntt_forward_limb(uj.data(), table);
        for (int half = 0; half < 2; ++half) {
            uint64_t* t = special.data() + (size_t(half) * k + j) * n;
            mul(t, uj.data(), keys[half] + (pk_q_limbs + j) * n, &p, 1, n);
            ntt_inverse_limb(t, table);
            signed_to_limb(errors[half], error_bound, p, e.data(), n);
            add(t, t, e.data(), &p, 1, n);
        }
    });
    for (int half = 0; half < 2; ++half)
        base_convert_prepare(converter, special.data() + size_t(half) * k * n, n, n,
                             prepared.data() + size_t(half) * prepared_words, true);
    parallel_for(nq, [&](size_t i) {
        const math::Modulus& q = ring.moduli()[i];
        const math::NttTables& table = ring.ntt_tables()[i];
        AlignedBuffer<uint64_t> ui(n), x(n), conv(n), addend(n);
        signed_to_limb(u, 128, q, ui.data(), n);
        ntt_forward_limb(ui.data(), table);
        for (int half = 0; half < 2; ++half) {
            mul(x.data(), ui.data(), keys[half] + i * n, &q, 1, n);
            base_convert_limb(converter, i, special.data() + size_t(half) * k * n,
                              prepared.data() + size_t(half) * prepared_words, conv.data(), n, true);
            signed_to_limb(errors[half], error_bound, q, addend.data(), n);
            if (half == 0 && message) mul_scalar_add(addend.data(), message + i * n, &lc.p_mod_q[i], &q, 1, n);
            sub(conv.data(), conv.data(), addend.data(), &q, 1, n);  // x + addend - conv, divided by P
            ntt_forward_limb(conv.data(), table);
            sub_mul_scalar(outs[half] + i * n, x.data(), conv.data(), &lc.p_inv[i], &q, 1, n);
        }
    });
}

}  // namespace oboro::backend::cpu
