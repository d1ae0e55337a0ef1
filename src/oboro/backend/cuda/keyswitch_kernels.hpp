// Hybrid key switching on the GPU for a batch of `count` polynomials (host and device code; the
// CUDA kernels are in keyswitch.cu, the CPU emulation in the tests through grid_emulator.hpp).
//
// The launch sequence (for_each_key_switch_step) is backend::cpu::key_switch's algorithm for the whole
// batch at once, bit for bit:
//   ModUp        1 batched INTT of every limb of every input (count x (l+1) rows);
//                1 copy of each digit's own limbs (coefficient form) into its extended polynomial;
//                per digit j, 1 base-conversion pair to the other limbs (scattered targets), for
//                all `count` inputs at once;
//                1 batched NTT of every extended digit (count x beta x (l+1+k) rows).
//                The digit's own limbs take an INTT-then-NTT round trip (exact, so the result is
//                the CPU's) instead of a copy of the NTT-form limbs into rows with holes: one
//                launch over contiguous rows beats beta fragmented ones.
//   inner product  1 launch: (acc0, acc1) = sum_j digit_j * (b_j, a_j), the beta products of a
//                coefficient summed in 128 bits and reduced once (every `chunk` terms for the
//                few primes that need it), as cpu dot2. With a permutation the digits are read
//                through it (hoisted rotation: sigma_g of the ModUp'd digits, no new ModUp).
//   ModDown      one special prime: the fused division by it (launch_divide_and_drop), 4 launches;
//                k > 1 special primes: 1 batched INTT of the k special limbs of every accumulator,
//                1 base-conversion pair P -> Q_l (centred), 1 batched NTT whose stores compute
//                (acc - conv) * P^{-1} (the divide-and-drop epilogue, NttArgs::sub_from): 5 launches.
// So a key switch of a whole batch is 2 + 2 beta + 1 + 2 + 4 (or 5) launches whatever `count` is.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "oboro/backend/cpu/word_barrett.hpp"  // lazy_product_terms (host side only)
#include "oboro/backend/cuda/base_conversion_kernels.hpp"
#include "oboro/backend/cuda/elementwise_kernels.hpp"
#include "oboro/backend/cuda/ntt_kernels.hpp"
#include "oboro/backend/ring.hpp"
#include "oboro/util/error.hpp"

namespace oboro::cuda::kernels {

// ---- copy of each digit's own limbs (ModUp) --------------------------------------------------

// The most ciphertext limbs a digit copy maps (Parameters::validate allows 64 primes).
inline constexpr uint32_t kMaxDigitCopyLimbs = 64;

// rows = count x nq: coefficient row (c, i) of `coeff` (count x nq x n) goes to limb i of digit
// j = digit_of[i] of element c in `digits` (count x beta x ne x n). Digits are runs of limbs of
// any lengths (Parameters::digit_partition), so the kernel reads each limb's digit from the table.
struct DigitCopyArgs {
    const uint64_t* coeff = nullptr;
    uint64_t* digits = nullptr;
    uint32_t n = 0, nq = 0, ne = 0, beta = 0, count = 0;
    uint8_t digit_of[kMaxDigitCopyLimbs] = {};
};

inline RowLaunch row_launch(const DigitCopyArgs& a) { return row_launch(a.n, a.count * a.nq); }

OBORO_HD void digit_copy_thread(const ThreadIndex& t, const DigitCopyArgs& a) {
    for_each_row_element(t, a.n, a.count * a.nq, [&](uint64_t i, uint64_t row) {
        const uint64_t c = row / a.nq, limb = row - c * a.nq, j = a.digit_of[limb], col = i - row * a.n;
        a.digits[((c * a.beta + j) * a.ne + limb) * a.n + col] = a.coeff[i];
    });
}

// ---- key inner product -------------------------------------------------------------------------

// For element c and extended limb i (i < nq: q_i, else special prime i - nq):
//   acc0 = sum_j x_j * b_j,  acc1 = sum_j x_j * a_j   (+ the old acc when `accumulate`)
// x_j = digit j of element c at coefficient perm[col] (perm null: col). The key is a
// key's words (backend/key_switch_key.hpp), [digit][b, a][qp_limbs][n]; its limb for i is i
// (i < nq) or key_q_limbs + i - nq; element c uses keys[c] (one key for a batch: the same pointer count times;
// per-element keys: a batch of rotations by different steps). acc of element c: acc + c *
// acc_stride, acc1 at + ne * n.
// One thread per coefficient, rows = count x ne.
struct InnerProductArgs {
    const uint64_t* digits = nullptr;  // count x beta x ne x n
    const uint32_t* perm = nullptr;    // n entries or null
    const uint64_t* const* keys = nullptr;  // count entries
    uint64_t key_qp_limbs = 0;
    uint32_t key_q_limbs = 0;  // the key's ciphertext limbs: key_qp_limbs - k
    const math::Barrett<uint64_t>* ext_moduli = nullptr;  // ne entries
    uint64_t* acc = nullptr;
    uint64_t acc_stride = 0;
    uint32_t n = 0, nq = 0, ne = 0, beta = 0, count = 0;
    uint32_t chunk = 1;  // products summed before a reduction (lazy_product_terms, min over limbs)
    bool accumulate = false;
};

inline RowLaunch row_launch(const InnerProductArgs& a) { return row_launch(a.n, a.count * a.ne); }

OBORO_HD void inner_product_thread(const ThreadIndex& t, const InnerProductArgs& a) {
    for_each_row_element(t, a.n, a.count * a.ne, [&](uint64_t, uint64_t row) {
        const uint64_t n = a.n, c = row / a.ne, i = row - c * a.ne, col = t.global_x();
        const uint64_t src_col = a.perm ? a.perm[col] : col;
        const uint64_t ki = i < a.nq ? i : a.key_q_limbs + (i - a.nq);
        const math::Barrett<uint64_t>& br = a.ext_moduli[i];
        uint64_t* acc0 = a.acc + c * a.acc_stride + i * n + col;
        uint64_t* acc1 = acc0 + uint64_t(a.ne) * n;
        math::dword_t<uint64_t> s0 = a.accumulate ? *acc0 : 0, s1 = a.accumulate ? *acc1 : 0;
        for (uint64_t j = 0; j < a.beta; ++j) {
            if (j != 0 && j % a.chunk == 0) {  // keep the 128-bit sums from overflowing
                s0 = br.reduce(s0);
                s1 = br.reduce(s1);
            }
            const uint64_t x = a.digits[((c * a.beta + j) * a.ne + i) * n + src_col];
            const uint64_t* kb = a.keys[c] + (2 * j * a.key_qp_limbs + ki) * n + col;
            s0 += math::mul_wide(x, kb[0]);
            s1 += math::mul_wide(x, kb[a.key_qp_limbs * n]);
        }
        *acc0 = br.reduce(s0);
        *acc1 = br.reduce(s1);
    });
}

// ---- adding a batch of polynomial pairs ---------------------------------------------------------

// out(c, h) = x(c, h) + y(c, h) for h < x_polys and y(c, h) for x_polys <= h < polys, where
// (c, h) of an operand is at base + c * stride + h * limbs * n; `limbs` limbs with moduli[0 ..
// limbs-1]. out may alias x or y with the same stride. Rows = count x polys x limbs.
// Relinearize: (c0, c1) + the key-switched pair (x_polys = 2); rotation: (sigma(c0) + ks0, ks1)
// (x_polys = 1).
struct StridedAddArgs {
    uint64_t* out = nullptr;
    uint64_t out_stride = 0;
    const uint64_t* x = nullptr;
    uint64_t x_stride = 0;
    const uint64_t* y = nullptr;
    uint64_t y_stride = 0;
    const uint64_t* moduli = nullptr;
    uint32_t n = 0, limbs = 0, polys = 0, x_polys = 0, count = 0;
};

inline RowLaunch row_launch(const StridedAddArgs& a) { return row_launch(a.n, a.count * a.polys * a.limbs); }

OBORO_HD void strided_add_thread(const ThreadIndex& t, const StridedAddArgs& a) {
    const uint32_t per_elem = a.polys * a.limbs;
    for_each_row_element(t, a.n, a.count * per_elem, [&](uint64_t i, uint64_t row) {
        const uint64_t c = row / per_elem, k = i - c * per_elem * a.n;  // offset inside the element
        const uint64_t y = a.y[c * a.y_stride + k];
        const bool add = row - c * per_elem < uint64_t(a.x_polys) * a.limbs;
        a.out[c * a.out_stride + k] = add ? math::add_mod(a.x[c * a.x_stride + k], y, a.moduli[row % a.limbs]) : y;
    });
}

// ---- P * (d0, d1) into the accumulators (multiply_relin_rescale) --------------------------------

// acc(c, t) += w_i * d_t on the limbs i < nq (t < halves; w null: d_t alone), d_t of element c at
// prod + (prod_polys c + t) nq n, read through `perm` when set; acc(c, t) at acc + (2 c + t) ne n.
// Rows = count x halves x nq. Three uses:
//  - multiply_relin_rescale (halves 2, prod_polys 3, no perm, w = P mod q_i): P (d0, d1) into the
//    accumulators, so that one division by q_l * P does the ModDown and the rescale together
//    (backend::cpu::multiply_relin_rescale_polys);
//  - hoisted rotations over Q*P (halves 1, prod_polys 2, perm sigma_r, w = P mod q_i): P sigma_r(c0)
//    into the rotation's ks0, the permutation and the product in one launch;
//  - hoisted rotations of an operand over Q*P (halves 1, prod_polys 2, perm sigma_r, nq = ne, no w):
//    sigma_r(c0) itself on all ne limbs.
struct FoldArgs {
    uint64_t* acc = nullptr;
    const uint64_t* prod = nullptr;
    const uint32_t* perm = nullptr;     // n entries or null
    const uint64_t* w = nullptr;        // nq: P mod q_i, or null (no product)
    const uint64_t* w_shoup = nullptr;  // nq
    const math::Barrett<uint64_t>* moduli = nullptr;  // nq
    uint32_t n = 0, nq = 0, ne = 0, count = 0;
    uint32_t prod_polys = 3, halves = 2;
};

inline RowLaunch row_launch(const FoldArgs& a) { return row_launch(a.n, a.count * a.halves * a.nq); }

OBORO_HD void fold_thread(const ThreadIndex& t, const FoldArgs& a) {
    for_each_row_element(t, a.n, a.count * a.halves * a.nq, [&](uint64_t, uint64_t row) {
        const uint64_t col = t.global_x(), i = row % a.nq, ct = row / a.nq, c = ct / a.halves, h = ct % a.halves;
        const uint64_t q = a.moduli[i].q;
        const uint64_t d = a.prod[((a.prod_polys * c + h) * a.nq + i) * a.n + (a.perm ? a.perm[col] : col)];
        uint64_t& x = a.acc[((2 * c + h) * a.ne + i) * a.n + col];
        x = math::add_mod(x, a.w ? math::mul_shoup(d, a.w[i], a.w_shoup[i], q) : d, q);
    });
}

// ---- the constants of one level, and the launch sequence ------------------------------------------

// Per digit j: its first limb, its own-limb count and the base conversion to the other limbs.
struct DigitStep {
    uint32_t begin = 0, size = 0;
    BaseConvView conv;                   // digit -> the other limbs of Q_l, then P
    const uint32_t* out_limbs = nullptr; // conv.m entries: extended limb index of each target
};

// Everything a key switch at one level reads besides its operands (device pointers on a GPU, host
// pointers in the emulator). digit_steps is a host array (the launcher walks it).
struct KeySwitchLevel {
    const NttTableView* ext_tables = nullptr;             // ne: q_0 .. q_l, then P
    const math::Barrett<uint64_t>* ext_moduli = nullptr;  // ne
    const DropLimb* drop = nullptr;                       // nq: division by P onto q_0 .. q_l (inv = P^-1)
    const uint64_t* q_values = nullptr;                   // nq: q_0 .. q_l
    uint64_t special_prime = 0;                           // P when k == 1
    BaseConvView p_to_q;                                  // P -> Q_l when k > 1
    // ModDown fused with the rescale (level >= 1): division by q_l * P onto q_0 .. q_{l-1}
    BaseConvView qlp_to_q;                                // {q_l} u P -> Q_{l-1}
    const DropLimb* rescale_drop = nullptr;               // nq - 1 (inv = (q_l P)^-1)
    const uint64_t* p_mod_q = nullptr;                    // nq: P mod q_i, and its Shoup companion
    const uint64_t* p_mod_q_shoup = nullptr;
    const DigitStep* digit_steps = nullptr;  // beta, host memory
    uint32_t nq = 0, ne = 0, k = 1, beta = 0, chunk = 1;
    uint32_t max_digit = 0;  // the limbs of the widest digit at this level (base conversion scratch)
    NttPlan plan;
};

// Scratch regions of a key switch of `count` inputs (words).
struct KeySwitchScratch {
    size_t coeff = 0, digits = 0, conv = 0, acc = 0, drop = 0, pair = 0;
    size_t total() const { return coeff + digits + conv + acc + drop + pair; }
};

// Scratch of a division of `polys` polynomials by `dropped` primes onto `kept` (the general path).
inline size_t divide_scratch_words(uint32_t polys, uint32_t kept, uint32_t dropped, uint64_t n) {
    return size_t(polys) * (dropped + kept) * n + base_conversion_scratch_words(polys, dropped, n);
}

// Scratch of a ModDown of `polys` polynomials (mod_down_polys).
inline size_t mod_down_scratch_words(const KeySwitchLevel& L, uint32_t polys) {
    const uint64_t n = uint64_t(1) << L.plan.log_n;
    return L.k == 1 ? divide_drop_scratch_words(polys, L.nq, n) : divide_scratch_words(polys, L.nq, L.k, n);
}

// fused: also room for multiply_relin_rescale (the size-3 products and the fused division).
inline KeySwitchScratch key_switch_scratch(const KeySwitchLevel& L, uint32_t count, bool fused = false) {
    const uint64_t n = uint64_t(1) << L.plan.log_n;
    KeySwitchScratch s;
    s.coeff = size_t(count) * L.nq * n;
    s.digits = size_t(count) * L.beta * L.ne * n;
    s.conv = base_conversion_scratch_words(count, L.max_digit, n);
    s.acc = size_t(count) * 2 * L.ne * n;
    // ModDown: one special prime: the fused division's scratch; k > 1: the special limbs in
    // coefficient form, their conversion to Q_l, and the conversion's own scratch.
    s.drop = mod_down_scratch_words(L, 2 * count);
    s.pair = size_t(count) * 2 * L.nq * n;  // the key-switched pairs of relinearize / rotate
    if (fused) {
        s.drop = std::max(s.drop, divide_scratch_words(2 * count, L.nq - 1, L.k + 1, n));
        s.pair = size_t(count) * 3 * L.nq * n;  // the products
    }
    return s;
}

// A key switch of `count` polynomials: element c's input (nq limbs, NTT form) at in + c *
// in_stride; its result pair (ks0, ks1), nq limbs each, at out + 2 c nq n (ks1 at + nq n): a
// contiguous batch of pairs, so that ModDown is one launch sequence for the whole batch.
// With `perm` (hoisted rotation) the input's digits are permuted before the inner product: then
// the result is the key switch of sigma(input). keys[c]: the KeySwitchKey data element c is
// switched with (device memory; the array itself too).
struct KeySwitchArgs {
    KeySwitchLevel level;
    const uint64_t* in = nullptr;
    uint64_t in_stride = 0;
    const uint64_t* const* keys = nullptr;  // count entries
    uint64_t key_qp_limbs = 0;
    const uint32_t* perm = nullptr;
    uint64_t* out = nullptr;  // count x 2 x nq x n
    uint32_t count = 0;
    uint64_t* scratch = nullptr;  // key_switch_scratch(level, count).total() words
};

// The scratch pointers of args, in the order of KeySwitchScratch.
struct KeySwitchBuffers {
    uint64_t *coeff, *digits, *conv, *acc, *drop, *pair;
    explicit KeySwitchBuffers(const KeySwitchArgs& a, bool fused = false) {
        const KeySwitchScratch s = key_switch_scratch(a.level, a.count, fused);
        coeff = a.scratch;
        digits = coeff + s.coeff;
        conv = digits + s.digits;
        acc = conv + s.conv;
        drop = acc + s.acc;
        pair = drop + s.drop;
    }
};

// The ModUp of args.in into buffers.digits: ops.ntt(NttArgs, forward), ops.digit_copy(...),
// ops.base_conversion(...) in launch order (see the top of this file).
template <typename Ops> void for_each_mod_up_step(const KeySwitchArgs& a, const KeySwitchBuffers& b, Ops& ops) {
    const KeySwitchLevel& L = a.level;
    const uint64_t n = uint64_t(1) << L.plan.log_n;
    // pass 1 only reads src
    ops.ntt(ntt_args(L.ext_tables, 0, L.nq, a.count, L.plan, RowSet{const_cast<uint64_t*>(a.in), a.in_stride},
                     RowSet{b.coeff, L.nq * n}),
            false);

    DigitCopyArgs copy;
    copy.coeff = b.coeff;
    copy.digits = b.digits;
    copy.n = uint32_t(n);
    copy.nq = L.nq;
    copy.ne = L.ne;
    copy.beta = L.beta;
    copy.count = a.count;
    if (L.nq > kMaxDigitCopyLimbs)
        raise<ParameterError>("key switch: ", L.nq, " ciphertext limbs exceed the ", kMaxDigitCopyLimbs, " of the digit copy");
    for (uint32_t j = 0; j < L.beta; ++j)
        for (uint32_t i = 0; i < L.digit_steps[j].size; ++i) copy.digit_of[L.digit_steps[j].begin + i] = uint8_t(j);
    ops.digit_copy(static_cast<const DigitCopyArgs&>(copy));

    for (uint32_t j = 0; j < L.beta; ++j) {
        const DigitStep& d = L.digit_steps[j];
        BaseConvArgs conv;
        conv.conv = d.conv;
        conv.centered = true;
        conv.n = uint32_t(n);
        conv.polys = a.count;
        conv.in = b.coeff + d.begin * n;
        conv.in_poly_stride = L.nq * n;
        conv.out = b.digits + j * L.ne * n;
        conv.out_poly_stride = uint64_t(L.beta) * L.ne * n;
        conv.out_limbs = d.out_limbs;
        conv.scratch = b.conv;
        ops.base_conversion(static_cast<const BaseConvArgs&>(conv));
    }

    const RowSet digits{b.digits, L.ne * n};
    ops.ntt(ntt_args(L.ext_tables, 0, L.ne, a.count * L.beta, L.plan, digits, digits), true);
}

// The division with rounding of `polys` polynomials at acc (ne limbs each, NTT form) by the
// product of their limbs kept .. kept+dropped-1 (q_l and/or the special primes), onto limbs 0 ..
// kept-1, into out (polys x kept limbs): backend::cpu divide_and_drop's algorithm. 1 batched INTT of the
// dropped limbs, 1 base-conversion pair (centred) to the kept primes, 1 batched NTT whose stores
// compute (acc - conv) * D^-1 (drop[j].inv). Polynomial p of acc at acc + p * acc_stride (0: ne n,
// contiguous); acc is only read.
template <typename Ops>
void divide_by_dropped(const KeySwitchLevel& L, uint32_t kept, uint32_t dropped, const BaseConvView& converter,
                       const DropLimb* drop, uint64_t* acc, uint64_t acc_stride, uint64_t* out, uint32_t polys,
                       uint64_t* scratch, Ops& ops) {
    const uint64_t n = uint64_t(1) << L.plan.log_n, ne_n = acc_stride ? acc_stride : uint64_t(L.ne) * n;
    uint64_t* coeffs = scratch;                                    // polys x dropped x n
    uint64_t* converted = coeffs + uint64_t(polys) * dropped * n;  // polys x kept x n
    uint64_t* conv_scratch = converted + uint64_t(polys) * kept * n;

    ops.ntt(ntt_args(L.ext_tables, kept, dropped, polys, L.plan, RowSet{acc + uint64_t(kept) * n, ne_n},
                     RowSet{coeffs, uint64_t(dropped) * n}),
            false);

    BaseConvArgs conv;
    conv.conv = converter;
    conv.centered = true;
    conv.n = uint32_t(n);
    conv.polys = polys;
    conv.in = coeffs;
    conv.in_poly_stride = uint64_t(dropped) * n;
    conv.out = converted;
    conv.out_poly_stride = uint64_t(kept) * n;
    conv.scratch = conv_scratch;
    ops.base_conversion(static_cast<const BaseConvArgs&>(conv));

    const RowSet conv_rows{converted, uint64_t(kept) * n};
    NttArgs fwd = ntt_args(L.ext_tables, 0, kept, polys, L.plan, conv_rows, conv_rows);
    fwd.sub_from = RowSet{acc, ne_n};
    fwd.drop = drop;
    fwd.dst = RowSet{out, uint64_t(kept) * n};
    ops.ntt(static_cast<const NttArgs&>(fwd), true);
}

// ModDown of `polys` polynomials at acc (ne limbs each: q_0 .. q_l, then P; read only; polynomial p
// at acc + p * acc_stride, 0: ne n) into out (polys x nq limbs): round(acc / P). ops.divide_drop
// (one special prime) or ops.ntt / ops.base_conversion (several). scratch: mod_down_scratch_words(L, polys).
template <typename Ops>
void mod_down_polys(const KeySwitchLevel& L, const uint64_t* acc, uint64_t* out, uint32_t polys, uint64_t* scratch,
                    Ops& ops, uint64_t acc_stride = 0) {
    const uint64_t n = uint64_t(1) << L.plan.log_n;
    if (acc_stride == 0) acc_stride = uint64_t(L.ne) * n;
    uint64_t* in = const_cast<uint64_t*>(acc);  // the kernels only read it
    if (L.k == 1) {
        DivideDropArgs dd;
        dd.tables = L.ext_tables;
        dd.limbs = L.drop;
        dd.dropped_prime = L.special_prime;
        dd.dropped_table = L.nq;
        dd.kept = L.nq;
        dd.polys = polys;
        dd.plan = L.plan;
        dd.in = RowSet{in, acc_stride};
        dd.out = RowSet{out, uint64_t(L.nq) * n};
        dd.scratch = scratch;
        ops.divide_drop(static_cast<const DivideDropArgs&>(dd));
        return;
    }
    divide_by_dropped(L, L.nq, L.k, L.p_to_q, L.drop, in, acc_stride, out, polys, scratch, ops);
}

// ModDown of the 2 count accumulators at acc into a.out (2 count polynomials of nq limbs).
template <typename Ops> void for_each_mod_down_step(const KeySwitchArgs& a, uint64_t* acc, uint64_t* scratch, Ops& ops) {
    mod_down_polys(a.level, acc, a.out, 2 * a.count, scratch, ops);
}

// The key inner product of the digits in b.digits into b.acc (2 count accumulators of ne limbs).
// accumulate: added to the accumulators (a sum of key switches, ModDown'd once).
template <typename Ops>
void inner_product_step(const KeySwitchArgs& a, const KeySwitchBuffers& b, Ops& ops, bool accumulate = false) {
    const KeySwitchLevel& L = a.level;
    const uint64_t n = uint64_t(1) << L.plan.log_n;
    InnerProductArgs ip;
    ip.digits = b.digits;
    ip.perm = a.perm;
    ip.keys = a.keys;
    ip.key_qp_limbs = a.key_qp_limbs;
    ip.key_q_limbs = uint32_t(a.key_qp_limbs) - L.k;
    ip.ext_moduli = L.ext_moduli;
    ip.acc = b.acc;
    ip.acc_stride = 2 * uint64_t(L.ne) * n;
    ip.n = uint32_t(n);
    ip.nq = L.nq;
    ip.ne = L.ne;
    ip.beta = L.beta;
    ip.count = a.count;
    ip.chunk = L.chunk;
    ip.accumulate = accumulate;
    ops.inner_product(static_cast<const InnerProductArgs&>(ip));
}

// The inner product and ModDown of digits already in b.digits (after for_each_mod_up_step).
template <typename Ops>
void for_each_key_product_step(const KeySwitchArgs& a, const KeySwitchBuffers& b, Ops& ops) {
    inner_product_step(a, b, ops);
    for_each_mod_down_step(a, b.acc, b.drop, ops);
}

// The whole key switch of a batch: ModUp, inner product, ModDown.
template <typename Ops> void for_each_key_switch_step(const KeySwitchArgs& a, Ops& ops) {
    const KeySwitchBuffers b(a);
    for_each_mod_up_step(a, b, ops);
    for_each_key_product_step(a, b, ops);
}

// ---- relinearize, rotate, hoisted rotations ------------------------------------------------------

// The key-switching ops of ciphertexts (NTT form, nq limbs per polynomial) for a batch of `count`:
//  - relinearize: in = count x 3 polys, out = count x 2 polys = (c0 + ks0, c1 + ks1), ks the key
//    switch of c2 with keys[c] (the relinearization key);
//  - rotate (an automorphism with an NTT-form permutation per batch or per element): in = count x 2 polys,
//    out = (sigma(c0) + ks0, ks1), ks the key switch of sigma(c1) with keys[c] (the Galois key).
// out must not alias in. The permutation (n entries): `perm` for the whole batch, or, when set,
// perm_table[c] for element c (count pointers).
struct CiphertextKeySwitchArgs {
    KeySwitchLevel level;
    const uint64_t* in = nullptr;
    uint64_t* out = nullptr;
    const uint64_t* const* keys = nullptr;  // count entries
    uint64_t key_qp_limbs = 0;
    const uint32_t* perm = nullptr;
    const uint32_t* const* perm_table = nullptr;
    uint32_t count = 0;
    uint64_t* scratch = nullptr;  // key_switch_scratch(level, count).total() words
};

inline KeySwitchArgs key_switch_part(const CiphertextKeySwitchArgs& a, const uint64_t* in, uint64_t in_stride) {
    KeySwitchArgs ks;
    ks.level = a.level;
    ks.in = in;
    ks.in_stride = in_stride;
    ks.keys = a.keys;
    ks.key_qp_limbs = a.key_qp_limbs;
    ks.count = a.count;
    ks.scratch = a.scratch;
    ks.out = KeySwitchBuffers(ks).pair;
    return ks;
}

// out(c) = (x(c, 0) + pair(c, 0), [x(c, 1) +] pair(c, 1)): the last launch of relinearize / rotate.
template <typename Ops>
void add_key_switched_pair(const CiphertextKeySwitchArgs& a, const uint64_t* x, uint64_t x_stride, uint32_t x_polys,
                           uint64_t* out, const uint64_t* pair, Ops& ops) {
    const uint64_t n = uint64_t(1) << a.level.plan.log_n, poly = uint64_t(a.level.nq) * n;
    StridedAddArgs add;
    add.out = out;
    add.out_stride = 2 * poly;
    add.x = x;
    add.x_stride = x_stride;
    add.y = pair;
    add.y_stride = 2 * poly;
    add.moduli = a.level.q_values;
    add.n = uint32_t(n);
    add.limbs = a.level.nq;
    add.polys = 2;
    add.x_polys = x_polys;
    add.count = a.count;
    ops.strided_add(static_cast<const StridedAddArgs&>(add));
}

// Relinearize: ModUp + inner product + ModDown of the c2's, then one addition launch.
template <typename Ops> void for_each_relinearize_step(const CiphertextKeySwitchArgs& a, Ops& ops) {
    const uint64_t poly = uint64_t(a.level.nq) << a.level.plan.log_n;
    const KeySwitchArgs ks = key_switch_part(a, a.in + 2 * poly, 3 * poly);
    for_each_key_switch_step(ks, ops);
    add_key_switched_pair(a, a.in, 3 * poly, 2, a.out, ks.out, ops);
}

// The automorphism of both polynomials of every element into out (one launch): permutation
// `perm` for every element, or perm_table[c] for element c when the table is given.
template <typename Ops> void permute_into(const CiphertextKeySwitchArgs& a, uint64_t* out, const uint32_t* perm,
                                          const uint32_t* const* perm_table, Ops& ops) {
    PermuteArgs<uint64_t> p;
    p.dst = out;
    p.src = a.in;
    p.perm = perm;
    p.perm_table = perm_table;
    p.rows_per_perm = 2 * a.level.nq;
    p.n = uint32_t(uint64_t(1) << a.level.plan.log_n);
    p.rows = a.count * 2 * a.level.nq;
    ops.permute(static_cast<const PermuteArgs<uint64_t>&>(p));
}

// Rotate (backend::cpu::apply_galois_polys): sigma of both polynomials into out, the key switch of
// sigma(c1) (read from out), then out = (sigma(c0) + ks0, ks1).
template <typename Ops> void for_each_rotate_step(const CiphertextKeySwitchArgs& a, Ops& ops) {
    const uint64_t poly = uint64_t(a.level.nq) << a.level.plan.log_n;
    permute_into(a, a.out, a.perm, a.perm_table, ops);
    const KeySwitchArgs ks = key_switch_part(a, a.out + poly, 2 * poly);
    for_each_key_switch_step(ks, ops);
    add_key_switched_pair(a, a.out, 2 * poly, 1, a.out, ks.out, ops);
}

// One rotation of the hoisted sequences: its NTT-form permutation (n entries, the same for the
// batch) and its Galois key for every element (a device array of count pointers to keys of
// key_qp_limbs limbs: keys of one rotation share a level, those of different rotations need not).
struct HoistedRotation {
    const uint32_t* perm = nullptr;
    const uint64_t* const* keys = nullptr;
    uint64_t key_qp_limbs = 0;
};

// The key switch of the c1's of a batch of ciphertexts (a) with their ModUp done once, on
// construction: what hoisted rotations and sums share. select() sets a rotation's permutation
// (read inside the inner product) and keys.
struct HoistedC1 {
    KeySwitchArgs ks;
    KeySwitchBuffers b;
    template <typename Ops>
    HoistedC1(const CiphertextKeySwitchArgs& a, Ops& ops)
        : ks(key_switch_part(a, a.in + (uint64_t(a.level.nq) << a.level.plan.log_n),
                             2 * (uint64_t(a.level.nq) << a.level.plan.log_n))),
          b(ks) {
        for_each_mod_up_step(ks, b, ops);
    }
    void select(const HoistedRotation& r) {
        ks.perm = r.perm;
        ks.keys = r.keys;
        ks.key_qp_limbs = r.key_qp_limbs;
    }
};

// Hoisted rotations (Evaluator::rotate_many for a batch): rotation r of every element into
// outs[r] (count x 2 x nq x n each). ONE ModUp of the c1's serves every rotation: sigma_r is
// applied to the digits inside the inner product. Per rotation: inner product, ModDown, the
// permutation of (c0, c1) into outs[r] (c1's is overwritten by ks1: a full-ciphertext gather
// keeps it one launch) and the addition. a.keys, a.key_qp_limbs, a.perm and a.perm_table are
// unused here.
template <typename Ops>
void for_each_hoisted_rotation_step(const CiphertextKeySwitchArgs& a, const HoistedRotation* rotations,
                                    uint64_t* const* outs, uint32_t count, Ops& ops) {
    const uint64_t poly = uint64_t(a.level.nq) << a.level.plan.log_n;
    HoistedC1 h(a, ops);
    for (uint32_t r = 0; r < count; ++r) {
        h.select(rotations[r]);
        for_each_key_product_step(h.ks, h.b, ops);
        permute_into(a, outs[r], rotations[r].perm, nullptr, ops);
        add_key_switched_pair(a, outs[r], 2 * poly, 1, outs[r], h.ks.out, ops);
    }
}

// out += sigma(c0) for every element of a.in, through `perm`, in one launch: c0 over Q lifted by P
// (times_p: a.in is count x 2 x nq x n) or, for an operand over Q*P (count x 2 x ne x n), added
// as it is on all ne limbs. out: count x 2 x ne x n.
template <typename Ops>
void add_permuted_c0(const CiphertextKeySwitchArgs& a, uint64_t* out, const uint32_t* perm, bool times_p, Ops& ops) {
    const KeySwitchLevel& L = a.level;
    FoldArgs f;
    f.acc = out;
    f.prod = a.in;
    f.perm = perm;
    if (times_p) {
        f.w = L.p_mod_q;
        f.w_shoup = L.p_mod_q_shoup;
    }
    f.moduli = L.ext_moduli;
    f.n = uint32_t(uint64_t(1) << L.plan.log_n);
    f.nq = times_p ? L.nq : L.ne;
    f.ne = L.ne;
    f.count = a.count;
    f.prod_polys = 2;
    f.halves = 1;
    ops.fold(static_cast<const FoldArgs&>(f));
}

// Hoisted rotations left over Q*P (double hoisting, Evaluator::rotate_many_extended for a batch):
// outs[r] (count x 2 x ne x n: extended ciphertexts) = (P sigma_r(c0) + <sigma_r(digits), b_r>,
// <sigma_r(digits), a_r>). ONE ModUp of the c1's; per rotation the inner product writes straight
// into outs[r] and one launch adds P sigma_r(c0) (a fold through the permutation): no ModDown, no
// scratch pair. a.out, a.keys, a.key_qp_limbs, a.perm and a.perm_table are unused here.
template <typename Ops>
void for_each_hoisted_extended_rotation_step(const CiphertextKeySwitchArgs& a, const HoistedRotation* rotations,
                                             uint64_t* const* outs, uint32_t count, Ops& ops) {
    HoistedC1 h(a, ops);
    for (uint32_t r = 0; r < count; ++r) {
        h.select(rotations[r]);
        KeySwitchBuffers b = h.b;
        b.acc = outs[r];
        inner_product_step(h.ks, b, ops);
        add_permuted_c0(a, outs[r], rotations[r].perm, true, ops);
    }
}

// Hoisted rotations of an operand that is itself over Q*P (a sum of double hoisting;
// Evaluator::rotate_many_extended of an extended batch; backend::cpu::rotate_hoisted_from_extended_polys):
// a.in = count x 2 x ne x n, outs[r] likewise = (sigma_r(c0) + <sigma_r(digits), b_r>, <sigma_r(digits), a_r>)
// with the digits those of round(c1 / P). The c1's alone are divided by P (one ModDown of the
// batch's c1's, read with the element stride), ONE ModUp of the results serves every rotation, and per
// rotation the inner product writes into outs[r] and one launch adds sigma_r(c0) on all ne limbs: c0
// is rotated as it is, without the ModDown and the lift by P of the default (Queue). a.out, a.keys,
// a.key_qp_limbs, a.perm and a.perm_table are unused here; a.scratch: key_switch_scratch(level, count).
template <typename Ops>
void for_each_hoisted_from_extended_rotation_step(const CiphertextKeySwitchArgs& a, const HoistedRotation* rotations,
                                                  uint64_t* const* outs, uint32_t count, Ops& ops) {
    const KeySwitchLevel& L = a.level;
    const uint64_t n = uint64_t(1) << L.plan.log_n, ne_n = uint64_t(L.ne) * n;
    KeySwitchArgs ks;
    ks.level = L;
    ks.count = a.count;
    ks.scratch = a.scratch;
    const KeySwitchBuffers b(ks);
    // round(c1 / P) into the pair region (count x nq limbs of its count x 2 x nq), which the ModUp
    // and the inner products leave alone; the division's scratch is the ModDown region
    uint64_t* c1_down = b.pair;
    mod_down_polys(L, a.in + ne_n, c1_down, a.count, b.drop, ops, 2 * ne_n);
    ks.in = c1_down;
    ks.in_stride = uint64_t(L.nq) * n;
    for_each_mod_up_step(ks, b, ops);
    for (uint32_t r = 0; r < count; ++r) {
        ks.perm = rotations[r].perm;
        ks.keys = rotations[r].keys;
        ks.key_qp_limbs = rotations[r].key_qp_limbs;
        KeySwitchBuffers into = b;
        into.acc = outs[r];
        inner_product_step(ks, into, ops);
        add_permuted_c0(a, outs[r], rotations[r].perm, false, ops);  // every limb of c0, special ones included
    }
}

// The ModDown and the rescale of an operand over Q*P in one division (level >= 1;
// backend::cpu::mod_down_rescale): `polys` polynomials at acc (ne limbs each) divided by q_l * P onto
// q_0 .. q_{l-1}, into out (polys x (nq - 1) limbs). scratch: divide_scratch_words(polys, nq - 1, k + 1, n).
template <typename Ops>
void mod_down_rescale_polys(const KeySwitchLevel& L, const uint64_t* acc, uint64_t* out, uint32_t polys,
                            uint64_t* scratch, Ops& ops) {
    if (L.nq < 2) raise<LevelMismatch>("rescale: an operand over Q*P at level 0 cannot be rescaled");
    divide_by_dropped(L, L.nq - 1, L.k + 1, L.qlp_to_q, L.rescale_drop, const_cast<uint64_t*>(acc), 0, out, polys,
                      scratch, ops);
}

// The hoisted sum of rotations (Evaluator::rotate_sum for a batch): out = sum_r sigma_r(in) +
// identities * in for every element, count >= 1 rotations. ONE ModUp of the c1's; the inner
// products through each permutation accumulate over Q*P (lazy ModDown) and ONE ModDown follows;
// then sum_r sigma_r(c0) (a permutation of both polynomials into `tmp`, count x 2 x nq x n
// words, and an addition of the c0's per rotation), the key-switched pair and the identities are
// added. out must not alias in or tmp.
template <typename Ops>
void for_each_hoisted_sum_step(const CiphertextKeySwitchArgs& a, const HoistedRotation* rotations, uint32_t count,
                               uint32_t identities, uint64_t* tmp, Ops& ops) {
    const uint64_t poly = uint64_t(a.level.nq) << a.level.plan.log_n;
    HoistedC1 h(a, ops);
    for (uint32_t r = 0; r < count; ++r) {
        h.select(rotations[r]);
        inner_product_step(h.ks, h.b, ops, r > 0);
    }
    const KeySwitchArgs& ks = h.ks;
    for_each_mod_down_step(ks, h.b.acc, h.b.drop, ops);
    permute_into(a, a.out, rotations[0].perm, nullptr, ops);
    for (uint32_t r = 1; r < count; ++r) {
        permute_into(a, tmp, rotations[r].perm, nullptr, ops);
        add_key_switched_pair(a, tmp, 2 * poly, 1, a.out, a.out, ops);  // out(c, 0) += sigma_r(c0)
    }
    add_key_switched_pair(a, a.out, 2 * poly, 1, a.out, ks.out, ops);  // (sum + ks0, ks1)
    for (uint32_t i = 0; i < identities; ++i) add_key_switched_pair(a, a.in, 2 * poly, 2, a.out, a.out, ops);
}

// Multiply, relinearize and rescale, fused (level >= 1): a, b = count x 2 polys (b_count 1:
// broadcast), out = count x 2 polys of nq - 1 limbs; bit for bit the CPU's
// multiply_relin_rescale_polys: the tensor product (1 launch), ModUp of d2, the inner product,
// acc += P (d0, d1) (1 launch) and ONE division by q_l * P (INTT, base conversion, NTT: 5
// launches) instead of a ModDown and a rescale. With an addend c (count x c_polys polys at a's
// level, c_polys 2 or 3, c_count 1: broadcast), a * b + c: (d0, d1[, d2]) += c before the ModUp
// (1 launch, multiply_add_relin_rescale; a third polynomial is key-switched with d2). Scratch:
// key_switch_scratch(level, count, true).
struct MultiplyRelinRescaleArgs {
    KeySwitchLevel level;
    const uint64_t* a = nullptr;
    const uint64_t* b = nullptr;
    uint32_t b_count = 0;
    const uint64_t* c = nullptr;  // null: no addend
    uint32_t c_count = 0;
    uint32_t c_polys = 2;
    uint64_t* out = nullptr;
    const uint64_t* const* keys = nullptr;  // count entries
    uint64_t key_qp_limbs = 0;
    uint32_t count = 0;
    uint64_t* scratch = nullptr;
};

template <typename Ops> void for_each_multiply_relin_rescale_step(const MultiplyRelinRescaleArgs& m, Ops& ops) {
    const KeySwitchLevel& L = m.level;
    if (L.nq < 2) raise<LevelMismatch>("multiply_relin_rescale: level 0 cannot be rescaled");
    const uint64_t n = uint64_t(1) << L.plan.log_n, poly = uint64_t(L.nq) * n;
    KeySwitchArgs ks;
    ks.level = L;
    ks.keys = m.keys;
    ks.key_qp_limbs = m.key_qp_limbs;
    ks.count = m.count;
    ks.scratch = m.scratch;
    const KeySwitchBuffers b(ks, true);
    uint64_t* prod = b.pair;  // count x 3 x nq x n

    TensorArgs<uint64_t> t;
    t.out = prod;
    t.out_stride = 3 * poly;
    t.a = m.a;
    t.a_stride = 2 * poly;
    t.b = m.b;
    t.b_stride = m.b_count == 1 ? 0 : 2 * poly;
    t.moduli = L.ext_moduli;
    t.n = uint32_t(n);
    t.limbs = L.nq;
    t.count = m.count;
    ops.tensor(static_cast<const TensorArgs<uint64_t>&>(t));

    if (m.c) {
        StridedAddArgs add;
        add.out = prod;
        add.out_stride = 3 * poly;
        add.x = prod;
        add.x_stride = 3 * poly;
        add.y = m.c;
        add.y_stride = m.c_count == 1 ? 0 : m.c_polys * poly;
        add.moduli = L.q_values;
        add.n = uint32_t(n);
        add.limbs = L.nq;
        add.polys = m.c_polys;
        add.x_polys = m.c_polys;
        add.count = m.count;
        ops.strided_add(static_cast<const StridedAddArgs&>(add));
    }

    ks.in = prod + 2 * poly;
    ks.in_stride = 3 * poly;
    for_each_mod_up_step(ks, b, ops);
    inner_product_step(ks, b, ops);

    FoldArgs f;
    f.acc = b.acc;
    f.prod = prod;
    f.w = L.p_mod_q;
    f.w_shoup = L.p_mod_q_shoup;
    f.moduli = L.ext_moduli;
    f.n = uint32_t(n);
    f.nq = L.nq;
    f.ne = L.ne;
    f.count = m.count;
    ops.fold(static_cast<const FoldArgs&>(f));

    divide_by_dropped(L, L.nq - 1, L.k + 1, L.qlp_to_q, L.rescale_drop, b.acc, 0, m.out, 2 * m.count, b.drop, ops);
}

// ---- host-side constants of one level --------------------------------------------------------------

// The host arrays a KeySwitchLevel points into: what the emulator points at directly and what
// the CUDA side uploads.
struct KeySwitchHostData {
    std::vector<NttTableView> ext_tables;  // host views (the emulator); the device side replaces them
    std::vector<math::Barrett<uint64_t>> ext_moduli;
    std::vector<DropLimb> drop;
    std::vector<uint64_t> q_values;
    BaseConvHostData p_to_q;
    std::optional<BaseConvHostData> qlp_to_q;  // level >= 1
    std::vector<DropLimb> rescale_drop;
    std::vector<uint64_t> p_mod_q, p_mod_q_shoup;
    std::vector<BaseConvHostData> conv;
    std::vector<std::vector<uint32_t>> out_limbs;
    std::vector<DigitStep> steps;  // views into conv / out_limbs (host pointers)
    KeySwitchLevel level;

    // The ring's level (all its special primes), or lc: a level over some of them.
    KeySwitchHostData(const backend::Ring& ring, int lvl) : KeySwitchHostData(ring, ring.level(lvl)) {}
    KeySwitchHostData(const backend::Ring& ring, const backend::LevelConstants& lc) : p_to_q(lc.p_to_q) {
        const int lvl = lc.level;
        const uint32_t nq = uint32_t(lvl) + 1, k = uint32_t(lc.special), ne = nq + k;
        for (uint32_t i = 0; i < nq; ++i) ext_tables.push_back(host_table_view(ring.ntt_tables()[i]));
        for (uint32_t i = 0; i < k; ++i) ext_tables.push_back(host_table_view(ring.p_ntt_tables()[i]));
        uint64_t chunk = 64;
        for (uint32_t i = 0; i < ne; ++i) {
            const math::Modulus& m = i < nq ? ring.moduli()[i] : ring.p_moduli()[i - nq];
            ext_moduli.push_back(m.barrett);
            chunk = std::min<uint64_t>(chunk, backend::cpu::lazy_product_terms(m.value));
        }
        for (uint32_t i = 0; i < nq; ++i) q_values.push_back(ring.moduli()[i].value);
        drop.resize(nq);
        // inv = P^{-1} mod q_j; the dropped-prime residue only serves the one-prime fused path
        make_drop_limbs(q_values.data(), nq, ring.p_moduli()[0].value, lc.p_inv.data(), drop.data());
        conv.reserve(lc.digits.size());
        for (const auto& d : lc.digits) {
            conv.emplace_back(d.to_others);
            std::vector<uint32_t> limbs;
            for (uint32_t i = 0; i < ne; ++i)
                if (i < d.begin || i >= d.end) limbs.push_back(i);
            out_limbs.push_back(std::move(limbs));
        }
        for (size_t j = 0; j < lc.digits.size(); ++j) {
            DigitStep s;
            s.begin = uint32_t(lc.digits[j].begin);
            s.size = uint32_t(lc.digits[j].end - lc.digits[j].begin);
            s.conv = conv[j].view();
            s.out_limbs = out_limbs[j].data();
            steps.push_back(s);
        }
        uint32_t log_n = 0;
        while ((size_t(1) << log_n) < ring.n()) ++log_n;
        level.ext_tables = ext_tables.data();
        level.ext_moduli = ext_moduli.data();
        level.drop = drop.data();
        level.q_values = q_values.data();
        level.special_prime = ring.p_moduli()[0].value;
        level.p_to_q = p_to_q.view();
        level.k = k;
        for (uint32_t i = 0; i < nq; ++i) {
            p_mod_q.push_back(lc.p_mod_q[i]);
            p_mod_q_shoup.push_back(math::shoup_precompute(lc.p_mod_q[i], q_values[i]));
        }
        level.p_mod_q = p_mod_q.data();
        level.p_mod_q_shoup = p_mod_q_shoup.data();
        if (lvl >= 1) {
            qlp_to_q.emplace(lc.qlp_to_q);
            level.qlp_to_q = qlp_to_q->view();
            rescale_drop.resize(nq - 1);
            // the dropped-prime residue only serves the one-prime fused path: any prime will do
            make_drop_limbs(q_values.data(), nq - 1, q_values[nq - 1], lc.qlp_inv.data(), rescale_drop.data());
            level.rescale_drop = rescale_drop.data();
        }
        level.digit_steps = steps.data();
        level.nq = nq;
        level.ne = ne;
        level.beta = uint32_t(lc.digits.size());
        level.max_digit = 0;
        for (const DigitStep& s : steps) level.max_digit = std::max(level.max_digit, s.size);
        level.chunk = uint32_t(chunk);
        level.plan = make_ntt_plan(log_n);
    }
    KeySwitchHostData(const KeySwitchHostData&) = delete;  // the views point into this object
    KeySwitchHostData& operator=(const KeySwitchHostData&) = delete;
};

}  // namespace oboro::cuda::kernels
