// The arithmetic operators of the encrypted types (oboro.Ciphertext, oboro.Batch), defined once:
// each type supplies `apply(target, self, other, op)`, which computes target = self (op) other in
// place on target (a copy of self, or self itself for the in-place operators) and returns false
// when `other` is of no supported kind (the operator then returns NotImplemented, so that Python
// tries the other operand's reflected operator).
#pragma once

#include <map>
#include <string>

#include <nanobind/nanobind.h>

#include "state.hpp"

namespace oboro::py {

namespace nb = nanobind;

template <typename T> using ApplyFn = bool (*)(T& target, const T& self, nb::handle other, BinOp op);
// The object a binary operator's result is written into, made from self: by default a copy, which
// apply then updates in place. A type whose apply can write some results out of place gives a
// shell without self's data (and apply copies the data itself where it needs it).
template <typename T> using FreshFn = T (*)(const T& self);
template <typename T> T copy_of(const T& self) { return self; }

namespace detail {
template <typename T, ApplyFn<T> Apply, FreshFn<T> Fresh>
nb::object binary(const T& self, nb::handle other, BinOp op) {
    T out = Fresh(self);
    if (!Apply(out, self, other, op)) return nb::borrow(Py_NotImplemented);
    return nb::cast(std::move(out));
}

template <typename T, ApplyFn<T> Apply>
nb::object in_place(nb::pointer_and_handle<T> self, nb::handle other, BinOp op) {
    if (!Apply(*self.p, *self.p, other, op)) return nb::borrow(Py_NotImplemented);
    return nb::borrow(self.h);
}
}  // namespace detail

// +, -, *, / with their reflected and in-place forms on `cls`; `other_types` is the annotation of
// the other operand in the signatures, e.g. "Ciphertext | complex | numpy.typing.ArrayLike".
template <typename T, ApplyFn<T> Apply, FreshFn<T> Fresh = copy_of<T>>
void def_arithmetic_operators(nb::class_<T>& cls, const char* type_name, const char* other_types) {
    // nb::sig keeps a pointer to its text: the strings live in a static map (stable nodes), one
    // per class.
    static std::map<std::string, std::string> sigs;
    auto sig = [&](const char* name) {
        std::string& text = sigs[name];
        text = std::string("def ") + name + "(self, other: " + other_types + ", /) -> " + type_name;
        return nb::sig(text.c_str());
    };
    using Ref = nb::pointer_and_handle<T>;
    constexpr auto binary = &detail::binary<T, Apply, Fresh>;
    constexpr auto in_place = &detail::in_place<T, Apply>;
    cls.def("__add__", [](const T& s, nb::handle o) { return binary(s, o, BinOp::add); }, sig("__add__"),
            "self + other")
        .def("__radd__", [](const T& s, nb::handle o) { return binary(s, o, BinOp::add); }, sig("__radd__"),
             "other + self")
        .def("__sub__", [](const T& s, nb::handle o) { return binary(s, o, BinOp::sub); }, sig("__sub__"),
             "self - other")
        .def("__rsub__", [](const T& s, nb::handle o) { return binary(s, o, BinOp::rsub); }, sig("__rsub__"),
             "other - self")
        .def("__mul__", [](const T& s, nb::handle o) { return binary(s, o, BinOp::mul); }, sig("__mul__"),
             "self * other")
        .def("__rmul__", [](const T& s, nb::handle o) { return binary(s, o, BinOp::mul); }, sig("__rmul__"),
             "other * self")
        .def("__truediv__", [](const T& s, nb::handle o) { return binary(s, o, BinOp::div); }, sig("__truediv__"),
             "self / other (other: a non-zero scalar or array, not a ciphertext)")
        .def("__iadd__", [](Ref s, nb::handle o) { return in_place(s, o, BinOp::add); }, sig("__iadd__"),
             "self += other (in place)")
        .def("__isub__", [](Ref s, nb::handle o) { return in_place(s, o, BinOp::sub); }, sig("__isub__"),
             "self -= other (in place)")
        .def("__imul__", [](Ref s, nb::handle o) { return in_place(s, o, BinOp::mul); }, sig("__imul__"),
             "self *= other (in place)")
        .def("__itruediv__", [](Ref s, nb::handle o) { return in_place(s, o, BinOp::div); }, sig("__itruediv__"),
             "self /= other (in place)");
}

}  // namespace oboro::py
