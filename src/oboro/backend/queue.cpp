// The device-generic defaults of backend::Queue: what a queue without a fused kernel for an
// operation does, with the kernels it has and scratch in its own memory.
#include "oboro/backend/queue.hpp"

#include <algorithm>
#include <vector>

#include "oboro/backend/cpu/ciphertext_ops.hpp"
#include "oboro/util/error.hpp"
#include "oboro/util/parallel.hpp"

namespace oboro::backend {

namespace {
// A batch of `shape`'s size in the queue's memory (host memory for a host queue).
struct Scratch {
    std::shared_ptr<uint64_t> words;
    BatchSpan span;
    Scratch(Queue& q, const BasicBatchSpan<const uint64_t>& shape, size_t polys) {
        const size_t count = shape.count;
        words = q.allocate(count * polys * shape.limbs * shape.n);
        span = {words.get(), count, polys, shape.limbs, shape.n, shape.special};
    }
};
}  // namespace

void Queue::fill_zero(BatchSpan out) {
    if (host_memory()) {
        std::fill(out.data, out.data + out.words(), uint64_t(0));
        return;
    }
    const std::vector<uint64_t> zeros(out.words(), 0);
    copy_to_device(out.data, zeros.data(), zeros.size());
    synchronize();  // the host zeros must outlive the copy
}

void Queue::mul_plain_add(const Ring& ring, BatchSpan acc, ConstBatchSpan a, ConstBatchSpan b) {
    Scratch t(*this, a, a.polys);
    mul_plain(ring, t.span, a, b);
    add(ring, acc, acc.as_const(), t.span.as_const());  // the scratch is freed in queue order
}

void Queue::mul_plain_sum(const Ring& ring, BatchSpan out, const ConstBatchSpan* a, const ConstBatchSpan* b,
                          size_t terms) {
    for (size_t j = 0; j < terms; ++j)
        if (b[j].n != a[j].n)
            raise<Error>("mul_plain_sum: compact plaintexts (runs of words) are read only by the CPU queue's sum of "
                         "products of 2-polynomial ciphertexts, not on ", device_name());
    mul_plain(ring, out, a[0], b[0]);
    for (size_t j = 1; j < terms; ++j) mul_plain_add(ring, out, a[j], b[j]);
}

void Queue::mul_plain_sums(const Ring& ring, const BatchSpan* outs, size_t sums, const ConstBatchSpan* a,
                           const ConstBatchSpan* b, const size_t* ends) {
    for (size_t g = 0, begin = 0; g < sums; begin = ends[g++])
        mul_plain_sum(ring, outs[g], a + begin, b + begin, ends[g] - begin);
}

void Queue::mul_scalar_add(const Ring& ring, BatchSpan acc, ConstBatchSpan a, const uint64_t* per_limb) {
    Scratch t(*this, a, a.polys);
    mul_scalar(ring, t.span, a, per_limb);
    add(ring, acc, acc.as_const(), t.span.as_const());
}

void Queue::mul_scalar_sum(const Ring& ring, BatchSpan acc, const ConstBatchSpan* a, const uint64_t* const* per_limb,
                           size_t terms) {
    for (size_t j = 0; j < terms; ++j) {
        if (a[j].limbs == acc.limbs) {
            mul_scalar_add(ring, acc, a[j], per_limb[j]);
            continue;
        }
        for (size_t c = 0; c < acc.count; ++c)
            for (size_t p = 0; p < acc.polys; ++p)
                mul_scalar_add(ring, {acc.poly(c, p), 1, 1, acc.limbs, acc.n, 0}, {a[j].poly(c, p), 1, 1, acc.limbs, a[j].n, 0},
                               per_limb[j]);
    }
}

void Queue::tensor_add(const Ring& ring, BatchSpan acc, ConstBatchSpan a, ConstBatchSpan b) {
    Scratch t(*this, a, 3);
    tensor(ring, t.span, a, b);
    add(ring, acc, acc.as_const(), t.span.as_const());
}

void Queue::multiply_add_relin_rescale(const Ring& ring, BatchSpan out, ConstBatchSpan a, ConstBatchSpan b,
                                       ConstBatchSpan c, const KeySwitchKeyView& rk) {
    Scratch product(*this, a, 3), sum(*this, a, 2);
    tensor(ring, product.span, a, b);
    add(ring, product.span, product.span.as_const(), c);
    relinearize(ring, sum.span, product.span.as_const(), rk);
    rescale(ring, out, sum.span.as_const());
}

namespace {
[[noreturn]] void no_extended_basis(const Queue& q, const char* op) {
    raise<Error>(op, ": the extended basis Q_level * P is not available on ", q.device_name(), " yet");
}
}  // namespace

void Queue::mod_raise(const Ring& ring, BatchSpan out, ConstBatchSpan a) {
    const auto raise_all = [&](const uint64_t* in, uint64_t* dst) {
        parallel_for(a.count * a.polys, [&](size_t k) {
            cpu::mod_raise_poly(ring, in + k * a.n, dst + k * out.limbs * out.n, out.limbs);
        });
    };
    if (host_memory()) {
        raise_all(a.data, out.data);
        return;
    }
    std::vector<uint64_t> in(a.words()), raised(out.words());
    copy_to_host(in.data(), a.data, in.size());
    raise_all(in.data(), raised.data());
    copy_to_device(out.data, raised.data(), raised.size());
    synchronize();  // the enqueued copy reads `raised`, freed on return
}

void Queue::extend(const Ring&, BatchSpan, ConstBatchSpan) { no_extended_basis(*this, "extend"); }
void Queue::mod_down(const Ring&, BatchSpan, ConstBatchSpan) { no_extended_basis(*this, "mod_down"); }
void Queue::rotate_hoisted_extended(const Ring&, const BatchSpan*, size_t, ConstBatchSpan, const uint32_t* const*,
                                    const KeySwitchKeyView* const*) {
    no_extended_basis(*this, "rotate_many_extended");
}

void Queue::mod_down_rescale(const Ring& ring, BatchSpan out, ConstBatchSpan a) {
    if (!extended_basis()) no_extended_basis(*this, "rescale");
    Scratch down(*this, {a.data, a.count, a.polys, a.q_limbs(), a.n, 0}, a.polys);
    mod_down(ring, down.span, a);
    rescale(ring, out, down.span.as_const());  // the scratch is freed in queue order
}

void Queue::rotate_hoisted_from_extended(const Ring& ring, const BatchSpan* outs, size_t rotations, ConstBatchSpan a,
                                         const uint32_t* const* perms, const KeySwitchKeyView* const* keys) {
    if (!extended_basis()) no_extended_basis(*this, "rotate_many_extended");
    Scratch down(*this, {a.data, a.count, a.polys, a.q_limbs(), a.n, 0}, a.polys);
    mod_down(ring, down.span, a);
    rotate_hoisted_extended(ring, outs, rotations, down.span.as_const(), perms, keys);  // freed in queue order
}

}  // namespace oboro::backend
