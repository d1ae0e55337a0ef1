// oboro.Batch on the Python side (batch.cpp): a core CiphertextBatch plus the NumPy shape and
// dtype of ONE element, and what the other binding files that extend it use.
#pragma once

#include <vector>

#include <nanobind/nanobind.h>

#include "oboro/ckks/batch.hpp"
#include "oboro/ckks/evaluator.hpp"
#include "state.hpp"

namespace oboro::py {

struct PyBatch {
    StatePtr st;
    CiphertextBatch batch;
    std::vector<size_t> shape;  // of one element
    bool is_complex = false;

    size_t element_count() const { return shape_size(shape); }
    std::vector<size_t> full_shape() const {
        std::vector<size_t> s = {batch.count()};
        s.insert(s.end(), shape.begin(), shape.end());
        return s;
    }
};

// The evaluator of batches that live where x lives (the CPU queue, or the device queue holding x).
Evaluator evaluator(const State& s, const PolyBatch& x);
// Automatic mode: size-3 elements relinearized (MissingKey without a relinearization key).
void relinearize_if_needed(const State& s, CiphertextBatch& x, const char* op);
// Batch.rotate: one step for all elements (an int) or one per element (a sequence).
PyBatch rotate_batch(const PyBatch& self, nb::handle steps);

// Registration hooks called by add_batch_class.
void add_batch_trace_methods(nb::class_<PyBatch>& b);  // batch_trace.cpp
void add_batch_serialization(nb::class_<PyBatch>& b);  // serialize.cpp

}  // namespace oboro::py
