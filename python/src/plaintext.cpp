// oboro.Plaintext: an encoded, unencrypted array (Context.encode / Context.decode). The operators
// with ciphertexts and batches are in arithmetic.cpp (automatic mode's rules for plaintexts:
// ckks/auto_evaluator.hpp). encode()'s default scale is the standard scale of its level, so
// ciphertext * plaintext at the same level lands on the standard scale of the level below, like
// ciphertext * ciphertext. Additions need equal scales (encode at ct.scale to add to a ciphertext
// whose scale is not standard).
#include <optional>
#include <string>

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "oboro/util/error.hpp"
#include "state.hpp"

using namespace nanobind::literals;

namespace oboro::py {

namespace {

std::string plaintext_repr(const PyPlaintext& p) {
    return "<oboro.Plaintext shape=" + shape_str(p.shape) + " dtype=" + (p.is_complex ? "complex128" : "float64") +
           " level=" + std::to_string(p.pt.level()) + " slots=" + std::to_string(p.pt.slots()) + ">";
}

}  // namespace

nb::class_<PyPlaintext> add_plaintext_class(nb::module_& m, nb::class_<PyContext>& ctx) {
    nb::class_<PyPlaintext> pt(m, "Plaintext",
                               "An encoded, unencrypted array (made by Context.encode): the CKKS encoding of the values "
                               "at a level and scale, ready to add to or multiply with ciphertexts of the same shape "
                               "(ct + pt, ct - pt, pt - ct, ct * pt). Encoding once and reusing the plaintext saves "
                               "the encoding of an array operand at every operation. Context.decode gives the values "
                               "back; serialize / deserialize / save / load as for ciphertexts.");
    pt.attr("__array_ufunc__") = nb::none();
    pt.def_prop_ro("level", [](const PyPlaintext& p) { return p.pt.level(); }, "The level (number of primes - 1).")
        .def_prop_ro("scale", [](const PyPlaintext& p) { return p.pt.scale(); }, "The exact encoding scale.")
        .def_prop_ro("slots", [](const PyPlaintext& p) { return p.pt.slots(); }, "The slot count (power of two).")
        .def_prop_ro("shape", [](const PyPlaintext& p) { return to_tuple(p.shape); },
                     nb::sig("def shape(self) -> tuple[int, ...]"), "Shape of the encoded array.")
        .def_prop_ro("dtype",
                     [](const PyPlaintext& p) { return numpy_dtype(p.is_complex); },
                     nb::sig("def dtype(self) -> numpy.dtype[typing.Any]"), "float64 or complex128.")
        .def(
            "drop_to_level",
            [](const PyPlaintext& p, int level) {
                if (level < 0 || level > p.pt.level())
                    raise<LevelMismatch>("drop_to_level: level ", level, " is outside 0..", p.pt.level(),
                                         " for a plaintext at level ", p.pt.level());
                PyPlaintext out = p;
                out.pt.drop_to_level(level);
                return out;
            },
            "level"_a, "The same plaintext with the primes above `level` removed (the scale is unchanged).")
        .def("__repr__", &plaintext_repr);

    ctx.def(
           "encode",
           [](const PyContext& c, nb::handle values, std::optional<int> level, std::optional<double> scale,
              std::optional<size_t> slots) { return encode_array(c.st, values, level, scale, slots, "encode"); },
           "values"_a, "level"_a = nb::none(), "scale"_a = nb::none(), "slots"_a = nb::none(),
           nb::sig("def encode(self, values: numpy.typing.ArrayLike, level: int | None = None, "
                   "scale: float | None = None, slots: int | None = None) -> Plaintext"),
           "Encodes an array without encrypting it (same arguments and defaults as encrypt: the top level and the "
           "standard scale of the level). Needs no keys.")
        .def(
            "decode",
            [](const PyContext& c, const PyPlaintext& p) {
                if (p.pt.context_id() != c.st->ctx->id())
                    raise<ContextMismatch>("decode: the plaintext belongs to another parameter set");
                return to_numpy(c.st->encoder->decode(p.pt), p.shape, p.is_complex);
            },
            "plaintext"_a, nb::sig("def decode(self, plaintext: Plaintext) -> numpy.typing.NDArray[typing.Any]"),
            "The values of a plaintext, as a numpy.ndarray of its shape.");
    return pt;
}

}  // namespace oboro::py
