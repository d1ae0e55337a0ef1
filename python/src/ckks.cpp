// oboro.Context and oboro.Ciphertext: the CKKS API of the Python package.
//
// Everything cryptographic is done by the C++ core (oboro/ckks); this file only holds the keys,
// converts NumPy data, and -- in automatic mode -- decides which core operations run:
//
//   * Standard scales. Level l has a standard scale D_l with D_{l-1} = D_l^2 / q_l exactly (the
//     scale a product of two level-l ciphertexts has after its rescale), anchored at level 0 on
//     the parameters' scale (D_0 = 2^scale_bits) and computed upwards as D_l = sqrt(D_{l-1} q_l),
//     which stays within a fraction of a bit of D_0 when the primes have about scale_bits bits
//     (computing it downwards from the top would double any deviation at every level).
//     Fresh ciphertexts are encrypted at D_level. Every automatic operation lands on the
//     standard scale of its output level: ct * ct -> D_l * D_l / q_l = D_{l-1}; ct * constant or
//     ct * array encodes the constant at t = D_{l-1} * q_l / scale, so that the rescale gives
//     D_{l-1} again; additions of operands at the same level therefore never need any fix-up.
//   * Alignment. Before add/sub/multiply, an operand at a higher level is brought down to the
//     other one's level AND scale in one step (Evaluator::rescale_to: multiply by the integer
//     round(target * q / scale), rescale by q, drop the rest), which costs no level beyond the
//     drop itself and leaves the scales equal to 2^-41 relative; the operation then checks them to
//     2^-40 as always. Operands at the same level with different scales (only possible with
//     user-chosen scales or manual-mode results) are both moved to the standard scale of the
//     level below, which consumes one level.
//   * ct * ct is relinearized and rescaled (fused, Evaluator::multiply_relin_rescale);
//     ct * constant / array is rescaled; ct * int uses multiply_integer (no level).
//
// In manual mode (auto = False) every operator maps to exactly one core operation: nothing is
// relinearized, rescaled or aligned implicitly, and mismatches raise the core's typed errors.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/complex.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "operators.hpp"
#include "state.hpp"
#include "oboro/ckks/ciphertext.hpp"
#include "oboro/ckks/context.hpp"
#include "oboro/ckks/encoder.hpp"
#include "oboro/ckks/encryptor.hpp"
#include "oboro/ckks/evaluator.hpp"
#include "oboro/ckks/keygen.hpp"
#include "oboro/ckks/keys.hpp"
#include "oboro/ckks/parameters.hpp"
#include "oboro/io/serialize.hpp"
#include "oboro/util/error.hpp"
#include "oboro/util/parallel.hpp"

using namespace nanobind::literals;

namespace oboro::py {

// The same tolerance as the evaluator's scale check (2^-40 relative).
bool same_scale(double a, double b) { return ckks::same_scale(a, b); }

std::string log2_str(double x) {
    std::ostringstream os;
    os.setf(std::ios::fixed);
    os.precision(2);
    os << "2^" << std::log2(x);
    return os.str();
}

std::string shape_str(const std::vector<size_t>& shape) {
    std::ostringstream os;
    os << "(";
    for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
    if (shape.size() == 1) os << ",";
    os << ")";
    return os.str();
}

nb::tuple to_tuple(const std::vector<size_t>& v) {
    nb::object t = nb::steal(PyTuple_New(Py_ssize_t(v.size())));
    if (!t) throw nb::python_error();
    for (size_t i = 0; i < v.size(); ++i) PyTuple_SET_ITEM(t.ptr(), Py_ssize_t(i), nb::int_(v[i]).release().ptr());
    return nb::borrow<nb::tuple>(t);
}

size_t next_pow2(size_t x) {
    size_t p = 1;
    while (p < x) p <<= 1;
    return p;
}

std::vector<double> standard_scales(const Context& ctx) {
    const int top = ctx.max_level();
    std::vector<double> up(size_t(top) + 1);
    up[0] = ctx.default_scale();
    for (int l = 1; l <= top; ++l) up[size_t(l)] = std::sqrt(up[size_t(l) - 1] * double(ctx.q()[size_t(l)]));
    // Recomputed downwards with the very operations of multiply + rescale, so that the scale of a
    // product of two standard ciphertexts is bit-for-bit the standard scale of the level below.
    std::vector<double> s(up.size());
    s[size_t(top)] = up[size_t(top)];
    for (int l = top; l >= 1; --l) s[size_t(l) - 1] = s[size_t(l)] * s[size_t(l)] / double(ctx.q()[size_t(l)]);
    return s;
}

StatePtr make_state(const Parameters& params, std::string preset, bool auto_mode) {
    return make_state(Context::create(params), std::move(preset), auto_mode);
}

StatePtr make_state(ContextPtr ctx, std::string preset, bool auto_mode) {
    auto st = std::make_shared<State>();
    st->ctx = std::move(ctx);
    st->encoder = std::make_shared<const Encoder>(st->ctx);
    st->eval = std::make_shared<const Evaluator>(st->ctx);
    st->scales = standard_scales(*st->ctx);
    st->preset = std::move(preset);
    st->auto_mode = auto_mode;
    return st;
}

// ------------------------------------------------------------------------------------------------
// NumPy conversion
// ------------------------------------------------------------------------------------------------

nb::module_ numpy() { return nb::module_::import_("numpy"); }

nb::object numpy_dtype(bool is_complex) { return numpy().attr("dtype")(is_complex ? "complex128" : "float64"); }

std::string py_str(nb::handle h) {
    nb::object s = nb::steal(PyObject_Str(h.ptr()));
    if (!s) throw nb::python_error();
    return nb::cast<std::string>(s);
}

// dtype kind of a NumPy array: 'c' complex, 'f' float, 'i'/'u'/'b' integer/bool; else a TypeError.
bool complex_kind(nb::handle arr, const char* op) {
    const std::string kind = nb::cast<std::string>(arr.attr("dtype").attr("kind"));
    if (kind == "c") return true;
    if (kind == "f" || kind == "i" || kind == "u" || kind == "b") return false;
    throw nb::type_error((std::string(op) + ": expected real or complex numbers, got an array of dtype " +
                          py_str(arr.attr("dtype")))
                             .c_str());
}

std::vector<cplx> flat_complex(nb::handle arr) {
    nb::module_ np = numpy();
    nb::object flat = np.attr("ascontiguousarray")(arr, "dtype"_a = np.attr("complex128")).attr("reshape")(-1);
    auto nd = nb::cast<nb::ndarray<const cplx, nb::ndim<1>, nb::c_contig, nb::device::cpu>>(flat);
    return std::vector<cplx>(nd.data(), nd.data() + nd.shape(0));
}

// np.asarray(values), flattened in C order; `target` (if given) is the shape it must broadcast to.
HostArray to_host(nb::handle values, const char* op, const std::vector<size_t>* target) {
    nb::module_ np = numpy();
    nb::object arr = np.attr("asarray")(values);
    HostArray h;
    h.is_complex = complex_kind(arr, op);
    h.shape = nb::cast<std::vector<size_t>>(arr.attr("shape"));
    if (target) {
        nb::tuple t = to_tuple(*target);
        bool ok = true;
        try {
            ok = nb::cast<std::vector<size_t>>(np.attr("broadcast_shapes")(arr.attr("shape"), t)) == *target;
        } catch (const nb::python_error&) {
            ok = false;
        }
        if (!ok)
            raise<oboro::ValueError>(op, ": a plaintext operand of shape ", shape_str(h.shape),
                                     " does not broadcast to the ciphertext's shape ", shape_str(*target));
        arr = np.attr("broadcast_to")(arr, t);
        h.shape = *target;
    }
    h.values = flat_complex(arr);
    return h;
}

// A NumPy array of `shape` from the first prod(shape) values; real (float64) unless is_complex.
nb::object to_numpy(const std::vector<cplx>& v, const std::vector<size_t>& shape, bool is_complex) {
    const size_t count = shape_size(shape);
    if (is_complex) {
        auto* data = new cplx[count];
        std::copy(v.begin(), v.begin() + long(count), data);
        nb::capsule owner(data, [](void* p) noexcept { delete[] static_cast<cplx*>(p); });
        return nb::ndarray<nb::numpy, cplx>(data, shape.size(), shape.data(), owner).cast();
    }
    auto* data = new double[count];
    for (size_t i = 0; i < count; ++i) data[i] = v[i].real();
    nb::capsule owner(data, [](void* p) noexcept { delete[] static_cast<double*>(p); });
    return nb::ndarray<nb::numpy, double>(data, shape.size(), shape.data(), owner).cast();
}

// ------------------------------------------------------------------------------------------------
// Operands of the arithmetic operators
// ------------------------------------------------------------------------------------------------

enum class Kind { ciphertext, plaintext, integer, real, complex, array, unsupported };

struct Operand {
    Kind kind = Kind::unsupported;
    const PyCiphertext* ct = nullptr;
    const PyPlaintext* pt = nullptr;
    int64_t i = 0;
    double r = 0;
    cplx c{};
    HostArray arr;  // kind == array: broadcast to the ciphertext's shape
};

Operand classify(nb::handle o, const PyCiphertext& self, const char* op) {
    Operand out;
    if (nb::isinstance<PyCiphertext>(o)) {
        out.kind = Kind::ciphertext;
        out.ct = &nb::cast<const PyCiphertext&>(o);
        return out;
    }
    if (nb::isinstance<PyPlaintext>(o)) {
        out.kind = Kind::plaintext;
        out.pt = &nb::cast<const PyPlaintext&>(o);
        return out;
    }
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
    nb::module_ np = numpy();
    nb::object arr;
    try {
        arr = np.attr("asarray")(o);
    } catch (const nb::python_error&) {
        return out;  // unsupported
    }
    const std::string kind = nb::cast<std::string>(arr.attr("dtype").attr("kind"));
    if (kind != "c" && kind != "f" && kind != "i" && kind != "u" && kind != "b") return out;
    if (nb::cast<size_t>(arr.attr("ndim")) == 0) {  // NumPy scalar or 0-d array
        if (kind == "c") {
            out.kind = Kind::complex;
            out.c = nb::cast<cplx>(arr.attr("item")());
        } else if (kind == "f") {
            out.kind = Kind::real;
            out.r = nb::cast<double>(arr.attr("item")());
        } else {
            nb::object item = arr.attr("item")();
            return classify(item, self, op);
        }
        return out;
    }
    out.kind = Kind::array;
    out.arr = to_host(arr, op, &self.shape);
    return out;
}

// ------------------------------------------------------------------------------------------------
// The operations (C++ data only: called without the GIL)
// ------------------------------------------------------------------------------------------------

// Brings x down to (level, scale) exactly (to 2^-41 relative): a drop when the scale already
// matches, else a drop to level + 1 and rescale_to. Throws ScaleMismatch when the scale cannot be
// reached exactly with one rescale (x at `level` already, or a correction factor too small to be
// exact as an integer).
void bring_to(const State& s, Ciphertext& x, int level, double scale, const char* op) {
    const Evaluator& ev = *s.eval;
    if (same_scale(x.scale(), scale)) {
        if (x.level() > level) ev.drop_to_level_inplace(x, level);
        return;
    }
    if (x.level() <= level)
        raise<ScaleMismatch>(op, ": operand at ", describe(x), " cannot be brought to scale ", log2_str(scale),
                             " at level ", level, " (that needs a rescale, i.e. a level above ", level, ")");
    const double q = double(s.ctx->q()[size_t(level) + 1]);
    const double factor = std::round(scale * q / x.scale());
    if (!(factor >= 1) || !std::isfinite(factor) ||
        std::fabs(x.scale() * factor / q - scale) > 0x1p-41 * scale)
        raise<ScaleMismatch>(op, ": operand at ", describe(x), " cannot be brought to scale ", log2_str(scale),
                             " at level ", level, " exactly (the correction factor ", log2_str(scale * q / x.scale()),
                             " is too small to be exact); rescale it first or use matching scales");
    if (x.level() > level + 1) ev.drop_to_level_inplace(x, level + 1);
    ev.rescale_to_inplace(x, level, scale);
}

// Automatic alignment of two ciphertexts: on return a and *b are at the same level, and (if
// match_scales) at the same scale. a is modified only when it must change; b is copied into
// `storage` when it must change. For a multiplication (match_scales = false) the scale of the
// higher operand is still matched when that is exact, so that products of standard ciphertexts
// stay standard; otherwise it is just dropped.
// Whether an addition of a and b needs no alignment: the same level and scale.
bool addable_as_is(const Ciphertext& a, const Ciphertext& b) {
    return a.level() == b.level() && same_scale(a.scale(), b.scale());
}

void align(const State& s, Ciphertext& a, const Ciphertext*& b, Ciphertext& storage, bool match_scales,
           const char* op) {
    const Evaluator& ev = *s.eval;
    if (a.level() == b->level()) {
        if (!match_scales || addable_as_is(a, *b)) return;
        const int l = a.level();
        if (l == 0)
            raise<ScaleMismatch>(op, ": operand 'a' has ", describe(a), " but operand 'b' has ", describe(*b),
                                 "; aligning the scales needs a rescale and no level is left");
        Ciphertext a2 = a;
        storage = *b;
        bring_to(s, a2, l - 1, s.scales[size_t(l) - 1], op);
        bring_to(s, storage, l - 1, s.scales[size_t(l) - 1], op);
        a = std::move(a2);
        b = &storage;
        return;
    }
    const bool a_higher = a.level() > b->level();
    if (!a_higher) {
        storage = *b;
        b = &storage;
    }
    Ciphertext& hi = a_higher ? a : storage;
    const Ciphertext& lo = a_higher ? *b : a;
    Ciphertext tmp = hi;
    if (match_scales) {
        bring_to(s, tmp, lo.level(), lo.scale(), op);
    } else {
        try {
            bring_to(s, tmp, lo.level(), lo.scale(), op);
        } catch (const ScaleMismatch&) {
            tmp = hi;
            ev.drop_to_level_inplace(tmp, lo.level());
        }
    }
    hi = std::move(tmp);
}

void relinearize_if_needed(const State& s, Ciphertext& x, const char* op) {
    if (x.size() <= 2) return;
    if (!s.rk)
        raise<MissingKey>(op, ": the operand (", describe(x), ") has ", x.size(),
                          " polynomials and the context has no relinearization key; call keygen(relin=True)");
    s.eval->relinearize_inplace(x, *s.rk);
}

// ---- addition and subtraction ----

void add_ct(const State& s, Ciphertext& a, const Ciphertext& b_in, bool sub) {
    const char* op = sub ? "sub" : "add";
    const Ciphertext* b = &b_in;
    Ciphertext storage;
    if (s.auto_mode) align(s, a, b, storage, true, op);
    if (sub) s.eval->sub_inplace(a, *b);
    else s.eval->add_inplace(a, *b);
}

// The plaintext of `values` (size <= slots) at the ciphertext's level and slots.
Plaintext encode_at(const State& s, const std::vector<cplx>& values, const Ciphertext& a, double scale) {
    return s.encoder->encode(values, a.level(), scale, a.slots());
}

// c added to each of the `count` values of the ciphertext (the padding slots stay untouched).
void add_constant(const State& s, Ciphertext& a, size_t count, cplx c, bool sub) {
    if (sub) c = -c;
    if (c.imag() == 0 && count == a.slots()) {
        s.eval->add_inplace(a, c.real());
        return;
    }
    const Plaintext pt = encode_at(s, std::vector<cplx>(count, c), a, a.scale());
    s.eval->add_inplace(a, pt);
}

void add_array(const State& s, Ciphertext& a, const std::vector<cplx>& values, bool sub) {
    const Plaintext pt = encode_at(s, values, a, a.scale());
    if (sub) s.eval->sub_inplace(a, pt);
    else s.eval->add_inplace(a, pt);
}

// ---- multiplication ----

void check_level_for_multiply(int level, const std::string& operand, const char* op) {
    if (level == 0)
        raise<LevelMismatch>(op, ": the operand is at ", operand,
                             "; no level is left for the rescale after a multiplication (use parameters with more "
                             "levels, or fewer multiplications)");
}

void check_level_for_multiply(const Ciphertext& a, const char* op) { check_level_for_multiply(a.level(), describe(a), op); }

void check_product_scale(const State& s, const Ciphertext& a, double scale_b, const char* op) {
    ckks::check_product_scale(*s.ctx, op, a.level(), a.scale(), scale_b);
}

double product_scale(const State& s, int level, double scale, const std::string& operand, const char* op) {
    check_level_for_multiply(level, operand, op);
    const double t = s.scales[size_t(level) - 1] * double(s.ctx->q()[size_t(level)]) / scale;
    if (!(t >= 0x1p20))
        raise<ScaleMismatch>(op, ": the operand's scale (", operand,
                             ") is too large for an automatic multiplication (a constant would be encoded at scale ",
                             log2_str(t), "); rescale it first");
    ckks::check_product_scale(*s.ctx, op, level, scale, t);
    return t;
}

// Automatic mode: the plaintext scale t that makes the product land on the standard scale of the
// level below after the rescale.
double product_scale(const State& s, const Ciphertext& a, const char* op) {
    return product_scale(s, a.level(), a.scale(), describe(a), op);
}

void multiply_ct(const State& s, Ciphertext& a, const Ciphertext& b_in) {
    const Evaluator& ev = *s.eval;
    if (!s.auto_mode) {
        ev.multiply_inplace(a, b_in);
        return;
    }
    const Ciphertext* b = &b_in;
    Ciphertext storage;
    if (b->size() > 2) {
        storage = *b;
        relinearize_if_needed(s, storage, "multiply");
        b = &storage;
    }
    Ciphertext a2;
    Ciphertext* pa = &a;
    if (a.size() > 2) {
        a2 = a;
        relinearize_if_needed(s, a2, "multiply");
        pa = &a2;
    }
    Ciphertext storage2;
    align(s, *pa, b, storage2, false, "multiply");
    check_level_for_multiply(*pa, "multiply");
    if (!s.rk)
        raise<MissingKey>("multiply: the context has no relinearization key; call keygen(relin=True) first (or use "
                          "manual mode, auto = False, to keep the size-3 product)");
    a = ev.multiply_relin_rescale(*pa, *b, *s.rk);
}

void multiply_integer(const State& s, Ciphertext& a, int64_t c) { s.eval->multiply_integer_inplace(a, c); }

void multiply_constant(const State& s, Ciphertext& a, cplx c) {
    const Evaluator& ev = *s.eval;
    if (!s.auto_mode) {
        if (c.imag() == 0) {
            ev.multiply_inplace(a, c.real());
        } else {
            const double t = double(s.ctx->q()[size_t(a.level())]);
            check_product_scale(s, a, t, "multiply");
            ev.multiply_inplace(a, s.encoder->encode_constant(c, a.level(), t, a.slots()));
        }
        return;
    }
    const double t = product_scale(s, a, "multiply");
    const double v = std::round(c.real() * t);
    if (c.imag() == 0 && std::isfinite(v) && std::fabs(v) < 0x1p62) {
        // The constant encoded at scale t is the integer round(c * t): multiply by it and label.
        ev.multiply_integer_inplace(a, int64_t(v));
        a.set_scale(a.scale() * t);
    } else {
        ev.multiply_inplace(a, s.encoder->encode_constant(c, a.level(), t, a.slots()));
    }
    ev.rescale_inplace(a);
}

void multiply_array(const State& s, Ciphertext& a, const std::vector<cplx>& values) {
    const Evaluator& ev = *s.eval;
    if (!s.auto_mode) {
        const double t = double(s.ctx->q()[size_t(a.level())]);
        check_product_scale(s, a, t, "multiply");
        ev.multiply_inplace(a, encode_at(s, values, a, t));
        return;
    }
    const double t = product_scale(s, a, "multiply");
    ev.multiply_inplace(a, encode_at(s, values, a, t));
    ev.rescale_inplace(a);
}

// ---- rotations ----

std::vector<int64_t> naf(int64_t k) {
    std::vector<int64_t> out;
    int64_t p = 1;
    while (k != 0) {
        if (k & 1) {
            const int64_t z = 2 - (((k % 4) + 4) % 4);
            out.push_back(z * p);
            k -= z;
        }
        k /= 2;
        p *= 2;
    }
    return out;
}

std::optional<int64_t> keyed_step(const State& s, int64_t step, int64_t slots) {
    const GaloisKeys& gk = galois_keys(s);
    step %= slots;
    if (step == 0) return int64_t(0);
    if (gk.has(s.ctx->galois_element(step))) return step;
    const int64_t alt = step > 0 ? step - slots : step + slots;
    if (gk.has(s.ctx->galois_element(alt))) return alt;
    return std::nullopt;
}

std::vector<int64_t> rotation_plan(const State& s, int64_t k, int64_t slots) {
    const int64_t r = ((k % slots) + slots) % slots;
    if (r == 0) return {};
    auto keyed = [&](int64_t step) { return keyed_step(s, step, slots); };
    if (auto d = keyed(r)) return {*d};
    // Decompose into signed powers of two (NAF) that have keys, e.g. 3 = 4 - 1.
    std::optional<std::vector<int64_t>> best;
    for (int64_t cand : {r, r - slots}) {
        std::vector<int64_t> steps;
        bool ok = true;
        for (int64_t digit : naf(cand)) {
            auto d = keyed(digit);
            if (!d) {
                ok = false;
                break;
            }
            if (*d != 0) steps.push_back(*d);
        }
        if (ok && (!best || steps.size() < best->size())) best = steps;
    }
    if (!best)
        raise<MissingKey>("rotate: no Galois key for a rotation by ", k, " (", r, " modulo the ", slots,
                          " slots), nor for a decomposition into rotations by signed powers of two; generate it "
                          "with keygen(rotations=[",
                          k, "])");
    return *best;
}

void rotate(const State& s, Ciphertext& a, int64_t k) {
    const Evaluator& ev = *s.eval;
    const GaloisKeys& gk = galois_keys(s);
    if (!s.auto_mode) {
        ev.rotate_inplace(a, k, gk);
        return;
    }
    relinearize_if_needed(s, a, "rotate");
    for (int64_t d : rotation_plan(s, k, int64_t(a.slots()))) ev.rotate_inplace(a, d, gk);
}

// ------------------------------------------------------------------------------------------------
// Python-facing helpers
// ------------------------------------------------------------------------------------------------

// Contexts of the same parameters share the core's context id, so the core cannot tell their keys
// apart; the key id (a fingerprint of the public key) identifies the key set here: a context, its
// public() copy and every context deserialized from them share it.
void check_same_keys(const State& a, const State& b, const char* op) {
    if (a.key_id != b.key_id)
        raise<ContextMismatch>(op, ": the operands were encrypted under different keys (by different contexts); "
                               "a ciphertext can only be combined with ciphertexts of the context that encrypted it "
                               "or of copies of it (public(), serialize/deserialize)");
}



// out = a + b (or a - b) out of place, where no alignment is needed (the common case); else a copy
// of a, aligned and added in place.
void add_ct_into(const State& s, Ciphertext& out, const Ciphertext& a, const Ciphertext& b, bool sub) {
    if (!s.auto_mode || addable_as_is(a, b)) {
        out = sub ? s.eval->sub(a, b) : s.eval->add(a, b);
        return;
    }
    out = a;
    add_ct(s, out, b, sub);
}

// Applies a binary operator on `target`: self for a += b; for a + b a result_shell of self, whose
// data is self's copy, or written out of place. Returns false when the operand type is not
// supported (the caller returns NotImplemented).
bool apply(PyCiphertext& target, const PyCiphertext& self, nb::handle other, BinOp op) {
    const char* name = op == BinOp::mul || op == BinOp::div ? "multiply" : (op == BinOp::add ? "add" : "sub");
    Operand o = classify(other, self, name);
    if (o.kind == Kind::unsupported) return false;
    const State& s = *self.st;
    const size_t count = self.count();
    bool is_complex = self.is_complex;
    const bool out_of_place =
        &target != &self && o.kind == Kind::ciphertext && (op == BinOp::add || op == BinOp::sub);
    if (&target != &self && !out_of_place) target.ct = self.ct;  // a result shell: work on a copy
    switch (o.kind) {
        case Kind::ciphertext: {
            if (op == BinOp::div) return false;
            if (o.ct->shape != self.shape)
                raise<oboro::ValueError>(name, ": the ciphertexts have different shapes ", shape_str(self.shape),
                                         " and ", shape_str(o.ct->shape));
            check_same_keys(s, *o.ct->st, name);
            is_complex = is_complex || o.ct->is_complex;
            const Ciphertext& b = o.ct->ct;
            nb::gil_scoped_release release;
            if (op == BinOp::mul) {
                multiply_ct(s, target.ct, b);
            } else if (op == BinOp::rsub) {
                s.eval->negate_inplace(target.ct);
                add_ct(s, target.ct, b, false);
            } else if (out_of_place) {
                add_ct_into(s, target.ct, self.ct, b, op == BinOp::sub);
            } else {
                add_ct(s, target.ct, b, op == BinOp::sub);
            }
            break;
        }
        case Kind::plaintext: {
            if (op == BinOp::div) return false;
            if (o.pt->shape != self.shape)
                raise<oboro::ValueError>(name, ": the plaintext's shape ", shape_str(o.pt->shape),
                                         " differs from the ciphertext's ", shape_str(self.shape));
            if (o.pt->pt.context_id() != s.ctx->id())
                raise<ContextMismatch>(name, ": the plaintext belongs to another parameter set");
            is_complex = is_complex || o.pt->is_complex;
            const Plaintext& b = o.pt->pt;
            nb::gil_scoped_release release;
            plaintext_op(s, target.ct, b, op);
            break;
        }
        case Kind::integer:
        case Kind::real:
        case Kind::complex: {
            cplx c = o.kind == Kind::integer ? cplx(double(o.i), 0) : o.kind == Kind::real ? cplx(o.r, 0) : o.c;
            is_complex = is_complex || o.kind == Kind::complex;
            if (op == BinOp::div) {
                if (c == cplx(0, 0)) {
                    PyErr_SetString(PyExc_ZeroDivisionError, "division of a ciphertext by zero");
                    throw nb::python_error();
                }
                c = cplx(1, 0) / c;
            }
            nb::gil_scoped_release release;
            if (op == BinOp::mul && o.kind == Kind::integer) {
                multiply_integer(s, target.ct, o.i);
            } else if (op == BinOp::mul || op == BinOp::div) {
                multiply_constant(s, target.ct, c);
            } else if (op == BinOp::rsub) {
                s.eval->negate_inplace(target.ct);
                add_constant(s, target.ct, count, c, false);
            } else {
                add_constant(s, target.ct, count, c, op == BinOp::sub);
            }
            break;
        }
        case Kind::array: {
            is_complex = is_complex || o.arr.is_complex;
            std::vector<cplx> v = std::move(o.arr.values);
            if (op == BinOp::div)
                for (auto& x : v) x = cplx(1, 0) / x;
            nb::gil_scoped_release release;
            if (op == BinOp::mul || op == BinOp::div) {
                multiply_array(s, target.ct, v);
            } else if (op == BinOp::rsub) {
                s.eval->negate_inplace(target.ct);
                add_array(s, target.ct, v, false);
            } else {
                add_array(s, target.ct, v, op == BinOp::sub);
            }
            break;
        }
        case Kind::unsupported: return false;
    }
    target.is_complex = is_complex;
    return true;
}

// ------------------------------------------------------------------------------------------------
// Context methods
// ------------------------------------------------------------------------------------------------

std::optional<int> security_bits(SecurityLevel l) {
    switch (l) {
        case SecurityLevel::k128: return 128;
        case SecurityLevel::k192: return 192;
        case SecurityLevel::k256: return 256;
        case SecurityLevel::none: return std::nullopt;
    }
    return std::nullopt;
}

SecurityLevel security_level(std::optional<int> bits) {
    if (!bits) return SecurityLevel::none;
    switch (*bits) {
        case 128: return SecurityLevel::k128;
        case 192: return SecurityLevel::k192;
        case 256: return SecurityLevel::k256;
        default:
            raise<ParameterError>("parameters: security = ", *bits,
                                  " is not supported (use 128, 192, 256, or None for no check: INSECURE)");
    }
}

std::vector<int64_t> default_rotations(size_t slots) {
    std::vector<int64_t> steps;
    for (size_t p = 1; p < slots; p <<= 1) {
        steps.push_back(int64_t(p));
        steps.push_back(-int64_t(p));
    }
    return steps;
}

void keygen(State& s, const std::optional<std::vector<int64_t>>& rotations, bool conjugation, bool relin) {
    if (!s.sk && s.pk)
        raise<MissingKey>("keygen: this context has no secret key (it was made by public()); keys can only be "
                          "generated by the context that holds the secret key");
    const std::vector<int64_t> steps = rotations ? *rotations : default_rotations(s.ctx->max_slots());
    std::shared_ptr<const SecretKey> sk = s.sk;
    std::shared_ptr<const PublicKey> pk = s.pk;
    std::shared_ptr<const RelinKey> rk = s.rk;
    std::shared_ptr<const GaloisKeys> gk = s.gk;
    {
        nb::gil_scoped_release release;
        std::optional<KeyGenerator> kg;
        if (!sk) {
            kg.emplace(s.ctx);
            sk = std::make_shared<const SecretKey>(kg->secret_key());
            pk = std::make_shared<const PublicKey>(kg->public_key());
        } else {
            kg.emplace(s.ctx, *sk);
        }
        if (relin && !rk) rk = std::make_shared<const RelinKey>(kg->relin_key());
        bool missing = conjugation && !(gk && gk->has(s.ctx->conjugation_element()));
        for (int64_t step : steps) {
            const uint64_t g = s.ctx->galois_element(step);
            if (g != 1 && !(gk && gk->has(g))) missing = true;
        }
        if (missing) {
            GaloisKeys keys = gk ? *gk : GaloisKeys{};
            kg->add_galois_keys(keys, steps, conjugation);
            gk = std::make_shared<const GaloisKeys>(std::move(keys));
        }
    }
    const bool new_secret = sk != s.sk;
    s.sk = sk;
    s.pk = pk;
    s.rk = rk;
    s.gk = gk;
    for (int64_t step : steps)
        if (s.ctx->galois_element(step) != 1) s.rotations.insert(step);
    s.conjugation = s.conjugation || conjugation;
    if (new_secret) refresh_crypto(s);
}

void refresh_crypto(State& s) {
    // A state's public key is set once (first keygen or deserialize) and never replaced, so its
    // fingerprint is hashed once; public() copies inherit it.
    if (s.pk && s.key_id == 0) s.key_id = io::key_id(*s.pk);
    s.decryptor.reset();
    s.encryptor.reset();
    if (s.sk) {
        s.encryptor = std::make_shared<Encryptor>(s.ctx, *s.sk);
        s.decryptor = std::make_shared<const Decryptor>(s.ctx, *s.sk);
    } else if (s.pk) {
        s.encryptor = std::make_shared<Encryptor>(s.ctx, *s.pk);
    }
}

StatePtr public_copy(const State& s) {
    if (!s.pk) raise<MissingKey>("public: the context has no keys yet; call keygen() first");
    auto out = std::make_shared<State>(s);
    out->sk.reset();
    refresh_crypto(*out);
    return out;
}

Encoding resolve_encoding(const State& s, const std::vector<size_t>& shape, std::optional<int> level,
                          std::optional<double> scale, std::optional<size_t> slots, const char* op) {
    const size_t count = shape_size(shape), max_slots = s.ctx->max_slots();
    if (count == 0) raise<oboro::ValueError>(op, ": the array is empty (shape ", shape_str(shape), ")");
    if (count > max_slots)
        raise<oboro::ValueError>(op, ": ", count, " values (shape ", shape_str(shape), ") do not fit into the ",
                                 max_slots, " slots of this context (N = 2^", s.ctx->log_n(), ")");
    const int lvl = level ? *level : s.ctx->max_level();
    if (lvl < 0 || lvl > s.ctx->max_level())
        raise<LevelMismatch>(op, ": level ", lvl, " is outside 0..", s.ctx->max_level());
    if (slots && (*slots < count || !is_power_of_two(*slots) || *slots > max_slots))
        raise<oboro::ValueError>(op, ": slots = ", *slots, " must be a power of two in ", next_pow2(count), "..",
                                 max_slots, " for ", count, " values");
    return Encoding{lvl, scale ? *scale : s.scales[size_t(lvl)], slots ? *slots : next_pow2(count)};
}

PyPlaintext encode_array(const StatePtr& st, nb::handle values, std::optional<int> level,
                         std::optional<double> scale, std::optional<size_t> slots, const char* op) {
    HostArray h = to_host(values, op);
    const Encoding e = resolve_encoding(*st, h.shape, level, scale, slots, op);
    return PyPlaintext{st, st->encoder->encode(h.values, e.level, e.scale, e.slots), std::move(h.shape), h.is_complex};
}

PyCiphertext encrypt(const StatePtr& st, nb::handle values, std::optional<int> level, std::optional<double> scale,
                     std::optional<size_t> slots) {
    if (!st->encryptor) raise<MissingKey>("encrypt: the context has no keys yet; call keygen() first");
    PyPlaintext p = encode_array(st, values, level, scale, slots, "encrypt");
    Ciphertext ct = st->encryptor->encrypt(p.pt);  // with the GIL: the encryptor's generator is not thread-safe
    return PyCiphertext{st, std::move(ct), std::move(p.shape), p.is_complex};
}

nb::object decrypt(const State& s, const PyCiphertext& c) {
    if (!s.decryptor)
        raise<MissingKey>("decrypt: this context has no secret key (it was made by public(), or keygen() was not "
                          "called); only the context that holds the secret key can decrypt");
    if (c.st->ctx->id() == s.ctx->id() && c.st->key_id != s.key_id)
        raise<ContextMismatch>("decrypt: the ciphertext was encrypted under other keys (by another context with the "
                               "same parameters); it can only be decrypted by the context that holds its secret key");
    std::vector<cplx> v;
    {
        nb::gil_scoped_release release;
        v = s.decryptor->decrypt_decode(c.ct, *s.encoder);
    }
    return to_numpy(v, c.shape, c.is_complex);
}

std::string keys_summary(const State& s) {
    std::vector<std::string> parts;
    if (s.sk) parts.push_back("secret");
    if (s.pk) parts.push_back("public");
    if (s.rk) parts.push_back("relin");
    if (!s.rotations.empty()) parts.push_back(std::to_string(s.rotations.size()) + " rotations");
    if (s.conjugation) parts.push_back("conjugation");
    if (parts.empty()) return "none (call keygen())";
    std::string out;
    for (size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
    return out;
}

std::string bits_list(const std::vector<int>& bits) {
    std::string out;
    for (size_t i = 0; i < bits.size(); ++i) out += (i ? ", " : "") + std::to_string(bits[i]);
    return out;
}

std::string context_describe(const State& s) {
    const Parameters& p = s.ctx->params();
    std::ostringstream os;
    os << "CKKS parameters" << (s.preset.empty() ? "" : " " + s.preset) << ": N = 2^" << p.log_n << " ("
       << s.ctx->max_slots() << " slots), " << s.ctx->max_level() << " levels, log2(QP) = " << p.log_qp();
    if (p.security == SecurityLevel::none) {
        os << ", security: none (INSECURE, explicitly requested)";
    } else {
        os << " (<= " << max_log_qp(p.log_n, p.security) << " for " << to_string(p.security) << " security)";
    }
    os << ", dnum = " << s.ctx->dnum() << "\n";
    os << "  ciphertext primes: " << bits_list(p.q_bits) << " bits; special primes: " << bits_list(p.p_bits)
       << " bits\n";
    os << "  scale: " << log2_str(s.scales.back()) << " at the top level, " << log2_str(s.scales.front())
       << " at level 0\n";
    os << "  keys: " << keys_summary(s) << "; mode: " << (s.auto_mode ? "automatic" : "manual");
    return os.str();
}

std::string context_repr(const State& s) {
    const Parameters& p = s.ctx->params();
    std::ostringstream os;
    os << "<oboro.Context " << (s.preset.empty() ? "" : s.preset + ": ") << "N=2^" << p.log_n
       << " slots=" << s.ctx->max_slots() << " levels=" << s.ctx->max_level() << " log2(QP)=" << p.log_qp()
       << " dnum=" << s.ctx->dnum() << " security=";
    if (auto b = security_bits(p.security)) os << *b;
    else os << "none";
    os << " keys=[" << keys_summary(s) << "] " << (s.auto_mode ? "auto" : "manual") << ">";
    return os.str();
}

std::string ciphertext_repr(const PyCiphertext& c) {
    std::ostringstream os;
    os << "<oboro.Ciphertext shape=" << shape_str(c.shape) << " " << (c.is_complex ? "complex128" : "float64")
       << " level=" << c.ct.level() << " scale=" << log2_str(c.ct.scale()) << " slots=" << c.ct.slots();
    if (c.ct.size() != 2) os << " polys=" << c.ct.size();
    os << ">";
    return os.str();
}

nb::dict preset_info(const std::string& name) {
    const Parameters p = Parameters::preset(name);
    nb::dict d;
    d["name"] = name;
    d["log_n"] = p.log_n;
    d["n"] = p.n();
    d["slots"] = p.slots();
    d["levels"] = p.max_level();
    d["moduli_bits"] = p.q_bits;
    d["special_bits"] = p.p_bits;
    d["dnum"] = p.effective_dnum();
    d["log_qp"] = p.log_qp();
    d["scale_bits"] = std::log2(p.scale);
    d["security"] = security_bits(p.security);
    nb::dict limits;
    for (SecurityLevel l : {SecurityLevel::k128, SecurityLevel::k192, SecurityLevel::k256}) {
        const int m = max_log_qp(p.log_n, l);
        limits[nb::int_(*security_bits(l))] = m ? nb::object(nb::int_(m)) : nb::none();
    }
    d["max_log_qp"] = limits;
    return d;
}

// ------------------------------------------------------------------------------------------------
// Registration
// ------------------------------------------------------------------------------------------------

static const char* const kContextDoc = R"doc(A CKKS context: the parameters, the keys, and the mode of evaluation.

Create one from a preset or from explicit parameters, generate keys, then encrypt, compute with
the ciphertexts' operators, and decrypt::

    ctx = oboro.Context.from_preset("S2")         # or "S1", "S3", "S4"
    ctx.keygen(rotations=[1, -1, 4])              # keys live in the context
    ct = ctx.encrypt(np.array([0.5, -1.25]))      # -> oboro.Ciphertext
    y = (ct * ct + 2.0 * ct).rotate(4)            # automatic relinearize / rescale / alignment
    x = ctx.decrypt(y)                            # -> numpy.ndarray of the original shape

Explicit parameters: Context(log_n, moduli_bits, special_bits, scale_bits=40, dnum=None,
security=128, hamming_weight=None, auto=True). moduli_bits are the bit sizes of the ciphertext
primes q_0 (first, usually 60) .. q_L (one level per prime after the first); special_bits those of
the special primes P of hybrid key switching; dnum the number of key-switching digits (None:
the fewest that the special primes allow); security 128, 192 or 256 checks log2(QP) against the
HomomorphicEncryption.org standard (ParameterError if it is exceeded), None disables the check
(INSECURE); hamming_weight selects a sparse ternary secret with that many non-zero coefficients.

Modes. In automatic mode (auto=True, the default) the ciphertext operators relinearize and
rescale after multiplications and align levels and scales before additions. Every level l has a
standard scale D_l (scale_at_level) with D_{l-1} = D_l^2 / q_l, anchored at level 0 on
2^scale_bits; fresh ciphertexts are at the standard scale of their level and every automatic
operation lands on the standard scale of its output level, so operands at the same level always
match. An operand at a higher level is brought down to the other's level and exact scale in one
step (multiply by an integer and rescale: no level beyond the drop). In manual mode (auto=False,
or ctx.auto = False at any time; it applies to all ciphertexts of the context) each operator is one
core operation: multiplications leave a size-3, unrescaled ciphertext, and mismatched levels or
scales raise LevelMismatch / ScaleMismatch; use relinearize(), rescale(), drop_to_level().

A context made by public() holds no secret key: it encrypts with the public key and evaluates,
but decrypt() raises MissingKey.)doc";

static const char* const kCiphertextDoc = R"doc(An encrypted array (CKKS ciphertext).

Made by Context.encrypt(); holds the shape and dtype (real or complex) of the encrypted array, and
its level, exact scale and slot count. The values occupy the first `size` slots (C order); the
slot count is the smallest power of two >= size unless encrypt(slots=...) says otherwise, and
rotate() acts on the whole slot vector (np.roll semantics when size == slots).

Operators (automatic mode relinearizes, rescales and aligns as needed; manual mode raises on any
mismatch):
    ct + x, x + ct, ct - x, x - ct, -ct   x: Ciphertext (same shape), int, float, complex, or an
                                          array that broadcasts to ct.shape
    ct * x, x * ct                        ct * ct relinearizes and rescales (one level);
                                          ct * float/complex/array rescales (one level);
                                          ct * int is exact and consumes no level
    ct / c                                c: a non-zero scalar or array (multiplication by 1/c)
    ct += x, ct -= x, ct *= x             in place (the core's *_inplace operations)
Scalars are added to the `size` values only (padding slots stay as they are).)doc";

void register_ckks(nb::module_& m) {
    m.def("presets", &Parameters::preset_names, "The names of the parameter presets: ['S1', 'S2', 'S3', 'S4'].");
    m.def("preset_info", &preset_info, "name"_a,
          nb::sig("def preset_info(name: str) -> dict[str, typing.Any]"),
          "The parameters of a preset without building its context: name, log_n, n, slots, levels, moduli_bits, "
          "special_bits, dnum, log_qp, scale_bits, security, and max_log_qp (the HE-standard limit of log2(QP) for "
          "128/192/256-bit security at this N; None where the standard has no entry). Unknown names raise "
          "ParameterError.");
    m.def("set_num_threads", &oboro::set_num_threads, "n"_a,
          "Sets the number of worker threads of the C++ core (default: the hardware concurrency, or the "
          "environment variable OBORO_NUM_THREADS).");
    m.def("num_threads", &oboro::num_threads, "The number of worker threads of the C++ core.");

    nb::class_<PyContext> ctx(m, "Context", kContextDoc);
    ctx.def(
           "__init__",
           [](PyContext* self, int log_n, std::vector<int> moduli_bits, std::vector<int> special_bits,
              double scale_bits, std::optional<int> dnum, std::optional<int> security,
              std::optional<int> hamming_weight, bool auto_mode) {
               Parameters p;
               p.log_n = log_n;
               p.q_bits = std::move(moduli_bits);
               p.p_bits = std::move(special_bits);
               p.dnum = dnum ? *dnum : 0;
               if (dnum && *dnum <= 0)
                   raise<ParameterError>("parameters: dnum = ", *dnum, " must be positive (or None for automatic)");
               if (!(scale_bits >= 1 && scale_bits <= 120))
                   raise<ParameterError>("parameters: scale_bits = ", scale_bits, " must be in 1..120");
               p.scale = std::exp2(scale_bits);
               p.security = security_level(security);
               if (hamming_weight) {
                   p.secret = SecretDistribution::sparse_ternary;
                   p.hamming_weight = *hamming_weight;
               }
               StatePtr st;
               {
                   nb::gil_scoped_release release;
                   st = make_state(p, "", auto_mode);
               }
               new (self) PyContext{std::move(st)};
           },
           "log_n"_a, "moduli_bits"_a, "special_bits"_a, "scale_bits"_a = 40.0, "dnum"_a = nb::none(),
           "security"_a.none() = 128, "hamming_weight"_a = nb::none(), "auto"_a = true,
           nb::sig("def __init__(self, log_n: int, moduli_bits: collections.abc.Sequence[int], "
                   "special_bits: collections.abc.Sequence[int], scale_bits: float = 40, dnum: int | None = None, "
                   "security: int | None = 128, hamming_weight: int | None = None, auto: bool = True) -> None"),
           "A context for explicit parameters: ring degree N = 2^log_n, ciphertext primes of moduli_bits bits "
           "(q_0 first), special primes of special_bits bits, default scale 2^scale_bits, dnum key-switching "
           "digits (None: automatic), security 128/192/256 (None: no check, INSECURE), optional sparse secret "
           "(hamming_weight), automatic or manual mode. Raises ParameterError for invalid or insecure parameters.")
        .def_static(
            "from_preset",
            [](const std::string& name, bool auto_mode) {
                const Parameters p = Parameters::preset(name);
                StatePtr st;
                {
                    nb::gil_scoped_release release;
                    st = make_state(p, name, auto_mode);
                }
                return PyContext{std::move(st)};
            },
            "name"_a, "auto"_a = true,
            "The context of a parameter preset: 'S1' (N=2^13, 1 level), 'S2' (N=2^14, 3 levels), 'S3' (N=2^15, "
            "9 levels), 'S4' (N=2^16, 20 levels); see oboro.preset_info(). Unknown names raise ParameterError.")
        .def_prop_ro("slots", [](const PyContext& c) { return c.st->ctx->max_slots(); },
                     "Maximum number of values per ciphertext: N/2.")
        .def_prop_ro("max_level", [](const PyContext& c) { return c.st->ctx->max_level(); },
                     "Level of fresh ciphertexts: the number of rescales (multiplications) available.")
        .def_prop_ro("log_n", [](const PyContext& c) { return c.st->ctx->log_n(); }, "log2 of the ring degree N.")
        .def_prop_ro("n", [](const PyContext& c) { return c.st->ctx->n(); }, "The ring degree N.")
        .def_prop_ro("scale", [](const PyContext& c) { return c.st->scales.back(); },
                     "Scale of fresh ciphertexts at the top level: the standard scale of that level (see "
                     "scale_at_level), within a fraction of a bit of 2^scale_bits.")
        .def("scale_at_level",
             [](const PyContext& c, int level) {
                 if (level < 0 || level > c.st->ctx->max_level())
                     raise<LevelMismatch>("scale_at_level: level ", level, " is outside 0..", c.st->ctx->max_level());
                 return c.st->scales[size_t(level)];
             },
             "level"_a,
             "The standard scale D_level of a level: fresh ciphertexts at that level are encrypted at it, and every "
             "automatic operation lands on it. D_0 = 2^scale_bits and D_{l-1} = D_l^2 / q_l.")
        .def_prop_ro("log_qp", [](const PyContext& c) { return c.st->ctx->params().log_qp(); },
                     "Bits of the full modulus Q*P (sum of the prime sizes), the quantity bounded by security.")
        .def_prop_ro("security", [](const PyContext& c) { return security_bits(c.st->ctx->params().security); },
                     nb::sig("def security(self) -> int | None"),
                     "The security level the parameters were checked against: 128, 192, 256, or None (no check).")
        .def_prop_ro("dnum", [](const PyContext& c) { return c.st->ctx->dnum(); },
                     "Number of key-switching digits (hybrid key switching).")
        .def_prop_ro("moduli", [](const PyContext& c) { return c.st->ctx->q(); },
                     "The ciphertext primes q_0 .. q_L.")
        .def_prop_ro("special_moduli", [](const PyContext& c) { return c.st->ctx->p(); },
                     "The special primes of key switching.")
        .def_prop_ro("preset", [](const PyContext& c) -> std::optional<std::string> {
                         if (c.st->preset.empty()) return std::nullopt;
                         return c.st->preset;
                     },
                     "The preset name, or None for explicit parameters.")
        .def_prop_rw(
            "noise_flooding",
            [](const PyContext& c) { return c.st->decryptor ? c.st->decryptor->noise_flooding() : 0.0; },
            [](PyContext& c, double bits) {
                State& s = *c.st;
                if (!s.sk)
                    raise<MissingKey>("noise_flooding: this context has no secret key, so it does not decrypt");
                auto d = std::make_shared<Decryptor>(s.ctx, *s.sk);
                d->set_noise_flooding(bits);  // validates the range
                s.decryptor = std::move(d);
            },
            "Noise flooding on decrypt, in bits (0 = off, the default; at most 50): a fresh Gaussian of standard "
            "deviation 2^bits is added to every scaled coefficient before decoding. Turn it on when decrypted values "
            "leave the secret-key holder (IND-CPA-D, see docs/security.md): e.g. 30 at scale 2^40 costs precision "
            "(absolute error about 2^(bits + log2(N)/2 + 2 - log2(scale))).")
        .def_prop_rw("auto", [](const PyContext& c) { return c.st->auto_mode; },
                     [](PyContext& c, bool v) { c.st->auto_mode = v; },
                     "Automatic mode (True) or manual mode (False); applies to every ciphertext of this context.")
        .def_prop_ro("has_secret_key", [](const PyContext& c) { return bool(c.st->sk); },
                     "True if this context holds the secret key (it can decrypt).")
        .def_prop_ro("has_public_key", [](const PyContext& c) { return bool(c.st->pk); },
                     "True once keys were generated (the public key is needed to encrypt without the secret key).")
        .def_prop_ro("has_relin_key", [](const PyContext& c) { return bool(c.st->rk); },
                     "True if the context has a relinearization key (needed by ct * ct in automatic mode).")
        .def_prop_ro("has_conjugation_key", [](const PyContext& c) { return c.st->conjugation; },
                     "True if the context has the Galois key of complex conjugation.")
        .def_prop_ro("rotations",
                     [](const PyContext& c) { return std::vector<int64_t>(c.st->rotations.begin(), c.st->rotations.end()); },
                     "The rotation steps that have Galois keys (sorted). In automatic mode other steps are composed "
                     "from these where possible (e.g. 3 = 4 - 1).")
        .def(
            "keygen",
            [](nb::pointer_and_handle<PyContext> self, std::optional<std::vector<int64_t>> rotations,
               bool conjugation, bool relin) {
                keygen(*self.p->st, rotations, conjugation, relin);
                return nb::borrow(self.h);
            },
            "rotations"_a = nb::none(), "conjugation"_a = false, "relin"_a = true,
            nb::sig("def keygen(self, rotations: collections.abc.Sequence[int] | None = None, "
                    "conjugation: bool = False, relin: bool = True) -> Context"),
            "Generates keys and stores them in the context; returns the context.\n\n"
            "The first call draws the secret key and the public key. Each call then adds the relinearization key "
            "(relin=True; needed by ct * ct), the Galois keys of the rotation steps and, if conjugation=True, of "
            "complex conjugation; keys that exist are kept. rotations=None means the signed powers of two "
            "+-1, +-2, +-4, ..., +-slots/2: every rotation is then available in automatic mode as a sum of at most "
            "about log2(slots)/2 of them (signed binary decomposition), at the memory cost of 2*log2(slots) - 1 keys "
            "(about 20 MB at S1, 0.14 GB at S2, 0.6 GB at S3, 2.5 GB at S4: with large parameters pass the steps you "
            "need). Pass an explicit list (possibly empty) to generate only those steps. A context made by public() "
            "cannot generate keys (MissingKey).")
        .def("public", [](const PyContext& c) { return PyContext{public_copy(*c.st)}; },
             "A copy of the context without the secret key: it shares the public, relinearization and Galois keys, "
             "encrypts with the public key and evaluates, but decrypt() raises MissingKey. Ciphertexts of both "
             "contexts can be mixed (same parameters), and the original context decrypts results computed by the "
             "copy.")
        .def(
            "encrypt",
            [](const PyContext& c, nb::handle values, std::optional<int> level, std::optional<double> scale,
               std::optional<size_t> slots) { return encrypt(c.st, values, level, scale, slots); },
            "values"_a, "level"_a = nb::none(), "scale"_a = nb::none(), "slots"_a = nb::none(),
            nb::sig("def encrypt(self, values: numpy.typing.ArrayLike, level: int | None = None, "
                    "scale: float | None = None, slots: int | None = None) -> Ciphertext"),
            "Encrypts an array of real or complex numbers (any shape; flattened in C order).\n\n"
            "values: anything numpy.asarray accepts, of at most `slots` elements (else oboro.ValueError naming the "
            "sizes). The ciphertext remembers the shape and whether the data were real (decrypt then returns "
            "float64) or complex (complex128).\n"
            "level: the level to encrypt at (default: the top level, max_level).\n"
            "scale: the encoding scale (default: the standard scale of that level, scale_at_level(level)).\n"
            "slots: the slot count, a power of two >= the size (default: the smallest one); rotations act on it.\n\n"
            "A context with the secret key encrypts with the secret key: its only noise is the fresh Gaussian "
            "error, so it is more precise (>= 25 bits at every preset) than public-key encryption, whose noise "
            "u*e + e0 + e1*s gives about 23.4 bits at N = 2^16. A context made by public() uses the public key.")
        .def(
            "decrypt", [](const PyContext& c, const PyCiphertext& ct) { return decrypt(*c.st, ct); }, "ciphertext"_a,
            nb::sig("def decrypt(self, ciphertext: Ciphertext) -> numpy.typing.NDArray[typing.Any]"),
            "Decrypts and decodes: a numpy.ndarray of the ciphertext's shape, float64 if the encrypted data were real "
            "(the imaginary parts, pure noise, are dropped) else complex128. Raises MissingKey on a context without "
            "the secret key (made by public()), ContextMismatch for a ciphertext of other parameters.")
        .def("describe", [](const PyContext& c) { return context_describe(*c.st); },
             "A human-readable summary: parameters, security, scales, keys and mode.")
        .def("__repr__", [](const PyContext& c) { return context_repr(*c.st); });

    nb::class_<PyCiphertext> ct(m, "Ciphertext", kCiphertextDoc);
    // NumPy must not treat a ciphertext as an object to broadcast over: with __array_ufunc__ =
    // None, `array * ct` returns NotImplemented from NumPy and Python calls ct.__rmul__(array).
    ct.attr("__array_ufunc__") = nb::none();
    def_arithmetic_operators<PyCiphertext, apply, result_shell<PyCiphertext>>(ct, "Ciphertext",
                                                                "Ciphertext | complex | numpy.typing.ArrayLike");
    ct.def_prop_ro("level", [](const PyCiphertext& c) { return c.ct.level(); },
                   "The level: the number of rescales left.")
        .def_prop_ro("scale", [](const PyCiphertext& c) { return c.ct.scale(); },
                     "The exact scale of the encoded message (after a rescale it is divided by the prime dropped, "
                     "not rounded to a power of two).")
        .def_prop_ro("slots", [](const PyCiphertext& c) { return c.ct.slots(); },
                     "The slot count (power of two >= size); rotations are cyclic over it.")
        .def_prop_ro("shape", [](const PyCiphertext& c) { return to_tuple(c.shape); },
                     nb::sig("def shape(self) -> tuple[int, ...]"), "Shape of the encrypted array.")
        .def_prop_ro("size", [](const PyCiphertext& c) { return c.count(); }, "Number of encrypted values.")
        .def_prop_ro("ndim", [](const PyCiphertext& c) { return c.shape.size(); }, "Number of dimensions.")
        .def_prop_ro("dtype",
                     [](const PyCiphertext& c) {
                         return numpy_dtype(c.is_complex);
                     },
                     nb::sig("def dtype(self) -> numpy.dtype[typing.Any]"),
                     "numpy.float64 for real data, numpy.complex128 for complex data: the dtype decrypt returns.")
        .def_prop_ro("poly_count", [](const PyCiphertext& c) { return c.ct.size(); },
                     "Number of polynomials: 2, or 3 after a manual-mode multiplication before relinearize().")
        .def_prop_ro("auto", [](const PyCiphertext& c) { return c.st->auto_mode; },
                     "Whether the ciphertext's context is in automatic mode.")
        .def("__neg__",
             [](const PyCiphertext& s) {
                 PyCiphertext out = s;
                 s.st->eval->negate_inplace(out.ct);
                 return out;
             },
             "-self")
        .def("__pos__", [](const PyCiphertext& s) { return s; }, "+self (a copy)")
        .def("rotate",
             [](const PyCiphertext& s, int64_t steps) {
                 PyCiphertext out = s;
                 nb::gil_scoped_release release;
                 rotate(*s.st, out.ct, steps);
                 return out;
             },
             "steps"_a,
             "Rotates the slot vector left by `steps` (negative: right), cyclically over `slots` values: "
             "np.roll(x, -steps) when size == slots. Automatic mode reduces the step modulo the slots and, when "
             "the context has no key for it, composes it from keyed steps (signed powers of two); manual mode needs "
             "the key of exactly this step. Raises MissingKey when no key fits.")
        .def("conj",
             [](const PyCiphertext& s) {
                 PyCiphertext out = s;
                 nb::gil_scoped_release release;
                 if (s.st->auto_mode) relinearize_if_needed(*s.st, out.ct, "conjugate");
                 s.st->eval->conjugate_inplace(out.ct, galois_keys(*s.st));
                 return out;
             },
             "Complex conjugate of every value (needs keygen(conjugation=True), else MissingKey).")
        .def("rescale",
             [](const PyCiphertext& s) {
                 PyCiphertext out = s;
                 nb::gil_scoped_release release;
                 s.st->eval->rescale_inplace(out.ct);
                 return out;
             },
             "Divides by the last prime q_level and drops it: level - 1, scale / q_level. Needed after "
             "multiplications in manual mode (automatic mode does it itself).")
        .def("relinearize",
             [](const PyCiphertext& s) {
                 PyCiphertext out = s;
                 nb::gil_scoped_release release;
                 if (!s.st->rk && out.ct.size() > 2)
                     raise<MissingKey>("relinearize: the context has no relinearization key; call keygen(relin=True)");
                 s.st->eval->relinearize_inplace(out.ct, relin_key(*s.st));
                 return out;
             },
             "Brings a size-3 product (manual mode) back to 2 polynomials with the relinearization key; a no-op on "
             "a size-2 ciphertext.")
        .def("drop_to_level",
             [](const PyCiphertext& s, int level) {
                 PyCiphertext out = s;
                 nb::gil_scoped_release release;
                 const State& st = *s.st;
                 if (st.auto_mode && level >= 0 && level < out.ct.level() &&
                     same_scale(out.ct.scale(), st.scales[size_t(out.ct.level())])) {
                     try {
                         bring_to(st, out.ct, level, st.scales[size_t(level)], "drop_to_level");
                         return out;
                     } catch (const ScaleMismatch&) {
                     }
                 }
                 st.eval->drop_to_level_inplace(out.ct, level);
                 return out;
             },
             "level"_a,
             "The same values at a lower level. Manual mode keeps the scale (limbs are dropped). Automatic mode "
             "moves a ciphertext that is at its level's standard scale to the standard scale of the new level (an "
             "integer multiplication and a rescale on the way down, no extra level), as automatic alignment does.")
        .def("copy", [](const PyCiphertext& s) { return s; }, "A copy of the ciphertext.")
        .def("__copy__", [](const PyCiphertext& s) { return s; })
        .def("__deepcopy__", [](const PyCiphertext& s, nb::handle) { return s; }, "memo"_a)
        .def("reshape",
             [](const PyCiphertext& s, nb::handle shape) {
                 nb::module_ np = numpy();
                 nb::object probe = np.attr("broadcast_to")(0.0, to_tuple(s.shape));
                 nb::object reshaped;
                 try {
                     reshaped = probe.attr("reshape")(shape);
                 } catch (nb::python_error& e) {
                     raise<oboro::ValueError>("reshape: cannot reshape a ciphertext of shape ", shape_str(s.shape),
                                              " (", s.count(), " values) into ",
                                              nb::cast<std::string>(nb::repr(shape)));
                 }
                 PyCiphertext out = s;
                 out.shape = nb::cast<std::vector<size_t>>(reshaped.attr("shape"));
                 return out;
             },
             "shape"_a, nb::sig("def reshape(self, shape: int | collections.abc.Sequence[int]) -> Ciphertext"),
             "The same ciphertext viewed with another shape of the same size (like numpy.reshape, -1 allowed); "
             "no homomorphic operation.")
        .def("__repr__", &ciphertext_repr);
    nb::class_<PyPlaintext> pt = add_plaintext_class(m, ctx);
    add_serialization_methods(m, ctx, ct, pt);
    add_trace_methods(ctx, ct);
    add_batch_class(m, ctx);
    add_linalg(m, ctx);
}

}  // namespace oboro::py
