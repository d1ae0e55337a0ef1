// The operators and methods of oboro.Ciphertext and oboro.Batch, written once for both: a
// Ciphertext is evaluated as a batch of one, so both give the same words for the same operation.
// This file only converts Python operands (NumPy arrays, numbers, plaintexts) and picks the core
// call: automatic mode is ckks::AutoEvaluator's policy, manual mode one ckks::Evaluator operation
// per operator.
//
// Every operation takes the context's Session (state.hpp) while it holds the GIL and releases the
// GIL for the computation.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "oboro/ckks/batch_encoder.hpp"
#include "oboro/util/error.hpp"
#include "operation.hpp"
#include "state.hpp"

using namespace nanobind::literals;

namespace oboro::py {

namespace {

// ---- operands ------------------------------------------------------------------------------------

enum class Kind { encrypted, plaintext, integer, real, complex, array, unsupported };

template <typename Py> struct Operand {
    Kind kind = Kind::unsupported;
    const Py* enc = nullptr;
    const PyPlaintext* pt = nullptr;
    int64_t i = 0;
    double r = 0;
    cplx c{};
    HostArray arr;    // kind == array: broadcast to one element's shape, or to the batch's shape
    size_t rows = 1;  // array: 1 (the same row for every element) or the batch's length
};

// The shape an array operand of `self` may have besides one element's: the batch's full shape.
std::optional<std::vector<size_t>> per_element_shape(const PyCiphertext&) { return std::nullopt; }
std::optional<std::vector<size_t>> per_element_shape(const PyBatch& b) { return b.full_shape(); }

template <typename Py> Operand<Py> classify(nb::handle o, const Py& self, const char* op) {
    Operand<Py> out;
    if (nb::isinstance<Py>(o)) {
        out.kind = Kind::encrypted;
        out.enc = &nb::cast<const Py&>(o);
        return out;
    }
    if (nb::isinstance<PyPlaintext>(o)) {
        out.kind = Kind::plaintext;
        out.pt = &nb::cast<const PyPlaintext&>(o);
        return out;
    }
    if (nb::isinstance<PyCiphertext>(o) || nb::isinstance<PyBatch>(o)) return out;  // batch (op) ciphertext
    if (PyLong_Check(o.ptr())) {  // includes bool
        int overflow = 0;
        const long long v = PyLong_AsLongLongAndOverflow(o.ptr(), &overflow);
        if (v == -1 && PyErr_Occurred()) throw nb::python_error();
        if (!overflow) {
            out.kind = Kind::integer;
            out.i = int64_t(v);
        } else {
            out.kind = Kind::real;
            out.r = PyLong_AsDouble(o.ptr());
            if (out.r == -1.0 && PyErr_Occurred()) throw nb::python_error();
        }
        return out;
    }
    if (PyFloat_Check(o.ptr())) {
        out.kind = Kind::real;
        out.r = PyFloat_AsDouble(o.ptr());
        return out;
    }
    if (PyComplex_Check(o.ptr())) {
        out.kind = Kind::complex;
        out.c = cplx(PyComplex_RealAsDouble(o.ptr()), PyComplex_ImagAsDouble(o.ptr()));
        return out;
    }
    nb::object arr;
    try {
        arr = numpy().attr("asarray")(o);
    } catch (const nb::python_error&) {
        return out;  // unsupported
    }
    const std::string kind = nb::cast<std::string>(arr.attr("dtype").attr("kind"));
    if (kind != "c" && kind != "f" && kind != "i" && kind != "u" && kind != "b") return out;
    if (nb::cast<size_t>(arr.attr("ndim")) == 0) return classify(arr.attr("item")(), self, op);  // NumPy scalar
    const auto full = per_element_shape(self);
    const bool per_element = full && nb::cast<size_t>(arr.attr("ndim")) == full->size();
    out.kind = Kind::array;
    out.arr = to_host(arr, op, per_element ? &*full : &self.element_shape());
    out.rows = per_element ? (*full)[0] : 1;
    return out;
}

// ---- the operators -------------------------------------------------------------------------------

// a (op) b for another encrypted value or a plaintext b: the AutoEvaluator's operation, or in
// manual mode the Evaluator's one operation (b - a as -a + b: the same words as a subtraction).
template <typename Py, typename B>
typename Py::Core operand_op(const Op<Py>& op, const typename Py::Core& a, const B& b, BinOp kind) {
    if (op.automatic) {
        switch (kind) {
            case BinOp::add: return op.autoeval.add(a, b);
            case BinOp::sub: return op.autoeval.sub(a, b);
            case BinOp::rsub: return op.autoeval.rsub(a, b);
            default: return op.autoeval.multiply(a, b);
        }
    }
    switch (kind) {
        case BinOp::add: return op.eval.add(a, b);
        case BinOp::sub: return op.eval.sub(a, b);
        case BinOp::rsub: {
            auto x = op.eval.negate(a);
            op.eval.add_inplace(x, b);
            return x;
        }
        default: return op.eval.multiply(a, b);
    }
}

// a (op) c for a constant c: the sums are the same in both modes (c added to the `count` used
// slots); a product is exact for an integer, and otherwise encodes c at the product scale
// (automatic: then rescaled) or at q_level (manual).
template <typename Py>
typename Py::Core constant_op(const Op<Py>& op, const typename Py::Core& a, const Operand<Py>& o, cplx c, size_t count,
                              BinOp kind) {
    const AutoEvaluator& ae = op.autoeval;
    switch (kind) {
        case BinOp::add: return ae.add(a, c, count);
        case BinOp::sub: return ae.sub(a, c, count);
        case BinOp::rsub: return ae.rsub(a, c, count);
        default: break;
    }
    if (kind == BinOp::mul && o.kind == Kind::integer) return ae.multiply(a, o.i);
    if (op.automatic) return ae.multiply(a, c);
    if (c.imag() == 0) return op.eval.multiply(a, c.real());
    const std::vector<cplx> row(a.slots(), c);
    return op.eval.multiply(a, ae.encode(a, SlotValues{row, 1}, double(ae.context()->q()[size_t(a.level())])));
}

template <typename Py>
typename Py::Core array_op(const Op<Py>& op, const typename Py::Core& a, const std::vector<cplx>& values, size_t rows,
                           BinOp kind) {
    const AutoEvaluator& ae = op.autoeval;
    const SlotValues v{values, rows};
    switch (kind) {
        case BinOp::add: return ae.add(a, v);
        case BinOp::sub: return ae.sub(a, v);
        case BinOp::rsub: return ae.rsub(a, v);
        default: break;
    }
    if (op.automatic) return ae.multiply(a, v);
    return op.eval.multiply(a, ae.encode(a, v, double(ae.context()->q()[size_t(a.level())])));
}

// target = self (op) other: target is self for the in-place operators, a result_shell of self for
// the others. Returns false when `other` is of no supported kind (the operator then returns
// NotImplemented, so that Python tries the other operand's reflected operator).
template <typename Py> bool apply(Py& target, const Py& self, nb::handle other, BinOp kind) {
    using T = typename Py::Core;
    const char* name = kind == BinOp::mul || kind == BinOp::div ? "multiply" : (kind == BinOp::add ? "add" : "sub");
    Operand<Py> o = classify(other, self, name);
    if (o.kind == Kind::unsupported) return false;
    const Op<Py> op(self);
    const State& s = *self.st;
    const T& a = self.core();
    bool is_complex = self.is_complex;
    switch (o.kind) {
        case Kind::encrypted: {
            if (kind == BinOp::div) return false;
            if (o.enc->shape != self.shape)
                raise<oboro::ValueError>(name, ": the operands' elements have different shapes ", shape_str(self.shape),
                                         " and ", shape_str(o.enc->shape));
            check_same_keys(s, *o.enc->st, name);
            is_complex = is_complex || o.enc->is_complex;
            const T& b = o.enc->core();
            const bool in_place = &target == &self && (kind == BinOp::add || kind == BinOp::sub);
            nb::gil_scoped_release release;
            if (in_place && op.automatic) {
                kind == BinOp::add ? op.autoeval.add_inplace(target.core(), b) : op.autoeval.sub_inplace(target.core(), b);
            } else if (in_place) {
                kind == BinOp::add ? op.eval.add_inplace(target.core(), b) : op.eval.sub_inplace(target.core(), b);
            } else {
                target.core() = operand_op(op, a, b, kind);
            }
            break;
        }
        case Kind::plaintext: {
            if (kind == BinOp::div) return false;  // no division by a plaintext: TypeError
            if (o.pt->shape != self.element_shape())
                raise<oboro::ValueError>(name, ": the plaintext's shape ", shape_str(o.pt->shape),
                                         " differs from the ciphertexts' ", shape_str(self.element_shape()));
            if (o.pt->pt.context_id() != s.ctx->id())
                raise<ContextMismatch>(name, ": the plaintext belongs to another parameter set");
            is_complex = is_complex || o.pt->is_complex;
            const Plaintext& b = o.pt->pt;
            nb::gil_scoped_release release;
            if constexpr (std::same_as<T, CiphertextBatch>) {
                if (a.device()) {  // a plaintext is encoded in host memory: one upload
                    const PlaintextBatch up =
                        PlaintextBatch::from_plaintexts(*s.ctx, std::span<const Plaintext>(&b, 1)).to_device(a.device_queue());
                    target.core() = operand_op(op, a, up, kind);
                    break;
                }
            }
            target.core() = operand_op(op, a, b, kind);
            break;
        }
        case Kind::integer:
        case Kind::real:
        case Kind::complex: {
            cplx c = o.kind == Kind::integer ? cplx(double(o.i), 0) : o.kind == Kind::real ? cplx(o.r, 0) : o.c;
            is_complex = is_complex || o.kind == Kind::complex;
            if (kind == BinOp::div) {
                if (c == cplx(0, 0)) {
                    PyErr_SetString(PyExc_ZeroDivisionError, "division of encrypted values by zero");
                    throw nb::python_error();
                }
                c = cplx(1, 0) / c;
                o.kind = Kind::complex;  // 1/c is no longer the integer it may have been
            }
            const size_t count = self.element_count();
            nb::gil_scoped_release release;
            target.core() = constant_op(op, a, o, c, count, kind == BinOp::div ? BinOp::mul : kind);
            break;
        }
        case Kind::array: {
            is_complex = is_complex || o.arr.is_complex;
            std::vector<cplx> v = std::move(o.arr.values);
            if (kind == BinOp::div)
                for (auto& x : v) x = cplx(1, 0) / x;
            nb::gil_scoped_release release;
            target.core() = array_op(op, a, v, o.rows, kind == BinOp::div ? BinOp::mul : kind);
            break;
        }
        case Kind::unsupported: return false;
    }
    target.is_complex = is_complex;
    return true;
}

template <typename Py> nb::object binary(const Py& self, nb::handle other, BinOp op) {
    Py out = result_shell(self);
    if (!apply(out, self, other, op)) return nb::borrow(Py_NotImplemented);
    return nb::cast(std::move(out));
}

template <typename Py> nb::object in_place(nb::pointer_and_handle<Py> self, nb::handle other, BinOp op) {
    if (!apply(*self.p, *self.p, other, op)) return nb::borrow(Py_NotImplemented);
    return nb::borrow(self.h);
}

// ---- the methods ---------------------------------------------------------------------------------

// Rotation by one step for every element (an int), or (batches) by one step per element (a
// sequence, whose length is checked against the batch's).
template <typename Py> Py rotate(const Py& self, nb::handle steps) {
    const bool one = PyLong_Check(steps.ptr());
    const int64_t k = one ? nb::cast<int64_t>(steps) : 0;
    const std::vector<int64_t> per =
        one ? std::vector<int64_t>{}
            : nb::cast<std::vector<int64_t>>(numpy().attr("asarray")(steps, "int64").attr("ravel")().attr("tolist")());
    return unary(self, [&](const Op<Py>& op, const auto& a) {
        if (op.automatic) return one ? op.autoeval.rotate(a, k) : op.autoeval.rotate(a, per);
        return one ? op.eval.rotate(a, k) : op.eval.rotate(a, per);
    });
}

template <typename Py> Py conj(const Py& self) {
    return unary(self, [](const Op<Py>& op, const auto& a) {
        return op.automatic ? op.autoeval.conjugate(a) : op.eval.conjugate(a);
    });
}

template <typename Py> Py rescale(const Py& self) {
    return unary(self, [](const Op<Py>& op, const auto& a) { return op.eval.rescale(a); });
}

template <typename Py> Py relinearize(const Py& self) {
    if (self.core().size() == 2) return self;
    return unary(self, [](const Op<Py>& op, const auto& a) { return op.eval.relinearize(a); });
}

template <typename Py> Py drop_to_level(const Py& self, int level) {
    return unary(self, [level](const Op<Py>& op, const auto& a) {
        return op.automatic ? op.autoeval.drop_to_level(a, level) : op.eval.drop_to_level(a, level);
    });
}

template <typename Py> Py negate(const Py& self) {
    return unary(self, [](const Op<Py>& op, const auto& a) { return op.eval.negate(a); });
}

// [self.rotate(k) for k in steps] with one ModUp per element for the steps that have a key:
// automatic mode reduces the steps modulo the slots and composes the others from keyed steps
// (rotate), manual mode needs the key of every step.
template <typename Py> std::vector<Py> rotate_many(const Py& self, const std::vector<int64_t>& steps) {
    using T = typename Py::Core;
    const Op<Py> op(self);
    std::vector<Py> out(steps.size(), result_shell(self));
    nb::gil_scoped_release release;
    if (!op.automatic) {
        std::vector<T> r = op.eval.rotate_many(self.core(), steps);
        for (size_t i = 0; i < r.size(); ++i) out[i].core() = std::move(r[i]);
        return out;
    }
    const T a = op.autoeval.relinearize(self.core());
    std::vector<int64_t> hoisted;
    std::vector<size_t> where;
    for (size_t i = 0; i < steps.size(); ++i) {
        if (auto k = op.autoeval.keyed_step(steps[i], a.slots())) {
            hoisted.push_back(*k);
            where.push_back(i);
        } else {
            out[i].core() = op.autoeval.rotate(a, steps[i]);
        }
    }
    std::vector<T> h = op.eval.rotate_many(a, hoisted);
    for (size_t j = 0; j < h.size(); ++j) out[where[j]].core() = std::move(h[j]);
    return out;
}

template <typename Py>
Py sum(const Py& self, std::optional<size_t> block, std::optional<int64_t> stride, std::optional<size_t> count,
       const std::string& strategy, std::optional<int> h) {
    return unary(self, [&](const Op<Py>& op, const auto& a) {
        const SumSpec spec = parse_spec("sum", a.slots(), block, stride, count);
        const auto [st, hh] = parse_h("sum", *self.st->ctx, a.level(), spec, strategy, h);
        return rotate_and_sum(op.eval, op.automatic ? op.autoeval.relinearize(a) : a, spec, st, hh);
    });
}

}  // namespace

// +, -, *, / with their reflected and in-place forms, and the methods both types share.
template <typename Py> void add_encrypted_methods(nb::class_<Py>& cls, const char* type_name) {
    // nb::sig keeps a pointer to its text: the strings live in a static map (stable nodes).
    const std::string other = std::string(type_name) + " | Plaintext | complex | numpy.typing.ArrayLike";
    auto sig = [&](const char* name) {
        return signature(std::string(type_name) + "." + name,
                         std::string("def ") + name + "(self, other: " + other + ", /) -> " + type_name);
    };
    using Ref = nb::pointer_and_handle<Py>;
    // NumPy must not treat the object as something to broadcast over: with __array_ufunc__ =
    // None, `array * ct` returns NotImplemented from NumPy and Python calls ct.__rmul__(array).
    cls.attr("__array_ufunc__") = nb::none();
    cls.def("__add__", [](const Py& s, nb::handle o) { return binary(s, o, BinOp::add); }, sig("__add__"), "self + other")
        .def("__radd__", [](const Py& s, nb::handle o) { return binary(s, o, BinOp::add); }, sig("__radd__"),
             "other + self")
        .def("__sub__", [](const Py& s, nb::handle o) { return binary(s, o, BinOp::sub); }, sig("__sub__"),
             "self - other")
        .def("__rsub__", [](const Py& s, nb::handle o) { return binary(s, o, BinOp::rsub); }, sig("__rsub__"),
             "other - self")
        .def("__mul__", [](const Py& s, nb::handle o) { return binary(s, o, BinOp::mul); }, sig("__mul__"),
             "self * other")
        .def("__rmul__", [](const Py& s, nb::handle o) { return binary(s, o, BinOp::mul); }, sig("__rmul__"),
             "other * self")
        .def("__truediv__", [](const Py& s, nb::handle o) { return binary(s, o, BinOp::div); }, sig("__truediv__"),
             "self / other (other: a non-zero scalar or array, not a ciphertext)")
        .def("__iadd__", [](Ref s, nb::handle o) { return in_place(s, o, BinOp::add); }, sig("__iadd__"),
             "self += other (in place)")
        .def("__isub__", [](Ref s, nb::handle o) { return in_place(s, o, BinOp::sub); }, sig("__isub__"),
             "self -= other (in place)")
        .def("__imul__", [](Ref s, nb::handle o) { return in_place(s, o, BinOp::mul); }, sig("__imul__"),
             "self *= other (in place)")
        .def("__itruediv__", [](Ref s, nb::handle o) { return in_place(s, o, BinOp::div); }, sig("__itruediv__"),
             "self /= other (in place)")
        .def("__neg__", &negate<Py>, "-self")
        .def("__pos__", [](const Py& s) { return s; }, "+self (a copy)")
        .def("copy", [](const Py& s) { return s; }, "A copy.")
        .def("__copy__", [](const Py& s) { return s; })
        .def("__deepcopy__", [](const Py& s, nb::handle) { return s; }, "memo"_a)
        .def_prop_ro("auto", [](const Py& s) { return is_automatic(*s.st); },
                     "Whether operations on this value run in automatic mode here and now (its context's mode, or "
                     "that of an enclosing `with ctx.manual():` / `with ctx.automatic():` block).")
        .def("conj", &conj<Py>,
             "Complex conjugate of every value (needs keygen(conjugation=True), else MissingKey). Automatic mode "
             "relinearizes first.")
        .def("rescale", &rescale<Py>,
             "Divides by the last prime q_level and drops it: level - 1, scale / q_level. Needed after "
             "multiplications in manual mode (automatic mode does it itself).")
        .def("relinearize", &relinearize<Py>,
             "Brings a size-3 product (manual mode) back to 2 polynomials with the relinearization key; a no-op on "
             "a size-2 ciphertext.")
        .def("drop_to_level", &drop_to_level<Py>, "level"_a,
             "The same values at a lower level. Manual mode keeps the scale (limbs are dropped). Automatic mode "
             "moves a value that is at its level's standard scale to the standard scale of the new level (an "
             "integer multiplication and a rescale on the way down, no extra level), as automatic alignment does.")
        .def("rotate_many", &rotate_many<Py>, "steps"_a,
             nb::sig((std::string("def rotate_many(self, steps: collections.abc.Sequence[int]) -> list[") + type_name +
                      "]")
                         .c_str()),
             "[self.rotate(k) for k in steps], with one decomposition (ModUp) of each ciphertext shared by all the "
             "rotations (hoisting): cheaper than separate rotations from the second step on. Automatic mode "
             "reduces the steps modulo the slots and composes steps without a key like rotate(); manual mode needs "
             "the key of every step and raises MissingKey naming all the missing ones.")
        .def("sum", &sum<Py>, "block"_a = nb::none(), "stride"_a = nb::none(), "count"_a = nb::none(),
             "strategy"_a = "auto", "h"_a = nb::none(),
             nb::sig((std::string("def sum(self, block: int | None = None, stride: int | None = None, count: int | "
                                  "None = None, strategy: str = 'auto', h: int | None = None) -> ") +
                      type_name)
                         .c_str()),
             kSumDoc);
    if constexpr (std::same_as<Py, PyCiphertext>) {
        cls.def("rotate", [](const Py& s, int64_t steps) { return rotate(s, nb::int_(steps)); }, "steps"_a,
                "Rotates the slot vector left by `steps` (negative: right), cyclically over `slots` values: "
                "np.roll(x, -steps) when size == slots. Automatic mode reduces the step modulo the slots and, when "
                "the context has no key for it, composes it from keyed steps (signed powers of two); manual mode "
                "needs the key of exactly this step. Raises MissingKey when no key fits.");
    } else {
        cls.def("rotate", &rotate<Py>, "steps"_a,
                nb::sig("def rotate(self, steps: int | collections.abc.Sequence[int], /) -> Batch"),
                "Rotates every element left by `steps`, or element i by steps[i] (one step per element, 0 allowed), "
                "in one batched call. Manual mode needs the key of each exact step, automatic mode a key of the step "
                "modulo the slots (or keyed steps it is composed from); else MissingKey naming the steps.");
    }
}

template void add_encrypted_methods(nb::class_<PyCiphertext>&, const char*);
template void add_encrypted_methods(nb::class_<PyBatch>&, const char*);

}  // namespace oboro::py
