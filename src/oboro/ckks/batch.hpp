// Batches: d ciphertexts (or plaintexts) of the same level, scale, slot count and size, stored in
// ONE allocation `d x size x limbs x N` (DESIGN.md, data layout): polynomial j of element c, limb
// i is the n words at data() + ((c * size + j) * limbs + i) * n. One batched kernel (one parallel
// loop on the CPU, one launch on a GPU) then covers all d elements; BatchEvaluator
// (batch_evaluator.hpp) runs the operations.
//
// A batch lives in host memory, or in the memory of a device queue (backend::Queue::host_memory()
// is false, e.g. the CUDA queue): device() names that queue, data() is then a device pointer that
// only the queue's kernels dereference, and to_device / to_host move a batch between the two.
// Copying a batch copies its data where it lives. A batch in device memory holds its queue (a
// shared_ptr), so the queue lives as long as any batch in its memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "oboro/backend/queue.hpp"
#include "oboro/ckks/ciphertext.hpp"
#include "oboro/ckks/context.hpp"
#include "oboro/util/buffer.hpp"

namespace oboro::ckks {

// A device queue, shared by the batches in its memory and the evaluators that run on it.
using QueuePtr = std::shared_ptr<backend::Queue>;

class PolyBatch {
public:
    PolyBatch() = default;
    PolyBatch(const PolyBatch& other);
    PolyBatch& operator=(const PolyBatch& other);
    PolyBatch(PolyBatch&&) noexcept = default;
    PolyBatch& operator=(PolyBatch&&) noexcept = default;

    size_t count() const { return count_; }
    size_t polys() const { return polys_; }
    size_t n() const { return n_; }
    // Limbs per polynomial: level + 1, and the special primes over Q_level * P (ciphertext.hpp).
    size_t limbs() const { return size_t(level_ + 1) + special_; }
    size_t special_limbs() const { return special_; }
    Basis basis() const { return special_ ? Basis::qp : Basis::q; }
    int level() const { return level_; }
    double scale() const { return scale_; }
    size_t slots() const { return slots_; }
    uint64_t context_id() const { return context_id_; }
    bool empty() const { return count_ == 0; }

    void set_scale(double s) { scale_ = s; }
    void set_slots(size_t s) { slots_ = s; }

    // The device queue whose memory holds the data, or nullptr: host memory.
    backend::Queue* device() const { return device_.get(); }
    const QueuePtr& device_queue() const { return device_; }

    // Polynomial j of element c (a device pointer when device() is set). Read access never
    // changes anything; write access has its own name, because it forgets the elements' seeds (see
    // CiphertextBatch::uniform_seed): the data may change.
    const uint64_t* poly(size_t c, size_t j) const { return data() + (c * polys_ + j) * limbs() * n_; }
    const uint64_t* data() const { return device_ ? device_data_.get() : data_.data(); }
    uint64_t* mutable_poly(size_t c, size_t j) { return mutable_data() + (c * polys_ + j) * limbs() * n_; }
    uint64_t* mutable_data() {
        seeds_.clear();
        return device_ ? device_data_.get() : data_.data();
    }
    size_t word_count() const { return device_ ? device_words_ : data_.size(); }

protected:
    // memory: where the data lives; a host queue (or nullptr) means host memory.
    PolyBatch(const Context& ctx, size_t count, size_t polys, int level, double scale, size_t slots,
              const QueuePtr& memory = nullptr, Basis basis = Basis::q);
    // The same batch with its data in `memory`'s memory (host memory for nullptr or a host queue).
    void copy_to_memory(PolyBatch& out, const QueuePtr& memory) const;
    template <typename Batch> Batch copied_to(const QueuePtr& memory) const {
        Batch out;
        copy_to_memory(out, memory);
        return out;
    }

    AlignedBuffer<uint64_t> data_;       // host memory
    QueuePtr device_;                    // device memory: its queue, the allocation and its size
    std::shared_ptr<uint64_t> device_data_;
    size_t device_words_ = 0;
    size_t count_ = 0, polys_ = 0, n_ = 0, special_ = 0;
    int level_ = 0;
    double scale_ = 1;
    size_t slots_ = 0;
    uint64_t context_id_ = 0;
    std::vector<std::optional<math::Seed>> seeds_;  // per element (CiphertextBatch); empty: none
};

// Where a batch's data lives, for messages: "host" or its device queue's name ("cuda:0").
const char* memory_name(const PolyBatch& x);

class CiphertextBatch : public PolyBatch {
public:
    CiphertextBatch() = default;
    // d ciphertexts with undefined contents (outputs of the evaluator).
    // memory: where the data lives (nullptr or a host queue: host memory).
    CiphertextBatch(const Context& ctx, size_t count, size_t size, int level, double scale, size_t slots,
                    const QueuePtr& memory = nullptr, Basis basis = Basis::q)
        : PolyBatch(ctx, count, size, level, scale, slots, memory, basis) {}

    // Copies the ciphertexts into one allocation. They must be non-empty, of this context, and
    // share level (LevelMismatch), scale (to 40 bits; ScaleMismatch), size and slot count
    // (ValueError); the batch takes the first one's scale.
    static CiphertextBatch from_ciphertexts(const Context& ctx, std::span<const Ciphertext> cts);
    // The same from ciphertexts that live elsewhere (Python's list of Ciphertext objects): each
    // is copied once, straight into the batch. No pointer may be null.
    static CiphertextBatch from_ciphertexts(const Context& ctx, std::span<const Ciphertext* const> cts);

    // Turns this into an output batch of that shape (contents undefined), keeping the allocation
    // when it already has exactly the words needed: the *_into operations reuse their outputs.
    // The allocation must also be in `memory`'s memory.
    void prepare_output(const Context& ctx, size_t count, size_t size, int level, double scale, size_t slots,
                        const QueuePtr& memory = nullptr, Basis basis = Basis::q);

    // A copy in the memory of `queue`'s device (a copy in host memory for a host queue), and a
    // copy in host memory (waits for the batch's queue).
    CiphertextBatch to_device(const QueuePtr& queue) const { return copied_to<CiphertextBatch>(queue); }
    CiphertextBatch to_host() const { return copied_to<CiphertextBatch>(nullptr); }

    // Polynomials per ciphertext: 2, or 3 after a multiplication before relinearization.
    size_t size() const { return polys_; }
    // As Ciphertext::uniform_seed, per element: while the batch is untouched, the seed whose
    // expansion is polynomial 1 of element c (fresh secret-key encryptions). Every write access to
    // the batch forgets all of them; serialization stores the seeds instead of the polynomials.
    std::optional<math::Seed> uniform_seed(size_t c) const {
        return c < seeds_.size() ? seeds_[c] : std::nullopt;
    }
    // The caller guarantees that polynomial 1 of element c is the expansion of `seed`.
    void set_uniform_seed(size_t c, const math::Seed& seed) {
        seeds_.resize(count_);
        seeds_.at(c) = seed;
    }

    // The elements of several batches, in order, in one new batch (NumPy's concatenate along the
    // element axis), with their seeds. The batches must share context, level, scale, slots, size
    // and memory (host, or one device's).
    static CiphertextBatch concatenate(const Context& ctx, std::span<const CiphertextBatch* const> parts);

    // A new batch of the elements at `indices` (in that order, repeats allowed), with their seeds,
    // in the same memory: NumPy's batch[indices]. ValueError for no index, an index >= count()
    // or another context.
    CiphertextBatch select(const Context& ctx, std::span<const size_t> indices) const;

    // A copy of ciphertext c with its seed (ValueError when c >= count()), and all of them; from
    // device memory they wait for the batch's queue.
    Ciphertext at(size_t c) const;
    std::vector<Ciphertext> to_ciphertexts() const;
};

// d plaintexts in one allocation, the right operand of batched ciphertext-plaintext operations.
// Made from plaintexts, or encoded straight into one allocation by encode_batch
// (batch_encoder.hpp), on the host or on a device.
class PlaintextBatch : public PolyBatch {
public:
    PlaintextBatch() = default;
    // d plaintexts with undefined contents, in `memory`'s memory (nullptr or a host queue: host).
    PlaintextBatch(const Context& ctx, size_t count, int level, double scale, size_t slots,
                   const QueuePtr& memory = nullptr, Basis basis = Basis::q)
        : PolyBatch(ctx, count, 1, level, scale, slots, memory, basis) {}
    static PlaintextBatch from_plaintexts(const Context& ctx, std::span<const Plaintext> pts);
    PlaintextBatch to_device(const QueuePtr& queue) const { return copied_to<PlaintextBatch>(queue); }
    PlaintextBatch to_host() const { return copied_to<PlaintextBatch>(nullptr); }
};

// The words of a batch as the queue's kernels take them.
inline backend::BatchSpan span_of(PolyBatch& b) {
    return {b.mutable_data(), b.count(), b.polys(), b.limbs(), b.n(), b.special_limbs()};
}
inline backend::ConstBatchSpan span_of(const PolyBatch& b) {
    return {b.data(), b.count(), b.polys(), b.limbs(), b.n(), b.special_limbs()};
}

}  // namespace oboro::ckks
