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

#include "oboro/backend/cuda/emulated_queue.hpp"
#include "oboro/ckks/batch.hpp"
#include "oboro/ckks/batch_encoder.hpp"
#if defined(OBORO_WITH_CUDA_RUNTIME)
#include "oboro/backend/cuda/batch_queue.hpp"
#endif
#include "oboro/util/error.hpp"
#include "state.hpp"

using namespace nanobind::literals;

namespace oboro::py {

namespace {
std::mutex device_queues_mutex;
QueuePtr emulated_queue;                // guarded by device_queues_mutex
std::map<int, QueuePtr> cuda_queues;    // by device number, guarded by device_queues_mutex
}  // namespace

std::vector<QueuePtr> device_queues() {
    const std::lock_guard<std::mutex> lock(device_queues_mutex);
    std::vector<QueuePtr> all;
    for (const auto& [index, queue] : cuda_queues) all.push_back(queue);
    if (emulated_queue) all.push_back(emulated_queue);
    return all;
}

// The queue of device "cuda" / "cuda:N", made once per device, or of "cuda-emulated" (the CUDA
// backend's host logic and kernels run by the CPU grid emulator, in separate host allocations: a
// testing device, in every build), made once; the queues are kept for the process (batches in
// their memory share them). "cpu": nullptr. Errors: unknown device names (ValueError), no GPU or a
// build without the CUDA runtime (oboro.Error "no CUDA GPU found ...").
static QueuePtr queue_for_device(const std::string& device) {
    if (device == "cpu") return nullptr;
    if (device == "cuda-emulated") {
        const std::lock_guard<std::mutex> lock(device_queues_mutex);
        if (!emulated_queue) emulated_queue = oboro::cuda::make_emulated_queue();
        return emulated_queue;
    }
    int index = 0;
    if (device.rfind("cuda", 0) != 0 || (device.size() > 4 && device[4] != ':'))
        raise<oboro::ValueError>("device: '", device, "' is not one of 'cpu', 'cuda', 'cuda:N', 'cuda-emulated'");
    if (device.size() > 5) {
        try {
            index = std::stoi(device.substr(5));
        } catch (const std::exception&) {
            raise<oboro::ValueError>("device: '", device, "' does not end in a device number");
        }
    }
#if defined(OBORO_WITH_CUDA_RUNTIME)
    const std::lock_guard<std::mutex> lock(device_queues_mutex);
    auto it = cuda_queues.find(index);
    if (it == cuda_queues.end())  // nothing kept when there is no such device (make_cuda_queue throws)
        it = cuda_queues.emplace(index, oboro::cuda::make_cuda_queue(index)).first;
    return it->second;
#else
    (void)index;
    raise<oboro::Error>("no CUDA GPU found (this oboro was built without the CUDA backend; build it with "
                        "-C cmake.define.OBORO_CUDA=ON on a machine with the CUDA runtime)");
#endif
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
    // Every row encoded and encrypted in one step, in parallel (errors name the row); the
    // encryptor is used with the GIL held: its generator is not thread-safe.
    out.batch = st->encryptor->encrypt_batch(*st->encoder, h.values, h.shape[0], e.level, e.scale, e.slots);
    if (queue) {
        nb::gil_scoped_release release;
        out.batch = out.batch.to_device(queue);
    }
    return out;
}

nb::object decrypt_batch(const State& s, const PyBatch& b) {
    const SessionPtr now = s.snapshot();
    if (!now->decryptor)
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
        for (const std::vector<cplx>& v : now->decryptor->decrypt_decode(b.batch, *s.encoder))
            all.insert(all.end(), v.begin(), v.begin() + long(row));
    }
    return to_numpy(all, b.full_shape(), b.is_complex);
}

// A copy of b in the memory of `device` ('cpu', 'cuda', 'cuda:N', 'cuda-emulated'), where its
// operations then run.
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
    add_encrypted_methods(b, "Batch");
    add_circuit_methods(b, "Batch");
    add_bootstrap_method(b, "Batch");
    add_vector_methods(b, "Batch");
    b.def_static("concat", &concat, "batches"_a,
                 nb::sig("def concat(batches: collections.abc.Sequence[Batch]) -> Batch"),
                 "The elements of `batches`, in order, in one new Batch (as numpy.concatenate joins rows). They "
                 "must share keys, element shape, level, scale and memory ('cpu' or one GPU).");
    b.def_static("from_ciphertexts", &from_ciphertexts, "ciphertexts"_a, "device"_a = "cpu",
                 nb::sig("def from_ciphertexts(ciphertexts: collections.abc.Sequence[Ciphertext], device: str = 'cpu') "
                         "-> Batch"),
                 "A batch of copies of the ciphertexts (one context and keys, one level, scale and shape; else "
                 "ValueError, LevelMismatch, ScaleMismatch or ContextMismatch naming the element), in the memory "
                 "of `device` ('cpu', 'cuda', 'cuda:N', or 'cuda-emulated': a testing device that runs the CUDA "
                 "backend's kernels in a CPU emulator, slow). A single ciphertext goes to a GPU as a batch of one.")
        .def("to", &moved_to, "device"_a,
             "A copy of the batch in the memory of `device` ('cpu', 'cuda', 'cuda:N'), where its operations then "
             "run: a batch received from a client (deserialize) moves to a GPU with to('cuda'), and back with "
             "to('cpu'). 'cuda-emulated' is a testing device: the CUDA backend's kernels run in a CPU emulator "
             "(slow), on separate host memory, in every build. Unknown device names: ValueError; no GPU: "
             "oboro.Error 'no CUDA GPU found'.")
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
            "Where the batch lives and its operations run: 'cpu', 'cuda:N' or 'cuda-emulated'.")
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
        .def_prop_ro("dtype", [](const PyBatch& s) { return numpy_dtype(s.is_complex); },
                     nb::sig("def dtype(self) -> numpy.dtype[typing.Any]"), "float64 or complex128, as decrypt returns.")
        .def_prop_ro("poly_count", [](const PyBatch& s) { return s.batch.size(); },
                     "Polynomials per element: 2, or 3 after a manual-mode multiplication.")
        .def("__repr__", &batch_repr);
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
           "GPU, where every operation on it then runs (oboro.Error 'no CUDA GPU found' when there is none), or "
           "'cuda-emulated', a testing device that runs the CUDA kernels in a CPU emulator (slow).")
        .def(
            "decrypt", [](const PyContext& c, const PyBatch& b) { return decrypt_batch(*c.st, b); }, "batch"_a,
            nb::sig("def decrypt(self, batch: Batch) -> numpy.typing.NDArray[typing.Any]"),
            "Decrypts a Batch: an array of shape (len(batch),) + the element shape, row i from element i.");
}

}  // namespace oboro::py
