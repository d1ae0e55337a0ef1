// oboro.linalg: encrypted matrices and their products (oboro.linalg.encrypt_matrix, matmul, @,
// rotation_steps, Context.decrypt of an EncryptedMatrix). The algorithms are in
// src/oboro/algorithms/ (matmul_jiang, matmul_3d, matmul_block); this file maps NumPy matrices
// onto their blocks and layouts and picks the method.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <tuple>
#include <utility>

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
    HostMatrix h = to_host_matrix(values, op, "the matrix products take real matrices (got complex values)");
    const std::vector<size_t> dims{h.rows, h.cols};
    const auto [m, dd] = method_and_dim(op, method, dims, d, st->ctx->max_slots());
    const size_t slots = Algorithms::get().for_(st->ctx, m, dd)->slots();  // checks that d fits the method
    const int lvl = level ? *level : st->ctx->max_level();
    if (lvl < 0 || lvl > st->ctx->max_level())
        raise<oboro::ValueError>(op, ": level ", lvl, " is not in 0..", st->ctx->max_level());
    const alg::BlockShape shape{h.rows, h.cols, dd};
    PyEncryptedMatrix out{st, m, h.rows, h.cols, dd, {shape.grid_rows(), shape.grid_cols(), {}}};
    for (const auto& block : alg::split_blocks(h.values, shape)) {
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

// ---- bands of blocks and their join: how a block product is cut into independent tiles ----

// Block rows [r.first, r.second) and block columns [c.first, c.second) of x, with the true shape of
// that part of the matrix (a band at the bottom or right edge keeps x's smaller last block). The
// block ciphertexts are copied.
PyEncryptedMatrix matrix_band(const PyEncryptedMatrix& x, std::pair<size_t, size_t> r, std::pair<size_t, size_t> c) {
    const char* op = "EncryptedMatrix.band";
    for (const auto& [range, count, name] : {std::tuple{r, x.grid.rows, "block_rows"}, std::tuple{c, x.grid.cols, "block_cols"}})
        if (range.first >= range.second || range.second > count)
            raise<oboro::ValueError>(op, ": ", name, " (", range.first, ", ", range.second,
                                     ") is not a non-empty range of block indices in 0..", count);
    PyEncryptedMatrix out{x.st, x.method, std::min(x.rows, x.d * r.second) - x.d * r.first,
                          std::min(x.cols, x.d * c.second) - x.d * c.first, x.d,
                          {r.second - r.first, c.second - c.first, {}}};
    out.grid.blocks.reserve(out.grid.rows * out.grid.cols);
    for (size_t i = r.first; i < r.second; ++i)
        for (size_t j = c.first; j < c.second; ++j) out.grid.blocks.push_back(x.grid.blocks[i * x.grid.cols + j]);
    return out;
}

// The matrix whose block grid is the tiles' grids side by side: tiles[i][j] is tile row i, column
// j; the tiles of a row share their block rows, those of a column their block columns, and only the
// last row and column of tiles may end in a partial block (as the bands of one matrix do).
PyEncryptedMatrix matrix_join(const std::vector<std::vector<const PyEncryptedMatrix*>>& tiles) {
    const char* op = "EncryptedMatrix.join";
    if (tiles.empty() || tiles[0].empty()) raise<oboro::ValueError>(op, ": no tiles");
    for (const auto& row : tiles)
        for (const PyEncryptedMatrix* t : row)
            if (!t) raise<oboro::ValueError>(op, ": a tile is None");
    if (tiles[0][0]->method != Method::block && (tiles.size() != 1 || tiles[0].size() != 1))
        raise<oboro::ValueError>(op, ": method '", method_name(tiles[0][0]->method),
                                 "' holds one block; only 'block' matrices are joined from several tiles");
    const PyEncryptedMatrix& first = *tiles[0][0];
    const Ciphertext& ref = first.grid.blocks.at(0);
    size_t rows = 0, cols = 0, grid_rows = 0, grid_cols = 0;
    for (size_t i = 0; i < tiles.size(); ++i) {
        if (tiles[i].size() != tiles[0].size())
            raise<oboro::ValueError>(op, ": tile row ", i, " has ", tiles[i].size(), " tiles, row 0 has ", tiles[0].size());
        for (size_t j = 0; j < tiles[i].size(); ++j) {
            const PyEncryptedMatrix& t = *tiles[i][j];
            const std::string at = oboro::detail::concat("tile (", i, ", ", j, ")");
            check_same_keys(*first.st, *t.st, oboro::detail::concat(op, ": ", at).c_str());
            if (t.method != first.method || t.d != first.d)
                raise<oboro::ValueError>(op, ": ", at, " is method '", method_name(t.method), "' with d = ", t.d,
                                         ", tile (0, 0) '", method_name(first.method), "' with d = ", first.d);
            const Ciphertext& b = t.grid.blocks.at(0);  // a matrix's blocks share level and scale
            if (b.level() != ref.level())
                raise<LevelMismatch>(op, ": ", at, " is at level ", b.level(), ", tile (0, 0) at ", ref.level());
            if (b.scale() != ref.scale()) raise<ScaleMismatch>(op, ": ", at, "'s scale differs from tile (0, 0)'s");
            if (t.grid.rows != tiles[i][0]->grid.rows || t.rows != tiles[i][0]->rows)
                raise<oboro::ValueError>(op, ": ", at, " has ", t.rows, " rows in ", t.grid.rows,
                                         " blocks, the first tile of its row ", tiles[i][0]->rows, " in ",
                                         tiles[i][0]->grid.rows);
            if (t.grid.cols != tiles[0][j]->grid.cols || t.cols != tiles[0][j]->cols)
                raise<oboro::ValueError>(op, ": ", at, " has ", t.cols, " columns in ", t.grid.cols,
                                         " blocks, the first tile of its column ", tiles[0][j]->cols, " in ",
                                         tiles[0][j]->grid.cols);
            const bool last_row = i + 1 == tiles.size(), last_col = j + 1 == tiles[i].size();
            if ((!last_row && t.rows != t.d * t.grid.rows) || (!last_col && t.cols != t.d * t.grid.cols))
                raise<oboro::ValueError>(op, ": ", at, " ends in a partial block (", t.rows, " x ", t.cols,
                                         " in ", t.grid.rows, " x ", t.grid.cols, " blocks of ", t.d,
                                         ") but is not in the last tile row or column");
        }
        rows += tiles[i][0]->rows;
        grid_rows += tiles[i][0]->grid.rows;
    }
    for (const PyEncryptedMatrix* t : tiles[0]) cols += t->cols, grid_cols += t->grid.cols;
    PyEncryptedMatrix out{first.st, first.method, rows, cols, first.d, {grid_rows, grid_cols, {}}};
    out.grid.blocks.reserve(grid_rows * grid_cols);
    for (const auto& row : tiles)
        for (size_t i = 0; i < row[0]->grid.rows; ++i)
            for (const PyEncryptedMatrix* t : row)
                for (size_t j = 0; j < t->grid.cols; ++j) out.grid.blocks.push_back(t->grid.blocks[i * t->grid.cols + j]);
    return out;
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
        .def("band", &matrix_band, "block_rows"_a, "block_cols"_a,
             "The part of the matrix in block rows [block_rows[0], block_rows[1]) and block columns "
             "[block_cols[0], block_cols[1]) of its grid, as an EncryptedMatrix of that part's shape (the blocks "
             "are copied). With EncryptedMatrix.join, how a block product is cut into independent tiles.")
        .def_static("join", &matrix_join, "tiles"_a,
                    "One matrix from a grid of tiles (tiles[i][j]: tile row i, column j), their block grids side "
                    "by side: the inverse of cutting a matrix into bands. The tiles of a row share their block "
                    "rows, those of a column their block columns; all share the context, keys, method, d, level "
                    "and scale.")
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
