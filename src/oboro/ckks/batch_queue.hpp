// The batched CKKS kernels a backend implements: one entry point per operation over a whole batch
// of d ciphertexts (one parallel loop on the CPU; one kernel launch, or one short fixed sequence
// of launches for key switching, on a GPU). They are enqueued on a backend::Queue (queue.hpp):
// an entry point may return before the work is done, and only synchronize() waits.
//
// The kernels do no checking: BatchEvaluator (batch_evaluator.hpp) validates every operand and
// allocates every output before it enqueues anything. Spans point to memory of the queue's device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "oboro/backend/queue.hpp"
#include "oboro/ckks/batch.hpp"
#include "oboro/ckks/context.hpp"
#include "oboro/ckks/keys.hpp"

namespace oboro::ckks {

// count x polys x limbs x n words; polynomial j of element c starts at poly(c, j). A right
// operand with count == 1 is the same for every element (broadcast).
template <typename Word> struct BasicBatchSpan {
    Word* data = nullptr;
    size_t count = 0, polys = 0, limbs = 0, n = 0;
    Word* poly(size_t c, size_t j) const { return data + (c * polys + j) * limbs * n; }
};
using BatchSpan = BasicBatchSpan<uint64_t>;
using ConstBatchSpan = BasicBatchSpan<const uint64_t>;

inline BatchSpan span_of(PolyBatch& b) { return {b.mutable_data(), b.count(), b.polys(), b.limbs(), b.n()}; }
inline ConstBatchSpan span_of(const PolyBatch& b) { return {b.data(), b.count(), b.polys(), b.limbs(), b.n()}; }

class BatchQueue : public backend::Queue {
public:
    // ---- memory (batch.hpp: where a batch's data lives) ----
    // true: the spans point to host memory (the CPU queue) and the rest of this section is unused.
    virtual bool host_memory() const { return true; }
    // `words` of device memory, freed by the deleter (in queue order: ops enqueued before the
    // release still see it). Batches allocated by a queue must not outlive it.
    virtual std::shared_ptr<uint64_t> allocate(size_t words) { return std::shared_ptr<uint64_t>(new uint64_t[words], std::default_delete<uint64_t[]>()); }
    // Enqueued copies (host -> device, device -> device); copy_to_host waits for the queue first.
    virtual void copy_to_device(uint64_t* dst, const uint64_t* src, size_t words) { std::memcpy(dst, src, words * 8); }
    virtual void copy_on_device(uint64_t* dst, const uint64_t* src, size_t words) { std::memcpy(dst, src, words * 8); }
    virtual void copy_to_host(uint64_t* dst, const uint64_t* src, size_t words) {
        synchronize();
        std::memcpy(dst, src, words * 8);
    }

    // ---- element-wise (work items: element x polynomial x limb) ----
    // out = a + b (or a - b) on the first b.polys polynomials; the others are a's (copied unless
    // out is a). out may be a.
    virtual void add(const Context& ctx, BatchSpan out, ConstBatchSpan a, ConstBatchSpan b) = 0;
    virtual void sub(const Context& ctx, BatchSpan out, ConstBatchSpan a, ConstBatchSpan b) = 0;
    virtual void negate(const Context& ctx, BatchSpan out, ConstBatchSpan a) = 0;
    // Polynomial 0 gets + s[i] on limb i, the others are copied (unless out is a).
    virtual void add_scalar(const Context& ctx, BatchSpan out, ConstBatchSpan a, const uint64_t* per_limb) = 0;
    // Every polynomial times s[i] on limb i.
    virtual void mul_scalar(const Context& ctx, BatchSpan out, ConstBatchSpan a, const uint64_t* per_limb) = 0;
    // Every polynomial times the plaintext b (b.polys == 1).
    virtual void mul_plain(const Context& ctx, BatchSpan out, ConstBatchSpan a, ConstBatchSpan b) = 0;
    // The size-3 tensor product of size-2 a and b, written straight into out (3 polynomials).
    virtual void tensor(const Context& ctx, BatchSpan out, ConstBatchSpan a, ConstBatchSpan b) = 0;
    // out = the first out.limbs limbs of a (drop to a lower level).
    virtual void drop_limbs(BatchSpan out, ConstBatchSpan a) = 0;

    // ---- encoding (work items: elements) ----
    // Element c of out (1 polynomial) = the plaintext of the 2 * slots subring coefficients at
    // coefficients + c * 2 * slots (Encoder::scaled_coefficients; host memory, read before the
    // call returns).
    virtual void encode(const Context& ctx, BatchSpan out, const double* coefficients, size_t slots) = 0;

    // ---- rescaling (work items: element x polynomial) ----
    // out (a.limbs - 1 limbs) = round(a / q_last); a is left unchanged.
    virtual void rescale(const Context& ctx, BatchSpan out, ConstBatchSpan a) = 0;

    // ---- key switching (work items: elements) ----
    // out (2 polynomials) = a (3 polynomials) relinearized.
    virtual void relinearize(const Context& ctx, BatchSpan out, ConstBatchSpan a, const RelinKey& rk) = 0;
    // out (2 polynomials, a.limbs - 1 limbs) = a * b relinearized and rescaled, fused.
    virtual void multiply_relin_rescale(const Context& ctx, BatchSpan out, ConstBatchSpan a, ConstBatchSpan b,
                                        const RelinKey& rk) = 0;
    // Element c: the automorphism with NTT-form permutation perms[c] and key switching with
    // *keys[c]; perms[c] == nullptr copies the element (rotation by 0). out must not alias a.
    virtual void apply_galois(const Context& ctx, BatchSpan out, ConstBatchSpan a, const uint32_t* const* perms,
                              const KeySwitchKey* const* keys) = 0;
    // Hoisted rotations (Evaluator::rotate_many on every element): outs[r] (r < rotations, each
    // shaped like a) = every element of a under the automorphism with NTT-form permutation
    // perms[r] and key switching with *keys[r] (none null); ONE ModUp of each element's c1 serves
    // all the rotations. The outs must not alias a.
    virtual void rotate_hoisted(const Context& ctx, const BatchSpan* outs, size_t rotations, ConstBatchSpan a,
                                const uint32_t* const* perms, const KeySwitchKey* const* keys) = 0;
    // The hoisted sum of rotations (Evaluator::rotate_sum on every element): out = sum_r
    // sigma_r(a) + identities * a, rotation r with permutation perms[r] and key *keys[r]
    // (rotations >= 1, none null); one ModUp, the inner products accumulated over Q*P and ONE
    // ModDown per element. out must not alias a.
    virtual void rotate_sum_hoisted(const Context& ctx, BatchSpan out, ConstBatchSpan a, size_t rotations,
                                    const uint32_t* const* perms, const KeySwitchKey* const* keys,
                                    size_t identities) = 0;
};

// The CPU queue: runs each op when it is enqueued, spread over the thread pool
// (util/parallel.hpp) and the SIMD kernels; synchronize() has nothing to wait for.
BatchQueue& cpu_batch_queue();

}  // namespace oboro::ckks
