// Homomorphic operations on batches of d ciphertexts (batch.hpp): the same operation on every
// element in ONE batched kernel (batch_queue.hpp), with the output allocated once up front.
// Results are equal, bit for bit, to the single-ciphertext Evaluator's on each element (the
// kernels are the same functions), and the errors are the Evaluator's typed errors.
//
// On a device queue (the CUDA one) operands must be in that device's memory
// (CiphertextBatch::to_device) and the results are too; on the CPU queue, in host memory.
//
// Every operand is checked before anything is enqueued, so an operation that throws leaves its
// in-place operand unchanged. Operations never wait for the queue; synchronize() does (the CPU
// queue has finished each op when it returns, so CPU callers may skip it).
#pragma once

#include <cstdint>
#include <vector>

#include "oboro/ckks/batch.hpp"
#include "oboro/ckks/batch_queue.hpp"
#include "oboro/ckks/keys.hpp"

namespace oboro::ckks {

class BatchEvaluator {
public:
    // queue: where the kernels run (default: the CPU queue).
    explicit BatchEvaluator(ContextPtr ctx, BatchQueue* queue = nullptr);

    const ContextPtr& context() const { return ctx_; }
    BatchQueue& queue() const { return *queue_; }
    void synchronize() const { queue_->synchronize(); }

    // ---- addition and subtraction (equal sizes, levels and scales; b may hold 1 element, which
    // is then combined with every element of a) ----
    CiphertextBatch add(const CiphertextBatch& a, const CiphertextBatch& b) const;
    void add_inplace(CiphertextBatch& a, const CiphertextBatch& b) const;
    CiphertextBatch sub(const CiphertextBatch& a, const CiphertextBatch& b) const;
    void sub_inplace(CiphertextBatch& a, const CiphertextBatch& b) const;
    CiphertextBatch add(const CiphertextBatch& a, const PlaintextBatch& b) const;
    void add_inplace(CiphertextBatch& a, const PlaintextBatch& b) const;
    CiphertextBatch sub(const CiphertextBatch& a, const PlaintextBatch& b) const;
    void sub_inplace(CiphertextBatch& a, const PlaintextBatch& b) const;
    // c added to every slot of every element.
    CiphertextBatch add(const CiphertextBatch& a, double c) const;
    void add_inplace(CiphertextBatch& a, double c) const;
    void sub_inplace(CiphertextBatch& a, double c) const;
    CiphertextBatch negate(const CiphertextBatch& a) const;
    void negate_inplace(CiphertextBatch& a) const;

    // ---- into a reused output ----
    // add / multiply / multiply_relin_rescale written into `out`, whose allocation is kept when it
    // has the right size (a loop of batched calls then allocates nothing). `out` must not be an
    // operand.
    void add_into(const CiphertextBatch& a, const CiphertextBatch& b, CiphertextBatch& out) const;
    void multiply_into(const CiphertextBatch& a, const CiphertextBatch& b, CiphertextBatch& out) const;
    void multiply_relin_rescale_into(const CiphertextBatch& a, const CiphertextBatch& b, const RelinKey& rk,
                                     CiphertextBatch& out) const;

    // ---- multiplication ----
    // Ciphertext x ciphertext: size-3 results at scale a.scale * b.scale, the tensor product
    // written straight into the output batch.
    CiphertextBatch multiply(const CiphertextBatch& a, const CiphertextBatch& b) const;
    // Ciphertext x plaintext (one plaintext per element, or one for all): scale a.scale * b.scale.
    CiphertextBatch multiply(const CiphertextBatch& a, const PlaintextBatch& b) const;
    void multiply_inplace(CiphertextBatch& a, const PlaintextBatch& b) const;
    // x a real constant encoded at scale q_level (as Evaluator::multiply(a, double)).
    void multiply_inplace(CiphertextBatch& a, double c) const;
    // x an integer: exact, keeps the scale.
    void multiply_integer_inplace(CiphertextBatch& a, int64_t c) const;

    // ---- relinearization, rescaling, levels ----
    CiphertextBatch relinearize(const CiphertextBatch& a, const RelinKey& rk) const;
    CiphertextBatch rescale(const CiphertextBatch& a) const;
    // multiply + relinearize + rescale, fused per element (one output allocation, no size-3
    // intermediate batch).
    CiphertextBatch multiply_relin_rescale(const CiphertextBatch& a, const CiphertextBatch& b,
                                           const RelinKey& rk) const;
    CiphertextBatch drop_to_level(const CiphertextBatch& a, int level) const;
    // As Evaluator::rescale_to: multiplies by the integer round(scale * q_l / a.scale), rescales by
    // q_l and drops further limbs, landing on `level` at (almost exactly) `scale`.
    CiphertextBatch rescale_to(const CiphertextBatch& a, int level, double scale) const;

    // ---- rotations ----
    // Every element rotated left by `steps` slots.
    CiphertextBatch rotate(const CiphertextBatch& a, int64_t steps, const GaloisKeys& keys) const;
    // Element c rotated by steps[c] (steps.size() == a.count(); 0 allowed). MissingKey names every
    // step without a key.
    CiphertextBatch rotate(const CiphertextBatch& a, const std::vector<int64_t>& steps, const GaloisKeys& keys) const;
    // Every element rotated by each of `steps` (Evaluator::rotate_many on each element, bit for
    // bit): ONE ModUp per element serves all the rotations, in one batched call; a step 0 gives a
    // copy of a. Errors as rotate's (ValueError naming the out-of-range step, MissingKey naming
    // every step without a key).
    std::vector<CiphertextBatch> rotate_many(const CiphertextBatch& a, const std::vector<int64_t>& steps,
                                             const GaloisKeys& keys) const;
    // The sum of every element's rotations by `steps` (0 allowed), Evaluator::rotate_sum on each
    // element bit for bit: one ModUp per element, the inner products accumulated, one ModDown, in
    // one batched call. Errors as rotate_many's, and ValueError for no steps.
    CiphertextBatch rotate_sum(const CiphertextBatch& a, const std::vector<int64_t>& steps,
                               const GaloisKeys& keys) const;
    // Every element complex-conjugated (needs the conjugation key, else MissingKey).
    CiphertextBatch conjugate(const CiphertextBatch& a, const GaloisKeys& keys) const;

private:
    void check_batch(const char* op, const PolyBatch& x, const char* name) const;
    void check_add(const char* op, const CiphertextBatch& a, const CiphertextBatch& b) const;
    void check_multiply(const char* op, const CiphertextBatch& a, const CiphertextBatch& b) const;
    void check_multiply_relin_rescale(const CiphertextBatch& a, const CiphertextBatch& b, const RelinKey& rk) const;
    static void check_output(const char* op, const CiphertextBatch& out, const CiphertextBatch& a,
                             const CiphertextBatch& b);
    void check_pair(const char* op, const PolyBatch& a, const PolyBatch& b) const;  // count, level, scale
    void check_sizes_equal(const char* op, const CiphertextBatch& a, const CiphertextBatch& b) const;
    void check_size2(const char* op, const CiphertextBatch& a, const char* name) const;
    void check_product_scale(const char* op, const PolyBatch& a, double scale_b) const;
    void check_relin_key(const char* op, const RelinKey& rk, const CiphertextBatch& a) const;
    CiphertextBatch apply_rotations(const char* op, const CiphertextBatch& a, const std::vector<int64_t>& steps,
                                    const GaloisKeys& keys) const;
    void check_galois_keys(const char* op, const CiphertextBatch& a, const GaloisKeys& keys) const;
    // The NTT-form permutation and key of each step (nullptr for step 0); ValueError for a step
    // out of range (naming `index_name` and its index), MissingKey naming every step without a key.
    void galois_of_steps(const char* op, const CiphertextBatch& a, const std::vector<int64_t>& steps,
                         const char* index_name, const GaloisKeys& keys, std::vector<const uint32_t*>& perms,
                         std::vector<const KeySwitchKey*>& key_of) const;
    // The output of the automorphisms perms[c] with key switching by keys[c], in one batched call.
    CiphertextBatch run_galois(const CiphertextBatch& a, const std::vector<const uint32_t*>& perms,
                               const std::vector<const KeySwitchKey*>& keys) const;

    // Where this evaluator's outputs live: nullptr (host memory) or its device queue.
    BatchQueue* memory() const;

    ContextPtr ctx_;
    BatchQueue* queue_;
};

// "batch of 10, level 2, scale 2^40.0000000000": how batches are named in error messages.
std::string describe(const PolyBatch& x);

}  // namespace oboro::ckks
