// oboro.Batch: d ciphertexts of one context, level, scale and element shape in ONE allocation
// (ckks/batch.hpp), with the operators of oboro.Ciphertext. Each operator is one batched call
// of the C++ Evaluator over all d elements; automatic mode relinearizes, rescales and aligns
// like Ciphertext (the same standard scales and the same rules), manual mode leaves that to the
// caller. Context.encrypt_batch / decrypt(batch) convert from / to 2-D NumPy arrays. The sums and
// rotate_many are in batch_trace.cpp, serialization in serialize.cpp.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "oboro/ckks/batch.hpp"
#include "oboro/ckks/batch_encoder.hpp"
#include "oboro/ckks/evaluator.hpp"
#if defined(OBORO_WITH_CUDA_RUNTIME)
#include "oboro/backend/cuda/batch_queue.hpp"
#endif
#include "oboro/util/error.hpp"
#include "batch.hpp"
#include "operators.hpp"
#include "state.hpp"

using namespace nanobind::literals;

namespace oboro::py {

// The evaluator of batches that live where x lives: the CPU queue for host memory, else the
// device queue that holds x (a batch made with encrypt_batch(..., device="cuda")).
Evaluator evaluator(const State& s, const PolyBatch& x) { return Evaluator(s.ctx, x.device_queue()); }


// The queue of device "cuda" / "cuda:N", made once per device (batches in its memory share it, so
// it lives as long as the last of them); "cpu": nullptr. Errors: unknown device names
// (ValueError), no GPU or a build without the CUDA runtime (oboro.Error "no CUDA GPU found ...").
static QueuePtr queue_for_device(const std::string& device) {
    if (device == "cpu") return nullptr;
    int index = 0;
    if (device.rfind("cuda", 0) != 0 || (device.size() > 4 && device[4] != ':'))
        raise<oboro::ValueError>("device: '", device, "' is not one of 'cpu', 'cuda', 'cuda:N'");
    if (device.size() > 5) {
        try {
            index = std::stoi(device.substr(5));
        } catch (const std::exception&) {
            raise<oboro::ValueError>("device: '", device, "' does not end in a device number");
        }
    }
#if defined(OBORO_WITH_CUDA_RUNTIME)
    static std::mutex mutex;
    static std::map<int, QueuePtr> queues;
    const std::lock_guard<std::mutex> lock(mutex);
    QueuePtr& slot = queues[index];
    if (!slot) slot = oboro::cuda::make_cuda_queue(index);
    return slot;
#else
    (void)index;
    raise<oboro::Error>("no CUDA GPU found (this oboro was built without the CUDA backend; build it with "
                        "-C cmake.define.OBORO_CUDA=ON on a machine with the CUDA runtime)");
#endif
}

// ---- automatic mode: relinearization and alignment (the rules of bring_to/align in ckks.cpp) ----

void relinearize_if_needed(const State& s, CiphertextBatch& x, const char* op) {
    if (x.size() <= 2) return;
    if (!s.rk)
        raise<MissingKey>(op, ": the operand (", describe(x), ") has ", x.size(),
                          " polynomials and the context has no relinearization key; call keygen(relin=True)");
    x = evaluator(s, x).relinearize(x, *s.rk);
}

namespace {

// x brought down to (level, scale): a drop when the scale matches, else rescale_to from level + 1.
void bring_to(const State& s, CiphertextBatch& x, int level, double scale, const char* op) {
    const Evaluator ev = evaluator(s, x);
    if (same_scale(x.scale(), scale)) {
        if (x.level() > level) x = ev.drop_to_level(x, level);
        return;
    }
    if (x.level() <= level)
        raise<ScaleMismatch>(op, ": operand (", describe(x), ") cannot be brought to scale ", log2_str(scale),
                             " at level ", level, " (that needs a rescale, i.e. a level above ", level, ")");
    const double q = double(s.ctx->q()[size_t(level) + 1]);
    const double factor = std::round(scale * q / x.scale());
    if (!(factor >= 1) || !std::isfinite(factor) || std::fabs(x.scale() * factor / q - scale) > 0x1p-41 * scale)
        raise<ScaleMismatch>(op, ": operand (", describe(x), ") cannot be brought to scale ", log2_str(scale),
                             " at level ", level, " exactly; rescale it first or use matching scales");
    if (x.level() > level + 1) x = ev.drop_to_level(x, level + 1);
    x = ev.rescale_to(x, level, scale);
}

// a and b at one level (and one scale if match_scales); both are the caller's copies.
void align(const State& s, CiphertextBatch& a, CiphertextBatch& b, bool match_scales, const char* op) {
    if (a.level() == b.level()) {
        if (!match_scales || same_scale(a.scale(), b.scale())) return;
        const int l = a.level();
        if (l == 0)
            raise<ScaleMismatch>(op, ": operand 'a' (", describe(a), ") and operand 'b' (", describe(b),
                                 ") have different scales and no level is left to align them");
        bring_to(s, a, l - 1, s.scales[size_t(l) - 1], op);
        bring_to(s, b, l - 1, s.scales[size_t(l) - 1], op);
        return;
    }
    CiphertextBatch& hi = a.level() > b.level() ? a : b;
    const CiphertextBatch& lo = a.level() > b.level() ? b : a;
    if (match_scales) {
        bring_to(s, hi, lo.level(), lo.scale(), op);
        return;
    }
    try {
        CiphertextBatch tmp = hi;
        bring_to(s, tmp, lo.level(), lo.scale(), op);
        hi = std::move(tmp);
    } catch (const ScaleMismatch&) {
        hi = evaluator(s, hi).drop_to_level(hi, lo.level());
    }
}

// ---- operands -----------------------------------------------------------------------------------

// The plaintexts of `values` (one row of element_count values per element, or one row for all)
// at the batch's level and slots.
PlaintextBatch encode_rows(const State& s, const std::vector<cplx>& values, size_t rows, size_t row_len,
                           const CiphertextBatch& a, double scale) {
    // encoded straight into the batch's memory (on a GPU: only the coefficients are uploaded)
    return encode_batch(*s.encoder, std::span(values).first(rows * row_len), rows, a.level(), scale, a.slots(),
                        a.device_queue());
}

PlaintextBatch encode_constant(const State& s, cplx c, const CiphertextBatch& a, double scale) {
    return encode_rows(s, std::vector<cplx>(a.slots(), c), 1, a.slots(), a, scale);
}

enum class Kind { batch, integer, real, complex, array, unsupported };

struct Operand {
    Kind kind = Kind::unsupported;
    const PyBatch* b = nullptr;
    int64_t i = 0;
    double r = 0;
    cplx c;
    HostArray arr;
    size_t rows = 0;  // array: 1 (the same row for every element) or d
};

Operand classify(nb::handle o, const PyBatch& self, const char* op) {
    Operand out;
    if (nb::isinstance<PyBatch>(o)) {
        out.kind = Kind::batch;
        out.b = &nb::cast<const PyBatch&>(o);
        return out;
    }
    if (PyBool_Check(o.ptr()) || PyLong_Check(o.ptr())) {
        int overflow = 0;
        const long long v = PyLong_AsLongLongAndOverflow(o.ptr(), &overflow);
        if (v == -1 && PyErr_Occurred()) throw nb::python_error();
        if (!overflow) {
            out.kind = Kind::integer;
            out.i = int64_t(v);
            return out;
        }
    }
    if (PyFloat_Check(o.ptr()) || PyLong_Check(o.ptr())) {
        out.kind = Kind::real;
        out.r = PyFloat_AsDouble(o.ptr());
        if (out.r == -1.0 && PyErr_Occurred()) throw nb::python_error();
        return out;
    }
    if (PyComplex_Check(o.ptr())) {
        out.kind = Kind::complex;
        out.c = cplx(PyComplex_RealAsDouble(o.ptr()), PyComplex_ImagAsDouble(o.ptr()));
        return out;
    }
    if (nb::isinstance<PyCiphertext>(o)) return out;  // batch (op) ciphertext: not defined
    nb::object arr;
    try {
        arr = nb::module_::import_("numpy").attr("asarray")(o);
    } catch (const nb::python_error&) {
        return out;
    }
    const std::string dk = nb::cast<std::string>(arr.attr("dtype").attr("kind"));
    if (dk != "c" && dk != "f" && dk != "i" && dk != "u" && dk != "b") return out;
    const size_t ndim = nb::cast<size_t>(arr.attr("ndim"));
    if (ndim == 0) return classify(arr.attr("item")(), self, op);
    // The element shape (one row for all) or the batch's full shape (one row per element).
    const bool per_element = ndim == self.shape.size() + 1;
    const std::vector<size_t> target = per_element ? self.full_shape() : self.shape;
    out.kind = Kind::array;
    out.arr = to_host(arr, op, &target);
    out.rows = per_element ? self.batch.count() : 1;
    return out;
}

// ---- the operators --------------------------------------------------------------------------------

// Whether automatic mode has work to do before a + b: a relinearization or an alignment.
bool needs_preparation(const State& s, const CiphertextBatch& a, const CiphertextBatch& b) {
    return s.auto_mode &&
           (a.size() > 2 || b.size() > 2 || a.level() != b.level() || !same_scale(a.scale(), b.scale()));
}

void add_sub_batch(const State& s, CiphertextBatch& a, const CiphertextBatch& b_in, bool sub) {
    const char* op = sub ? "sub" : "add";
    const Evaluator ev = evaluator(s, a);
    if (!needs_preparation(s, a, b_in)) {  // manual mode, or nothing to align: no copies
        sub ? ev.sub_inplace(a, b_in) : ev.add_inplace(a, b_in);
        return;
    }
    CiphertextBatch b = b_in, x = a;
    relinearize_if_needed(s, x, op);
    relinearize_if_needed(s, b, op);
    align(s, x, b, true, op);
    sub ? ev.sub_inplace(x, b) : ev.add_inplace(x, b);
    a = std::move(x);
}

// out = a + b (or a - b) in one batched call into a new batch where nothing needs preparing (the
// common case); else a copy of a, prepared and added in place.
void add_sub_batch_into(const State& s, CiphertextBatch& out, const CiphertextBatch& a, const CiphertextBatch& b,
                        bool sub) {
    if (!needs_preparation(s, a, b)) {
        const Evaluator ev = evaluator(s, a);
        out = sub ? ev.sub(a, b) : ev.add(a, b);
        return;
    }
    out = a;
    add_sub_batch(s, out, b, sub);
}

void multiply_batch(const State& s, CiphertextBatch& a, const CiphertextBatch& b_in) {
    const Evaluator ev = evaluator(s, a);
    if (!s.auto_mode) {
        a = ev.multiply(a, b_in);
        return;
    }
    CiphertextBatch b = b_in, x = a;
    relinearize_if_needed(s, x, "multiply");
    relinearize_if_needed(s, b, "multiply");
    align(s, x, b, false, "multiply");
    if (!s.rk)
        raise<MissingKey>("multiply: the context has no relinearization key; call keygen(relin=True) first (or use "
                          "manual mode, auto = False, to keep the size-3 product)");
    a = ev.multiply_relin_rescale(x, b, *s.rk);  // fused, one output allocation
}

void add_sub_constant(const State& s, CiphertextBatch& a, size_t count, cplx c, bool sub) {
    const Evaluator ev = evaluator(s, a);
    if (c.imag() == 0 && count == a.slots()) {
        sub ? ev.sub_inplace(a, c.real()) : ev.add_inplace(a, c.real());
        return;
    }
    // Only the `count` used slots get the constant (the padding slots stay zero for rotations).
    if (sub) c = -c;
    ev.add_inplace(a, encode_rows(s, std::vector<cplx>(count, c), 1, count, a, a.scale()));
}

void multiply_constant(const State& s, CiphertextBatch& a, cplx c) {
    const Evaluator ev = evaluator(s, a);
    if (!s.auto_mode) {
        if (c.imag() == 0) {
            ev.multiply_inplace(a, c.real());
        } else {
            ev.multiply_inplace(a, encode_constant(s, c, a, double(s.ctx->q()[size_t(a.level())])));
        }
        return;
    }
    relinearize_if_needed(s, a, "multiply");
    const double t = product_scale(s, a.level(), a.scale(), describe(a), "multiply");
    const double v = std::round(c.real() * t);
    if (c.imag() == 0 && std::isfinite(v) && std::fabs(v) < 0x1p62) {
        ev.multiply_integer_inplace(a, int64_t(v));  // the constant at scale t is the integer round(c * t)
        a.set_scale(a.scale() * t);
    } else {
        ev.multiply_inplace(a, encode_constant(s, c, a, t));
    }
    a = ev.rescale(a);
}

void multiply_array(const State& s, CiphertextBatch& a, const Operand& o, size_t row_len) {
    const Evaluator ev = evaluator(s, a);
    if (!s.auto_mode) {
        ev.multiply_inplace(a, encode_rows(s, o.arr.values, o.rows, row_len, a, double(s.ctx->q()[size_t(a.level())])));
        return;
    }
    relinearize_if_needed(s, a, "multiply");
    const double t = product_scale(s, a.level(), a.scale(), describe(a), "multiply");
    ev.multiply_inplace(a, encode_rows(s, o.arr.values, o.rows, row_len, a, t));
    a = ev.rescale(a);
}

// target (op) other: self for the in-place operators, a result_shell of self for the others.
// Returns false when `other` is not supported (the caller returns NotImplemented).
bool apply(PyBatch& target, const PyBatch& self, nb::handle other, BinOp op) {
    const char* name = op == BinOp::mul || op == BinOp::div ? "multiply" : (op == BinOp::add ? "add" : "sub");
    Operand o = classify(other, self, name);
    if (o.kind == Kind::unsupported) return false;
    const State& s = *self.st;
    const Evaluator ev = evaluator(s, self.batch);
    bool is_complex = self.is_complex;
    const bool out_of_place = &target != &self && o.kind == Kind::batch && (op == BinOp::add || op == BinOp::sub);
    if (&target != &self && !out_of_place) target.batch = self.batch;  // a result shell: work on a copy
    switch (o.kind) {
        case Kind::batch: {
            if (op == BinOp::div) return false;
            if (o.b->shape != self.shape)
                raise<oboro::ValueError>(name, ": the batches' elements have different shapes ", shape_str(self.shape),
                                         " and ", shape_str(o.b->shape));
            check_same_keys(s, *o.b->st, name);
            is_complex = is_complex || o.b->is_complex;
            nb::gil_scoped_release release;
            if (op == BinOp::mul) {
                multiply_batch(s, target.batch, o.b->batch);
            } else if (op == BinOp::rsub) {
                ev.negate_inplace(target.batch);
                add_sub_batch(s, target.batch, o.b->batch, false);
            } else if (out_of_place) {
                add_sub_batch_into(s, target.batch, self.batch, o.b->batch, op == BinOp::sub);
            } else {
                add_sub_batch(s, target.batch, o.b->batch, op == BinOp::sub);
            }
            break;
        }
        case Kind::integer:
        case Kind::real:
        case Kind::complex: {
            cplx c = o.kind == Kind::integer ? cplx(double(o.i), 0) : o.kind == Kind::real ? cplx(o.r, 0) : o.c;
            is_complex = is_complex || o.kind == Kind::complex;
            if (op == BinOp::div) {
                if (c == cplx(0, 0)) {
                    PyErr_SetString(PyExc_ZeroDivisionError, "division of a batch by zero");
                    throw nb::python_error();
                }
                c = cplx(1, 0) / c;
            }
            const size_t count = self.element_count();
            nb::gil_scoped_release release;
            if (op == BinOp::mul && o.kind == Kind::integer) {
                ev.multiply_integer_inplace(target.batch, o.i);
            } else if (op == BinOp::mul || op == BinOp::div) {
                multiply_constant(s, target.batch, c);
            } else if (op == BinOp::rsub) {
                ev.negate_inplace(target.batch);
                add_sub_constant(s, target.batch, count, c, false);
            } else {
                add_sub_constant(s, target.batch, count, c, op == BinOp::sub);
            }
            break;
        }
        case Kind::array: {
            if (op == BinOp::div) return false;
            is_complex = is_complex || o.arr.is_complex;
            const size_t row_len = self.element_count();
            nb::gil_scoped_release release;
            if (op == BinOp::mul) {
                multiply_array(s, target.batch, o, row_len);
            } else {
                CiphertextBatch& a = target.batch;
                if (op == BinOp::rsub) ev.negate_inplace(a);
                const PlaintextBatch p = encode_rows(s, o.arr.values, o.rows, row_len, a, a.scale());
                op == BinOp::sub ? ev.sub_inplace(a, p) : ev.add_inplace(a, p);
            }
            break;
        }
        case Kind::unsupported: return false;
    }
    target.is_complex = is_complex;
    return true;
}

}  // namespace

// ---- rotations: one step for all, or one per element -----------------------------------------

// Manual mode: one batched rotation by exactly these steps. Automatic mode: each element's step
// becomes its rotation plan (rotation_plan, as Ciphertext.rotate), and round r rotates every
// element by the r-th step of its plan (0, a copy, once its plan is done): the same rotations
// as on each Ciphertext, one batched call per round.
PyBatch rotate_batch(const PyBatch& self, nb::handle steps) {
    const State& s = *self.st;
    const Evaluator ev = evaluator(s, self.batch);
    std::vector<int64_t> per;
    if (PyLong_Check(steps.ptr())) {
        per.assign(self.batch.count(), nb::cast<int64_t>(steps));
    } else {
        per = nb::cast<std::vector<int64_t>>(
            nb::module_::import_("numpy").attr("asarray")(steps, "int64").attr("ravel")().attr("tolist")());
    }
    PyBatch out = self;
    nb::gil_scoped_release release;
    if (!s.auto_mode) {
        out.batch = ev.rotate(out.batch, per, galois_keys(s));
        return out;
    }
    if (per.size() != self.batch.count())
        raise<oboro::ValueError>("rotate: ", per.size(), " steps were given for a ", describe(self.batch),
                                 "; give one per element");
    const int64_t slots = int64_t(self.batch.slots());
    std::vector<std::vector<int64_t>> plans;
    size_t rounds = 0;
    for (int64_t k : per) {
        plans.push_back(rotation_plan(s, k, slots));
        rounds = std::max(rounds, plans.back().size());
    }
    relinearize_if_needed(s, out.batch, "rotate");
    for (size_t r = 0; r < rounds; ++r) {
        std::vector<int64_t> round(plans.size(), 0);
        for (size_t c = 0; c < plans.size(); ++c)
            if (r < plans[c].size()) round[c] = plans[c][r];
        out.batch = ev.rotate(out.batch, round, galois_keys(s));
    }
    return out;
}

namespace {

// ---- conversions ----------------------------------------------------------------------------------

PyBatch encrypt_batch(const StatePtr& st, nb::handle values, std::optional<int> level, std::optional<double> scale,
                      std::optional<size_t> slots, const std::string& device) {
    const QueuePtr queue = queue_for_device(device);  // first: a bad device fails before any work
    if (!st->encryptor) raise<MissingKey>("encrypt_batch: the context has no keys yet; call keygen() first");
    HostArray h = to_host(values, "encrypt_batch");
    if (h.shape.size() < 2 || h.shape[0] == 0)
        raise<oboro::ValueError>("encrypt_batch: expected a 2-D array with one row per ciphertext, got shape ",
                                 shape_str(h.shape));
    const std::vector<size_t> row_shape(h.shape.begin() + 1, h.shape.end());
    const Encoding e = resolve_encoding(*st, row_shape, level, scale, slots, "encrypt_batch");
    PyBatch out;
    out.st = st;
    out.shape = row_shape;
    out.is_complex = h.is_complex;
    // One batched encoding (errors name the row), then every row encrypted in parallel; the
    // encryptor is used with the GIL held: its generator is not thread-safe.
    const PlaintextBatch pts = encode_batch(*st->encoder, h.values, h.shape[0], e.level, e.scale, e.slots);
    out.batch = st->encryptor->encrypt_batch(pts);
    if (queue) {
        nb::gil_scoped_release release;
        out.batch = out.batch.to_device(queue);
    }
    return out;
}

nb::object decrypt_batch(const State& s, const PyBatch& b) {
    if (!s.decryptor)
        raise<MissingKey>("decrypt: this context has no secret key (it was made by public(), or keygen() was not "
                          "called); only the context that holds the secret key can decrypt");
    if (b.st->ctx->id() == s.ctx->id() && b.st->key_id != s.key_id)
        raise<ContextMismatch>("decrypt: the batch was encrypted under other keys (by another context with the same "
                               "parameters); it can only be decrypted by the context that holds its secret key");
    if (b.batch.context_id() != s.ctx->id())
        raise<ContextMismatch>("decrypt: the batch (", describe(b.batch), ") belongs to another parameter set");
    const size_t row = b.element_count();
    std::vector<cplx> all;
    {
        nb::gil_scoped_release release;
        all.reserve(b.batch.count() * row);
        // from a device: one download of the whole batch, not one wait per element
        // in parallel over the elements (from a device: after one download of the whole batch)
        for (const std::vector<cplx>& v : s.decryptor->decrypt_decode(b.batch, *s.encoder))
            all.insert(all.end(), v.begin(), v.begin() + long(row));
    }
    return to_numpy(all, b.full_shape(), b.is_complex);
}

// A copy of b in the memory of `device` ('cpu', 'cuda', 'cuda:N'), where its operations then run.
PyBatch moved_to(const PyBatch& b, const std::string& device) {
    const QueuePtr queue = queue_for_device(device);
    PyBatch out = result_shell(b);
    nb::gil_scoped_release release;
    out.batch = queue ? b.batch.to_device(queue) : b.batch.to_host();
    return out;
}

// The parts of a new batch (Ciphertexts or Batches, named `noun` in errors, whose shape is `what`)
// are there, share one element shape and the same keys; returns whether any of them is complex.
template <typename Py>
bool check_parts_agree(const std::vector<const Py*>& parts, const char* op, const char* noun, const char* what) {
    if (parts.empty()) raise<oboro::ValueError>(op, ": the list is empty; a batch needs at least one element");
    const Py& first = *parts[0];
    bool is_complex = false;
    for (size_t p = 0; p < parts.size(); ++p) {
        if (parts[p]->shape != first.shape)
            raise<oboro::ValueError>(op, ": ", noun, " ", p, " has ", what, " ", shape_str(parts[p]->shape), " but ",
                                     noun, " 0 has ", shape_str(first.shape));
        check_same_keys(*first.st, *parts[p]->st, op);
        is_complex = is_complex || parts[p]->is_complex;
    }
    return is_complex;
}

PyBatch from_ciphertexts(const std::vector<const PyCiphertext*>& cts, const std::string& device) {
    const QueuePtr queue = queue_for_device(device);  // first: a bad device fails before any work
    const bool is_complex = check_parts_agree(cts, "from_ciphertexts", "element", "shape");
    std::vector<const Ciphertext*> core;  // pointers: each ciphertext is copied once, into the batch
    core.reserve(cts.size());
    for (const PyCiphertext* c : cts) core.push_back(&c->ct);
    PyBatch out;
    out.st = cts[0]->st;
    out.shape = cts[0]->shape;
    out.is_complex = is_complex;
    nb::gil_scoped_release release;
    out.batch = CiphertextBatch::from_ciphertexts(*cts[0]->st->ctx, std::span<const Ciphertext* const>(core));
    if (queue) out.batch = out.batch.to_device(queue);
    return out;
}

// oboro.Batch.concat: the elements of several batches in one, as np.concatenate joins rows.
PyBatch concat(const std::vector<const PyBatch*>& batches) {
    const bool is_complex = check_parts_agree(batches, "concat", "batch", "elements of shape");
    std::vector<const CiphertextBatch*> parts;
    for (const PyBatch* b : batches) parts.push_back(&b->batch);
    PyBatch out = result_shell(*batches[0]);
    out.is_complex = is_complex;
    nb::gil_scoped_release release;
    out.batch = CiphertextBatch::concatenate(*batches[0]->st->ctx, parts);
    return out;
}

[[noreturn]] void index_error(const std::string& message) {
    PyErr_SetString(PyExc_IndexError, message.c_str());
    throw nb::python_error();
}

// Element i of a batch of d (negative counts from the end), or IndexError.
size_t element_index(int64_t i, size_t d) {
    if (i < -int64_t(d) || i >= int64_t(d))
        index_error("batch index " + std::to_string(i) + " is out of range for a batch of " + std::to_string(d));
    return size_t(i < 0 ? i + int64_t(d) : i);
}

PyCiphertext element(const PyBatch& b, int64_t i) {
    return PyCiphertext{b.st, b.batch.at(element_index(i, b.batch.count())), b.shape, b.is_complex};
}

// batch[slice], batch[[i, j, ...]] (integers, negative ones from the end, repeats allowed) and
// batch[mask] (one boolean per element): a new Batch of those elements, as NumPy selects rows. A
// NumPy integer scalar selects one element, as a Python int does.
nb::object selection(const PyBatch& b, nb::handle index) {
    const size_t d = b.batch.count();
    std::vector<size_t> picked;
    if (PySlice_Check(index.ptr())) {
        Py_ssize_t start = 0, stop = 0, step = 0;
        if (PySlice_Unpack(index.ptr(), &start, &stop, &step) < 0) throw nb::python_error();
        const Py_ssize_t len = PySlice_AdjustIndices(Py_ssize_t(d), &start, &stop, step);
        for (Py_ssize_t k = 0; k < len; ++k) picked.push_back(size_t(start + k * step));
    } else {
        nb::module_ np = nb::module_::import_("numpy");
        nb::object arr = np.attr("asarray")(index);
        const std::string kind = nb::cast<std::string>(arr.attr("dtype").attr("kind"));
        const size_t ndim = nb::cast<size_t>(arr.attr("ndim"));
        if (ndim == 0 && (kind == "i" || kind == "u")) return nb::cast(element(b, nb::cast<int64_t>(arr.attr("item")())));
        if (ndim != 1 || (kind != "b" && kind != "i" && kind != "u"))
            throw nb::type_error(("batch[...]: an index is an integer, a slice, a 1-D sequence of integers or a 1-D "
                                  "array of one boolean per element, not " +
                                  nb::cast<std::string>(nb::repr(index)))
                                     .c_str());
        if (kind == "b") {
            const auto mask = nb::cast<std::vector<bool>>(arr.attr("tolist")());
            if (mask.size() != d)
                index_error("batch[mask]: a mask of " + std::to_string(mask.size()) +
                            " booleans does not match a batch of " + std::to_string(d));
            for (size_t c = 0; c < d; ++c)
                if (mask[c]) picked.push_back(c);
        } else {
            for (int64_t i : nb::cast<std::vector<int64_t>>(arr.attr("tolist")())) picked.push_back(element_index(i, d));
        }
    }
    if (picked.empty()) raise<oboro::ValueError>("batch[...]: the index selects no element (a batch holds at least one)");
    PyBatch out = result_shell(b);
    {
        nb::gil_scoped_release release;
        out.batch = b.batch.select(*b.st->ctx, picked);
    }
    return nb::cast(std::move(out));
}

std::string batch_repr(const PyBatch& b) {
    std::string out = "<oboro.Batch of " + std::to_string(b.batch.count()) + " shape=" + shape_str(b.shape) + " " +
                      (b.is_complex ? "complex128" : "float64") + " level=" + std::to_string(b.batch.level()) +
                      " scale=" + log2_str(b.batch.scale()) + " slots=" + std::to_string(b.batch.slots());
    if (b.batch.size() != 2) out += " polys=" + std::to_string(b.batch.size());
    return out + ">";
}

const char* const kBatchDoc = R"doc(d ciphertexts of one context, level and scale in ONE allocation, operated on together.

Every operator is one batched call over all d elements (one parallel loop on the CPU), with the same
results as the same operator on each oboro.Ciphertext, and the same automatic / manual mode::

    X = np.random.rand(100, 8)
    b = ctx.encrypt_batch(X)             # one row per ciphertext
    y = (b * b + 2.0 * b).rotate(1)      # 100 ciphertexts at once
    ctx.decrypt(y)                       # a (100, 8) array

Operands: another Batch (same length and element shape), a number, an array of one element's shape
(the same for every element) or of the batch's shape (one row per element). rotate takes one step
for all or one step per element; automatic mode composes a step without a key from keyed steps
exactly as Ciphertext.rotate does (one batched call per step of the longest composition).
sum(...) and rotate_many(...) work as on a Ciphertext (bit-identical per element), and
serialize / deserialize / save / load as for ciphertexts (fresh elements stored with their seeds).)doc";

}  // namespace

void add_batch_class(nb::module_& m, nb::class_<PyContext>& ctx) {
    nb::class_<PyBatch> b(m, "Batch", kBatchDoc);
    b.attr("__array_ufunc__") = nb::none();  // `array * batch` goes to Batch.__rmul__
    def_arithmetic_operators<PyBatch, apply, result_shell<PyBatch>>(b, "Batch", "Batch | complex | numpy.typing.ArrayLike");
    b.def_static("concat", &concat, "batches"_a,
                 nb::sig("def concat(batches: collections.abc.Sequence[Batch]) -> Batch"),
                 "The elements of `batches`, in order, in one new Batch (as numpy.concatenate joins rows). They "
                 "must share keys, element shape, level, scale and memory ('cpu' or one GPU).");
    b.def_static("from_ciphertexts", &from_ciphertexts, "ciphertexts"_a, "device"_a = "cpu",
                 nb::sig("def from_ciphertexts(ciphertexts: collections.abc.Sequence[Ciphertext], device: str = 'cpu') "
                         "-> Batch"),
                 "A batch of copies of the ciphertexts (one context and keys, one level, scale and shape; else "
                 "ValueError, LevelMismatch, ScaleMismatch or ContextMismatch naming the element), in the memory "
                 "of `device` ('cpu', 'cuda', 'cuda:N'). A single ciphertext goes to a GPU as a batch of one.")
        .def("to", &moved_to, "device"_a,
             "A copy of the batch in the memory of `device` ('cpu', 'cuda', 'cuda:N'), where its operations then "
             "run: a batch received from a client (deserialize) moves to a GPU with to('cuda'), and back with "
             "to('cpu'). Unknown device names: ValueError; no GPU: oboro.Error 'no CUDA GPU found'.")
        .def("to_ciphertexts",
             [](const PyBatch& s) {
                 std::vector<Ciphertext> cts;
                 {
                     nb::gil_scoped_release release;
                     cts = s.batch.to_ciphertexts();
                 }
                 std::vector<PyCiphertext> out;
                 for (Ciphertext& ct : cts) out.push_back(PyCiphertext{s.st, std::move(ct), s.shape, s.is_complex});
                 return out;
             },
             "The elements as a list of separate Ciphertexts (copies).")
        .def("__len__", [](const PyBatch& s) { return s.batch.count(); }, "The number of ciphertexts.")
        .def_prop_ro(
            "device", [](const PyBatch& s) { return std::string(s.batch.device() ? s.batch.device()->device_name() : "cpu"); },
            "Where the batch lives and its operations run: 'cpu' or 'cuda:N'.")
        .def("__getitem__", &element, "index"_a, "Element `index` as a Ciphertext (a copy); negative counts from the end.")
        .def("__getitem__", &selection, "index"_a,
             nb::sig("def __getitem__(self, index: slice | Sequence[int] | numpy.typing.ArrayLike) -> Batch"),
             "The elements a slice, a sequence of integers or a boolean mask (one per element) selects, as a new "
             "Batch in the same memory (a copy), in the order given.")
        .def_prop_ro("level", [](const PyBatch& s) { return s.batch.level(); }, "The level of every element.")
        .def_prop_ro("scale", [](const PyBatch& s) { return s.batch.scale(); }, "The exact scale of every element.")
        .def_prop_ro("slots", [](const PyBatch& s) { return s.batch.slots(); }, "The slot count of every element.")
        .def_prop_ro("shape", [](const PyBatch& s) { return to_tuple(s.full_shape()); },
                     nb::sig("def shape(self) -> tuple[int, ...]"),
                     "(len(batch),) + the shape of one element: the shape decrypt returns.")
        .def_prop_ro("size", [](const PyBatch& s) { return s.batch.count() * s.element_count(); },
                     "Number of encrypted values in all elements (the size of the array decrypt returns).")
        .def_prop_ro("ndim", [](const PyBatch& s) { return s.shape.size() + 1; },
                     "len(shape): 1 + the dimensions of one element.")
        .def_prop_ro("element_shape", [](const PyBatch& s) { return to_tuple(s.shape); },
                     nb::sig("def element_shape(self) -> tuple[int, ...]"),
                     "The shape of one element (one row): batch[i].shape.")
        .def_prop_ro("auto", [](const PyBatch& s) { return s.st->auto_mode; },
                     "Whether the batch's context is in automatic mode.")
        .def_prop_ro("dtype", [](const PyBatch& s) { return numpy_dtype(s.is_complex); },
                     nb::sig("def dtype(self) -> numpy.dtype[typing.Any]"), "float64 or complex128, as decrypt returns.")
        .def_prop_ro("poly_count", [](const PyBatch& s) { return s.batch.size(); },
                     "Polynomials per element: 2, or 3 after a manual-mode multiplication.")
        .def("__neg__",
             [](const PyBatch& s) {
                 PyBatch out = s;
                 evaluator(*s.st, out.batch).negate_inplace(out.batch);
                 return out;
             },
             "-self")
        .def("__pos__", [](const PyBatch& s) { return s; }, "+self (a copy)")
        .def("copy", [](const PyBatch& s) { return s; }, "A copy of the batch.")
        .def("__copy__", [](const PyBatch& s) { return s; })
        .def("__deepcopy__", [](const PyBatch& s, nb::handle) { return s; }, "memo"_a)
        .def("rotate", &rotate_batch, "steps"_a,
             nb::sig("def rotate(self, steps: int | collections.abc.Sequence[int], /) -> Batch"),
             "Rotates every element left by `steps`, or element i by steps[i] (one step per element, 0 allowed), "
             "in one batched call. Manual mode needs the key of each exact step, automatic mode a key of the step "
             "modulo the slots; else MissingKey naming the steps.")
        .def("conj",
             [](const PyBatch& s) {
                 PyBatch out = s;
                 nb::gil_scoped_release release;
                 if (s.st->auto_mode) relinearize_if_needed(*s.st, out.batch, "conjugate");
                 out.batch = evaluator(*s.st, out.batch).conjugate(out.batch, galois_keys(*s.st));
                 return out;
             },
             "Complex conjugate of every value of every element, in one batched call (needs "
             "keygen(conjugation=True), else MissingKey).")
        .def("rescale",
             [](const PyBatch& s) {
                 PyBatch out = s;
                 nb::gil_scoped_release release;
                 out.batch = evaluator(*s.st, s.batch).rescale(s.batch);
                 return out;
             },
             "Divides every element by the last prime and drops it (manual mode; automatic mode does it itself).")
        .def("relinearize",
             [](const PyBatch& s) {
                 PyBatch out = s;
                 if (s.batch.size() == 2) return out;
                 nb::gil_scoped_release release;
                 relinearize_if_needed(*s.st, out.batch, "relinearize");
                 return out;
             },
             "Brings size-3 products (manual mode) back to 2 polynomials; a no-op on size 2.")
        .def("drop_to_level",
             [](const PyBatch& s, int level) {
                 PyBatch out = s;
                 nb::gil_scoped_release release;
                 const State& st = *s.st;
                 if (st.auto_mode && level >= 0 && level < out.batch.level() &&
                     same_scale(out.batch.scale(), st.scales[size_t(out.batch.level())])) {
                     try {
                         bring_to(st, out.batch, level, st.scales[size_t(level)], "drop_to_level");
                         return out;
                     } catch (const ScaleMismatch&) {
                     }
                 }
                 out.batch = evaluator(st, s.batch).drop_to_level(s.batch, level);
                 return out;
             },
             "level"_a,
             "The same values at a lower level, as Ciphertext.drop_to_level: manual mode keeps the scale (limbs "
             "are dropped); automatic mode moves a batch at its level's standard scale to the standard scale of "
             "the new level.")
        .def("__repr__", &batch_repr);
    add_batch_trace_methods(b);
    add_batch_serialization(b);

    ctx.def(
           "encrypt_batch",
           [](const PyContext& c, nb::handle values, std::optional<int> level, std::optional<double> scale,
              std::optional<size_t> slots, const std::string& device) {
               return encrypt_batch(c.st, values, level, scale, slots, device);
           },
           "values"_a, "level"_a = nb::none(), "scale"_a = nb::none(), "slots"_a = nb::none(), "device"_a = "cpu",
           nb::sig("def encrypt_batch(self, values: numpy.typing.ArrayLike, level: int | None = None, "
                   "scale: float | None = None, slots: int | None = None, device: str = 'cpu') -> Batch"),
           "Encrypts each row of a 2-D (or higher) array as one ciphertext of a Batch: values[i] is element i. "
           "level, scale and slots as in encrypt(). device: 'cpu', or 'cuda' / 'cuda:N' to keep the batch on that "
           "GPU, where every operation on it then runs (oboro.Error 'no CUDA GPU found' when there is none).")
        .def(
            "decrypt", [](const PyContext& c, const PyBatch& b) { return decrypt_batch(*c.st, b); }, "batch"_a,
            nb::sig("def decrypt(self, batch: Batch) -> numpy.typing.NDArray[typing.Any]"),
            "Decrypts a Batch: an array of shape (len(batch),) + the element shape, row i from element i.");
}

}  // namespace oboro::py
