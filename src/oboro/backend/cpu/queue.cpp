// The CPU implementation of the batched kernels (backend/queue.hpp): ONE parallel loop per
// operation over all the work items of the batch (element x polynomial x limb for element-wise
// kernels, element for key switching), each running a per-limb SIMD kernel (eltwise.hpp) or a
// per-ciphertext function (ciphertext_ops.hpp, keyswitch.hpp, hoisting.hpp). Loops nested inside a work item run inline on its thread. Key-switching scratch
// comes from scratch_pool(): one workspace per running thread, reused from item to item, so the
// loop does no heap allocation once the workspaces have grown.
#include <algorithm>
#include <cstring>
#include <vector>

#include "oboro/backend/cpu/ciphertext_ops.hpp"
#include "oboro/backend/cpu/eltwise.hpp"
#include "oboro/backend/cpu/encode.hpp"
#include "oboro/backend/cpu/hoisting.hpp"
#include "oboro/backend/cpu/keyswitch.hpp"
#include "oboro/backend/cpu/poly_ops.hpp"
#include "oboro/backend/queue.hpp"
#include "oboro/math/modarith.hpp"
#include "oboro/util/parallel.hpp"
#include "oboro/util/workspace.hpp"

namespace oboro::backend::cpu {

namespace {

// The shortest piece of a limb that mul_plain_sum gives a thread of its own.
constexpr size_t kMinPieceWords = 1024;
// The terms mul_plain_sum sums per pass over a limb. Each term is three streams of words (the
// plaintext and the two polynomials), and the hardware prefetchers follow only so many: 4 terms
// a pass (and dot2's 32-bit-halves form, for at most 7 terms) multiplied a 4096 x 4096 matrix
// (4096 terms in groups of 64) in 150 ms against 240 with 8 terms, 270 with 64 and 275 with one
// fused multiply-add per term (one thread, N = 2^13, AMD EPYC).
constexpr size_t kSumTermsPerPass = 4;

// The piece of a limb that mul_scalar_sum adds every term to before the next (128 KiB, in the L2
// cache): at N = 2^16 with 16 terms of 16 limbs, 1.49 ns per word and term against 1.57 term by
// term (the terms' reads from memory bound both), and 1.59 with pieces of 16 KiB (Intel Xeon VM).
constexpr size_t kScalarSumPieceWords = 16384;

// The words of a compact plaintext's limb that mul_plain_sum expands per pass and term: a buffer of
// kSumTermsPerPass of them per thread stays in the L2 cache.
constexpr size_t kExpandWords = 2048;

// Words [at, at + words) of a limb stored as runs of `block` (one word per run), written out into
// this thread's buffer `slot` (< kSumTermsPerPass), which it returns.
const uint64_t* expand_runs(size_t slot, const uint64_t* runs, size_t block, size_t at, size_t words) {
    alignas(64) thread_local uint64_t buffers[kSumTermsPerPass][kExpandWords];
    uint64_t* out = buffers[slot];
    for (size_t t = 0; t < words;) {
        const size_t r = (at + t) / block, end = std::min(words, (r + 1) * block - at);
        std::fill(out + t, out + end, runs[r]);
        t = end;
    }
    return out;
}

// Calls body(c, j, i, offset) for every element c, polynomial j < polys and limb i, where offset is
// the limb's word offset within its polynomial.
template <typename F> void for_each_limb(size_t count, size_t polys, size_t limbs, size_t n, F&& body) {
    parallel_for(count * polys * limbs, [&](size_t k) {
        const size_t i = k % limbs, j = (k / limbs) % polys, c = k / (limbs * polys);
        body(c, j, i, i * n);
    });
}

size_t rhs(ConstBatchSpan b, size_t c) { return b.count == 1 ? 0 : c; }

// The modulus of limb i of a span: q_i, or a special prime past the ciphertext limbs (a span over
// Q_level * P).
const math::Modulus& limb_modulus(const Ring& ring, ConstBatchSpan a, size_t i) {
    return i < a.q_limbs() ? ring.moduli()[i] : ring.p_moduli()[i - a.q_limbs()];
}

// The pieces mul_plain_sum cuts each limb of a into: enough items for every thread (4 each), none
// shorter than kMinPieceWords.
size_t limb_pieces(ConstBatchSpan a) {
    size_t pieces = 1;
    const size_t busy = 4 * size_t(num_threads());
    while (a.count * a.limbs * pieces < busy && a.n / (2 * pieces) >= kMinPieceWords) pieces *= 2;
    return pieces;
}

// Words [at, at + words) of limb i of element c of out = sum_j a[j] * b[j] over `terms` terms
// (a[j] of 2 polynomials; b[j] dense or compact): kSumTermsPerPass terms a pass, each pass's
// products summed in 128 bits and reduced once (dot2).
void sum_products(const EltwiseKernels& kn, const math::Modulus& m, BatchSpan out, const ConstBatchSpan* a,
                  const ConstBatchSpan* b, size_t terms, size_t c, size_t i, size_t at, size_t words) {
    const size_t n = a[0].n, off = i * n + at;
    DotTerm chunk[kSumTermsPerPass];
    for (size_t j0 = 0; j0 < terms; j0 += kSumTermsPerPass) {
        const size_t count = std::min(kSumTermsPerPass, terms - j0);
        for (size_t j = 0; j < count; ++j) {
            const ConstBatchSpan &x = a[j0 + j], &y = b[j0 + j];
            const uint64_t* p = y.poly(rhs(y, c), 0) + i * y.n;
            chunk[j] = {y.n == n ? p + at : expand_runs(j, p, n / y.n, at, words), x.poly(c, 0) + off,
                        x.poly(c, 1) + off};
        }
        kn.dot2(out.poly(c, 0) + off, out.poly(c, 1) + off, chunk, count, j0 != 0, m, words);
    }
}

// Calls rotations_of(c, out0s, out1s) for every element c of a, in parallel, with the pointers to
// polynomials 0 and 1 of element c in each of the `rotations` outputs (arrays each thread keeps:
// no allocation per element).
template <typename F>
void for_each_element_rotations(ConstBatchSpan a, const BatchSpan* outs, size_t rotations, F&& rotations_of) {
    parallel_for(a.count, [&](size_t c) {
        thread_local std::vector<uint64_t*> out0s, out1s;
        out0s.resize(rotations);
        out1s.resize(rotations);
        for (size_t r = 0; r < rotations; ++r) out0s[r] = outs[r].poly(c, 0), out1s[r] = outs[r].poly(c, 1);
        rotations_of(c, out0s.data(), out1s.data());
    });
}

void copy_limb(uint64_t* dst, const uint64_t* src, size_t n) {
    if (dst != src) std::memcpy(dst, src, n * sizeof(uint64_t));
}

class CpuQueue final : public Queue {
public:
    const char* device_name() const override { return "cpu"; }
    void synchronize() override {}

    void add(const Ring& ring, BatchSpan out, ConstBatchSpan a, ConstBatchSpan b) override {
        add_or_sub(ring, out, a, b, false);
    }
    void sub(const Ring& ring, BatchSpan out, ConstBatchSpan a, ConstBatchSpan b) override {
        add_or_sub(ring, out, a, b, true);
    }

    void negate(const Ring& ring, BatchSpan out, ConstBatchSpan a) override {
        const EltwiseKernels& kn = eltwise_active();
        for_each_limb(a.count, a.polys, a.limbs, a.n, [&](size_t c, size_t j, size_t i, size_t off) {
            kn.negate(out.poly(c, j) + off, a.poly(c, j) + off, limb_modulus(ring, a, i).value, a.n);
        });
    }

    void add_scalar(const Ring& ring, BatchSpan out, ConstBatchSpan a, const uint64_t* s) override {
        const EltwiseKernels& kn = eltwise_active();
        for_each_limb(a.count, a.polys, a.limbs, a.n, [&](size_t c, size_t j, size_t i, size_t off) {
            if (j == 0) kn.add_scalar(out.poly(c, 0) + off, a.poly(c, 0) + off, s[i], ring.q()[i], a.n);
            else copy_limb(out.poly(c, j) + off, a.poly(c, j) + off, a.n);
        });
    }

    void mul_scalar(const Ring& ring, BatchSpan out, ConstBatchSpan a, const uint64_t* s) override {
        const EltwiseKernels& kn = eltwise_active();
        for_each_limb(a.count, a.polys, a.limbs, a.n, [&](size_t c, size_t j, size_t i, size_t off) {
            const uint64_t q = ring.q()[i];
            kn.mul_scalar(out.poly(c, j) + off, a.poly(c, j) + off, s[i], math::shoup_precompute(s[i], q), q, a.n);
        });
    }

    void mul_plain(const Ring& ring, BatchSpan out, ConstBatchSpan a, ConstBatchSpan b) override {
        const EltwiseKernels& kn = eltwise_active();
        const auto mul = streams(out, a, b) ? kn.mul_stream : kn.mul;
        for_each_limb(a.count, a.polys, a.limbs, a.n, [&](size_t c, size_t j, size_t i, size_t off) {
            mul(out.poly(c, j) + off, a.poly(c, j) + off, b.poly(rhs(b, c), 0) + off, limb_modulus(ring, a, i), a.n);
        });
    }

    void tensor(const Ring& ring, BatchSpan out, ConstBatchSpan a, ConstBatchSpan b) override {
        const EltwiseKernels& kn = eltwise_active();
        const auto tensor = streams(out, a, b) ? kn.tensor_stream : kn.tensor;
        for_each_limb(a.count, 1, a.limbs, a.n, [&](size_t c, size_t, size_t i, size_t off) {
            const size_t cb = rhs(b, c);
            tensor(out.poly(c, 0) + off, out.poly(c, 1) + off, out.poly(c, 2) + off, a.poly(c, 0) + off,
                      a.poly(c, 1) + off, b.poly(cb, 0) + off, b.poly(cb, 1) + off, ring.moduli()[i], a.n);
        });
    }

    void mul_plain_add(const Ring& ring, BatchSpan acc, ConstBatchSpan a, ConstBatchSpan b) override {
        const EltwiseKernels& kn = eltwise_active();
        for_each_limb(a.count, a.polys, a.limbs, a.n, [&](size_t c, size_t j, size_t i, size_t off) {
            kn.mul_add(acc.poly(c, j) + off, a.poly(c, j) + off, b.poly(rhs(b, c), 0) + off, limb_modulus(ring, a, i),
                       a.n);
        });
    }

    // Both polynomials of a limb through dot2 (the key-switching inner product's kernel): the
    // products summed in 128 bits and reduced once per pass of kSumTermsPerPass terms. A limb is
    // cut into pieces when there are too few limbs to keep every thread busy (one ciphertext of a
    // few limbs). Compact plaintexts (fewer words per limb: runs) are expanded a chunk at a time
    // into buffers that stay in the cache, so they cost a fraction of a dense plaintext's reads.
    void mul_plain_sum(const Ring& ring, BatchSpan out, const ConstBatchSpan* a, const ConstBatchSpan* b,
                       size_t terms) override {
        const ConstBatchSpan& s = a[0];
        if (s.polys != 2) return Queue::mul_plain_sum(ring, out, a, b, terms);
        const EltwiseKernels& kn = eltwise_active();
        const size_t pieces = limb_pieces(s), len = s.n / pieces;
        const bool compact = std::any_of(b, b + terms, [&](const ConstBatchSpan& y) { return y.n != s.n; });
        const size_t chunk_words = compact ? std::min(len, kExpandWords) : len;
        parallel_for(s.count * s.limbs * pieces, [&](size_t k) {
            const size_t piece = k % pieces, i = (k / pieces) % s.limbs, c = k / (pieces * s.limbs);
            const math::Modulus& m = limb_modulus(ring, s, i);
            for (size_t at = piece * len; at < (piece + 1) * len; at += chunk_words)
                sum_products(kn, m, out, a, b, terms, c, i, at, chunk_words);
        });
    }

    // Every sum over a piece of a limb before the next piece: the pieces of the a[j] (a
    // transform's babies, in every sum) stay in the L2 cache from one sum to the next.
    void mul_plain_sums(const Ring& ring, const BatchSpan* outs, size_t sums, const ConstBatchSpan* a,
                        const ConstBatchSpan* b, const size_t* ends) override {
        const ConstBatchSpan& s = a[0];
        if (s.polys != 2) return Queue::mul_plain_sums(ring, outs, sums, a, b, ends);
        const EltwiseKernels& kn = eltwise_active();
        const size_t pieces = limb_pieces(s), len = s.n / pieces, chunk_words = std::min(len, kExpandWords);
        parallel_for(s.count * s.limbs * pieces, [&](size_t k) {
            const size_t piece = k % pieces, i = (k / pieces) % s.limbs, c = k / (pieces * s.limbs);
            const math::Modulus& m = limb_modulus(ring, s, i);
            for (size_t at = piece * len; at < (piece + 1) * len; at += chunk_words)
                for (size_t g = 0, begin = 0; g < sums; begin = ends[g++])
                    sum_products(kn, m, outs[g], a + begin, b + begin, ends[g] - begin, c, i, at, chunk_words);
        });
    }

    // A sum of one term.
    void mul_scalar_add(const Ring& ring, BatchSpan acc, ConstBatchSpan a, const uint64_t* s) override {
        mul_scalar_sum(ring, acc, &a, &s, 1);
    }

    // Every term over one piece of a limb at a time: that piece of acc stays in the cache while the
    // terms add to it, so acc is read and written once, not once per term (a polynomial's leaves
    // sum up to 16 powers this way).
    void mul_scalar_sum(const Ring& ring, BatchSpan acc, const ConstBatchSpan* a, const uint64_t* const* s,
                        size_t terms) override {
        const EltwiseKernels& kn = eltwise_active();
        for_each_limb(acc.count, acc.polys, acc.limbs, acc.n, [&](size_t c, size_t p, size_t i, size_t off) {
            const uint64_t q = ring.q()[i];
            thread_local std::vector<uint64_t> shoup;
            shoup.resize(terms);
            for (size_t j = 0; j < terms; ++j) shoup[j] = math::shoup_precompute(s[j][i], q);
            uint64_t* out = acc.poly(c, p) + off;
            for (size_t at = 0; at < acc.n; at += kScalarSumPieceWords) {
                const size_t len = std::min(kScalarSumPieceWords, acc.n - at);
                for (size_t j = 0; j < terms; ++j)
                    kn.mul_scalar_add(out + at, a[j].poly(c, p) + i * a[j].n + at, s[j][i], shoup[j], q, len);
            }
        });
    }

    // d0 += a0 b0, d1 += a0 b1 + a1 b0, d2 += a1 b1: four products, each added with one reduction.
    void tensor_add(const Ring& ring, BatchSpan acc, ConstBatchSpan a, ConstBatchSpan b) override {
        const EltwiseKernels& kn = eltwise_active();
        for_each_limb(a.count, 1, a.limbs, a.n, [&](size_t c, size_t, size_t i, size_t off) {
            const size_t cb = rhs(b, c);
            const math::Modulus& m = ring.moduli()[i];
            kn.mul_add(acc.poly(c, 0) + off, a.poly(c, 0) + off, b.poly(cb, 0) + off, m, a.n);
            kn.mul_add(acc.poly(c, 1) + off, a.poly(c, 0) + off, b.poly(cb, 1) + off, m, a.n);
            kn.mul_add(acc.poly(c, 1) + off, a.poly(c, 1) + off, b.poly(cb, 0) + off, m, a.n);
            kn.mul_add(acc.poly(c, 2) + off, a.poly(c, 1) + off, b.poly(cb, 1) + off, m, a.n);
        });
    }

    void drop_limbs(BatchSpan out, ConstBatchSpan a) override {
        for_each_limb(a.count, a.polys, out.limbs, a.n, [&](size_t c, size_t j, size_t, size_t off) {
            copy_limb(out.poly(c, j) + off, a.poly(c, j) + off, a.n);
        });
    }

    void encode(const Ring& ring, BatchSpan out, const double* coefficients, size_t slots) override {
        parallel_for(out.count, [&](size_t c) {
            write_plaintext(ring, coefficients + c * 2 * slots, slots, int(out.limbs) - 1, out.poly(c, 0));
        });
    }

    void rescale(const Ring& ring, BatchSpan out, ConstBatchSpan a) override {
        const int level = int(a.limbs) - 1;
        parallel_for(a.count * a.polys, [&](size_t k) {
            const size_t c = k / a.polys, j = k % a.polys;
            auto ws = scratch_pool().acquire();
            rescale_poly(ring, level, a.poly(c, j), out.poly(c, j), *ws);
        });
    }

    void relinearize(const Ring& ring, BatchSpan out, ConstBatchSpan a, const KeySwitchKeyView& rk) override {
        const int level = int(a.limbs) - 1;
        parallel_for(a.count, [&](size_t c) {
            auto ws = scratch_pool().acquire();
            relinearize_polys(ring, level, a.poly(c, 0), a.poly(c, 1), a.poly(c, 2), rk, out.poly(c, 0), out.poly(c, 1),
                              *ws);
        });
    }

    void multiply_relin_rescale(const Ring& ring, BatchSpan out, ConstBatchSpan a, ConstBatchSpan b,
                                const KeySwitchKeyView& rk) override {
        multiply_relin_rescale_with(ring, out, a, b, nullptr, rk);
    }

    void multiply_add_relin_rescale(const Ring& ring, BatchSpan out, ConstBatchSpan a, ConstBatchSpan b,
                                    ConstBatchSpan c, const KeySwitchKeyView& rk) override {
        multiply_relin_rescale_with(ring, out, a, b, &c, rk);
    }

    // a * b (+ c when given) relinearized and rescaled, element by element.
    static void multiply_relin_rescale_with(const Ring& ring, BatchSpan out, ConstBatchSpan a, ConstBatchSpan b,
                                            const ConstBatchSpan* c, const KeySwitchKeyView& rk) {
        const int level = int(a.limbs) - 1;
        parallel_for(a.count, [&](size_t e) {
            auto ws = scratch_pool().acquire();
            const size_t eb = rhs(b, e), ec = c ? rhs(*c, e) : 0;
            multiply_relin_rescale_polys(ring, level, a.poly(e, 0), a.poly(e, 1), b.poly(eb, 0), b.poly(eb, 1), rk,
                                         out.poly(e, 0), out.poly(e, 1), *ws, c ? c->poly(ec, 0) : nullptr,
                                         c ? c->poly(ec, 1) : nullptr, c && c->polys == 3 ? c->poly(ec, 2) : nullptr);
        });
    }

    void apply_galois(const Ring& ring, BatchSpan out, ConstBatchSpan a, const uint32_t* const* perms,
                      const KeySwitchKeyView* const* keys) override {
        const int level = int(a.limbs) - 1;
        parallel_for(a.count, [&](size_t c) {
            if (!perms[c]) {
                std::memcpy(out.poly(c, 0), a.poly(c, 0), a.polys * a.limbs * a.n * sizeof(uint64_t));
                return;
            }
            auto ws = scratch_pool().acquire();
            apply_galois_polys(ring, level, a.poly(c, 0), a.poly(c, 1), perms[c], *keys[c], out.poly(c, 0),
                               out.poly(c, 1), *ws);
        });
    }

    void rotate_hoisted(const Ring& ring, const BatchSpan* outs, size_t rotations, ConstBatchSpan a,
                        const uint32_t* const* perms, const KeySwitchKeyView* const* keys) override {
        for_each_element_rotations(a, outs, rotations, [&](size_t c, uint64_t* const* out0s, uint64_t* const* out1s) {
            rotate_hoisted_polys(ring, int(a.limbs) - 1, a.poly(c, 0), a.poly(c, 1), rotations, perms, keys, out0s,
                                 out1s);
        });
    }

    void rotate_sum_hoisted(const Ring& ring, BatchSpan out, ConstBatchSpan a, size_t rotations,
                            const uint32_t* const* perms, const KeySwitchKeyView* const* keys, size_t identities) override {
        parallel_for(a.count, [&](size_t c) {
            rotate_sum_polys(ring, int(a.limbs) - 1, a.poly(c, 0), a.poly(c, 1), rotations, perms, keys, identities,
                             out.poly(c, 0), out.poly(c, 1));
        });
    }

    // ---- the extended basis Q_level * P ----
    bool extended_basis() const override { return true; }

    void extend(const Ring& ring, BatchSpan out, ConstBatchSpan a) override {
        const EltwiseKernels& kn = eltwise_active();
        const size_t nq = a.limbs;
        for_each_limb(a.count, a.polys, out.limbs, a.n, [&](size_t c, size_t j, size_t i, size_t off) {
            uint64_t* o = out.poly(c, j) + off;
            if (i >= nq) {  // P = 0 modulo every special prime
                std::fill(o, o + a.n, uint64_t(0));
                return;
            }
            const uint64_t q = ring.q()[i], p = ring.p_mod_q()[i];
            kn.mul_scalar(o, a.poly(c, j) + off, p, math::shoup_precompute(p, q), q, a.n);
        });
    }

    void mod_down(const Ring& ring, BatchSpan out, ConstBatchSpan a) override {
        const int level = int(out.limbs) - 1;
        parallel_for(a.count * a.polys, [&](size_t k) {
            const size_t c = k / a.polys, j = k % a.polys;
            auto ws = scratch_pool().acquire();
            Workspace::Scope scope(*ws);
            // mod_down takes the special limbs as scratch: a copy of those, the input stays unchanged
            const size_t nq = out.limbs, special_words = (a.limbs - nq) * a.n;
            uint64_t* special = ws->take(special_words);
            std::copy_n(a.poly(c, j) + nq * a.n, special_words, special);
            cpu::mod_down(ring, ring.level(level), a.poly(c, j), special, out.poly(c, j), *ws);
        });
    }

    void mod_down_rescale(const Ring& ring, BatchSpan out, ConstBatchSpan a) override {
        const int level = int(a.q_limbs()) - 1;
        parallel_for(a.count * a.polys, [&](size_t k) {
            const size_t c = k / a.polys, j = k % a.polys;
            auto ws = scratch_pool().acquire();
            Workspace::Scope scope(*ws);
            // the dropped limbs (q_level, then P) are the division's scratch: a copy, the input stays unchanged
            const size_t kept_words = size_t(level) * a.n, dropped_words = a.limbs * a.n - kept_words;
            uint64_t* dropped = ws->take(dropped_words);
            std::copy_n(a.poly(c, j) + kept_words, dropped_words, dropped);
            cpu::mod_down_rescale(ring, ring.level(level), a.poly(c, j), dropped, out.poly(c, j), *ws);
        });
    }

    void rotate_hoisted_extended(const Ring& ring, const BatchSpan* outs, size_t rotations, ConstBatchSpan a,
                                 const uint32_t* const* perms, const KeySwitchKeyView* const* keys) override {
        for_each_element_rotations(a, outs, rotations, [&](size_t c, uint64_t* const* out0s, uint64_t* const* out1s) {
            rotate_hoisted_extended_polys(ring, int(a.limbs) - 1, a.poly(c, 0), a.poly(c, 1), rotations, perms, keys,
                                          out0s, out1s);
        });
    }

    void rotate_hoisted_from_extended(const Ring& ring, const BatchSpan* outs, size_t rotations, ConstBatchSpan a,
                                      const uint32_t* const* perms, const KeySwitchKeyView* const* keys) override {
        for_each_element_rotations(a, outs, rotations, [&](size_t c, uint64_t* const* out0s, uint64_t* const* out1s) {
            rotate_hoisted_from_extended_polys(ring, int(a.q_limbs()) - 1, a.poly(c, 0), a.poly(c, 1), rotations,
                                               perms, keys, out0s, out1s);
        });
    }

private:
    // Whether an element-wise op writes `out` with streaming stores (poly_ops.hpp): the whole
    // batch's output decides, so a large batch of small ciphertexts streams too. A batched call's
    // output is its result, not a temporary that the next step reads back from the cache.
    static bool streams(BatchSpan out, ConstBatchSpan a, ConstBatchSpan b) {
        return use_streaming_stores(out.count * out.polys * out.limbs * out.n * sizeof(uint64_t), out.data,
                                         a.data, b.data);
    }

    void add_or_sub(const Ring& ring, BatchSpan out, ConstBatchSpan a, ConstBatchSpan b, bool subtract) {
        const EltwiseKernels& kn = eltwise_active();
        const bool stream = streams(out, a, b);
        const auto op = subtract ? (stream ? kn.sub_stream : kn.sub) : (stream ? kn.add_stream : kn.add);
        for_each_limb(a.count, a.polys, a.limbs, a.n, [&](size_t c, size_t j, size_t i, size_t off) {
            if (j < b.polys)
                op(out.poly(c, j) + off, a.poly(c, j) + off, b.poly(rhs(b, c), j) + off, limb_modulus(ring, a, i).value,
                   a.n);
            else copy_limb(out.poly(c, j) + off, a.poly(c, j) + off, a.n);
        });
    }
};

}  // namespace

}  // namespace oboro::backend::cpu

namespace oboro::backend {

const std::shared_ptr<Queue>& cpu_queue() {
    static const std::shared_ptr<Queue> queue = std::make_shared<cpu::CpuQueue>();
    return queue;
}

}  // namespace oboro::backend
