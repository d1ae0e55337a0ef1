// The Python exceptions of oboro: one class per C++ error type (oboro/util/error.hpp), with the
// C++ message passed through unchanged.
//
//   oboro.Error                    base class (subclass of Exception)
//   oboro.ParameterError           invalid, malformed or insecure parameters   (also a ValueError)
//   oboro.InvalidArgument          out-of-range or wrongly sized argument      (also a ValueError; C++ ValueError)
//   oboro.LevelMismatch            operands at different levels / impossible at this level (also a ValueError)
//   oboro.ScaleMismatch            operands whose scales differ                (also a ValueError)
//   oboro.ContextMismatch          objects of different parameter sets         (also a ValueError)
//   oboro.MissingKey               a key the operation needs is not there
//   oboro.SerializationError       bad, truncated or hostile serialized data
//   oboro.ModulusOverflow          a decrypted result that has wrapped around the modulus (also an OverflowError)
// No name is a builtin's, so `from oboro import *` shadows nothing.
#include <exception>

#include "bindings.hpp"
#include "oboro/util/error.hpp"

namespace oboro::py {

namespace {

struct ErrorTypes {
    PyObject* base = nullptr;
    PyObject* parameter = nullptr;
    PyObject* value = nullptr;
    PyObject* level = nullptr;
    PyObject* scale = nullptr;
    PyObject* context = nullptr;
    PyObject* missing_key = nullptr;
    PyObject* serialization = nullptr;
    PyObject* overflow = nullptr;
};

ErrorTypes types;

// A new exception class oboro.<name> with the given bases, stored on the module. The class lives
// as long as the interpreter (the reference kept in `types` is never released).
PyObject* make_exception(nb::module_& m, const char* name, const char* doc, nb::handle bases) {
    const std::string full = std::string("oboro.") + name;
    PyObject* cls = PyErr_NewExceptionWithDoc(full.c_str(), doc, bases.ptr(), nullptr);
    if (!cls) throw nb::python_error();
    m.attr(name) = nb::handle(cls);
    return cls;
}

}  // namespace

void register_errors(nb::module_& m) {
    nb::handle exc(PyExc_Exception), value_error(PyExc_ValueError);
    types.base = make_exception(m, "Error", "Base class of every error raised by oboro.", nb::make_tuple(exc));
    nb::handle base(types.base);
    types.parameter = make_exception(
        m, "ParameterError",
        "Invalid, malformed or insecure parameters (unknown preset, log2(QP) above the security limit, bad prime "
        "sizes, ...). Also a builtins.ValueError.",
        nb::make_tuple(base, value_error));
    types.value = make_exception(
        m, "InvalidArgument",
        "An argument that is out of range or of the wrong size (too many values for the slots, a rotation step "
        "out of range, a value too large for the modulus, ...). Subclass of oboro.Error and builtins.ValueError.",
        nb::make_tuple(base, value_error));
    types.level = make_exception(
        m, "LevelMismatch",
        "Operands at different levels (manual mode), or an operation that is impossible at the operand's level "
        "(rescale or multiply at level 0, drop_to_level upwards). Also a builtins.ValueError.",
        nb::make_tuple(base, value_error));
    types.scale = make_exception(
        m, "ScaleMismatch",
        "Operands whose scales differ (manual mode), or a scale that cannot be reached or does not fit the "
        "modulus. Also a builtins.ValueError.",
        nb::make_tuple(base, value_error));
    types.context = make_exception(
        m, "ContextMismatch",
        "Objects that belong to different parameter sets (e.g. a ciphertext decrypted by another context). "
        "Also a builtins.ValueError.",
        nb::make_tuple(base, value_error));
    types.missing_key = make_exception(
        m, "MissingKey",
        "A key the operation needs is not there: no relinearization key, no Galois key for a rotation step, "
        "or no secret key (decrypting with a context made by Context.public()).",
        nb::make_tuple(base));
    types.serialization = make_exception(m, "SerializationError", "Bad, truncated or hostile serialized data.",
                                         nb::make_tuple(base));
    types.overflow = make_exception(
        m, "ModulusOverflow",
        "A decrypted result whose coefficients reach the edge of the modulus: it has most likely wrapped around "
        "it, because the values grew too large for their scale (a product of large values, a scale too close to "
        "the modulus) or too few bits are left at the ciphertext's level. The message says the bound. Also a "
        "builtins.OverflowError.",
        nb::make_tuple(base, nb::handle(PyExc_OverflowError)));

    nb::register_exception_translator([](const std::exception_ptr& p, void*) {
        try {
            std::rethrow_exception(p);
        } catch (const oboro::ParameterError& e) {
            PyErr_SetString(types.parameter, e.what());
        } catch (const oboro::ValueError& e) {
            PyErr_SetString(types.value, e.what());
        } catch (const oboro::LevelMismatch& e) {
            PyErr_SetString(types.level, e.what());
        } catch (const oboro::ScaleMismatch& e) {
            PyErr_SetString(types.scale, e.what());
        } catch (const oboro::ContextMismatch& e) {
            PyErr_SetString(types.context, e.what());
        } catch (const oboro::MissingKey& e) {
            PyErr_SetString(types.missing_key, e.what());
        } catch (const oboro::SerializationError& e) {
            PyErr_SetString(types.serialization, e.what());
        } catch (const oboro::ModulusOverflow& e) {
            PyErr_SetString(types.overflow, e.what());
        } catch (const oboro::Error& e) {
            PyErr_SetString(types.base, e.what());
        }
        // anything else propagates to nanobind's default translators
    });
}

}  // namespace oboro::py
