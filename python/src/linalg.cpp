// oboro.linalg: encrypted matrices and their products (oboro.linalg.encrypt_matrix, matmul, @,
// rotation_steps, Context.decrypt of an EncryptedMatrix). The algorithms are in
// src/oboro/algorithms/ (matmul_jiang, matmul_3d); this file maps NumPy matrices onto their
// layouts and picks the method.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>

#include "oboro/algorithms/matmul_3d.hpp"
#include "oboro/algorithms/matmul_jiang.hpp"
#include "oboro/algorithms/requirements.hpp"
#include "oboro/util/error.hpp"
#include "state.hpp"

namespace oboro::py {

using namespace nb::literals;
namespace alg = oboro::algorithms;

namespace {

enum class Method { jiang, cube };

const char* method_name(Method m) { return m == Method::jiang ? "jiang" : "3d"; }

size_t next_pow2(size_t x) {
    size_t p = 2;
    while (p < x) p *= 2;
    return p;
}

// The padded dimension d of matrices whose dimensions are `dims` (given d, or the next power of two).
size_t padded_dim(const char* op, const std::vector<size_t>& dims, std::optional<size_t> d) {
    size_t biggest = 1;
    for (size_t x : dims) {
        if (x == 0) raise<oboro::ValueError>(op, ": a matrix dimension is 0");
        biggest = std::max(biggest, x);
    }
    if (!d) return next_pow2(biggest);
    alg::check_matrix_dim(op, *d);
    if (*d < biggest)
        raise<oboro::ValueError>(op, ": d = ", *d, " is smaller than the matrix dimension ", biggest);
    return *d;
}

// "auto": the 3-D method where d^3 fits the slots (fewest operations), else Jiang et al.
Method parse_method(const char* op, const std::string& s, size_t d, size_t max_slots) {
    if (s == "jiang") return Method::jiang;
    if (s == "3d") return Method::cube;
    if (s == "auto") {
        if (d * d * d <= max_slots) return Method::cube;
        if (d * d <= max_slots) return Method::jiang;
        raise<oboro::ValueError>(op, ": a ", d, " x ", d, " matrix does not fit one ciphertext of ", max_slots,
                                 " slots (d^2 > slots); block products are not available yet");
    }
    raise<oboro::ValueError>(op, ": method '", s, "' is not one of 'auto', 'jiang', '3d'");
}

size_t layout_slots(Method m, size_t d) { return m == Method::jiang ? d * d : d * d * d; }

// The algorithm objects (their masks and diagonals are encoded once per level), shared by all
// contexts with the same parameters.
struct Algorithms {
    std::mutex mutex;
    std::map<std::tuple<uint64_t, size_t>, std::shared_ptr<alg::JiangMatmul>> jiang;
    std::map<std::tuple<uint64_t, size_t>, std::shared_ptr<alg::Matmul3D>> cube;

    static Algorithms& get() {
        static Algorithms a;
        return a;
    }
    std::shared_ptr<alg::JiangMatmul> jiang_for(const ContextPtr& ctx, size_t d) {
        std::lock_guard<std::mutex> lock(mutex);
        auto& p = jiang[{ctx->id(), d}];
        if (!p) p = std::make_shared<alg::JiangMatmul>(ctx, d);
        return p;
    }
    std::shared_ptr<alg::Matmul3D> cube_for(const ContextPtr& ctx, size_t d) {
        std::lock_guard<std::mutex> lock(mutex);
        auto& p = cube[{ctx->id(), d}];
        if (!p) p = std::make_shared<alg::Matmul3D>(ctx, d);
        return p;
    }
};

std::vector<int64_t> method_steps(const ContextPtr& ctx, Method m, size_t d) {
    return m == Method::jiang ? Algorithms::get().jiang_for(ctx, d)->rotation_steps()
                              : Algorithms::get().cube_for(ctx, d)->rotation_steps();
}

}  // namespace

// An encrypted real matrix of shape (rows, cols), zero-padded to d x d and laid out for `method`.
struct PyEncryptedMatrix {
    StatePtr st;
    Method method = Method::jiang;
    size_t rows = 0, cols = 0, d = 0;
    Ciphertext ct;
};

namespace {

PyEncryptedMatrix encrypt_matrix(const PyContext& c, nb::handle values, const std::string& method,
                                 std::optional<size_t> d, std::optional<int> level) {
    const char* op = "encrypt_matrix";
    const StatePtr& st = c.st;
    if (!st->encryptor) raise<MissingKey>(op, ": the context has no keys yet; call keygen() first");
    HostArray h = to_host(values, op);
    if (h.shape.size() != 2)
        raise<oboro::ValueError>(op, ": expected a 2-D matrix, got an array of shape ", shape_str(h.shape));
    if (h.is_complex) raise<oboro::ValueError>(op, ": the matrix products take real matrices (got complex values)");
    const size_t max_slots = st->ctx->max_slots();
    const size_t dd = padded_dim(op, h.shape, d);
    const Method m = parse_method(op, method, dd, max_slots);
    const size_t slots = m == Method::jiang ? alg::jiang_slots("matmul_jiang", dd, max_slots)
                                            : alg::cube_slots("matmul_3d", dd, max_slots);
    const int lvl = level ? *level : st->ctx->max_level();
    if (lvl < 0 || lvl > st->ctx->max_level())
        raise<oboro::ValueError>(op, ": level ", lvl, " is not in 0..", st->ctx->max_level());
    std::vector<double> padded(dd * dd, 0.0);
    for (size_t i = 0; i < h.shape[0]; ++i)
        for (size_t j = 0; j < h.shape[1]; ++j) padded[i * dd + j] = h.values[i * h.shape[1] + j].real();
    Plaintext pt = st->encoder->encode(alg::flatten(padded, dd, slots), lvl, st->scales[size_t(lvl)], slots);
    Ciphertext ct = st->encryptor->encrypt(pt);  // with the GIL: the encryptor's generator is not thread-safe
    return PyEncryptedMatrix{st, m, h.shape[0], h.shape[1], dd, std::move(ct)};
}

PyEncryptedMatrix matmul(const PyEncryptedMatrix& a, const PyEncryptedMatrix& b) {
    const char* op = "matmul";
    if (a.st->ctx->id() != b.st->ctx->id() || a.st->key_id != b.st->key_id)
        raise<ContextMismatch>(op, ": the matrices belong to different contexts or keys");
    if (a.cols != b.rows)
        raise<oboro::ValueError>(op, ": shapes (", a.rows, ", ", a.cols, ") and (", b.rows, ", ", b.cols,
                                 ") do not match (", a.cols, " != ", b.rows, ")");
    if (a.method != b.method)
        raise<oboro::ValueError>(op, ": operand 'A' was encrypted for method '", method_name(a.method),
                                 "' and operand 'B' for '", method_name(b.method), "'; use the same method");
    if (a.d != b.d)
        raise<oboro::ValueError>(op, ": operand 'A' is padded to d = ", a.d, " and operand 'B' to d = ", b.d,
                                 "; pass the same d to encrypt_matrix (e.g. d=", std::max(a.d, b.d), ")");
    const State& s = *a.st;
    if (!s.rk) raise<MissingKey>(op, ": no relinearization key; call keygen(relin=True)");
    const std::vector<int64_t> steps = method_steps(s.ctx, a.method, a.d);
    alg::require_rotation_keys(op, *s.ctx, galois_keys(s), steps, "oboro.linalg.rotation_steps(ctx, shape, method)");
    PyEncryptedMatrix out{a.st, a.method, a.rows, b.cols, a.d, {}};
    nb::gil_scoped_release release;
    const alg::CountedOps ops(*s.eval, nullptr);
    if (a.method == Method::jiang)
        out.ct = Algorithms::get().jiang_for(s.ctx, a.d)->multiply(ops, a.ct, b.ct, *s.rk, galois_keys(s));
    else
        out.ct = Algorithms::get().cube_for(s.ctx, a.d)->multiply(ops, a.ct, b.ct, *s.rk, galois_keys(s));
    return out;
}

nb::object decrypt_matrix(const PyContext& c, const PyEncryptedMatrix& m) {
    const State& s = *c.st;
    if (!s.decryptor) raise<MissingKey>("decrypt: this context has no secret key; only the context that holds it can decrypt");
    if (m.st->ctx->id() != s.ctx->id() || m.st->key_id != s.key_id)
        raise<ContextMismatch>("decrypt: the matrix was encrypted under other keys or parameters");
    std::vector<cplx> v;
    {
        nb::gil_scoped_release release;
        v = s.decryptor->decrypt_decode(m.ct, *s.encoder);
    }
    std::vector<cplx> out(m.rows * m.cols);
    for (size_t i = 0; i < m.rows; ++i)
        for (size_t j = 0; j < m.cols; ++j) out[i * m.cols + j] = v[i * m.d + j];
    return to_numpy(out, {m.rows, m.cols}, false);
}

std::vector<int64_t> rotation_steps(const PyContext& c, const std::vector<size_t>& shape, const std::string& method,
                                    std::optional<size_t> d) {
    const char* op = "rotation_steps";
    const size_t dd = padded_dim(op, shape, d);
    const Method m = parse_method(op, method, dd, c.st->ctx->max_slots());
    return method_steps(c.st->ctx, m, dd);
}

}  // namespace

void add_linalg(nb::module_& m, nb::class_<PyContext>& ctx) {
    nb::class_<PyEncryptedMatrix>(m, "EncryptedMatrix",
                                  "An encrypted real matrix laid out for one matrix-product method (make it with "
                                  "oboro.linalg.encrypt_matrix; decrypt it with Context.decrypt).")
        .def_prop_ro("shape", [](const PyEncryptedMatrix& x) { return std::make_tuple(x.rows, x.cols); },
                     "(rows, cols) of the matrix.")
        .def_prop_ro("method", [](const PyEncryptedMatrix& x) { return std::string(method_name(x.method)); },
                     "The product method it is laid out for: 'jiang' or '3d'.")
        .def_prop_ro("d", [](const PyEncryptedMatrix& x) { return x.d; },
                     "The power of two the matrix is zero-padded to (d x d).")
        .def_prop_ro("level", [](const PyEncryptedMatrix& x) { return x.ct.level(); }, "The ciphertext's level.")
        .def("__matmul__", &matmul, "other"_a, "The encrypted product self @ other (see oboro.linalg.matmul).");

    m.def("encrypt_matrix", &encrypt_matrix, "ctx"_a, "matrix"_a, "method"_a = "auto", "d"_a = nb::none(),
          "level"_a = nb::none(),
          nb::sig("def encrypt_matrix(ctx: Context, matrix: numpy.typing.ArrayLike, method: str = 'auto', "
                  "d: int | None = None, level: int | None = None) -> EncryptedMatrix"),
          "Encrypts a real 2-D matrix for the encrypted matrix product (oboro.linalg.encrypt_matrix).");
    m.def("matmul", &matmul, "a"_a, "b"_a, "The encrypted matrix product a @ b (oboro.linalg.matmul).");
    m.def("matmul_rotation_steps", &rotation_steps, "ctx"_a, "shape"_a, "method"_a = "auto", "d"_a = nb::none(),
          "The rotation steps a matrix product needs (oboro.linalg.rotation_steps).");
    ctx.def("decrypt", &decrypt_matrix, "matrix"_a,
            nb::sig("def decrypt(self, matrix: EncryptedMatrix) -> numpy.typing.NDArray[numpy.float64]"),
            "Decrypts an EncryptedMatrix to a float64 array of its shape.");
}

}  // namespace oboro::py
