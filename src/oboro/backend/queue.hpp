// A device as the layers above see it: its memory, and the batched kernels of RNS-CKKS over
// ckks-free descriptions (the Ring, spans of words, key views, permutations).
//
// Execution model: work is ENQUEUED on a queue, in order, and only an explicit synchronize() waits
// for it. An operation never waits for the one before it, so a GPU backend can launch one kernel
// per batched op back to back (paper 000: the per-op sync is what made small ops slow), and a CPU
// backend may simply run each op when it is enqueued.
//
// Contract for callers: the inputs of an enqueued op must stay alive and unchanged, and its outputs
// must not be read, until synchronize() returns (or a later op on the same queue, which runs after
// it, consumes them). The kernels do no checking: the evaluator (ckks/evaluator.hpp) validates
// every operand and allocates every output before it enqueues anything. Spans point to memory of
// the queue's device.
//
// Every entry point covers a whole batch of d ciphertexts in one go (one parallel loop on the
// CPU; one kernel launch, or one short fixed sequence of launches for key switching, on a GPU); a
// single ciphertext is a batch of one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "oboro/backend/key_switch_key.hpp"
#include "oboro/backend/ring.hpp"

namespace oboro::backend {

// count x polys x limbs x n words; polynomial j of element c starts at poly(c, j). A right
// operand with count == 1 is the same for every element (broadcast). The last `special` limbs
// (0, or the ring's p_count over the extended basis Q_level * P) are modulo the special primes:
// limb i is modulo q_i for i < q_limbs(), else p_{i - q_limbs()}.
template <typename Word> struct BasicBatchSpan {
    Word* data = nullptr;
    size_t count = 0, polys = 0, limbs = 0, n = 0, special = 0;
    Word* poly(size_t c, size_t j) const { return data + (c * polys + j) * limbs * n; }
    size_t words() const { return count * polys * limbs * n; }
    size_t q_limbs() const { return limbs - special; }
    // The same span, read only.
    BasicBatchSpan<const Word> as_const() const { return {data, count, polys, limbs, n, special}; }
};
using BatchSpan = BasicBatchSpan<uint64_t>;
using ConstBatchSpan = BasicBatchSpan<const uint64_t>;

class Queue {
public:
    virtual ~Queue() = default;
    // "cpu", "cuda:0", ...
    virtual const char* device_name() const = 0;
    // Blocks until every op enqueued so far has finished; rethrows the first error of one of them.
    virtual void synchronize() = 0;

    // ---- memory (where a batch's data lives) ----
    // true: the spans point to host memory (the CPU queue) and the rest of this section is unused.
    virtual bool host_memory() const { return true; }
    // `words` of device memory, freed by the deleter (in queue order: ops enqueued before the
    // release still see it). The caller keeps the queue alive as long as the allocation (a batch
    // holds a shared_ptr to its queue).
    virtual std::shared_ptr<uint64_t> allocate(size_t words) {
        return std::shared_ptr<uint64_t>(new uint64_t[words], std::default_delete<uint64_t[]>());
    }
    // Enqueued copies (host -> device, device -> device); copy_to_host waits for the queue first.
    virtual void copy_to_device(uint64_t* dst, const uint64_t* src, size_t words) { std::memcpy(dst, src, words * 8); }
    virtual void copy_on_device(uint64_t* dst, const uint64_t* src, size_t words) { std::memcpy(dst, src, words * 8); }
    virtual void copy_to_host(uint64_t* dst, const uint64_t* src, size_t words) {
        synchronize();
        std::memcpy(dst, src, words * 8);
    }
    // The bytes of switching keys a device queue keeps a copy of (0 for host memory).
    virtual size_t cached_key_bytes() const { return 0; }

    // ---- element-wise (work items: element x polynomial x limb) ----
    // out = a + b (or a - b) on the first b.polys polynomials; the others are a's (copied unless
    // out is a). out may be a.
    virtual void add(const Ring& ring, BatchSpan out, ConstBatchSpan a, ConstBatchSpan b) = 0;
    virtual void sub(const Ring& ring, BatchSpan out, ConstBatchSpan a, ConstBatchSpan b) = 0;
    virtual void negate(const Ring& ring, BatchSpan out, ConstBatchSpan a) = 0;
    // Polynomial 0 gets + s[i] on limb i, the others are copied (unless out is a).
    virtual void add_scalar(const Ring& ring, BatchSpan out, ConstBatchSpan a, const uint64_t* per_limb) = 0;
    // Every polynomial times s[i] on limb i.
    virtual void mul_scalar(const Ring& ring, BatchSpan out, ConstBatchSpan a, const uint64_t* per_limb) = 0;
    // Every polynomial times the plaintext b (b.polys == 1).
    virtual void mul_plain(const Ring& ring, BatchSpan out, ConstBatchSpan a, ConstBatchSpan b) = 0;
    // The size-3 tensor product of size-2 a and b, written straight into out (3 polynomials).
    virtual void tensor(const Ring& ring, BatchSpan out, ConstBatchSpan a, ConstBatchSpan b) = 0;
    // out = the first out.limbs limbs of a (drop to a lower level).
    virtual void drop_limbs(BatchSpan out, ConstBatchSpan a) = 0;
    // out = 0. The default writes zeros from host memory; a device may clear its memory itself.
    virtual void fill_zero(BatchSpan out);

    // ---- multiply-accumulate (work items: element x polynomial x limb) ----
    // Sums of products without a temporary result: the accumulator is read and written once.
    // The defaults compute the product into a scratch batch of the queue's memory and add it (two
    // kernels); a queue overrides them with one fused kernel (the CPU queue does).
    // mul_plain_add, like add, sub, negate and mul_plain, also takes spans over Q_level * P
    // (special limbs) on a queue with extended_basis().
    // acc += a * b on every polynomial of a (b: plaintexts, 1 polynomial; acc shaped like a).
    virtual void mul_plain_add(const Ring& ring, BatchSpan acc, ConstBatchSpan a, ConstBatchSpan b);
    // out (shaped like a[0]) = sum_j a[j] * b[j] over `terms` pairs: a[j] of one shape, b[j]
    // plaintexts (1 polynomial; count 1: broadcast); out aliases no operand. The default is
    // mul_plain then mul_plain_add per term; the CPU queue sums each limb's products in 128 bits
    // and reduces once (the same words). On the CPU queue, for a[j] of 2 polynomials, b[j] may be
    // compact: n / block words per limb, each standing for a run of `block` equal NTT words
    // (ckks::CompactPlaintext); the default raises Error for one.
    virtual void mul_plain_sum(const Ring& ring, BatchSpan out, const ConstBatchSpan* a, const ConstBatchSpan* b,
                               size_t terms);
    // Several such sums at once: outs[g] = sum_j a[j] * b[j] over j in [ends[g - 1], ends[g])
    // (ends[-1] = 0), g < sums, every a[j] of one shape (the hoisted rotations of a linear
    // transform, which each of its giant groups sums with its own diagonals). The default is one
    // mul_plain_sum per sum; the CPU queue computes every sum over one piece of a limb before the
    // next piece, so that the a[j] shared by the sums are read from memory once, not once per sum.
    virtual void mul_plain_sums(const Ring& ring, const BatchSpan* outs, size_t sums, const ConstBatchSpan* a,
                                const ConstBatchSpan* b, const size_t* ends);
    // acc += a * s[i] on limb i, every polynomial of a.
    virtual void mul_scalar_add(const Ring& ring, BatchSpan acc, ConstBatchSpan a, const uint64_t* per_limb);
    // acc += sum_j a[j] * s[j][i] on limb i, every polynomial of acc, over `terms` terms: a[j]
    // with acc's count and polynomials and at least its limbs (over Q), of which only the first
    // acc.limbs of each polynomial are read. The default is mul_scalar_add per term (per
    // polynomial for an a[j] with more limbs); the CPU queue runs the terms over each piece of a
    // limb while that piece of acc is in cache (the same words).
    virtual void mul_scalar_sum(const Ring& ring, BatchSpan acc, const ConstBatchSpan* a, const uint64_t* const* per_limb,
                                size_t terms);
    // acc (3 polynomials) += the tensor product of size-2 a and b.
    virtual void tensor_add(const Ring& ring, BatchSpan acc, ConstBatchSpan a, ConstBatchSpan b);

    // ---- encoding (work items: elements) ----
    // Element c of out (1 polynomial) = the plaintext of the 2 * slots subring coefficients at
    // coefficients + c * 2 * slots (subring_layout.hpp; host memory, read before the call
    // returns).
    virtual void encode(const Ring& ring, BatchSpan out, const double* coefficients, size_t slots) = 0;

    // ---- rescaling (work items: element x polynomial) ----
    // out (a.limbs - 1 limbs) = round(a / q_last); a is left unchanged.
    virtual void rescale(const Ring& ring, BatchSpan out, ConstBatchSpan a) = 0;

    // ---- key switching (work items: elements) ----
    // out (2 polynomials) = a (3 polynomials) relinearized.
    virtual void relinearize(const Ring& ring, BatchSpan out, ConstBatchSpan a, const KeySwitchKeyView& rk) = 0;
    // out (2 polynomials, a.limbs - 1 limbs) = a * b relinearized and rescaled, fused.
    virtual void multiply_relin_rescale(const Ring& ring, BatchSpan out, ConstBatchSpan a, ConstBatchSpan b,
                                        const KeySwitchKeyView& rk) = 0;
    // out (2 polynomials, a.limbs - 1 limbs) = a * b + c relinearized and rescaled: c (2 or 3
    // polynomials at a's level; count 1: broadcast) joins the product before its one division by
    // q_level (fused with the relinearization's division by P where the queue overrides this: the
    // CPU queue does); a third polynomial of c joins d2 before its key switch, so that products
    // summed unrelinearized take one key switch (lazy relinearization). The default: tensor, add,
    // relinearize and rescale, with scratch in the queue's memory.
    virtual void multiply_add_relin_rescale(const Ring& ring, BatchSpan out, ConstBatchSpan a, ConstBatchSpan b,
                                            ConstBatchSpan c, const KeySwitchKeyView& rk);
    // Element c: the automorphism with NTT-form permutation perms[c] and key switching with
    // *keys[c]; perms[c] == nullptr copies the element (rotation by 0). out must not alias a.
    virtual void apply_galois(const Ring& ring, BatchSpan out, ConstBatchSpan a, const uint32_t* const* perms,
                              const KeySwitchKeyView* const* keys) = 0;
    // Hoisted rotations (rotate_many on every element): outs[r] (r < rotations, each shaped like
    // a) = every element of a under the automorphism with NTT-form permutation perms[r] and key
    // switching with *keys[r] (none null); ONE ModUp of each element's c1 serves all the
    // rotations. The outs must not alias a.
    virtual void rotate_hoisted(const Ring& ring, const BatchSpan* outs, size_t rotations, ConstBatchSpan a,
                                const uint32_t* const* perms, const KeySwitchKeyView* const* keys) = 0;
    // The hoisted sum of rotations (rotate_sum on every element): out = sum_r sigma_r(a) +
    // identities * a, rotation r with permutation perms[r] and key *keys[r] (rotations >= 1, none
    // null); one ModUp, the inner products accumulated over Q*P and ONE ModDown per element. out
    // must not alias a.
    virtual void rotate_sum_hoisted(const Ring& ring, BatchSpan out, ConstBatchSpan a, size_t rotations,
                                    const uint32_t* const* perms, const KeySwitchKeyView* const* keys,
                                    size_t identities) = 0;

    // ---- bootstrapping ----
    // out (2 polynomials, out.limbs limbs) = a (2 polynomials at level 0) raised to the primes
    // q_0 .. q_{out.limbs-1} (cpu::mod_raise_poly: the centred lift of each coefficient). The
    // default runs the CPU kernel on the host, a device's data copied there and back (ModRaise is
    // two polynomials of one limb per bootstrap).
    virtual void mod_raise(const Ring& ring, BatchSpan out, ConstBatchSpan a);

    // ---- the extended basis Q_level * P (double hoisting) ----
    // Whether this queue runs the three operations below and the element-wise kernels named above
    // on spans over Q_level * P; the defaults of the three raise oboro::Error naming the device.
    virtual bool extended_basis() const { return false; }
    // out (over Q_level * P) = P * a on the ciphertext limbs and 0 on the special limbs: a lifted
    // into the extended basis (it decrypts to P times a's message there).
    virtual void extend(const Ring& ring, BatchSpan out, ConstBatchSpan a);
    // out (over Q_level) = round(a / P) for a over Q_level * P: the ModDown of key switching.
    virtual void mod_down(const Ring& ring, BatchSpan out, ConstBatchSpan a);
    // out (over Q_{level-1}) = round(a / (q_level * P)) for a over Q_level * P (level >= 1): the
    // ModDown and the rescale of a double-hoisted transform in one division. The default runs
    // mod_down and rescale; the CPU and CUDA queues divide once (one rounding, the transforms of one).
    virtual void mod_down_rescale(const Ring& ring, BatchSpan out, ConstBatchSpan a);
    // Hoisted rotations kept over Q_level * P (no ModDown): outs[r] (2 polynomials, extended) =
    // (P * sigma_r(c0) + <sigma_r(digits), b_r>, <sigma_r(digits), a_r>) for every element, with
    // ONE ModUp of each element's c1 for all the rotations (rotate_hoisted without its ModDowns).
    virtual void rotate_hoisted_extended(const Ring& ring, const BatchSpan* outs, size_t rotations, ConstBatchSpan a,
                                         const uint32_t* const* perms, const KeySwitchKeyView* const* keys);
    // The same rotations of an `a` that is itself over Q_level * P (a sum of double hoisting,
    // a.special == p_count): only its c1 is divided by P, for the digits, and its c0 is rotated as
    // it is: outs[r] = (sigma_r(c0) + <sigma_r(digits(c1 / P)), b_r>, <..., a_r>). That is the
    // rotation of mod_down(a) lifted back by P, without the ModDown of c0 and the lift (they only
    // round c0 to a multiple of P). The default runs mod_down on all of a and then
    // rotate_hoisted_extended; the CPU and CUDA queues divide c1 alone.
    virtual void rotate_hoisted_from_extended(const Ring& ring, const BatchSpan* outs, size_t rotations,
                                              ConstBatchSpan a, const uint32_t* const* perms,
                                              const KeySwitchKeyView* const* keys);
};

// The CPU queue (backend/cpu/queue.cpp): runs each op when it is enqueued, spread over the thread
// pool (util/parallel.hpp) and the SIMD kernels; synchronize() has nothing to wait for. One per
// process.
const std::shared_ptr<Queue>& cpu_queue();

}  // namespace oboro::backend
