// The state of a Python context (state.hpp): sessions, the mode and its scopes, and the NumPy
// conversions every binding file uses.
#include "state.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <type_traits>

#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "oboro/io/serialize.hpp"
#include "oboro/util/error.hpp"

using namespace nanobind::literals;

namespace oboro::py {

// ---- sessions ----------------------------------------------------------------------------------

const GaloisKeys& Session::galois_keys() const {
    static const GaloisKeys none;
    return keys->galois() ? *keys->galois() : none;
}

StatePtr make_state(const Parameters& params, std::string preset, bool auto_mode) {
    return make_state(Context::create(params), std::move(preset), auto_mode);
}

StatePtr make_state(ContextPtr ctx, std::string preset, bool auto_mode) {
    auto st = std::make_shared<State>();
    st->ctx = std::move(ctx);
    st->encoder = std::make_shared<const Encoder>(st->ctx);
    st->preset = std::move(preset);
    st->auto_mode = auto_mode;
    publish(*st, nullptr, nullptr, nullptr, nullptr, {}, false);
    return st;
}

namespace {

// The registry of find_state: weak references, pruned as their states die.
struct Registry {
    std::mutex mutex;
    std::multimap<uint64_t, std::weak_ptr<State>> by_key;

    void add(State& s) {
        std::lock_guard<std::mutex> lock(mutex);
        auto [first, last] = by_key.equal_range(s.key_id);
        for (auto it = first; it != last; ++it)
            if (it->second.lock().get() == &s) return;
        by_key.emplace(s.key_id, s.weak_from_this());
    }

    StatePtr find(uint64_t key_id, uint64_t context_id) {
        std::lock_guard<std::mutex> lock(mutex);
        StatePtr best;
        for (auto it = by_key.begin(); it != by_key.end();) {
            StatePtr st = it->second.lock();
            if (!st) {
                it = by_key.erase(it);
                continue;
            }
            const bool match = key_id ? it->first == key_id : st->ctx->id() == context_id;
            if (match && (!best || (!best->snapshot()->sk && st->snapshot()->sk))) best = std::move(st);
            ++it;
        }
        return best;
    }

    static Registry& get() {
        static Registry r;
        return r;
    }
};

}  // namespace

StatePtr find_state(uint64_t key_id, uint64_t context_id) { return Registry::get().find(key_id, context_id); }

void publish(State& s, SecretKeyPtr sk, std::shared_ptr<const PublicKey> pk,
             std::shared_ptr<const RelinKey> rk, std::shared_ptr<const GaloisKeys> gk, std::set<int64_t> rotations,
             bool conjugation, double noise_flooding) {
    const SessionPtr old = s.session;
    auto keys = std::make_shared<const MemoryKeySet>(std::move(rk), std::move(gk));
    std::shared_ptr<const Decryptor> decryptor;
    if (sk) {
        auto d = std::make_shared<Decryptor>(s.ctx, sk);  // shares the one secret key
        d->set_noise_flooding(noise_flooding);  // validates the range
        decryptor = std::move(d);
    }
    const bool new_crypto = !old || old->sk != sk || old->pk != pk;
    // bootstrapping keys stay valid while the public key (and so the secret) is the same
    auto session = std::make_shared<const Session>(
        Session{std::move(sk), std::move(pk), keys, std::move(decryptor), Evaluator(s.ctx, keys), std::move(rotations),
                conjugation, old && old->pk == pk ? old->bootstrapping : nullptr});
    if (new_crypto) {
        // A state's public key is set once (first keygen or deserialize) and never replaced, so
        // its fingerprint is hashed once; public() copies inherit it.
        if (session->pk && s.key_id == 0) s.key_id = io::key_id(*session->pk);
        s.encryptor.reset();
        if (session->sk) s.encryptor = std::make_shared<Encryptor>(s.ctx, session->sk);
        else if (session->pk) s.encryptor = std::make_shared<Encryptor>(s.ctx, *session->pk);
    }
    s.session = std::move(session);
    if (s.key_id) Registry::get().add(s);
}

void publish_bootstrapping(State& s, std::shared_ptr<const algorithms::BootstrapSet> b) {
    Session next = *s.session;
    next.bootstrapping = std::move(b);
    s.session = std::make_shared<const Session>(std::move(next));
}

// ---- the mode and its scopes ---------------------------------------------------------------------

namespace {

// A Python context variable holding the mode scopes open in the current Python context (thread
// or task): a tuple of (state address, automatic) pairs, the innermost last.
PyObject* mode_scopes() {
    static PyObject* var = PyContextVar_New("oboro_mode_scopes", nullptr);
    if (!var) throw nb::python_error();
    return var;
}

nb::tuple current_scopes() {
    PyObject* value = nullptr;
    if (PyContextVar_Get(mode_scopes(), nullptr, &value) < 0) throw nb::python_error();
    if (!value) return nb::tuple();
    return nb::steal<nb::tuple>(value);
}

// Context.manual() / Context.automatic(): `with` sets the mode of the context's values for the
// block, in the current thread (or asyncio task) only.
struct ModeScope {
    StatePtr st;
    bool automatic = false;
    nb::object token;

    void enter() {
        nb::tuple scopes = current_scopes();
        nb::list items;
        for (nb::handle h : scopes) items.append(h);
        items.append(nb::make_tuple(nb::int_(reinterpret_cast<uintptr_t>(st.get())), nb::bool_(automatic)));
        nb::object value = nb::steal(PyList_AsTuple(items.ptr()));
        if (!value) throw nb::python_error();
        PyObject* t = PyContextVar_Set(mode_scopes(), value.ptr());
        if (!t) throw nb::python_error();
        token = nb::steal(t);
    }
    void exit() {
        if (!token.is_valid()) return;
        if (PyContextVar_Reset(mode_scopes(), token.ptr()) < 0) throw nb::python_error();
        token = nb::object();
    }
};

}  // namespace

bool is_automatic(const State& s) {
    const nb::tuple scopes = current_scopes();
    const uintptr_t me = reinterpret_cast<uintptr_t>(&s);
    for (size_t i = scopes.size(); i-- > 0;) {
        const nb::tuple scope = nb::borrow<nb::tuple>(scopes[i]);
        if (nb::cast<uintptr_t>(scope[0]) == me) return nb::cast<bool>(scope[1]);
    }
    return s.auto_mode;
}

void add_mode_methods(nb::class_<PyContext>& ctx) {
    nb::class_<ModeScope>(ctx, "ModeScope",
                          "A block of code in which the values of one context are evaluated in manual or automatic "
                          "mode: made by Context.manual() and Context.automatic(), used with `with`.")
        .def("__enter__",
             [](nb::pointer_and_handle<ModeScope> self) {
                 self.p->enter();
                 return nb::borrow(self.h);
             })
        .def("__exit__", [](ModeScope& self, nb::handle, nb::handle, nb::handle) { self.exit(); },
             "exc_type"_a.none(), "exc"_a.none(), "traceback"_a.none());
    ctx.def("manual", [](const PyContext& c) { return ModeScope{c.st, false, {}}; },
            "A `with` block in manual mode: every operator on this context's ciphertexts and batches is exactly one "
            "core operation (a product keeps 3 polynomials and its scale; nothing is relinearized, rescaled or "
            "aligned; mismatches raise LevelMismatch / ScaleMismatch). The mode applies to the block, in the current "
            "thread (or asyncio task) only; other threads keep theirs::\n\n"
            "    with ctx.manual():\n"
            "        t = (a * b).relinearize().rescale()")
        .def("automatic", [](const PyContext& c) { return ModeScope{c.st, true, {}}; },
             "A `with` block in automatic mode (for a context made with auto=False): the counterpart of manual().")
        .def_prop_rw(
            "auto", [](const PyContext& c) { return is_automatic(*c.st); },
            [](PyContext& c, bool v) {
                if (PyErr_WarnEx(PyExc_DeprecationWarning,
                                 "setting Context.auto changes the mode of every ciphertext of the context in every "
                                 "thread; use `with ctx.manual():` (or `with ctx.automatic():`) for a block, or "
                                 "auto=... when making the context",
                                 1) < 0)
                    throw nb::python_error();
                c.st->auto_mode = v;
            },
            "Whether this context's values are evaluated in automatic mode here and now: the mode the context was "
            "made with (auto=...), unless a `with ctx.manual():` or `with ctx.automatic():` block says otherwise. "
            "Setting it (deprecated) changes the default for every thread; use the `with` blocks.");
}

// ---- NumPy conversion --------------------------------------------------------------------------

nb::module_ numpy() { return nb::module_::import_("numpy"); }

nb::object numpy_dtype(bool is_complex) { return numpy().attr("dtype")(is_complex ? "complex128" : "float64"); }

namespace {
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

// The array flattened in C order as T (cplx: complex128, double: float64); NumPy copies only
// where the array is not already contiguous of that type.
template <typename T> std::vector<T> flat(nb::handle arr) {
    nb::module_ np = numpy();
    nb::object dtype = np.attr(std::is_same_v<T, cplx> ? "complex128" : "float64");
    nb::object flat = np.attr("ascontiguousarray")(arr, "dtype"_a = dtype).attr("reshape")(-1);
    auto nd = nb::cast<nb::ndarray<const T, nb::ndim<1>, nb::c_contig, nb::device::cpu>>(flat);
    return std::vector<T>(nd.data(), nd.data() + nd.shape(0));
}

}  // namespace

size_t next_pow2(size_t x) {
    size_t p = 1;
    while (p < x) p <<= 1;
    return p;
}

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
    h.values = flat<cplx>(arr);
    return h;
}

HostMatrix to_host_matrix(nb::handle matrix, const char* op, const char* complex_message) {
    nb::object arr = numpy().attr("asarray")(matrix);
    const bool is_complex = complex_kind(arr, op);
    const auto shape = nb::cast<std::vector<size_t>>(arr.attr("shape"));
    if (shape.size() != 2) raise<oboro::ValueError>(op, ": expected a 2-D matrix, got an array of shape ", shape_str(shape));
    if (is_complex) raise<oboro::ValueError>(op, ": ", complex_message);
    return HostMatrix{flat<double>(arr), shape[0], shape[1]};
}

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
    return Encoding{lvl, scale ? *scale : s.ctx->standard_scale(lvl), slots ? *slots : next_pow2(count)};
}

PyPlaintext encode_array(const StatePtr& st, nb::handle values, std::optional<int> level,
                         std::optional<double> scale, std::optional<size_t> slots, const char* op) {
    HostArray h = to_host(values, op);
    const Encoding e = resolve_encoding(*st, h.shape, level, scale, slots, op);
    return PyPlaintext{st, st->encoder->encode(h.values, e.level, e.scale, e.slots), std::move(h.shape), h.is_complex};
}

// ---- small helpers -----------------------------------------------------------------------------

std::string log2_str(double x) { return power_of_two(x, 2); }

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

// Contexts of the same parameters share the core's context id, so the core cannot tell their keys
// apart; the key id (a fingerprint of the public key) identifies the key set here: a context, its
// public() copy and every context deserialized from them share it.
void check_same_keys(const State& a, const State& b, const char* op) {
    if (a.key_id != b.key_id)
        raise<ContextMismatch>(op, ": the operands were encrypted under different keys (by different contexts); "
                               "a ciphertext can only be combined with ciphertexts of the context that encrypted it "
                               "or of copies of it (public(), serialize/deserialize)");
}

}  // namespace oboro::py
