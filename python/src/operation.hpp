// One operation of the binding on a Ciphertext or a Batch (the Python wrappers PyCiphertext and
// PyBatch): the session and the evaluators it uses, taken with the GIL held, and the helper of the
// methods with one result shaped like self. Shared by the operator file (arithmetic.cpp) and the
// circuit methods (circuits.cpp).
#pragma once

#include <map>
#include <string>
#include <utility>

#include <nanobind/nanobind.h>

#include "state.hpp"

namespace oboro::py {

// nb::sig keeps a pointer to its text: the texts of the methods both classes define live here
// (std::map nodes are stable), one per class and method (`key`, e.g. "Batch.polyval").
inline nb::sig signature(const std::string& key, std::string text) {
    static std::map<std::string, std::string> texts;
    std::string& kept = texts[key];
    kept = std::move(text);
    return nb::sig(kept.c_str());
}

// The device queue holding x (nullptr: host memory, the CPU).
inline QueuePtr queue_of(const Ciphertext&) { return nullptr; }
inline QueuePtr queue_of(const CiphertextBatch& x) { return x.device_queue(); }

// The session and evaluators of one operation on `self`, taken with the GIL held.
template <typename Py> struct Op {
    using T = typename Py::Core;
    SessionPtr session;
    Evaluator eval;
    AutoEvaluator autoeval;
    bool automatic;

    explicit Op(const Py& self)
        : session(self.st->snapshot()), eval(session->evaluator_on(queue_of(self.core()))),
          autoeval(AutoEvaluator(eval, self.st->encoder)
                       .with_refresher(self.st->auto_bootstrap ? session->bootstrapping : nullptr)),
          automatic(is_automatic(*self.st)) {}
};

// A method with one result shaped like self: f(op, self.core()) computed without the GIL.
template <typename Py, typename F> Py unary(const Py& self, F&& f) {
    const Op<Py> op(self);
    Py out = result_shell(self);
    nb::gil_scoped_release release;
    out.core() = f(op, self.core());
    return out;
}

}  // namespace oboro::py
