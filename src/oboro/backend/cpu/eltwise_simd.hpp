// The SIMD element-wise kernels, written once over a vector-operations type V (Avx2Ops in
// eltwise_avx2.cpp, Avx512Ops in eltwise_avx512.cpp). Include this header only after the
// OBORO_SIMD_TARGET_BEGIN of the instruction set (util/simd_target.hpp), so that the kernels are
// compiled for it.
//
// V provides: reg, lanes, load, store, stream (non-temporal store to an address aligned to the
// vector size), store_fence, set1, zero, add, sub, and_, or_, srli32, slli32 (shift by
// 32), shift_count / sll / srl (run-time count), mul32 (vpmuludq: low 32 x low 32 bits), mullo
// (low word of a 64x64 product), cond_sub(x, m) = x >= m ? x - m : x (for |x - m| < 2^63),
// sub_mod, neg_mod, add_carry(hi, lo, v): (hi, lo) += v as a 128-bit number.
// Lengths that are not a multiple of V::lanes finish with the scalar table, which gives the same
// canonical residues.
#pragma once

#include "oboro/backend/cpu/eltwise.hpp"
#include "oboro/backend/cpu/word_barrett.hpp"

namespace oboro::backend::cpu::simd {

// The stores of kernels with an ordinary and a streaming form (EltwiseKernels::*_stream):
// streaming stores need an output aligned to the vector size (stream_aligned), else the kernel
// falls back to its ordinary form.
template <class V> bool stream_aligned(const uint64_t* d) {
    return reinterpret_cast<uintptr_t>(d) % sizeof(typename V::reg) == 0;
}
template <bool Stream, class V> void put(uint64_t* d, typename V::reg v) {
    if (Stream) V::stream(d, v);
    else V::store(d, v);
}

template <class V> struct Kernels {
    using R = typename V::reg;
    static constexpr size_t L = V::lanes;

    // Low and high words of a*b from four 32x32-bit products (neither ISA has a 64x64 -> 128
    // multiply): a*b = hh*2^64 + (lh + hl)*2^32 + ll. `mid` gathers the bits 32..63 of the three
    // lower terms (< 3*2^32, no overflow) and carries into the high word.
    static inline void mul_wide(R a, R b, R& hi, R& lo) {
        const R mask = V::set1(0xffffffffu);
        const R a_hi = V::srli32(a), b_hi = V::srli32(b);
        const R ll = V::mul32(a, b), lh = V::mul32(a, b_hi), hl = V::mul32(a_hi, b), hh = V::mul32(a_hi, b_hi);
        const R mid = V::add(V::add(V::srli32(ll), V::and_(lh, mask)), V::and_(hl, mask));
        lo = V::or_(V::slli32(mid), V::and_(ll, mask));
        hi = V::add(V::add(hh, V::srli32(lh)), V::add(V::srli32(hl), V::srli32(mid)));
    }

    static inline R mulhi(R a, R b) {
        R hi, lo;
        mul_wide(a, b, hi, lo);
        return hi;
    }

    struct Consts {
        R q, q2, mu, r64, r64s;
        typename V::count lo_shift, hi_shift;
        explicit Consts(const WordBarrett& wb)
            : q(V::set1(wb.q)), q2(V::set1(2 * wb.q)), mu(V::set1(wb.mu)), r64(V::set1(wb.r64)),
              r64s(V::set1(wb.r64_shoup)), lo_shift(V::shift_count(wb.lo_shift)), hi_shift(V::shift_count(wb.hi_shift)) {}
    };

    // (hi, lo) < 2^(b+62) -> canonical residue; the bound r < 3q is proved in word_barrett.hpp.
    static inline R reduce_wide(R hi, R lo, const Consts& c) {
        const R top = V::or_(V::sll(hi, c.hi_shift), V::srl(lo, c.lo_shift));
        const R r = V::sub(lo, V::mullo(mulhi(top, c.mu), c.q));
        return V::cond_sub(V::cond_sub(r, c.q2), c.q);
    }

    // Any 128-bit (hi, lo) -> canonical residue: hi*2^64 is folded to hi*(2^64 mod q) with a
    // Shoup product in [0, 2q) (valid for any word hi), which added to lo leaves a value below
    // 2^64 + 2q < 2^(b+62), with its carry as the new high word.
    static inline R reduce_acc(R hi, R lo, const Consts& c) {
        const R t = mul_shoup_lazy(hi, c.r64, c.r64s, c.q);
        R top = V::zero();
        V::add_carry(top, lo, t);
        return reduce_wide(top, lo, c);
    }

    // An inner product's 128-bit sum to a residue by the fold F (word_barrett.hpp's sum_fold).
    // Fold::product: the high word, below 2^61, times 2^64 mod q as a plain product (four 32-bit
    // products where reduce_acc's Shoup product takes ten), plus the low word.
    template <Fold F> static inline R reduce_sum(R hi, R lo, const Consts& c) {
        if constexpr (F == Fold::none) {
            return reduce_wide(hi, lo, c);
        } else if constexpr (F == Fold::product) {
            R top, low;
            mul_wide(hi, c.r64, top, low);
            V::add_carry(top, low, lo);
            return reduce_wide(top, low, c);
        } else {
            return reduce_acc(hi, lo, c);
        }
    }
    // Runs f(std::integral_constant<Fold, F>) for the fold F at run time.
    template <class F> static void with_fold(Fold fold, F&& f) {
        if (fold == Fold::none) return f(std::integral_constant<Fold, Fold::none>{});
        if (fold == Fold::product) return f(std::integral_constant<Fold, Fold::product>{});
        f(std::integral_constant<Fold, Fold::shoup>{});
    }

    // Shoup: a*w - floor(a*w_shoup/2^64)*q in [0, 2q) for any word a (math::mul_shoup_lazy).
    static inline R mul_shoup_lazy(R a, R w, R ws, R q) {
        return V::sub(V::mullo(a, w), V::mullo(mulhi(a, ws), q));
    }

    static inline R mul_mod(R a, R b, const Consts& c) {
        R hi, lo;
        mul_wide(a, b, hi, lo);
        return reduce_wide(hi, lo, c);
    }

    // add (Sub false) or sub, with ordinary or streaming stores
    template <bool Sub, bool Stream>
    static void add_or_sub(uint64_t* d, const uint64_t* x, const uint64_t* y, uint64_t q, size_t n) {
        if (Stream && !stream_aligned<V>(d)) return add_or_sub<Sub, false>(d, x, y, q, n);
        const R vq = V::set1(q);
        size_t k = 0;
        for (; k + L <= n; k += L) {
            const R a = V::load(x + k), b = V::load(y + k);
            put<Stream, V>(d + k, Sub ? V::sub_mod(a, b, vq) : V::cond_sub(V::add(a, b), vq));
        }
        if (Stream) V::store_fence();  // streaming stores are weakly ordered: complete them here
        if (k < n) (Sub ? scalar_kernels().sub : scalar_kernels().add)(d + k, x + k, y + k, q, n - k);
    }
    static void add(uint64_t* d, const uint64_t* x, const uint64_t* y, uint64_t q, size_t n) {
        add_or_sub<false, false>(d, x, y, q, n);
    }
    static void sub(uint64_t* d, const uint64_t* x, const uint64_t* y, uint64_t q, size_t n) {
        add_or_sub<true, false>(d, x, y, q, n);
    }
    static void add_stream(uint64_t* d, const uint64_t* x, const uint64_t* y, uint64_t q, size_t n) {
        add_or_sub<false, true>(d, x, y, q, n);
    }
    static void sub_stream(uint64_t* d, const uint64_t* x, const uint64_t* y, uint64_t q, size_t n) {
        add_or_sub<true, true>(d, x, y, q, n);
    }

    static void negate(uint64_t* d, const uint64_t* x, uint64_t q, size_t n) {
        const R vq = V::set1(q);
        size_t k = 0;
        for (; k + L <= n; k += L) V::store(d + k, V::neg_mod(V::load(x + k), vq));
        if (k < n) scalar_kernels().negate(d + k, x + k, q, n - k);
    }

    static void add_scalar(uint64_t* d, const uint64_t* x, uint64_t w, uint64_t q, size_t n) {
        const R vq = V::set1(q), vw = V::set1(w);
        size_t k = 0;
        for (; k + L <= n; k += L) V::store(d + k, V::cond_sub(V::add(V::load(x + k), vw), vq));
        if (k < n) scalar_kernels().add_scalar(d + k, x + k, w, q, n - k);
    }

    template <bool Stream> static void mul_to(uint64_t* d, const uint64_t* x, const uint64_t* y, const math::Modulus& m,
                                              size_t n) {
        if (Stream && !stream_aligned<V>(d)) return mul_to<false>(d, x, y, m, n);
        const Consts c{WordBarrett(m)};
        size_t k = 0;
        for (; k + L <= n; k += L) put<Stream, V>(d + k, mul_mod(V::load(x + k), V::load(y + k), c));
        if (Stream) V::store_fence();
        if (k < n) scalar_kernels().mul(d + k, x + k, y + k, m, n - k);
    }
    static void mul(uint64_t* d, const uint64_t* x, const uint64_t* y, const math::Modulus& m, size_t n) {
        mul_to<false>(d, x, y, m, n);
    }
    static void mul_stream(uint64_t* d, const uint64_t* x, const uint64_t* y, const math::Modulus& m, size_t n) {
        mul_to<true>(d, x, y, m, n);
    }

    // acc + x*y < q^2 + 2q < 2^(2b) for acc < 2q: one reduction (paper 004, section 4.1).
    static void mul_add(uint64_t* acc, const uint64_t* x, const uint64_t* y, const math::Modulus& m, size_t n) {
        const Consts c{WordBarrett(m)};
        size_t k = 0;
        for (; k + L <= n; k += L) {
            R hi, lo;
            mul_wide(V::load(x + k), V::load(y + k), hi, lo);
            V::add_carry(hi, lo, V::load(acc + k));
            V::store(acc + k, reduce_wide(hi, lo, c));
        }
        if (k < n) scalar_kernels().mul_add(acc + k, x + k, y + k, m, n - k);
    }

    static void mul_scalar(uint64_t* d, const uint64_t* x, uint64_t w, uint64_t ws, uint64_t q, size_t n) {
        const R vq = V::set1(q), vw = V::set1(w), vws = V::set1(ws);
        size_t k = 0;
        for (; k + L <= n; k += L) V::store(d + k, V::cond_sub(mul_shoup_lazy(V::load(x + k), vw, vws, vq), vq));
        if (k < n) scalar_kernels().mul_scalar(d + k, x + k, w, ws, q, n - k);
    }

    static void sub_mul_scalar(uint64_t* d, const uint64_t* x, const uint64_t* y, uint64_t w, uint64_t ws,
                               uint64_t q, size_t n) {
        const R vq = V::set1(q), vw = V::set1(w), vws = V::set1(ws);
        size_t k = 0;
        for (; k + L <= n; k += L) {
            // x - y + q in (0, 2q): Shoup takes any word, so no reduction before the product
            const R diff = V::add(V::sub(V::load(x + k), V::load(y + k)), vq);
            V::store(d + k, V::cond_sub(mul_shoup_lazy(diff, vw, vws, vq), vq));
        }
        if (k < n) scalar_kernels().sub_mul_scalar(d + k, x + k, y + k, w, ws, q, n - k);
    }

    static void mul_scalar_add(uint64_t* acc, const uint64_t* x, uint64_t w, uint64_t ws, uint64_t q, size_t n) {
        const R vq = V::set1(q), vw = V::set1(w), vws = V::set1(ws);
        size_t k = 0;
        for (; k + L <= n; k += L) {
            const R p = V::cond_sub(mul_shoup_lazy(V::load(x + k), vw, vws, vq), vq);
            V::store(acc + k, V::cond_sub(V::add(V::load(acc + k), p), vq));
        }
        if (k < n) scalar_kernels().mul_scalar_add(acc + k, x + k, w, ws, q, n - k);
    }

    template <bool Stream>
    static void tensor_to(uint64_t* d0, uint64_t* d1, uint64_t* d2, const uint64_t* x0, const uint64_t* x1,
                          const uint64_t* y0, const uint64_t* y1, const math::Modulus& m, size_t n) {
        if (Stream && !(stream_aligned<V>(d0) && stream_aligned<V>(d1) && stream_aligned<V>(d2)))
            return tensor_to<false>(d0, d1, d2, x0, x1, y0, y1, m, n);
        const Consts c{WordBarrett(m)};
        size_t k = 0;
        for (; k + L <= n; k += L) {
            const R a0 = V::load(x0 + k), a1 = V::load(x1 + k), b0 = V::load(y0 + k), b1 = V::load(y1 + k);
            const R p00 = mul_mod(a0, b0, c), p11 = mul_mod(a1, b1, c);
            const R cross = mul_mod(V::cond_sub(V::add(a0, a1), c.q), V::cond_sub(V::add(b0, b1), c.q), c);
            put<Stream, V>(d0 + k, p00);
            put<Stream, V>(d1 + k, V::sub_mod(V::sub_mod(cross, p00, c.q), p11, c.q));
            put<Stream, V>(d2 + k, p11);
        }
        if (Stream) V::store_fence();
        if (k < n) scalar_kernels().tensor(d0 + k, d1 + k, d2 + k, x0 + k, x1 + k, y0 + k, y1 + k, m, n - k);
    }
    static void tensor(uint64_t* d0, uint64_t* d1, uint64_t* d2, const uint64_t* x0, const uint64_t* x1,
                       const uint64_t* y0, const uint64_t* y1, const math::Modulus& m, size_t n) {
        tensor_to<false>(d0, d1, d2, x0, x1, y0, y1, m, n);
    }
    static void tensor_stream(uint64_t* d0, uint64_t* d1, uint64_t* d2, const uint64_t* x0, const uint64_t* x1,
                              const uint64_t* y0, const uint64_t* y1, const math::Modulus& m, size_t n) {
        tensor_to<true>(d0, d1, d2, x0, x1, y0, y1, m, n);
    }

    // 128-bit lazy accumulation: per term only the products and a carry, no reduction. Primes
    // whose 30-bit halves sums take chunks of at least 3 terms (below about 2^61.4: every prime of
    // the presets) run the halves form, dot2_halves, in chunks of 7, 4 or 3 terms.
    static void dot2(uint64_t* o0, uint64_t* o1, const DotTerm* terms, size_t count, bool accumulate,
                     const math::Modulus& m, size_t n) {
        if (with_halves_chunk(halves_terms(m.value), count, [&](auto chunk) {
                with_fold(sum_fold(count, m.value, m.value, accumulate ? m.value - 1 : 0, m.value), [&](auto fold) {
                    dot2_halves<chunk(), fold()>(o0, o1, terms, count, accumulate, m, n);
                });
            }))
            return;
        const Consts c{WordBarrett(m)};
        const size_t chunk = lazy_product_terms(m.value);
        size_t k = 0;
        for (; k + L <= n; k += L) {
            R h0 = V::zero(), l0 = accumulate ? V::load(o0 + k) : V::zero();
            R h1 = V::zero(), l1 = accumulate ? V::load(o1 + k) : V::zero();
            for (size_t j = 0; j < count; ++j) {
                if (j != 0 && j % chunk == 0) {  // keep the 128-bit sums from overflowing
                    l0 = reduce_acc(h0, l0, c);
                    l1 = reduce_acc(h1, l1, c);
                    h0 = h1 = V::zero();
                }
                const DotTerm& t = terms[j];
                const R v = V::load(t.x + k);
                R ph, pl;
                mul_wide(v, V::load(t.y0 + k), ph, pl);
                h0 = V::add(h0, ph);
                V::add_carry(h0, l0, pl);
                mul_wide(v, V::load(t.y1 + k), ph, pl);
                h1 = V::add(h1, ph);
                V::add_carry(h1, l1, pl);
            }
            V::store(o0 + k, reduce_acc(h0, l0, c));
            V::store(o1 + k, reduce_acc(h1, l1, c));
        }
        dot2_tail(o0, o1, terms, count, accumulate, m, n, k);
    }

    // The elements from k on that do not fill a vector, by the scalar table's dot2.
    static void dot2_tail(uint64_t* o0, uint64_t* o1, const DotTerm* terms, size_t count, bool accumulate,
                          const math::Modulus& m, size_t n, size_t k) {
        if (k >= n) return;
        DotTerm tail[kMaxDotTerms];  // the same terms from element k on
        for (size_t j = 0; j < count; ++j) tail[j] = {terms[j].x + k, terms[j].y0 + k, terms[j].y1 + k};
        scalar_kernels().dot2(o0 + k, o1 + k, tail, count, accumulate, m, n - k);
    }

    // dot2 with residues split into 30-bit halves, x = x1 2^30 + x0, so that each of the four half
    // products is one 32x32-bit product, and three word sums collect a chunk of terms with no
    // carries to follow: A = sum x0 y0, B = sum (x0 y1 + x1 y0) and C = sum x1 y1. Each chunk's
    // A + B 2^30 + C 2^60 (below 2^124.1) is added to a 128-bit sum, reduced once per output as in
    // dot2. A term costs 4 products and 4 additions where the 128-bit form costs 4 products and
    // about 16 shifts, masks, additions and carry selects (mul_wide and add_carry).
    // halves_terms(q): how many terms a chunk takes before a word sum could overflow, for
    // residues below q (7 below 2^60, 4 below 2^61, 3 for B1's primes just above 2^61; 1 for
    // 62-bit primes, which take the 128-bit form); kHalvesChunks chunks fit the 128-bit sum.
    // On the 61-bit primes the halves form took dot2 from 7.5 to 5.9 ns per element at 3 terms
    // and 13.7 to 11.8 at 7 (in one process, alternated); below 2^60 it is the form it was.
    // halves_terms(x_bound, y_bound) is the same for products of x < x_bound and y < y_bound.
    static size_t halves_terms(uint64_t q) { return halves_terms(q, q); }
    static size_t halves_terms(uint64_t x_bound, uint64_t y_bound) {
        using u128 = unsigned __int128;
        constexpr uint64_t kMaxBound = uint64_t(1) << 62;  // high halves below 2^32: one vpmuludq each
        if (x_bound > kMaxBound || y_bound > kMaxBound) return 0;
        const u128 low = (uint64_t(1) << 30) - 1, x_hi = (x_bound - 1) >> 30, y_hi = (y_bound - 1) >> 30;
        u128 worst = low * low;
        if (low * (x_hi + y_hi) > worst) worst = low * (x_hi + y_hi);
        if (x_hi * y_hi > worst) worst = x_hi * y_hi;
        const u128 terms = u128(~uint64_t(0)) / worst;
        return terms < kMaxDotTerms ? size_t(terms) : kMaxDotTerms;
    }
    static constexpr size_t kHalvesChunks = 15;
    // Runs f(std::integral_constant<size_t, Chunk>) with the largest chunk of 7, 4 or 3 terms that
    // `halves` (halves_terms) allows and whose kHalvesChunks chunks hold `terms`; false (f not run)
    // where none does: the 128-bit form.
    template <class F> static bool with_halves_chunk(size_t halves, size_t terms, F&& f) {
        if (halves >= 7 && terms <= kHalvesChunks * 7) return f(std::integral_constant<size_t, 7>{}), true;
        if (halves >= 4 && terms <= kHalvesChunks * 4) return f(std::integral_constant<size_t, 4>{}), true;
        if (halves >= 3 && terms <= kHalvesChunks * 3) return f(std::integral_constant<size_t, 3>{}), true;
        return false;
    }
    struct HalvesSums {
        R a0, b0, c0, a1, b1, c1;
    };
    // The three sums of the `count` terms at element k, for both outputs.
    static inline HalvesSums halves_sums(const DotTerm* terms, size_t k, size_t count) {
        const R low30 = V::set1((uint64_t(1) << 30) - 1);
        const auto s30 = V::shift_count(30);
        R a0 = V::zero(), b0 = V::zero(), c0 = V::zero(), a1 = V::zero(), b1 = V::zero(), c1 = V::zero();
        for (size_t j = 0; j < count; ++j) {
            const DotTerm& t = terms[j];
            const R x = V::load(t.x + k), y0 = V::load(t.y0 + k), y1 = V::load(t.y1 + k);
            const R xl = V::and_(x, low30), xh = V::srl(x, s30);
            const R y0l = V::and_(y0, low30), y0h = V::srl(y0, s30);
            const R y1l = V::and_(y1, low30), y1h = V::srl(y1, s30);
            a0 = V::add(a0, V::mul32(xl, y0l));
            b0 = V::add(b0, V::add(V::mul32(xl, y0h), V::mul32(xh, y0l)));
            c0 = V::add(c0, V::mul32(xh, y0h));
            a1 = V::add(a1, V::mul32(xl, y1l));
            b1 = V::add(b1, V::add(V::mul32(xl, y1h), V::mul32(xh, y1l)));
            c1 = V::add(c1, V::mul32(xh, y1h));
        }
        return {a0, b0, c0, a1, b1, c1};
    }
    // (hi, lo) += A + B 2^30 + C 2^60 as a 128-bit number
    static inline void halves_fold(R& hi, R& lo, R a, R b, R cc) {
        hi = V::add(hi, V::add(V::srl(b, V::shift_count(34)), V::srl(cc, V::shift_count(4))));
        V::add_carry(hi, lo, a);
        V::add_carry(hi, lo, V::sll(b, V::shift_count(30)));
        V::add_carry(hi, lo, V::sll(cc, V::shift_count(60)));
    }
    // Chunk: a compile-time chunk size (3, 4 or 7, at most halves_terms(q)), so that the compiler
    // knows the bound of each chunk's loop; F: the fold of the sums (sum_fold).
    template <size_t Chunk, Fold F>
    static void dot2_halves(uint64_t* o0, uint64_t* o1, const DotTerm* terms, size_t count, bool accumulate,
                            const math::Modulus& m, size_t n) {
        const Consts c{WordBarrett(m)};
        size_t k = 0;
        for (; k + L <= n; k += L) {
            R h0 = V::zero(), l0 = accumulate ? V::load(o0 + k) : V::zero();
            R h1 = V::zero(), l1 = accumulate ? V::load(o1 + k) : V::zero();
            for (size_t j0 = 0; j0 < count; j0 += Chunk) {
                const HalvesSums t = halves_sums(terms + j0, k, count - j0 < Chunk ? count - j0 : Chunk);
                halves_fold(h0, l0, t.a0, t.b0, t.c0);
                halves_fold(h1, l1, t.a1, t.b1, t.c1);
            }
            V::store(o0 + k, reduce_sum<F>(h0, l0, c));
            V::store(o1 + k, reduce_sum<F>(h1, l1, c));
        }
        dot2_tail(o0, o1, terms, count, accumulate, m, n, k);
    }

    // x mod t by Barrett's single-word reduction (math::Barrett::reduce_word: the estimate
    // floor(x * ratio_hi / 2^64) is short by at most 2). Centred: subtract p mod t where x > p/2,
    // selected without a compare: (p/2 - x) >> 63 is 1 exactly there (both are below 2^62).
    static void convert_single(uint64_t* d, const uint64_t* x, uint64_t p, bool centered, const math::Modulus& m,
                               size_t n) {
        const R vt = V::set1(m.value), ratio = V::set1(m.barrett.ratio_hi), half = V::set1(p >> 1);
        const R p_mod_t = V::set1(m.barrett.reduce_word(p));
        const typename V::count sign = V::shift_count(63);
        size_t k = 0;
        for (; k + L <= n; k += L) {
            const R a = V::load(x + k);
            R r = V::sub(a, V::mullo(mulhi(a, ratio), vt));
            r = V::cond_sub(V::cond_sub(r, vt), vt);
            if (centered) {
                const R all_ones_above_half = V::sub(V::zero(), V::srl(V::sub(half, a), sign));
                r = V::sub_mod(r, V::and_(all_ones_above_half, p_mod_t), vt);
            }
            V::store(d + k, r);
        }
        if (k < n) scalar_kernels().convert_single(d + k, x + k, p, centered, m, n - k);
    }

    // Lazy 128-bit accumulation as in dot2, with one broadcast weight per term; the count v[c]
    // (a byte) is widened lane by lane through a small stack copy. Where the sources' bound and
    // t let the 30-bit halves sums take chunks of at least 3 terms (every prime of the presets),
    // the halves form, weighted_sum_halves.
    static void weighted_sum(uint64_t* d, const uint64_t* y, size_t stride, size_t terms, uint64_t y_bound,
                             const uint64_t* w, const uint8_t* v, uint64_t u, uint64_t u_shoup, const math::Modulus& m,
                             size_t n) {
        if (with_halves_chunk(halves_terms(y_bound, m.value), terms, [&](auto chunk) {
                // the counts' term v (t - u), v a byte: below 255 t, which can pass 2^64
                constexpr unsigned __int128 kMaxCountsTerm = 255;
                with_fold(sum_fold(terms, y_bound, m.value, v ? kMaxCountsTerm * (m.value - 1) : 0, m.value), [&](auto fold) {
                    weighted_sum_halves<chunk(), fold()>(d, y, stride, terms, y_bound, w, v, u, u_shoup, m, n);
                });
            }))
            return;
        const Consts c{WordBarrett(m)};
        const R vu = V::set1(u), vus = V::set1(u_shoup);
        R weights[kMaxDotTerms];
        for (size_t i = 0; i < terms && i < kMaxDotTerms; ++i) weights[i] = V::set1(w[i]);
        size_t k = 0;
        if (terms <= kMaxDotTerms) {
            for (; k + L <= n; k += L) {
                R h = V::zero(), l = V::zero();
                for (size_t i = 0; i < terms; ++i) {
                    if (i != 0 && i % 16 == 0) {  // 16 products of < 2^124 fit in 128 bits
                        l = reduce_acc(h, l, c);
                        h = V::zero();
                    }
                    R ph, pl;
                    mul_wide(V::load(y + i * stride + k), weights[i], ph, pl);
                    h = V::add(h, ph);
                    V::add_carry(h, l, pl);
                }
                R r = reduce_acc(h, l, c);
                if (v) r = V::sub_mod(r, V::cond_sub(mul_shoup_lazy(counts_at(v, k), vu, vus, c.q), c.q), c.q);
                V::store(d + k, r);
            }
        }
        if (k < n)
            scalar_kernels().weighted_sum(d + k, y + k, stride, terms, y_bound, w, v ? v + k : nullptr, u, u_shoup, m,
                                          n - k);
    }

    // the counts v[k .. k + L), widened to words
    static inline R counts_at(const uint8_t* v, size_t k) {
        alignas(64) uint64_t counts[L];
        for (size_t j = 0; j < L; ++j) counts[j] = v[k + j];
        return V::load(counts);
    }

    // weighted_sum with y_i and the weights split into 30-bit halves as in dot2_halves (the
    // weights' halves broadcast once): a term is 4 products and 4 additions, a chunk of Chunk
    // terms is folded into the 128-bit sum. The counts' term -v * u enters that sum as
    // v * (t - u) (v below 2^8: two products), before the one reduction, by the fold F (sum_fold).
    template <size_t Chunk, Fold F>
    static void weighted_sum_halves(uint64_t* d, const uint64_t* y, size_t stride, size_t terms, uint64_t y_bound,
                                    const uint64_t* w, const uint8_t* v, uint64_t u, uint64_t u_shoup,
                                    const math::Modulus& m, size_t n) {
        const Consts c{WordBarrett(m)};
        const R low30 = V::set1((uint64_t(1) << 30) - 1);
        const auto s30 = V::shift_count(30);
        R w_low[kMaxDotTerms], w_high[kMaxDotTerms];
        for (size_t i = 0; i < terms; ++i) {
            w_low[i] = V::set1(w[i] & ((uint64_t(1) << 30) - 1));
            w_high[i] = V::set1(w[i] >> 30);
        }
        const uint64_t minus_u = u == 0 ? 0 : m.value - u;
        const R mu_low = V::set1(minus_u & ((uint64_t(1) << 30) - 1)), mu_high = V::set1(minus_u >> 30);
        size_t k = 0;
        for (; k + L <= n; k += L) {
            R h = V::zero(), l = V::zero();
            if (v) {
                const R x = counts_at(v, k);
                halves_fold(h, l, V::mul32(x, mu_low), V::mul32(x, mu_high), V::zero());
            }
            for (size_t i0 = 0; i0 < terms; i0 += Chunk) {
                const size_t count = terms - i0 < Chunk ? terms - i0 : Chunk;
                R a = V::zero(), b = V::zero(), cc = V::zero();
                for (size_t i = i0; i < i0 + count; ++i) {
                    const R x = V::load(y + i * stride + k);
                    const R xl = V::and_(x, low30), xh = V::srl(x, s30);
                    a = V::add(a, V::mul32(xl, w_low[i]));
                    b = V::add(b, V::add(V::mul32(xl, w_high[i]), V::mul32(xh, w_low[i])));
                    cc = V::add(cc, V::mul32(xh, w_high[i]));
                }
                halves_fold(h, l, a, b, cc);
            }
            V::store(d + k, reduce_sum<F>(h, l, c));
        }
        if (k < n)
            scalar_kernels().weighted_sum(d + k, y + k, stride, terms, y_bound, w, v ? v + k : nullptr, u, u_shoup, m,
                                          n - k);
    }

    static constexpr EltwiseKernels table(const char* name) {
        return {name,   add,        sub,        add_stream,     sub_stream,     mul_stream, tensor_stream, negate,
                add_scalar, mul,        mul_add,    mul_scalar,     sub_mul_scalar, mul_scalar_add, tensor,
                dot2,       convert_single, weighted_sum};
    }
};

}  // namespace oboro::backend::cpu::simd
