// Batch.sum and Batch.rotate_many: the rotate-and-sum and the multiple rotations of
// oboro.Ciphertext (trace.cpp) on every element of a batch, with the same arguments and results.
//
// How each runs, and why:
//  * sum(...): ckks::rotate_and_sum on the batch (ckks/trace.hpp), bit-identical to Ciphertext.sum
//    on each element with the same arguments (the same cost-model choice of h for 'auto'):
//    'doubling' is one batched rotation and one batched addition per round for all d elements;
//    'hoisted' (and 'auto') one batched hoisted sum per iteration (Evaluator::rotate_sum:
//    one ModUp per element shared by the iteration's rotations, one ModDown). Both run where the
//    batch lives, on the CPU or the GPU.
//  * rotate_many(steps): as Ciphertext.rotate_many on every element: the steps with a key are
//    hoisted rotations of the whole batch (Evaluator::rotate_many: one ModUp per element, one
//    batched call, on the CPU or the GPU); in automatic mode a step without a key is composed from
//    keyed steps (Batch.rotate).
#include <optional>
#include <string>
#include <vector>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "batch.hpp"
#include "oboro/ckks/trace.hpp"

namespace oboro::py {

using namespace nb::literals;

namespace {

PyBatch batch_sum(const PyBatch& self, std::optional<size_t> block, std::optional<int64_t> stride,
                  std::optional<size_t> count, const std::string& strategy, std::optional<int> h) {
    const State& s = *self.st;
    PyBatch out = self;
    nb::gil_scoped_release release;
    CiphertextBatch& b = out.batch;
    const SumSpec spec = parse_spec("sum", b.slots(), block, stride, count);
    const auto [st, hh] = parse_h("sum", *s.ctx, b.level(), spec, strategy, h);
    if (s.auto_mode) relinearize_if_needed(s, b, "sum");
    b = rotate_and_sum(evaluator(s, b), b, spec, galois_keys(s), st, hh);
    return out;
}

std::vector<PyBatch> batch_rotate_many(const PyBatch& self, const std::vector<int64_t>& steps) {
    const State& s = *self.st;
    std::vector<PyBatch> out(steps.size(), result_shell(self));
    // As Ciphertext.rotate_many: the steps with a key share one ModUp per element (one batched
    // call); in automatic mode the others are composed from keyed steps one by one (rotate).
    std::vector<int64_t> hoisted;
    std::vector<size_t> where;
    const CiphertextBatch* source = &self.batch;
    CiphertextBatch relinearized;  // automatic mode, size 3: relinearized first (a copy only then)
    if (s.auto_mode && self.batch.size() > 2) {
        nb::gil_scoped_release release;
        relinearized = self.batch;
        relinearize_if_needed(s, relinearized, "rotate_many");
        source = &relinearized;
    }
    const CiphertextBatch& a = *source;
    for (size_t i = 0; i < steps.size(); ++i) {
        const std::optional<int64_t> k = s.auto_mode ? keyed_step(s, steps[i], int64_t(a.slots())) : steps[i];
        if (k) {
            hoisted.push_back(*k);
            where.push_back(i);
        } else {
            out[i] = rotate_batch(self, nb::int_(steps[i]));
        }
    }
    nb::gil_scoped_release release;
    std::vector<CiphertextBatch> h = evaluator(s, a).rotate_many(a, hoisted, galois_keys(s));
    for (size_t j = 0; j < h.size(); ++j) out[where[j]].batch = std::move(h[j]);
    return out;
}

}  // namespace

void add_batch_trace_methods(nb::class_<PyBatch>& b) {
    b.def("sum", &batch_sum, "block"_a = nb::none(), "stride"_a = nb::none(), "count"_a = nb::none(),
          "strategy"_a = "auto", "h"_a = nb::none(),
          nb::sig("def sum(self, block: int | None = None, stride: int | None = None, count: int | None = None, "
                  "strategy: str = 'auto', h: int | None = None) -> Batch"),
          (std::string("Ciphertext.sum on every element, bit-identical to it; 'doubling' runs one batched rotation "
                       "per round for all elements, 'hoisted' and 'auto' one batched hoisted sum per iteration (one "
                       "ModUp per element shared by the iteration's rotations); on the CPU or the GPU, where the "
                       "batch lives.\n\n") +
           kSumDoc)
              .c_str());
    b.def("rotate_many", &batch_rotate_many, "steps"_a,
          nb::sig("def rotate_many(self, steps: collections.abc.Sequence[int]) -> list[Batch]"),
          "Every element rotated by each step, as Ciphertext.rotate_many on each element (bit-identical): the "
          "steps with a key share one decomposition (ModUp) of each element, in one batched call; automatic mode "
          "reduces the steps modulo the slots and composes steps without a key, manual mode needs the key of every "
          "step (else MissingKey naming them).");
}

}  // namespace oboro::py
