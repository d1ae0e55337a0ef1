// Shared declarations of the oboro._core binding files (python/src/*.cpp).
#pragma once

#include <nanobind/nanobind.h>

namespace oboro::py {

namespace nb = nanobind;

// errors.cpp: the Python exception classes (oboro.Error and its subclasses) and the translator
// from the C++ error types of oboro/util/error.hpp.
void register_errors(nb::module_& m);

// ckks.cpp: oboro.Context, oboro.Ciphertext, presets, threads.
void register_ckks(nb::module_& m);

}  // namespace oboro::py
