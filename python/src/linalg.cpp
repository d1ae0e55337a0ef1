// oboro.linalg: encrypted matrices and their products (oboro.linalg.encrypt_matrix, matmul, @,
// rotation_steps, Context.decrypt of an EncryptedMatrix). The algorithms are in
// src/oboro/algorithms/ (matmul_jiang, matmul_3d, matmul_block); this file maps NumPy matrices
// onto their blocks and layouts and picks the method.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <tuple>

#include "oboro/algorithms/matmul_block.hpp"
#include "oboro/algorithms/requirements.hpp"
#include "oboro/util/error.hpp"
#include "buffer.hpp"
#include "oboro/io/serialize.hpp"
#include "state.hpp"

namespace oboro::py {

using namespace nb::literals;
namespace alg = oboro::algorithms;

namespace {

// The values of io::MatrixMethod (the serialized code of each method).
enum class Method : uint8_t { jiang = 0, cube = 1, block = 2 };

const char* method_name(Method m) { return m == Method::jiang ? "jiang" : m == Method::cube ? "3d" : "block"; }

// The matrix dimension d for x: the least power of two >= x, at least 2.
size_t dim_pow2(size_t x) {
    size_t p = 2;
    while (p < x) p *= 2;
    return p;
}

size_t largest_dim(const char* op, const std::vector<size_t>& dims) {
    size_t biggest = 1;
    for (size_t x : dims) {
        if (x == 0) raise<oboro::ValueError>(op, ": a matrix dimension is 0");
        biggest = std::max(biggest, x);
    }
    return biggest;
}

// "auto": the 3-D method where d^3 fits the slots (fewest operations), else Jiang et al. where
// d^2 fits, else blocks.
Method parse_method(const char* op, const std::string& s, size_t d, size_t max_slots) {
    if (s == "jiang") return Method::jiang;
    if (s == "3d") return Method::cube;
    if (s == "block") return Method::block;
    if (s == "auto") return d * d * d <= max_slots ? Method::cube : d * d <= max_slots ? Method::jiang : Method::block;
    raise<oboro::ValueError>(op, ": method '", s, "' is not one of 'auto', 'jiang', '3d', 'block'");
}

// The method and d of matrices with dimensions `dims`: d is the given one or the next power of two
// above the largest dimension (for "block": the block size, by default the largest d with d^2 <=
// slots, no larger than the matrices need).
std::pair<Method, size_t> method_and_dim(const char* op, const std::string& method, const std::vector<size_t>& dims,
                                         std::optional<size_t> d, size_t max_slots) {
    const size_t biggest = largest_dim(op, dims);
    const Method m = parse_method(op, method, dim_pow2(biggest), max_slots);
    if (d) {
        alg::check_matrix_dim(op, *d);
        if (m != Method::block && *d < biggest)
            raise<oboro::ValueError>(op, ": d = ", *d, " is smaller than the matrix dimension ", biggest,
                                     "; use method='block' for matrices larger than d");
        return {m, *d};
    }
    if (m != Method::block) return {m, dim_pow2(biggest)};
    size_t block = 2;
    while (block < biggest && 4 * block * block <= max_slots) block *= 2;
    return {m, block};
}

alg::BlockBase base_of(Method m, size_t d, size_t max_slots) {
    if (m == Method::jiang) return alg::BlockBase::jiang;
    if (m == Method::cube) return alg::BlockBase::cube;
    return alg::BlockMatmul::default_base(d, max_slots);
}

// The algorithm objects (their masks and diagonals are encoded once per level), shared by all
// contexts with the same parameters. A single-ciphertext product is the block product of a 1 x 1
// grid: the same operations as JiangMatmul / Matmul3D::multiply.
struct Algorithms {
    std::mutex mutex;
    std::map<std::tuple<uint64_t, alg::BlockBase, size_t>, std::shared_ptr<alg::BlockMatmul>> cache;

    static Algorithms& get() {
        static Algorithms a;
        return a;
    }
    std::shared_ptr<alg::BlockMatmul> for_(const ContextPtr& ctx, Method m, size_t d) {
        const alg::BlockBase base = base_of(m, d, ctx->max_slots());
        std::lock_guard<std::mutex> lock(mutex);
        auto& p = cache[{ctx->id(), base, d}];
        if (!p) p = std::make_shared<alg::BlockMatmul>(ctx, base, d);
        return p;
    }
};

}  // namespace

// An encrypted real matrix of shape (rows, cols), cut into d x d blocks (one block, zero-padded,
// for "jiang" and "3d") laid out for its method.
struct PyEncryptedMatrix {
    StatePtr st;
    Method method = Method::jiang;
    size_t rows = 0, cols = 0, d = 0;
    alg::BlockGrid grid;
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
    const auto [m, dd] = method_and_dim(op, method, h.shape, d, st->ctx->max_slots());
    const size_t slots = Algorithms::get().for_(st->ctx, m, dd)->slots();  // checks that d fits the method
    const int lvl = level ? *level : st->ctx->max_level();
    if (lvl < 0 || lvl > st->ctx->max_level())
        raise<oboro::ValueError>(op, ": level ", lvl, " is not in 0..", st->ctx->max_level());
    std::vector<double> real(h.values.size());
    for (size_t i = 0; i < real.size(); ++i) real[i] = h.values[i].real();
    const alg::BlockShape shape{h.shape[0], h.shape[1], dd};
    PyEncryptedMatrix out{st, m, h.shape[0], h.shape[1], dd, {shape.grid_rows(), shape.grid_cols(), {}}};
    for (const auto& block : alg::split_blocks(real, shape)) {
        Plaintext pt = st->encoder->encode(alg::flatten(block, dd, slots), lvl, st->ctx->standard_scale(lvl), slots);
        out.grid.blocks.push_back(st->encryptor->encrypt(pt));  // with the GIL: the encryptor's generator is not thread-safe
    }
    return out;
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
        raise<oboro::ValueError>(op, ": operand 'A' is ", a.method == Method::block ? "cut into blocks of" : "padded to",
                                 " d = ", a.d, " and operand 'B' to d = ", b.d,
                                 "; pass the same d to encrypt_matrix (e.g. d=", std::max(a.d, b.d), ")");
    const State& s = *a.st;
    const SessionPtr now = s.snapshot();
    if (!now->relin_key()) raise<MissingKey>(op, ": no relinearization key; call keygen(relin=True)");
    const auto algo = Algorithms::get().for_(s.ctx, a.method, a.d);
    alg::require_rotation_keys(op, *s.ctx, now->galois_keys(), algo->rotation_steps(),
                               "oboro.linalg.rotation_steps(ctx, shape, method)");
    PyEncryptedMatrix out{a.st, a.method, a.rows, b.cols, a.d, {}};
    nb::gil_scoped_release release;
    out.grid = algo->multiply(alg::CountedOps(now->eval, nullptr), a.grid, b.grid, *now->relin_key(), now->galois_keys());
    return out;
}

nb::object decrypt_matrix(const PyContext& c, const PyEncryptedMatrix& m) {
    const State& s = *c.st;
    const SessionPtr now = s.snapshot();
    if (!now->decryptor) raise<MissingKey>("decrypt: this context has no secret key; only the context that holds it can decrypt");
    if (m.st->ctx->id() != s.ctx->id() || m.st->key_id != s.key_id)
        raise<ContextMismatch>("decrypt: the matrix was encrypted under other keys or parameters");
    std::vector<std::vector<double>> blocks;
    {
        nb::gil_scoped_release release;
        for (const Ciphertext& ct : m.grid.blocks) blocks.push_back(alg::unflatten(now->decryptor->decrypt_decode(ct, *s.encoder), m.d));
    }
    const std::vector<double> matrix = alg::join_blocks(blocks, alg::BlockShape{m.rows, m.cols, m.d});
    return to_numpy(std::vector<cplx>(matrix.begin(), matrix.end()), {m.rows, m.cols}, false);
}

// ---- serialization: the layout and the block ciphertexts, one io record ----

io::Bytes serialize_matrix(const PyEncryptedMatrix& x, bool compress) {
    const io::MatrixLayout layout{io::MatrixMethod(uint8_t(x.method)), x.rows, x.cols, x.d,
                                  uint32_t(x.grid.rows), uint32_t(x.grid.cols), x.st->key_id};
    return io::serialize_matrix(*x.st->ctx, layout, x.grid.blocks, compress);
}

PyEncryptedMatrix deserialize_matrix(const StatePtr& st, io::ByteView data) {
    const char* op = "EncryptedMatrix.deserialize";
    io::MatrixLayout layout;
    std::vector<Ciphertext> blocks = io::load_matrix(*st->ctx, data, &layout);
    check_key_id(layout.key_id, *st, op, "matrix");
    const Method m = Method(uint8_t(layout.method));  // io::MatrixMethod has the values of Method
    // The io layer checked the grid; the product method must also accept d on these parameters,
    // with the slot count it encrypts blocks at.
    size_t slots = 0;
    try {
        slots = Algorithms::get().for_(st->ctx, m, size_t(layout.d))->slots();
    } catch (const Error& e) {
        raise<SerializationError>(op, ": the stored layout (method '", method_name(m), "', d = ", layout.d,
                                  ") does not fit these parameters: ", e.what());
    }
    if (blocks[0].slots() != slots)
        raise<SerializationError>(op, ": the blocks have ", blocks[0].slots(), " slots but method '", method_name(m),
                                  "' with d = ", layout.d, " uses ", slots);
    return PyEncryptedMatrix{st, m, size_t(layout.rows), size_t(layout.cols), size_t(layout.d),
                             {layout.grid_rows, layout.grid_cols, std::move(blocks)}};
}

std::string matrix_repr(const PyEncryptedMatrix& x) {
    std::ostringstream os;
    os << "<oboro.EncryptedMatrix shape=(" << x.rows << ", " << x.cols << ") method=" << method_name(x.method)
       << " d=" << x.d << " grid=(" << x.grid.rows << ", " << x.grid.cols << ") level=" << x.grid.blocks.at(0).level()
       << ">";
    return os.str();
}

std::vector<int64_t> rotation_steps(const PyContext& c, const std::vector<size_t>& shape, const std::string& method,
                                    std::optional<size_t> d) {
    const auto [m, dd] = method_and_dim("rotation_steps", method, shape, d, c.st->ctx->max_slots());
    return Algorithms::get().for_(c.st->ctx, m, dd)->rotation_steps();
}

}  // namespace

void add_linalg(nb::module_& m, nb::class_<PyContext>& ctx) {
    nb::class_<PyEncryptedMatrix> matrix(m, "EncryptedMatrix",
                                  "An encrypted real matrix laid out for one matrix-product method (make it with "
                                  "oboro.linalg.encrypt_matrix; decrypt it with Context.decrypt).");
    matrix.def_prop_ro("shape", [](const PyEncryptedMatrix& x) { return std::make_tuple(x.rows, x.cols); },
                     "(rows, cols) of the matrix.")
        .def_prop_ro("method", [](const PyEncryptedMatrix& x) { return std::string(method_name(x.method)); },
                     "The product method it is laid out for: 'jiang', '3d' or 'block'.")
        .def_prop_ro("d", [](const PyEncryptedMatrix& x) { return x.d; },
                     "The power of two the matrix is zero-padded to (d x d), or the block size ('block').")
        .def_prop_ro("grid", [](const PyEncryptedMatrix& x) { return std::make_tuple(x.grid.rows, x.grid.cols); },
                     "(rows, cols) of the grid of d x d blocks, one ciphertext each ((1, 1) unless 'block').")
        .def_prop_ro("base", [](const PyEncryptedMatrix& x) {
                         return std::string(base_of(x.method, x.d, x.st->ctx->max_slots()) == alg::BlockBase::jiang ? "jiang" : "3d");
                     },
                     "The product each block uses: 'jiang' or '3d' (for 'block': '3d' where d^3 fits the slots).")
        .def_prop_ro("level", [](const PyEncryptedMatrix& x) { return x.grid.blocks.at(0).level(); },
                     "The ciphertexts' level.")
        .def_prop_ro("auto", [](const PyEncryptedMatrix& x) { return is_automatic(*x.st); },
                     "Whether the matrix's context is in automatic mode.")
        .def("__repr__", &matrix_repr)
        .def("__matmul__", &matmul, "other"_a, "The encrypted product self @ other (see oboro.linalg.matmul).");
    def_serialization<true>(
        matrix, "EncryptedMatrix", &serialize_matrix, &deserialize_matrix,
        "The matrix as bytes: its layout (method, d, shape, block grid, key id) and each block ciphertext "
        "(compress=True stores the random half of fresh secret-key encryptions as a 32-byte seed). Load with "
        "EncryptedMatrix.deserialize(ctx, data).");

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
