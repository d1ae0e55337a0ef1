// The element-wise operations of the batch backend contract (backend/queue.hpp) as one
// per-thread body (host and device code; the CUDA kernel and the queue are in batch_queue.cu, the
// CPU emulation in the tests): one launch per operation for the whole batch, with the contract's
// semantics exactly: a right operand of one element is broadcast to every element, add / sub
// touch the first b.polys polynomials and copy the others, add_scalar touches polynomial 0 only,
// drop_limbs keeps the first out_limbs limbs, extend writes out_limbs > limbs. Every result is
// the canonical residue, so it equals the CPU queue's bit for bit.
#pragma once

#include <cstdint>

#include "oboro/backend/cuda/elementwise_kernels.hpp"
#include "oboro/backend/subring_layout.hpp"
#include "oboro/math/rns.hpp"

namespace oboro::cuda::kernels {

enum class BatchOp : uint32_t {
    add, sub, negate, add_scalar, mul_scalar, mul_plain, drop_limbs,
    mul_plain_add, mul_scalar_add,  // out += a * b, out += a * s[i]: out is the accumulator
    extend  // out (over Q_level * P, out_limbs) = a * s[i] on a's limbs, 0 on the special ones
};

// Element c, polynomial j, limb i of an operand with `polys` polynomials of `limbs` limbs is the
// row ((c * polys + j) * limbs + i). out has out_limbs limbs per polynomial (= limbs except for
// drop_limbs and extend). Rows = count x polys x out_limbs. out may alias a (same shape).
struct BatchEltArgs {
    uint64_t* out = nullptr;
    const uint64_t* a = nullptr;
    const uint64_t* b = nullptr;         // add / sub: b_polys polynomials; mul_plain: 1
    uint32_t b_count = 0, b_polys = 0;   // b_count 1: broadcast
    const uint64_t* scalar = nullptr;        // add_scalar / mul_scalar: one per limb
    const uint64_t* scalar_shoup = nullptr;  // mul_scalar
    const math::Barrett<uint64_t>* moduli = nullptr;  // limbs (over Q_level * P: the special primes last)
    uint32_t n = 0, count = 0, polys = 0, limbs = 0, out_limbs = 0;
};

inline RowLaunch row_launch(const BatchEltArgs& p) { return row_launch(p.n, p.count * p.polys * p.out_limbs); }

template <BatchOp Op> OBORO_HD void batch_elt_thread(const ThreadIndex& t, const BatchEltArgs& p) {
    const uint32_t per_elem = p.polys * p.out_limbs;
    for_each_row_element(t, p.n, p.count * per_elem, [&](uint64_t o, uint64_t row) {
        const uint64_t col = o - row * p.n, c = row / per_elem, j = (row / p.out_limbs) % p.polys,
                       i = row % p.out_limbs;
        if constexpr (Op == BatchOp::extend) {
            if (i >= p.limbs) {  // P = 0 modulo a special prime
                p.out[o] = 0;
                return;
            }
        }
        const uint64_t x = p.a[((c * p.polys + j) * p.limbs + i) * p.n + col];
        if constexpr (Op == BatchOp::drop_limbs) {
            p.out[o] = x;  // a copy: the queue passes no moduli (binding p.moduli[i] would be undefined)
            return;
        }
        const math::Barrett<uint64_t>& br = p.moduli[i];
        auto rhs = [&](uint64_t jb) {
            const uint64_t cb = p.b_count == 1 ? 0 : c;
            return p.b[((cb * p.b_polys + jb) * p.limbs + i) * p.n + col];
        };
        uint64_t r = x;  // the polynomials an op does not touch
        if constexpr (Op == BatchOp::add) {
            if (j < p.b_polys) r = math::add_mod(x, rhs(j), br.q);
        } else if constexpr (Op == BatchOp::sub) {
            if (j < p.b_polys) r = math::sub_mod(x, rhs(j), br.q);
        } else if constexpr (Op == BatchOp::negate) {
            r = math::neg_mod(x, br.q);
        } else if constexpr (Op == BatchOp::add_scalar) {
            if (j == 0) r = math::add_mod(x, p.scalar[i], br.q);
        } else if constexpr (Op == BatchOp::mul_scalar || Op == BatchOp::extend) {
            r = math::mul_shoup(x, p.scalar[i], p.scalar_shoup[i], br.q);
        } else if constexpr (Op == BatchOp::mul_plain) {
            r = br.mul(x, rhs(0));
        } else if constexpr (Op == BatchOp::mul_plain_add) {
            r = br.reduce(math::mul_wide(x, rhs(0)) + p.out[o]);  // one reduction, as the CPU's mul_add
        } else if constexpr (Op == BatchOp::mul_scalar_add) {
            r = math::add_mod(p.out[o], math::mul_shoup(x, p.scalar[i], p.scalar_shoup[i], br.q), br.q);
        }
        p.out[o] = r;
    });
}

// Sums of products in one launch (Queue::mul_plain_sum and mul_scalar_sum): row (c, j, i) of out
// (count x polys x limbs rows) = [out +] sum_t a_t's row (c, j, i) times w_t, where w_t is limb i
// of plaintext t (b[t], one polynomial of `limbs` limbs, element c or, with b_broadcast, element
// 0) or the scalar scalars[t * limbs + i]. Term t's operand has a_limbs[t] >= limbs limbs per
// polynomial, of which the first `limbs` are read. Each product is below 2^124: they are summed
// in 128 bits, reduced every 16 terms and once at the end, as the CPU's sums (canonical: the same
// words). The tables a, b, a_limbs and scalars are in device memory.
struct ProductSumArgs {
    uint64_t* out = nullptr;
    const uint64_t* const* a = nullptr;   // terms
    const uint32_t* a_limbs = nullptr;    // terms
    const uint64_t* const* b = nullptr;   // terms; null: scalars
    const uint64_t* scalars = nullptr;    // terms x limbs
    const math::Barrett<uint64_t>* moduli = nullptr;  // limbs
    uint32_t terms = 0, n = 0, count = 0, polys = 0, limbs = 0;
    bool b_broadcast = false, accumulate = false;
};

inline RowLaunch row_launch(const ProductSumArgs& p) { return row_launch(p.n, p.count * p.polys * p.limbs); }

OBORO_HD void product_sum_thread(const ThreadIndex& t, const ProductSumArgs& p) {
    for_each_row_element(t, p.n, p.count * p.polys * p.limbs, [&](uint64_t o, uint64_t row) {
        const uint64_t col = o - row * p.n, c = row / (uint64_t(p.polys) * p.limbs), j = (row / p.limbs) % p.polys,
                       i = row % p.limbs;
        const math::Barrett<uint64_t>& br = p.moduli[i];
        math::dword_t<uint64_t> acc = p.accumulate ? p.out[o] : 0;
        for (uint32_t k = 0; k < p.terms; ++k) {
            const uint64_t x = p.a[k][((c * p.polys + j) * p.a_limbs[k] + i) * p.n + col];
            const uint64_t w = p.b ? p.b[k][((p.b_broadcast ? 0 : c) * p.limbs + i) * p.n + col]
                                   : p.scalars[uint64_t(k) * p.limbs + i];
            acc += math::mul_wide(x, w);
            if ((k & 15) == 15) acc = br.reduce(acc);
        }
        p.out[o] = br.reduce(acc);
    });
}

// The reduction half of batched encoding (ckks/batch_encoder.hpp does the host half): row (c, i) of out (count x
// limbs rows) = the subring coefficients of element c (2 slots doubles at coefficients + c * 2
// slots, backend/subring_layout.hpp) modulo prime i, in coefficient form; an NTT of every row follows.
// The same two functions as the CPU's backend::cpu::write_plaintext, so the same words.
struct EncodeArgs {
    uint64_t* out = nullptr;
    const double* coefficients = nullptr;
    const math::Barrett<uint64_t>* moduli = nullptr;  // limbs
    uint32_t n = 0, count = 0, limbs = 0, slots = 0;
};

inline RowLaunch row_launch(const EncodeArgs& p) { return row_launch(p.n, p.count * p.limbs); }

OBORO_HD void encode_thread(const ThreadIndex& t, const EncodeArgs& p) {
    for_each_row_element(t, p.n, p.count * p.limbs, [&](uint64_t o, uint64_t row) {
        const uint64_t col = o - row * p.n, c = row / p.limbs, i = row % p.limbs;
        const double v = backend::subring_coefficient(p.coefficients + c * 2 * p.slots, p.slots, p.n, col);
        p.out[o] = math::reduce_integral_double(v, p.moduli[i]);
    });
}

// Calls f(std::integral_constant-like tag) for op: the switch from a run-time op to the template.
template <typename F> void dispatch_batch_op(BatchOp op, F&& f) {
    switch (op) {
    case BatchOp::add: f.template operator()<BatchOp::add>(); break;
    case BatchOp::sub: f.template operator()<BatchOp::sub>(); break;
    case BatchOp::negate: f.template operator()<BatchOp::negate>(); break;
    case BatchOp::add_scalar: f.template operator()<BatchOp::add_scalar>(); break;
    case BatchOp::mul_scalar: f.template operator()<BatchOp::mul_scalar>(); break;
    case BatchOp::mul_plain: f.template operator()<BatchOp::mul_plain>(); break;
    case BatchOp::drop_limbs: f.template operator()<BatchOp::drop_limbs>(); break;
    case BatchOp::mul_plain_add: f.template operator()<BatchOp::mul_plain_add>(); break;
    case BatchOp::mul_scalar_add: f.template operator()<BatchOp::mul_scalar_add>(); break;
    case BatchOp::extend: f.template operator()<BatchOp::extend>(); break;
    }
}

}  // namespace oboro::cuda::kernels
