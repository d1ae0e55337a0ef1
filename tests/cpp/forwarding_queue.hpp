// A device queue for tests without a GPU: every kernel runs on the CPU queue, and on_kernel() is
// called once per entry point (what a GPU backend would launch). Subclasses count kernels
// (test_ckks_batch's contract test) or keep batches in separate "device" allocations
// (OffsiteQueue below).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "oboro/backend/queue.hpp"

namespace oboro::test {

class ForwardingQueue : public backend::Queue {
public:
    using Ring = backend::Ring;
    using BatchSpan = backend::BatchSpan;
    using ConstBatchSpan = backend::ConstBatchSpan;
    using KeyView = backend::KeySwitchKeyView;

    void synchronize() override {}
    void add(const Ring& r, BatchSpan o, ConstBatchSpan a, ConstBatchSpan b) override { on_kernel(), cpu().add(r, o, a, b); }
    void sub(const Ring& r, BatchSpan o, ConstBatchSpan a, ConstBatchSpan b) override { on_kernel(), cpu().sub(r, o, a, b); }
    void negate(const Ring& r, BatchSpan o, ConstBatchSpan a) override { on_kernel(), cpu().negate(r, o, a); }
    void add_scalar(const Ring& r, BatchSpan o, ConstBatchSpan a, const uint64_t* s) override {
        on_kernel(), cpu().add_scalar(r, o, a, s);
    }
    void mul_scalar(const Ring& r, BatchSpan o, ConstBatchSpan a, const uint64_t* s) override {
        on_kernel(), cpu().mul_scalar(r, o, a, s);
    }
    void mul_plain(const Ring& r, BatchSpan o, ConstBatchSpan a, ConstBatchSpan b) override {
        on_kernel(), cpu().mul_plain(r, o, a, b);
    }
    void tensor(const Ring& r, BatchSpan o, ConstBatchSpan a, ConstBatchSpan b) override {
        on_kernel(), cpu().tensor(r, o, a, b);
    }
    void drop_limbs(BatchSpan o, ConstBatchSpan a) override { on_kernel(), cpu().drop_limbs(o, a); }
    void encode(const Ring& r, BatchSpan o, const double* coefficients, size_t slots) override {
        on_kernel(), cpu().encode(r, o, coefficients, slots);
    }
    void rescale(const Ring& r, BatchSpan o, ConstBatchSpan a) override { on_kernel(), cpu().rescale(r, o, a); }
    void relinearize(const Ring& r, BatchSpan o, ConstBatchSpan a, const KeyView& rk) override {
        on_kernel(), cpu().relinearize(r, o, a, rk);
    }
    void multiply_relin_rescale(const Ring& r, BatchSpan o, ConstBatchSpan a, ConstBatchSpan b,
                                const KeyView& rk) override {
        on_kernel(), cpu().multiply_relin_rescale(r, o, a, b, rk);
    }
    void apply_galois(const Ring& r, BatchSpan o, ConstBatchSpan a, const uint32_t* const* perms,
                      const KeyView* const* keys) override {
        on_kernel(), cpu().apply_galois(r, o, a, perms, keys);
    }
    void rotate_hoisted(const Ring& r, const BatchSpan* outs, size_t rotations, ConstBatchSpan a,
                        const uint32_t* const* perms, const KeyView* const* keys) override {
        on_kernel(), cpu().rotate_hoisted(r, outs, rotations, a, perms, keys);
    }
    void rotate_sum_hoisted(const Ring& r, BatchSpan o, ConstBatchSpan a, size_t rotations, const uint32_t* const* perms,
                            const KeyView* const* keys, size_t identities) override {
        on_kernel(), cpu().rotate_sum_hoisted(r, o, a, rotations, perms, keys, identities);
    }

protected:
    virtual void on_kernel() {}

private:
    static backend::Queue& cpu() { return *backend::cpu_queue(); }
};

// A device queue whose "device memory" is separate host allocations (the backend::Queue
// defaults) and whose kernels are the CPU queue's: batches moved there take the device-memory
// paths (to_device / to_host, outputs allocated by the queue) without a GPU, and must give the
// host path's words. Counts its allocations.
class OffsiteQueue final : public ForwardingQueue {
public:
    size_t allocations = 0;
    bool host_memory() const override { return false; }
    std::shared_ptr<uint64_t> allocate(size_t words) override {
        ++allocations;
        return ForwardingQueue::allocate(words);
    }
    const char* device_name() const override { return "offsite"; }
};

}  // namespace oboro::test
