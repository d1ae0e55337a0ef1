// What the binding files of oboro._core share: the state of a Python context (parameters, keys,
// mode), the Python-side ciphertext (a core ciphertext plus the NumPy shape and dtype), and the
// helpers that more than one file uses. Implementations are in ckks.cpp unless noted.
#pragma once

#include <complex>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>

#include "oboro/ckks/ciphertext.hpp"
#include "oboro/ckks/context.hpp"
#include "oboro/ckks/encoder.hpp"
#include "oboro/ckks/encryptor.hpp"
#include "oboro/ckks/evaluator.hpp"
#include "oboro/ckks/keys.hpp"
#include "oboro/ckks/parameters.hpp"
#include "oboro/ckks/trace.hpp"

namespace oboro::py {

namespace nb = nanobind;
using namespace oboro::ckks;
using cplx = std::complex<double>;

// The state shared by a context and its ciphertexts.
struct State {
    ContextPtr ctx;
    std::shared_ptr<const Encoder> encoder;
    std::shared_ptr<const Evaluator> eval;
    std::vector<double> scales;  // standard scale of each level
    std::string preset;          // preset name, or empty
    // Keys are immutable once published; keygen replaces the pointers (copy on write), so a
    // context made by public() keeps the keys it had.
    std::shared_ptr<const SecretKey> sk;
    std::shared_ptr<const PublicKey> pk;
    std::shared_ptr<const RelinKey> rk;
    std::shared_ptr<const GaloisKeys> gk;
    std::set<int64_t> rotations;  // the steps asked for in keygen
    bool conjugation = false;
    std::shared_ptr<Encryptor> encryptor;  // secret key if there is one, else public key
    std::shared_ptr<const Decryptor> decryptor;
    bool auto_mode = true;
    uint64_t key_id = 0;  // io::key_id of the public key (0: no keys); serialized with ciphertexts
};
using StatePtr = std::shared_ptr<State>;

struct PyContext {
    StatePtr st;
};

// The number of values an array of `shape` holds (1 for a scalar's empty shape).
inline size_t shape_size(const std::vector<size_t>& shape) {
    size_t c = 1;
    for (size_t d : shape) c *= d;
    return c;
}

struct PyCiphertext {
    StatePtr st;
    Ciphertext ct;
    std::vector<size_t> shape;
    bool is_complex = false;

    size_t count() const { return shape_size(shape); }
};

// The result of an operation on `self` (a PyCiphertext or a PyBatch) before it is computed:
// self's state, element shape and dtype, no data yet. Binary operators write sums and
// differences straight into it (no copy of self: at S4 the copy cost as much as the addition);
// moves, selections and rotations fill it with their output.
template <typename Py> Py result_shell(const Py& self) {
    Py out;
    out.st = self.st;
    out.shape = self.shape;
    out.is_complex = self.is_complex;
    return out;
}

// An encoded, unencrypted array (oboro.Plaintext): a core plaintext plus the NumPy shape and dtype.
struct PyPlaintext {
    StatePtr st;
    Plaintext pt;
    std::vector<size_t> shape;
    bool is_complex = false;
};

// The binary operators of Ciphertext (rsub: other - self).
enum class BinOp { add, sub, rsub, mul, div };

inline const GaloisKeys& galois_keys(const State& s) {
    static const GaloisKeys empty;
    return s.gk ? *s.gk : empty;
}
inline const RelinKey& relin_key(const State& s) {
    static const RelinKey empty;
    return s.rk ? *s.rk : empty;
}

// A context state for the parameters (no keys yet).
StatePtr make_state(const Parameters& params, std::string preset, bool auto_mode);
StatePtr make_state(ContextPtr ctx, std::string preset, bool auto_mode);
// Rebuilds the encryptor/decryptor after the keys changed (secret key if present, else public
// key) and sets the key id when it is not set yet.
void refresh_crypto(State& s);

// NumPy conversion: np.asarray(values) flattened in C order (broadcast to `target` if given), and
// back to an array of `shape` (float64 unless is_complex).
struct HostArray {
    std::vector<cplx> values;
    std::vector<size_t> shape;
    bool is_complex = false;
};
HostArray to_host(nb::handle values, const char* op, const std::vector<size_t>* target = nullptr);
nb::object to_numpy(const std::vector<cplx>& v, const std::vector<size_t>& shape, bool is_complex);
// numpy.dtype("complex128") or numpy.dtype("float64").
nb::object numpy_dtype(bool is_complex);
// The level, scale and slot count of an encoding of an array of `shape` (`op` names the caller
// in errors): checks the size, level and slot count and applies the defaults (top level, the
// level's standard scale, the next power of two of slots).
struct Encoding {
    int level;
    double scale;
    size_t slots;
};
Encoding resolve_encoding(const State& s, const std::vector<size_t>& shape, std::optional<int> level,
                          std::optional<double> scale, std::optional<size_t> slots, const char* op);
// The encoding of `values` for encrypt/encode (`op` names the caller in errors): checks the size,
// level and slot count and applies the defaults (top level, the level's standard scale, the
// smallest power of two >= the size).
PyPlaintext encode_array(const StatePtr& st, nb::handle values, std::optional<int> level,
                         std::optional<double> scale, std::optional<size_t> slots, const char* op);

// Scales equal to the evaluator's tolerance (2^-40 relative).
bool same_scale(double a, double b);
std::string shape_str(const std::vector<size_t>& shape);
nb::tuple to_tuple(const std::vector<size_t>& v);

std::string log2_str(double x);  // "2^40.00"
// ContextMismatch unless both states share their keys (same key id).
void check_same_keys(const State& a, const State& b, const char* op);

// Automatic mode helpers (work on core data; call them without the GIL).
void relinearize_if_needed(const State& s, Ciphertext& x, const char* op);
// LevelMismatch when no level is left for the rescale after a multiplication.
void check_level_for_multiply(const Ciphertext& a, const char* op);
// The plaintext scale t that makes a product at (level, scale) land on the standard scale of the
// level below after the rescale; `operand` describes the operand in errors.
double product_scale(const State& s, int level, double scale, const std::string& operand, const char* op);
// The step (reduced modulo `slots`) or its equivalent step -+ slots that has a Galois key; 0 for
// a multiple of the slots; nullopt when neither has a key.
std::optional<int64_t> keyed_step(const State& s, int64_t step, int64_t slots);
// The keyed steps whose rotations, one after the other, rotate by k modulo `slots` (automatic
// mode): the step itself when it has a key, else its shortest decomposition into signed powers of
// two that have keys; empty for a multiple of the slots. MissingKey when there is none.
std::vector<int64_t> rotation_plan(const State& s, int64_t k, int64_t slots);
// A rotation by k: manual mode needs exactly that key; automatic mode reduces k modulo the slots
// and composes it from keyed steps when needed (rotation_plan).
void rotate(const State& s, Ciphertext& a, int64_t k);

// The arguments of ct.sum / Batch.sum / Context.sum_rotations (trace.cpp): the spec of exactly
// one of block / stride+count / nothing (all slots), and (strategy, h) for the core, where
// 'hoisted' without h takes the cost model's h at `level`. ValueError for invalid combinations.
SumSpec parse_spec(const char* op, size_t slots, std::optional<size_t> block, std::optional<int64_t> stride,
                   std::optional<size_t> count);
std::pair<SumStrategy, int> parse_h(const char* op, const Context& ctx, int level, const SumSpec& spec,
                                    const std::string& strategy, std::optional<int> h);
// The docstring of ct.sum, shared with Batch.sum.
extern const char* const kSumDoc;

// ciphertext (op) plaintext in place, in the context's mode (plaintext.cpp; without the GIL).
void plaintext_op(const State& s, Ciphertext& a, const Plaintext& b, BinOp op);

// Registration hooks of the other binding files, called by register_ckks once the classes exist.
nb::class_<PyPlaintext> add_plaintext_class(nb::module_& m, nb::class_<PyContext>& ctx);  // plaintext.cpp
void add_serialization_methods(nb::module_& m, nb::class_<PyContext>& ctx, nb::class_<PyCiphertext>& ct,
                               nb::class_<PyPlaintext>& pt);  // serialize.cpp
void add_trace_methods(nb::class_<PyContext>& ctx, nb::class_<PyCiphertext>& ct);  // trace.cpp
void add_batch_class(nb::module_& m, nb::class_<PyContext>& ctx);                   // batch.cpp
void add_linalg(nb::module_& m, nb::class_<PyContext>& ctx);                        // linalg.cpp

}  // namespace oboro::py
