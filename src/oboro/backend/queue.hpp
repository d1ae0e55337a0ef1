// The execution model every backend follows: work is ENQUEUED on a queue, in order, and only an
// explicit synchronize() waits for it. An operation never waits for the one before it, so a GPU
// backend can launch one kernel per batched op back to back (paper 000: the per-op sync is what
// made small ops slow), and a CPU backend may simply run each op when it is enqueued.
//
// Contract for callers: the inputs of an enqueued op must stay alive and unchanged, and its
// outputs must not be read, until synchronize() returns (or a later op on the same queue, which
// runs after it, consumes them). The batched CKKS kernels that run on a queue are declared in
// ckks/batch_queue.hpp.
#pragma once

namespace oboro::backend {

class Queue {
public:
    virtual ~Queue() = default;
    // "cpu", "cuda:0", ...
    virtual const char* device_name() const = 0;
    // Blocks until every op enqueued so far has finished; rethrows the first error of one of them.
    virtual void synchronize() = 0;
};

}  // namespace oboro::backend
