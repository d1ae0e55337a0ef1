#include "oboro/backend/cpu/public_key_encrypt.hpp"

#include "oboro/backend/cpu/eltwise.hpp"
#include "oboro/backend/cpu/poly_ops.hpp"
#include "oboro/math/modarith.hpp"
#include "oboro/util/buffer.hpp"
#include "oboro/util/parallel.hpp"

namespace oboro::backend::cpu {

void public_key_encrypt(const Ring& ring, const LevelConstants& lc, const int8_t* u, const int64_t* e0,
                        const int64_t* e1, uint64_t error_bound, const uint64_t* message, const uint64_t* pk_b,
                        const uint64_t* pk_a, size_t pk_q_limbs, uint64_t* c0, uint64_t* c1) {
    const size_t n = ring.n(), nq = size_t(lc.level + 1), k = lc.special;
    const EltwiseKernels& kn = eltwise_active();
    const math::BaseConverter& converter = lc.p_to_q;
    const math::RnsBase& from = converter.from();
    const uint64_t* keys[2] = {pk_b, pk_a};
    const int64_t* errors[2] = {e0, e1};
    uint64_t* outs[2] = {c0, c1};
    // The special limbs of each half, in coefficient form with the error added (the divided
    // limbs of mod_down_adding), then, for a conversion from several primes, scaled by the
    // punctured inverses, with the overflow counts after them (base_convert's first steps).
    AlignedBuffer<uint64_t> special(2 * base_convert_scratch_words(k, n));
    const size_t half_words = base_convert_scratch_words(k, n);
    parallel_for(k, [&](size_t j) {
        const math::Modulus& p = ring.p_moduli()[j];
        const math::NttTables& table = ring.p_ntt_tables()[j];
        AlignedBuffer<uint64_t> uj(n), t(n), e(n);
        signed_to_limb(u, 128, p, uj.data(), n);
        ntt_forward_limb(uj.data(), table);
        for (int half = 0; half < 2; ++half) {
            mul(t.data(), uj.data(), keys[half] + (pk_q_limbs + j) * n, &p, 1, n);
            ntt_inverse_limb(t.data(), table);
            signed_to_limb(errors[half], error_bound, p, e.data(), n);
            uint64_t* y = special.data() + size_t(half) * half_words + j * n;
            if (k == 1) {
                add(y, t.data(), e.data(), &p, 1, n);
            } else {
                add(t.data(), t.data(), e.data(), &p, 1, n);
                kn.mul_scalar(y, t.data(), from.punctured_inv(j), from.punctured_inv_shoup(j), from[j], n);
            }
        }
    });
    if (k > 1)
        for (int half = 0; half < 2; ++half) {
            uint64_t* y = special.data() + size_t(half) * half_words;
            kn.overflow_counts(reinterpret_cast<uint8_t*>(y + k * n), y, n, k, converter.inverse_sources(), n);
        }
    parallel_for(nq, [&](size_t i) {
        const math::Modulus& q = ring.moduli()[i];
        const math::NttTables& table = ring.ntt_tables()[i];
        AlignedBuffer<uint64_t> ui(n), x(n), conv(n), addend(n);
        signed_to_limb(u, 128, q, ui.data(), n);
        ntt_forward_limb(ui.data(), table);
        for (int half = 0; half < 2; ++half) {
            mul(x.data(), ui.data(), keys[half] + i * n, &q, 1, n);
            const uint64_t* y = special.data() + size_t(half) * half_words;
            if (k == 1) {
                kn.convert_single(conv.data(), y, from[0], true, q, n);
            } else {
                const uint64_t v = converter.q_mod_target(i);
                kn.weighted_sum(conv.data(), y, n, k, converter.punctured_mod_target(i),
                                reinterpret_cast<const uint8_t*>(y + k * n), v, math::shoup_precompute(v, q.value), q,
                                n);
            }
            signed_to_limb(errors[half], error_bound, q, addend.data(), n);
            if (half == 0 && message) mul_scalar_add(addend.data(), message + i * n, &lc.p_mod_q[i], &q, 1, n);
            sub(conv.data(), conv.data(), addend.data(), &q, 1, n);  // x + addend - conv, divided by P
            ntt_forward_limb(conv.data(), table);
            sub_mul_scalar(outs[half] + i * n, x.data(), conv.data(), &lc.p_inv[i], &q, 1, n);
        }
    });
}

}  // namespace oboro::backend::cpu
