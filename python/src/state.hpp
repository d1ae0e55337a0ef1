// What the binding files of oboro._core share: the state of a Python context (parameters, keys,
// mode), the Python-side encrypted and encoded types, and the helpers that more than one file
// uses (state.cpp unless noted). The binding converts NumPy data and arguments; every decision of
// automatic mode is the C++ core's (ckks/auto_evaluator.hpp).
//
// Threads. Operations release the GIL while they compute. Everything an operation uses after
// releasing it comes from a Session: an immutable snapshot of the keys, the evaluator and the
// decryptor, which the operation copies (a shared_ptr) while it still holds the GIL. keygen() and
// the noise_flooding setter never change a published Session: they publish a new one, so an
// operation running in another thread keeps what it started with.
#pragma once

#include <complex>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>

#include "oboro/algorithms/bootstrap_set.hpp"
#include "oboro/ckks/auto_evaluator.hpp"
#include "oboro/ckks/batch.hpp"
#include "oboro/ckks/ciphertext.hpp"
#include "oboro/ckks/context.hpp"
#include "oboro/ckks/encoder.hpp"
#include "oboro/ckks/encryptor.hpp"
#include "oboro/ckks/evaluator.hpp"
#include "oboro/ckks/key_set.hpp"
#include "oboro/ckks/keygen.hpp"
#include "oboro/ckks/keys.hpp"
#include "oboro/ckks/parameters.hpp"
#include "oboro/ckks/trace.hpp"

namespace oboro::py {

namespace nb = nanobind;
using namespace oboro::ckks;
using cplx = std::complex<double>;

// The keys of a context at one moment and what is made from them. Immutable once published.
struct Session {
    SecretKeyPtr sk;  // the one secret key, shared with the decryptor, encryptor and key generator
    std::shared_ptr<const PublicKey> pk;
    std::shared_ptr<const MemoryKeySet> keys;     // relinearization and Galois keys
    std::shared_ptr<const Decryptor> decryptor;   // with the secret key only
    Evaluator eval;                               // on the CPU queue, with `keys`
    std::set<int64_t> rotations;                  // the steps asked for in keygen
    bool conjugation = false;
    std::shared_ptr<const algorithms::BootstrapSet> bootstrapping;  // keygen(bootstrap=...) or loaded, else null

    const RelinKey* relin_key() const { return keys->relin_key(); }
    const GaloisKeys& galois_keys() const;
    // The evaluator of operands in `queue`'s memory (nullptr: the CPU) and its automatic mode.
    Evaluator evaluator_on(const QueuePtr& queue) const { return queue ? eval.on(queue) : eval; }
};
using SessionPtr = std::shared_ptr<const Session>;

// The state shared by a context and everything made with it. Always made by std::make_shared
// (the registry below keeps weak references to it).
struct State : std::enable_shared_from_this<State> {
    ContextPtr ctx;
    std::shared_ptr<const Encoder> encoder;
    std::string preset;  // preset name, or empty
    // Read and replaced with the GIL held; operations copy it before they release the GIL.
    SessionPtr session;
    // The encryptor (secret key if there is one, else public key): used with the GIL held, its
    // generator is not thread-safe.
    std::shared_ptr<Encryptor> encryptor;
    bool auto_mode = true;  // the default mode; Context.manual() / automatic() scope it
    bool auto_bootstrap = false;  // automatic mode bootstraps a product's operand at level 0
    uint64_t key_id = 0;    // io::key_id of the public key (0: no keys); serialized with ciphertexts
    // One keygen() at a time (it computes without the GIL and publishes after).
    std::shared_ptr<std::mutex> keygen_mutex = std::make_shared<std::mutex>();
    // The generator of the secret key's keys, made by the first keygen() that needs it (from the
    // operating system, or from keygen's seed_for_testing) and used by every later one, so that a
    // context keyed from a seed makes the same keys again for the same calls. Used and replaced
    // only under keygen_mutex. Null in a context without the secret key.
    std::shared_ptr<KeyGenerator> keygen;

    // The session of the moment (call with the GIL held).
    SessionPtr snapshot() const { return session; }
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

// oboro.Ciphertext: a core ciphertext plus the NumPy shape and dtype of the encrypted array.
struct PyCiphertext {
    using Core = Ciphertext;
    StatePtr st;
    Ciphertext ct;
    std::vector<size_t> shape;
    bool is_complex = false;

    Core& core() { return ct; }
    const Core& core() const { return ct; }
    size_t count() const { return shape_size(shape); }
    // The values of one element (the whole ciphertext).
    size_t element_count() const { return count(); }
    const std::vector<size_t>& element_shape() const { return shape; }
};

// oboro.Batch: a core CiphertextBatch plus the NumPy shape and dtype of ONE element.
struct PyBatch {
    using Core = CiphertextBatch;
    StatePtr st;
    CiphertextBatch batch;
    std::vector<size_t> shape;  // of one element
    bool is_complex = false;

    Core& core() { return batch; }
    const Core& core() const { return batch; }
    size_t element_count() const { return shape_size(shape); }
    const std::vector<size_t>& element_shape() const { return shape; }
    std::vector<size_t> full_shape() const {
        std::vector<size_t> s = {batch.count()};
        s.insert(s.end(), shape.begin(), shape.end());
        return s;
    }
};

// The result of an operation on `self` (a PyCiphertext or a PyBatch) before it is computed:
// self's state, element shape and dtype, no data yet.
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

// The binary operators of the encrypted types (rsub: other - self).
enum class BinOp { add, sub, rsub, mul, div };

// ---- contexts --------------------------------------------------------------------------------

// A context state for the parameters (no keys yet).
StatePtr make_state(const Parameters& params, std::string preset, bool auto_mode);
StatePtr make_state(ContextPtr ctx, std::string preset, bool auto_mode);
// Publishes a session made of these keys (any may be null): the evaluator, the key set and the
// decryptor follow, and the encryptor and the key id when the secret or public key changed.
// With the GIL held.
void publish(State& s, SecretKeyPtr sk, std::shared_ptr<const PublicKey> pk,
             std::shared_ptr<const RelinKey> rk, std::shared_ptr<const GaloisKeys> gk, std::set<int64_t> rotations,
             bool conjugation, double noise_flooding = 0);
// Publishes the current session with `b` as its bootstrapping (with the GIL held).
void publish_bootstrapping(State& s, std::shared_ptr<const algorithms::BootstrapSet> b);
// Whether operations on values of `s` run in automatic mode here and now: the context's default,
// unless a Context.manual() / Context.automatic() block of the current Python context says
// otherwise (with the GIL held).
bool is_automatic(const State& s);
// Registers Context.manual / Context.automatic and the deprecated setter of Context.auto.
void add_mode_methods(nb::class_<PyContext>& ctx);

// ---- NumPy conversion ------------------------------------------------------------------------

// np.asarray(values) flattened in C order (broadcast to `target` if given), and back to an array
// of `shape` (float64 unless is_complex).
struct HostArray {
    std::vector<cplx> values;
    std::vector<size_t> shape;
    bool is_complex = false;
};
HostArray to_host(nb::handle values, const char* op, const std::vector<size_t>* target = nullptr);
// np.asarray(matrix) as a real 2-D matrix, flattened row-major into doubles (8 bytes a value, where
// to_host keeps 16: a large matrix is converted once, without a complex copy): ValueError "op:
// expected a 2-D matrix" for another shape, and "op: <complex_message>" for complex values, both
// before any conversion.
struct HostMatrix {
    std::vector<double> values;
    size_t rows = 0, cols = 0;
};
HostMatrix to_host_matrix(nb::handle matrix, const char* op, const char* complex_message);
nb::object to_numpy(const std::vector<cplx>& v, const std::vector<size_t>& shape, bool is_complex);
// numpy.dtype("complex128") or numpy.dtype("float64").
nb::object numpy_dtype(bool is_complex);
nb::module_ numpy();
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
// The encoding of `values` for encode (`op` names the caller in errors).
PyPlaintext encode_array(const StatePtr& st, nb::handle values, std::optional<int> level,
                         std::optional<double> scale, std::optional<size_t> slots, const char* op);

std::string shape_str(const std::vector<size_t>& shape);
nb::tuple to_tuple(const std::vector<size_t>& v);
std::string log2_str(double x);  // "2^40.00"
// The least power of two >= x (1 for x = 0).
size_t next_pow2(size_t x);

// The live states that hold keys, by key id: publish() registers a state once it has a public key,
// so that an unpickled ciphertext finds the context whose keys encrypted it (pickling.cpp). The
// state with the secret key comes first, so results sent back to the client decrypt there.
// key_id 0 (a plaintext): any state of the parameters `context_id`. nullptr when none is alive.
StatePtr find_state(uint64_t key_id, uint64_t context_id);

// ContextMismatch unless both states share their keys (same key id).
void check_same_keys(const State& a, const State& b, const char* op);

// ---- arithmetic.cpp: the operators and methods of Ciphertext and Batch, written once ----------
template <typename Py> void add_encrypted_methods(nb::class_<Py>& cls, const char* type_name);
// The arguments of ct.sum / Batch.sum / Context.sum_rotations (trace.cpp): the spec of exactly
// one of block / stride+count / nothing (all slots), and (strategy, h) for the core, where
// 'hoisted' without h takes the cost model's h at `level`. ValueError for invalid combinations.
SumSpec parse_spec(const char* op, size_t slots, std::optional<size_t> block, std::optional<int64_t> stride,
                   std::optional<size_t> count);
std::pair<SumStrategy, int> parse_h(const char* op, const Context& ctx, int level, const SumSpec& spec,
                                    const std::string& strategy, std::optional<int> h);
// The docstring of ct.sum, shared with Batch.sum.
extern const char* const kSumDoc;

// Registration hooks of the other binding files, called by register_ckks once the classes exist.
nb::class_<PyPlaintext> add_plaintext_class(nb::module_& m, nb::class_<PyContext>& ctx);  // plaintext.cpp
void add_serialization_methods(nb::module_& m, nb::class_<PyContext>& ctx, nb::class_<PyCiphertext>& ct,
                               nb::class_<PyPlaintext>& pt);  // serialize.cpp
void add_trace_methods(nb::class_<PyContext>& ctx);         // trace.cpp
void add_batch_class(nb::module_& m, nb::class_<PyContext>& ctx);  // batch.cpp
// The device queues made so far in this process, with their names ("cuda:0", "cuda-emulated").
std::vector<QueuePtr> device_queues();  // batch.cpp
void add_batch_serialization(nb::class_<PyBatch>& b);             // serialize.cpp
void add_linalg(nb::module_& m, nb::class_<PyContext>& ctx);       // linalg.cpp
void add_pickling(nb::module_& m, nb::class_<PyContext>& ctx);     // pickling.cpp
// __reduce__ of an object with a serialize() method and the state `st` (pickling.cpp): its bytes
// and, where `keyed` (encrypted data), the id of the keys it needs on load.
nb::tuple reduce_with_context(nb::handle self, const State& st, const char* type_name, bool keyed);
// circuits.cpp: polyval, inverse, square roots and powers of Ciphertext and Batch, and the
// module functions chebyshev_interpolant, polynomial_plan and newton_plan.
template <typename Py> void add_circuit_methods(nb::class_<Py>& cls, const char* type_name);
void register_circuits(nb::module_& m);
// bootstrap.cpp: the bootstrappers and keys of keygen(bootstrap=...) for these slot counts, added
// to `have` (without the GIL; kg holds the secret key), Ciphertext.bootstrap and Batch.bootstrap,
// Context.bootstrap_info.
// `options`: the configuration of the new bootstrappers (bootstrap_options; its slots are ignored);
// ValueError when one of these slot counts has a bootstrapper of other options already.
std::shared_ptr<const algorithms::BootstrapSet> with_bootstrapping(
    const ContextPtr& ctx, KeyGenerator& kg, const std::shared_ptr<const algorithms::BootstrapSet>& have,
    const std::vector<size_t>& slots, const algorithms::BootstrapConfig& options);
// The Python options of bootstrapping (keygen's bootstrap_*, bootstrap_info's keywords): memory
// 'balanced' (the default, kDefaultBootstrapMemory), 'fast' (kFastBootstrapMemory) or 'low'
// (MemoryPolicy::low()), order 'coeffs_to_slots_first' (the default)
// or 'slots_to_coeffs_first', iterations None (automatic), 1 or 2, message_ratio_bits and
// double_angles None (automatic) or BootstrapConfig's values (checked where the bootstrapper is made),
// eval_mod_terms None (1) or EvalMod's terms, 1 or 2.
struct BootstrapOptions {
    std::optional<std::string> memory, order;
    std::optional<int> iterations, message_ratio_bits, double_angles, eval_mod_terms;
    bool any() const { return memory || order || iterations || message_ratio_bits || double_angles || eval_mod_terms; }
};
// The options as a configuration; ValueError naming `op` for an unknown memory or order name or
// an iteration count other than 1 and 2.
algorithms::BootstrapConfig bootstrap_options(const char* op, const BootstrapOptions& options);
template <typename Py> void add_bootstrap_method(nb::class_<Py>& cls, const char* type_name);
void add_bootstrap_real_pair(nb::class_<PyCiphertext>& cls);
void add_bootstrap_info(nb::class_<PyContext>& ctx);
// The slot counts of keygen's `bootstrap` argument: False/None none, True all slots, an int or a
// sequence of ints those counts.
std::vector<size_t> bootstrap_slots(const State& s, nb::handle arg);
// matvec.cpp: M @ x, x @ M, dot, mean and var of Ciphertext and Batch, and the module's PlainMatrix,
// matvec and matvec_rotation_steps.
template <typename Py> void add_vector_methods(nb::class_<Py>& cls, const char* type_name);
void add_matvec(nb::module_& m);

}  // namespace oboro::py
