// Plaintext linear algebra on encrypted vectors: oboro.linalg.PlainMatrix, matvec, `M @ ct` and
// `ct @ M` with a NumPy matrix, and ct.dot / ct.mean / ct.var, on a Ciphertext and a Batch.
// Argument conversion and shape checks over the C++ algorithm (src/oboro/algorithms/
// plain_matrix.hpp: the diagonal method with baby-step giant-step and double hoisting), which
// checks levels, scales and keys before any work; the products run without the GIL.
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <unistd.h>

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "oboro/algorithms/plain_matrix.hpp"
#include "oboro/util/error.hpp"
#include "operation.hpp"

using namespace nanobind::literals;

namespace oboro::py {

namespace alg = oboro::algorithms;

// A real matrix and its C++ PlainMatrix per slot count, hoisting and scale (the diagonals are
// computed once per kind and encoded once per level; they are not copied with the object).
struct PyPlainMatrix {
    ContextPtr ctx;
    size_t rows = 0, cols = 0;
    std::shared_ptr<const std::vector<double>> values;  // row-major: the matrix, or its block
    // copies > 0: the block-diagonal matrix of `copies` copies of the block_rows x block_cols
    // matrix `values`, each padded to d x d (rows = cols = copies * d)
    size_t copies = 0, block_rows = 0, block_cols = 0;
    // The encoded diagonals kept once per level (true), encoded at each product (false), or kept
    // when they fit in kept_diagonals_limit() at the top level (nullopt, the default)
    std::optional<bool> keep_diagonals;
    struct Cache {
        std::mutex mutex;
        std::map<std::tuple<size_t, alg::Hoisting, alg::PlaintextScale>, std::shared_ptr<const alg::PlainMatrix>> by_kind;
    };
    std::shared_ptr<Cache> cache = std::make_shared<Cache>();

    std::shared_ptr<const alg::PlainMatrix> for_(size_t slots, alg::Hoisting h, alg::PlaintextScale s) const {
        std::lock_guard<std::mutex> lock(cache->mutex);
        auto& p = cache->by_kind[{slots, h, s}];
        if (p) return p;
        const auto make = [&](bool encode_on_use) {
            alg::MemoryPolicy memory;
            memory.encode_on_use = encode_on_use;
            return copies ? std::make_shared<alg::PlainMatrix>(alg::PlainMatrix::block_diagonal(
                                ctx, *values, block_rows, block_cols, copies, slots, h, s, memory))
                          : std::make_shared<alg::PlainMatrix>(ctx, *values, rows, cols, slots, h, s, memory);
        };
        if (keep_diagonals) return p = make(!*keep_diagonals);
        p = make(false);  // its plaintexts are encoded at the first product, not here
        if (p->plaintext_bytes(ctx->max_level()) > kept_diagonals_limit()) {
            p.reset();
            p = make(true);
        }
        return p;
    }

    // The host memory the encoded diagonals hold now, over every slot count and kind in use.
    size_t kept_bytes() const {
        std::lock_guard<std::mutex> lock(cache->mutex);
        size_t n = 0;
        for (const auto& [kind, p] : cache->by_kind)
            if (p) n += p->kept_plaintext_bytes();
        return n;
    }

    // Half of the machine's physical memory: diagonals kept beyond it would leave too little for
    // the keys and ciphertexts (a dense full-slot matrix at N = 2^15 with 9 levels keeps about 80 GiB).
    static size_t kept_diagonals_limit() {
        static const size_t limit = size_t(sysconf(_SC_PHYS_PAGES)) * size_t(sysconf(_SC_PAGESIZE)) / 2;
        return limit;
    }
};

namespace {

PyPlainMatrix plain_matrix(const ContextPtr& ctx, nb::handle matrix, const char* op) {
    if (nb::isinstance<PyPlainMatrix>(matrix)) {
        const PyPlainMatrix& m = nb::cast<const PyPlainMatrix&>(matrix);
        if (m.ctx->id() != ctx->id()) raise<ContextMismatch>(op, ": the matrix was made for another parameter set");
        return m;
    }
    HostMatrix h = to_host_matrix(matrix, op, "the matrix must be real (got complex values)");
    PyPlainMatrix m;
    m.ctx = ctx;
    m.rows = h.rows;
    m.cols = h.cols;
    m.values = std::make_shared<const std::vector<double>>(std::move(h.values));
    return m;
}

// The transpose (for ct @ M = M^T x); of a block-diagonal matrix, the block's.
PyPlainMatrix transposed(const PyPlainMatrix& m) {
    const size_t r = m.copies ? m.block_rows : m.rows, c = m.copies ? m.block_cols : m.cols;
    auto t = std::make_shared<std::vector<double>>(m.values->size());
    for (size_t i = 0; i < r; ++i)
        for (size_t j = 0; j < c; ++j) (*t)[j * r + i] = (*m.values)[i * c + j];
    PyPlainMatrix out = m;
    out.cache = std::make_shared<PyPlainMatrix::Cache>();
    std::swap(out.rows, out.cols);
    std::swap(out.block_rows, out.block_cols);
    out.values = std::move(t);
    return out;
}

// PlainMatrix(ctx, block, copies=k): diag(block, ..., block), each copy padded to d x d.
PyPlainMatrix block_diagonal(const PyPlainMatrix& block, size_t copies) {
    if (copies == 0) raise<oboro::ValueError>("PlainMatrix: copies must be at least 1");
    PyPlainMatrix m = block;
    const size_t d = next_pow2(std::max(block.rows, block.cols));
    m.copies = copies;
    m.block_rows = block.rows;
    m.block_cols = block.cols;
    m.rows = m.cols = copies * d;
    return m;
}

// y = M x for x in consecutive pieces (all of one type, slot count, level and keys; every piece
// full but the last); `single`: x and y are one ciphertext each (M @ ct), else lists. `m` is of
// x's parameters (plain_matrix checked it for the first piece, check_same_keys the others).
template <typename Py>
std::vector<Py> matvec_pieces(const PyPlainMatrix& m, const std::vector<const Py*>& x, bool single) {
    using T = typename Py::Core;
    const char* op = "matvec";
    if (x.empty()) raise<oboro::ValueError>(op, ": no ciphertexts for x");
    const Py& first = *x[0];
    const size_t slots = first.core().slots();
    size_t values = 0;
    for (size_t j = 0; j < x.size(); ++j) {
        const Py& p = *x[j];
        check_same_keys(*first.st, *p.st, op);
        if (p.element_shape().size() != 1)
            raise<oboro::ValueError>(op, ": x must be a 1-D vector, not of shape ", shape_str(p.element_shape()),
                                     " (reshape it first)");
        if (p.core().slots() != slots)
            raise<oboro::ValueError>(op, ": the pieces of x have ", slots, " and ", p.core().slots(), " slots");
        if (j + 1 < x.size() && p.element_count() != slots)
            raise<oboro::ValueError>(op, ": piece ", j, " of x holds ", p.element_count(), " values; every piece but "
                                     "the last must fill its ", slots, " slots");
        values += p.element_count();
    }
    if (values != m.cols)
        raise<oboro::ValueError>(op, ": the ", m.rows, " x ", m.cols, " matrix needs a vector of ", m.cols,
                                 " values; x has ", values);
    if (single && m.rows > slots)
        raise<oboro::ValueError>(op, ": the product has ", m.rows, " values, more than the ", slots,
                                 " slots of x; encrypt x with slots=", next_pow2(m.rows),
                                 " or pass a list of ciphertexts to oboro.linalg.matvec for the result in pieces");
    const Op<Py> op_(first);
    const alg::Hoisting hoisting =
        op_.eval.queue().extended_basis() ? alg::Hoisting::mod_up_and_mod_down : alg::Hoisting::mod_up;
    // automatic mode: a value at its level's standard scale lands on the standard scale of the
    // level below; any other scale (and manual mode) is kept
    const int level = first.core().level();
    const bool standard = op_.automatic && level >= 1 && first.core().scale() == first.st->ctx->standard_scale(level);
    const auto pm = m.for_(slots, hoisting, standard ? alg::PlaintextScale::standard : alg::PlaintextScale::prime);
    std::vector<Py> out;
    for (size_t i = 0; i < pm->output_count(); ++i) {
        Py r = result_shell(first);
        r.shape = {std::min(slots, m.rows - i * slots)};
        out.push_back(std::move(r));
    }
    nb::gil_scoped_release release;
    std::vector<T> cores;
    for (const Py* p : x) cores.push_back(op_.automatic ? op_.autoeval.relinearize(p->core()) : p->core());
    std::vector<T> y = pm->apply(alg::CountedOps(op_.eval, nullptr), cores, op_.session->galois_keys());
    for (size_t i = 0; i < y.size(); ++i) out[i].core() = std::move(y[i]);
    return out;
}

// The elements of a list of Ciphertexts or of Batches, all of the type of the first.
template <typename Py> std::vector<const Py*> pieces_of(const nb::sequence& seq) {
    std::vector<const Py*> pieces;
    for (nb::handle h : seq) {
        if (!nb::isinstance<Py>(h)) throw nb::type_error("matvec: x must be all Ciphertexts or all Batches");
        pieces.push_back(&nb::cast<const Py&>(h));
    }
    return pieces;
}

// oboro.linalg.matvec(M, x): x a Ciphertext, a Batch, or a list of either (pieces of x).
nb::object matvec(nb::handle matrix, nb::handle x) {
    const char* op = "matvec";
    auto run = [&](const auto& pieces, bool single) -> nb::object {
        const PyPlainMatrix m = plain_matrix(pieces[0]->st->ctx, matrix, op);
        auto y = matvec_pieces(m, pieces, single);
        if (single) return nb::cast(std::move(y[0]));
        nb::list out;
        for (auto& p : y) out.append(nb::cast(std::move(p)));
        return out;
    };
    if (nb::isinstance<PyCiphertext>(x)) return run(std::vector<const PyCiphertext*>{&nb::cast<const PyCiphertext&>(x)}, true);
    if (nb::isinstance<PyBatch>(x)) return run(std::vector<const PyBatch*>{&nb::cast<const PyBatch&>(x)}, true);
    if (nb::isinstance<nb::sequence>(x) && !nb::isinstance<nb::str>(x) && nb::len(x) > 0) {
        nb::sequence seq = nb::borrow<nb::sequence>(x);
        if (nb::isinstance<PyCiphertext>(seq[0])) return run(pieces_of<PyCiphertext>(seq), false);
        if (nb::isinstance<PyBatch>(seq[0])) return run(pieces_of<PyBatch>(seq), false);
    }
    throw nb::type_error(("matvec: x must be a Ciphertext, a Batch or a non-empty list of them, not " +
                          nb::cast<std::string>(nb::repr(x.type())))
                             .c_str());
}

// The rotation steps of y = M x on ciphertexts of `slots` slots (default: the next power of two
// above both dimensions, at most the context's slots): of this matrix's non-zero diagonals, or,
// for a shape (rows, cols), of a dense matrix. The plan of a sparse matrix (banded, diagonal)
// takes other steps than the dense one: list them from the matrix itself.
std::vector<int64_t> rotation_steps(const PyContext& c, nb::handle matrix_or_shape, std::optional<size_t> slots) {
    const char* op = "rotation_steps";
    const ContextPtr& ctx = c.st->ctx;
    const bool is_matrix = nb::isinstance<PyPlainMatrix>(matrix_or_shape) ||
                           nb::cast<size_t>(numpy().attr("ndim")(matrix_or_shape)) == 2;
    const auto default_slots = [&](size_t rows, size_t cols) {
        return slots ? *slots : std::min(next_pow2(std::max(rows, cols)), ctx->max_slots());
    };
    if (is_matrix) {
        const PyPlainMatrix m = plain_matrix(ctx, matrix_or_shape, op);
        return m.for_(default_slots(m.rows, m.cols), alg::Hoisting::mod_up_and_mod_down, alg::PlaintextScale::prime)
            ->rotation_steps();
    }
    // a shape: the steps of a matrix with no zero entry, planned from the shape alone
    const auto shape = nb::cast<std::vector<size_t>>(matrix_or_shape);
    if (shape.size() != 2) raise<oboro::ValueError>(op, ": method 'matvec' takes a matrix or its shape (rows, cols)");
    return alg::PlainMatrix::dense_rotation_steps(*ctx, shape[0], shape[1], default_slots(shape[0], shape[1]),
                                                  alg::Hoisting::mod_up_and_mod_down);
}

template <typename Py> Py matmul_left(const Py& self, nb::handle matrix, bool transpose) {
    PyPlainMatrix m = plain_matrix(self.st->ctx, matrix, transpose ? "ct @ M" : "M @ ct");
    if (transpose) m = transposed(m);
    return std::move(matvec_pieces(m, std::vector<const Py*>{&self}, true)[0]);
}

// The values 1/n (n the element's count) as an array of one element's shape: a product with it
// zeroes the padding slots, whatever they hold after rotations.
nb::object uniform_weights(const std::vector<size_t>& shape) {
    return numpy().attr("full")(to_tuple(shape), 1.0 / double(shape_size(shape)));
}

}  // namespace

template <typename Py> void add_vector_methods(nb::class_<Py>& cls, const char* type_name) {
    auto sig = [&](const std::string& method, const std::string& text) {
        return signature(std::string(type_name) + "." + method, text);
    };
    const std::string t = type_name;
    cls.def("__rmatmul__", [](const Py& s, nb::handle m) { return matmul_left(s, m, false); }, "matrix"_a,
            sig("rmatmul", "def __rmatmul__(self, matrix: numpy.typing.ArrayLike | PlainMatrix, /) -> " + t),
            "M @ self: a real matrix (NumPy array or oboro.linalg.PlainMatrix) times the encrypted vector (see "
            "oboro.linalg.matvec). One level; the rotation keys of oboro.linalg.keygen(ctx, M.shape, method='matvec').")
        .def("__matmul__", [](const Py& s, nb::handle m) { return matmul_left(s, m, true); }, "matrix"_a,
             sig("matmul", "def __matmul__(self, matrix: numpy.typing.ArrayLike | PlainMatrix, /) -> " + t),
             "self @ M = M.T @ self (the vector as a row). One level; the keys of M.T's shape.")
        .def(
            "dot",
            [](const Py& s, nb::handle v) {
                if (s.element_shape().size() != 1) raise<oboro::ValueError>("dot: defined for 1-D vectors");
                return nb::cast<Py>(nb::cast(s).attr("__mul__")(v).attr("sum")());
            },
            "other"_a, sig("dot", "def dot(self, other: numpy.typing.ArrayLike | " + t + ") -> " + t),
            "The inner product sum_i x_i v_i with a vector of the same length (plain values or encrypted), in every "
            "slot: (self * other).sum(). One level in automatic mode; needs the keys of ctx.sum_rotations(slots=...).")
        .def(
            "mean",
            [](const Py& s) {
                return nb::cast<Py>(nb::cast(s).attr("__mul__")(uniform_weights(s.element_shape())).attr("sum")());
            },
            "The mean of the values in every slot: (self * (1/n)).sum() with 1/n in the used slots only (so padding "
            "slots do not count). One level; the keys of ctx.sum_rotations(slots=...).")
        .def(
            "var",
            [](const Py& s) {
                if (!is_automatic(*s.st))
                    raise<oboro::ValueError>("var: needs automatic mode (it chains products and rescales); use "
                                             "`with ctx.automatic():`");
                nb::object x = nb::cast(s);
                nb::object d = x.attr("__sub__")(x.attr("mean")());
                return nb::cast<Py>(d.attr("square")().attr("mean")());
            },
            "The population variance mean((x - mean(x))^2) in every slot (two passes: no cancellation for values "
            "far from 0). Three levels in automatic mode; the keys of ctx.sum_rotations(slots=...).");
}

template void add_vector_methods(nb::class_<PyCiphertext>&, const char*);
template void add_vector_methods(nb::class_<PyBatch>&, const char*);

void add_matvec(nb::module_& m) {
    nb::class_<PyPlainMatrix>(m, "PlainMatrix",
                              "A real matrix to multiply encrypted vectors with (oboro.linalg.matvec): its diagonals "
                              "are computed once per slot count and encoded once per level, so repeated products "
                              "cost only the homomorphic work. PlainMatrix(ctx, matrix). A matrix whose encoded "
                              "diagonals would take more than half of the machine's memory encodes them at each "
                              "product instead (keep_diagonals chooses).\n\n"
                              "PlainMatrix(ctx, B, copies=k) is the block-diagonal matrix diag(B, ..., B) of k copies "
                              "of B, each padded to d x d (d the next power of two above B's dimensions): it applies B "
                              "to k vectors packed in one ciphertext at a stride of d (vector t in slots t*d ..), at "
                              "the cost of one product of B whatever k is. Its shape is (k*d, k*d).")
        .def("__init__",
             [](PyPlainMatrix* self, const PyContext& c, nb::handle matrix, std::optional<size_t> copies,
                std::optional<bool> keep_diagonals) {
                 PyPlainMatrix m = plain_matrix(c.st->ctx, matrix, "PlainMatrix");
                 m.keep_diagonals = keep_diagonals;
                 new (self) PyPlainMatrix(copies ? block_diagonal(m, *copies) : m);
             },
             "ctx"_a, "matrix"_a, "copies"_a = nb::none(), "keep_diagonals"_a = nb::none(),
             nb::sig("def __init__(self, ctx: Context, matrix: numpy.typing.ArrayLike, copies: int | None = None, "
                     "keep_diagonals: bool | None = None) -> None"))
        .def_prop_ro("keep_diagonals", [](const PyPlainMatrix& p) { return p.keep_diagonals; },
                     "True: the encoded diagonals are kept once per level (repeated products cost only the "
                     "homomorphic work); False: encoded again at each product, a giant group at a time (little "
                     "memory, slower); None (the default): kept unless they would take more than half of the "
                     "machine's memory at the context's top level.")
        .def_prop_ro("memory_bytes", &PyPlainMatrix::kept_bytes,
                     "The host memory its encoded diagonals hold now (0 before the first product, and with "
                     "keep_diagonals=False).")
        .def_prop_ro("shape", [](const PyPlainMatrix& p) { return std::make_tuple(p.rows, p.cols); })
        .def_prop_ro("T", &transposed, "The transpose (a new PlainMatrix).")
        .def("__matmul__", [](const PyPlainMatrix& p, nb::handle x) { return matvec(nb::cast(p), x); }, "x"_a,
             nb::sig("def __matmul__(self, x: Ciphertext | Batch | collections.abc.Sequence[Ciphertext] | "
                     "collections.abc.Sequence[Batch], /) -> typing.Any"),
             "self @ x: oboro.linalg.matvec(self, x).")
        .def("__repr__",
             [](const PyPlainMatrix& p) {
                 return "PlainMatrix(shape=(" + std::to_string(p.rows) + ", " + std::to_string(p.cols) + "))";
             })
        .def(
            "diagonal_count",
            [](const PyPlainMatrix& p, size_t slots) {
                return p.for_(slots, alg::Hoisting::mod_up_and_mod_down, alg::PlaintextScale::prime)->diagonal_count();
            },
            "slots"_a, "The non-zero diagonals (plaintexts per level) the product on `slots` slots multiplies.");
    m.def("matvec", &matvec, "matrix"_a, "x"_a,
          nb::sig("def matvec(matrix: numpy.typing.ArrayLike | PlainMatrix, x: Ciphertext | Batch | "
                  "collections.abc.Sequence[Ciphertext] | collections.abc.Sequence[Batch]) -> typing.Any"),
          "y = M x (oboro.linalg.matvec).");
    m.def("matvec_rotation_steps", &rotation_steps, "ctx"_a, "matrix"_a, "slots"_a = nb::none(),
          nb::sig("def matvec_rotation_steps(ctx: Context, matrix: numpy.typing.ArrayLike | PlainMatrix | "
                  "collections.abc.Sequence[int], slots: int | None = None) -> list[int]"),
          "The rotation steps (sorted, distinct) of matvec with this matrix (its non-zero diagonals), or with a "
          "dense matrix of this shape (rows, cols), on ciphertexts of `slots` slots (default: the next power of two "
          "above both dimensions).");
}

}  // namespace oboro::py
