// Bootstrapping from Python: the bootstrappers and keys that Context.keygen(bootstrap=...) makes,
// Ciphertext.bootstrap() and Batch.bootstrap(), and Context.bootstrap_info(). Argument conversion
// over the C++ algorithm (src/oboro/algorithms/bootstrap.hpp), which checks keys, slots and the
// input's scale before any work. The bootstrap runs without the GIL.
#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <tuple>
#include <type_traits>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "oboro/algorithms/bootstrap.hpp"
#include "oboro/ckks/keys.hpp"
#include "oboro/util/error.hpp"
#include "operation.hpp"

using namespace nanobind::literals;

namespace oboro::py {

std::vector<size_t> bootstrap_slots(const State& s, nb::handle arg) {
    const size_t all = s.ctx->max_slots();
    if (arg.is_none()) return {};
    if (nb::isinstance<nb::bool_>(arg)) return nb::cast<bool>(arg) ? std::vector<size_t>{all} : std::vector<size_t>{};
    std::vector<int64_t> counts;
    if (nb::isinstance<nb::int_>(arg)) counts.push_back(nb::cast<int64_t>(arg));
    else if (!nb::try_cast(arg, counts))
        raise<ValueError>("keygen: bootstrap must be True/False, a slot count or a list of slot counts");
    std::vector<size_t> out;
    for (int64_t n : counts) {
        if (n < 2 || size_t(n) > all || (n & (n - 1)) != 0)
            raise<ValueError>("keygen: bootstrap slot count ", n, " must be a power of two in [2, ", all, "]");
        out.push_back(size_t(n));
    }
    return out;
}

namespace {

const char* memory_name(const algorithms::MemoryPolicy& m) {
    if (m == algorithms::MemoryPolicy::low()) return "low";
    if (m == algorithms::kDefaultBootstrapMemory) return "balanced";
    if (m == algorithms::kFastBootstrapMemory) return "fast";
    if (m == algorithms::kSeededBootstrapMemory) return "seeded";
    return "custom";  // a configuration made in C++
}

const char* order_name(algorithms::BootstrapOrder o) {
    return o == algorithms::BootstrapOrder::slots_to_coeffs_first ? "slots_to_coeffs_first" : "coeffs_to_slots_first";
}

// The options Python sets, as they would be written to keygen()
std::string options_str(const algorithms::BootstrapConfig& c) {
    const auto text = [](std::optional<int> v) { return v ? std::to_string(*v) : std::string("None"); };
    return oboro::detail::concat("memory='", memory_name(c.memory), "', order='", order_name(c.order),
                                 "', iterations=", text(c.iterations), ", message_ratio_bits=",
                                 text(c.message_ratio_bits), ", double_angles=", text(c.double_angles),
                                 ", eval_mod_terms=", text(c.eval_mod_terms));
}

bool same_options(const algorithms::BootstrapConfig& a, const algorithms::BootstrapConfig& b) {
    return a.memory == b.memory && a.order == b.order && a.iterations == b.iterations &&
           a.message_ratio_bits == b.message_ratio_bits && a.double_angles == b.double_angles &&
           a.eval_mod_terms == b.eval_mod_terms;
}

}  // namespace

algorithms::BootstrapConfig bootstrap_options(const char* op, const BootstrapOptions& options) {
    const auto& [memory, order, iterations, message_ratio_bits, double_angles, eval_mod_terms] = options;
    algorithms::BootstrapConfig c;
    if (memory && *memory == "low") c.memory = algorithms::MemoryPolicy::low();
    else if (memory && *memory == "fast") c.memory = algorithms::kFastBootstrapMemory;
    else if (memory && *memory == "seeded") c.memory = algorithms::kSeededBootstrapMemory;
    else if (memory && *memory != "balanced")
        raise<ValueError>(op, ": memory must be 'balanced' (the default), 'fast', 'seeded' or 'low', not '", *memory, "'");
    if (order && *order == "slots_to_coeffs_first") c.order = algorithms::BootstrapOrder::slots_to_coeffs_first;
    else if (order && *order != "coeffs_to_slots_first")
        raise<ValueError>(op, ": order must be 'coeffs_to_slots_first' or 'slots_to_coeffs_first', not '", *order, "'");
    if (iterations && *iterations != 1 && *iterations != 2)
        raise<ValueError>(op, ": iterations must be None (automatic), 1 or 2, not ", *iterations);
    c.iterations = iterations;
    c.message_ratio_bits = message_ratio_bits;
    c.double_angles = double_angles;
    if (eval_mod_terms && *eval_mod_terms != 1 && *eval_mod_terms != 2)
        raise<ValueError>(op, ": eval_mod_terms must be None, 1 or 2, not ", *eval_mod_terms);
    c.eval_mod_terms = eval_mod_terms;
    return c;
}

std::shared_ptr<const algorithms::BootstrapSet> with_bootstrapping(
    const ContextPtr& ctx, KeyGenerator& kg, const std::shared_ptr<const algorithms::BootstrapSet>& have,
    const std::vector<size_t>& slots, const algorithms::BootstrapConfig& options) {
    std::vector<algorithms::BootstrapSet::Entry> entries;
    if (have) entries = have->entries();
    bool added = false;
    for (size_t n : slots) {
        const auto it = std::find_if(entries.begin(), entries.end(),
                                     [n](const algorithms::BootstrapSet::Entry& e) { return e.boot->slots() == n; });
        if (it != entries.end()) {
            if (!same_options(it->boot->config(), options))
                raise<ValueError>("keygen: the context has bootstrap keys for ", n, " slots with ",
                                  options_str(it->boot->config()), "; a context holds one set per slot count (asked: ",
                                  options_str(options), ")");
            continue;
        }
        algorithms::BootstrapConfig config = options;
        config.slots = n;
        auto boot = std::make_shared<const algorithms::Bootstrapper>(ctx, config);
        entries.push_back({boot, boot->generate_keys(kg)});
        boot->encode_diagonals();  // here, not in the first bootstrap: keygen is the set-up
        added = true;
    }
    if (!added) return have;
    return std::make_shared<const algorithms::BootstrapSet>(std::move(entries));
}

namespace {

// The session's bootstrappers, or an empty set whose MissingKey says how to make them.
const algorithms::BootstrapSet& bootstrappers(const Session& session) {
    static const algorithms::BootstrapSet none;
    return session.bootstrapping ? *session.bootstrapping : none;
}

// A real batch goes two elements per bootstrap (Bootstrapper::bootstrap_real): its dtype says
// its values are real.
template <typename Py> Py bootstrap(const Py& self) {
    return unary(self, [&self](const Op<Py>& op, const auto& x) {
        const algorithms::CountedOps ops(op.eval, nullptr);
        if constexpr (std::is_same_v<Py, PyBatch>)
            if (!self.is_complex) return bootstrappers(*op.session).bootstrap_real(ops, x);
        return bootstrappers(*op.session).bootstrap(ops, x);
    });
}

nb::tuple bootstrap_real_pair(const PyCiphertext& self, const PyCiphertext& other) {
    const char* op_name = "bootstrap_real_pair";
    check_same_keys(*self.st, *other.st, op_name);
    if (self.is_complex || other.is_complex)
        raise<ValueError>(op_name, ": defined for real values (an operand is complex; bootstrap it with bootstrap())");
    if (self.shape != other.shape)
        raise<ValueError>(op_name, ": the operands have different shapes ", shape_str(self.shape), " and ",
                          shape_str(other.shape));
    const Op<PyCiphertext> op(self);
    PyCiphertext re = result_shell(self), im = result_shell(other);
    {
        nb::gil_scoped_release release;
        // automatic mode: operands at two levels (the standard scales of each) are first brought
        // to one level and scale, exactly, as for a sum; where no exact alignment exists, each is
        // bootstrapped on its own (the same results, at twice the cost)
        const algorithms::BootstrapSet& set = bootstrappers(*op.session);
        const algorithms::CountedOps ops(op.eval, nullptr);
        Ciphertext a = self.core(), b = other.core();
        bool paired = true;
        if (op.automatic && a.level() != b.level()) {
            try {
                if (a.level() > b.level()) a = op.autoeval.bring_to(a, b.level(), b.scale(), op_name);
                else b = op.autoeval.bring_to(b, a.level(), a.scale(), op_name);
            } catch (const ScaleMismatch&) {
                paired = false;
            }
        }
        if (paired) std::tie(re.core(), im.core()) = set.bootstrap_real_pair(ops, a, b);
        else {
            re.core() = set.bootstrap(ops, self.core());
            im.core() = set.bootstrap(ops, other.core());
        }
    }
    return nb::make_tuple(std::move(re), std::move(im));
}

nb::dict info_of(const algorithms::Bootstrapper& b, bool has_keys) {
    nb::dict d;
    d["slots"] = b.slots();
    d["depth"] = b.depth();
    d["output_level"] = b.output_level();
    d["max_input_scale"] = b.max_input_scale();
    d["precision_bits"] = b.precision_bits();
    d["eval_mod_degree"] = b.eval_mod().cosine().degree();
    d["double_angles"] = b.eval_mod().double_angles();
    d["eval_mod_terms"] = b.eval_mod().terms();
    d["iterations"] = b.iterations();
    d["message_ratio_bits"] = b.message_ratio_bits();
    d["order"] = order_name(b.order());
    d["memory"] = memory_name(b.config().memory);
    d["seeded_keys"] = b.config().memory.seeded_keys;
    d["whole_galois_keys"] = b.whole_galois_keys();
    d["key_bytes"] = b.key_bytes();
    const ckks::Context& ctx = *b.context();
    d["relin_key_bytes"] = ckks::switching_key_bytes(ctx, ctx.max_level(), ctx.p_count());
    d["diagonal_bytes"] = b.diagonal_bytes();
    d["min_input_level"] = b.min_input_level();
    d["rotation_steps"] = b.rotation_steps();
    d["galois_keys"] = b.galois_key_levels().size();
    d["encapsulates"] = b.encapsulates();
    d["has_keys"] = has_keys;
    return d;
}

}  // namespace

template <typename Py> void add_bootstrap_method(nb::class_<Py>& cls, const char* type_name) {
    const std::string t = type_name;
    cls.def("bootstrap", &bootstrap<Py>, signature(t + ".bootstrap", "def bootstrap(self) -> " + t),
            "The same values with the levels back: bootstrapping (ModRaise, CoeffsToSlots, EvalMod, SlotsToCoeffs). "
            "A Batch of real values is bootstrapped two elements per bootstrap (half the time; "
            "Ciphertext.bootstrap_real_pair does it for two ciphertexts). "
            "The input may be at any level and needs |values| <= 1 for the stated precision (larger values lose "
            "precision quadratically, and the scale is checked: ValueError when it is too large); the result is at "
            "ctx.bootstrap_info()['output_level'] and that level's standard scale. Needs "
            "ctx.keygen(bootstrap=True) (MissingKey otherwise) and bootstrappable parameters (preset 'B1', or 'B2' for "
            "high precision).");
}

void add_bootstrap_real_pair(nb::class_<PyCiphertext>& cls) {
    cls.def("bootstrap_real_pair", &bootstrap_real_pair, "other"_a,
            nb::sig("def bootstrap_real_pair(self, other: Ciphertext) -> tuple[Ciphertext, Ciphertext]"),
            "Bootstraps two real ciphertexts for the price of one bootstrap and a conjugation: self + 1j * other is "
            "bootstrapped and its real and imaginary parts are separated. Returns (self, other) with the levels back, "
            "each as bootstrap() returns it, at about the same precision (docs/bootstrapping.md). Both need real "
            "values and one shape (ValueError otherwise); in automatic mode operands at different levels are aligned "
            "first, as for a sum, while in manual mode they need one scale; a real Batch does the same for its elements in "
            "Batch.bootstrap().");
}

template void add_bootstrap_method(nb::class_<PyCiphertext>&, const char*);
template void add_bootstrap_method(nb::class_<PyBatch>&, const char*);

void add_bootstrap_info(nb::class_<PyContext>& ctx) {
    ctx.def_prop_rw(
        "auto_bootstrap", [](const PyContext& c) { return c.st->auto_bootstrap; },
        [](PyContext& c, bool on) {
            if (on && !c.st->snapshot()->bootstrapping)
                raise<MissingKey>("auto_bootstrap: the context has no bootstrapping keys; call "
                                  "keygen(bootstrap=True) first");
            c.st->auto_bootstrap = on;
        },
        "Automatic bootstrapping (False by default): in automatic mode, an operand at level 0 of a product (ct * ct, "
        "ct * array, ct * non-integer constant) is bootstrapped first, so long computations run without counting "
        "levels. Each bootstrap takes seconds at N = 2^16 (docs/benchmarks/bootstrap.md) and gives about "
        "20 bits of precision; polynomial and matrix methods still check their levels before any work. Needs "
        "keygen(bootstrap=...) (MissingKey otherwise). A public() copy keeps the setting; a deserialized context "
        "starts with it off.");
    ctx.def(
        "bootstrap_info",
        [](const PyContext& c, std::optional<size_t> slots, std::optional<std::string> memory,
           std::optional<std::string> order, std::optional<int> iterations, std::optional<int> message_ratio_bits,
           std::optional<int> double_angles, std::optional<int> eval_mod_terms) {
            const size_t n = slots.value_or(c.st->ctx->max_slots());
            const BootstrapOptions options{memory, order, iterations, message_ratio_bits, double_angles, eval_mod_terms};
            const bool asked = options.any();
            algorithms::BootstrapConfig config = bootstrap_options("bootstrap_info", options);
            const SessionPtr now = c.st->snapshot();
            if (const auto* e = now->bootstrapping ? now->bootstrapping->exactly(n) : nullptr)
                if (!asked || same_options(e->boot->config(), config)) return info_of(*e->boot, true);
            config.slots = n;
            std::unique_ptr<const algorithms::Bootstrapper> b;
            {
                nb::gil_scoped_release release;  // the DFT matrices: seconds at N = 2^16
                b = std::make_unique<const algorithms::Bootstrapper>(c.st->ctx, config);
            }
            return info_of(*b, false);
        },
        "slots"_a = nb::none(), nb::kw_only(), "memory"_a = nb::none(), "order"_a = nb::none(),
        "iterations"_a = nb::none(), "message_ratio_bits"_a = nb::none(), "double_angles"_a = nb::none(),
        "eval_mod_terms"_a = nb::none(),
        nb::sig("def bootstrap_info(self, slots: int | None = None, *, memory: str | None = None, "
                "order: str | None = None, iterations: int | None = None, message_ratio_bits: int | None = None, "
                "double_angles: int | None = None, eval_mod_terms: int | None = None) -> dict[str, typing.Any]"),
        "What bootstrapping ciphertexts of `slots` slots (default all) does with these parameters: that of the keys "
        "keygen(bootstrap=...) made, or with options given (as keygen's bootstrap_memory, bootstrap_order, "
        "bootstrap_iterations, bootstrap_message_ratio_bits, bootstrap_double_angles and bootstrap_eval_mod_terms; the "
        "defaults otherwise) that "
        "of those options. Keys: slots, depth "
        "(levels consumed), output_level (levels left), max_input_scale, precision_bits (the model's bound before "
        "noise), eval_mod_degree, double_angles and eval_mod_terms (EvalMod's sine or cosine, its double angles and the "
        "terms of its sine series), iterations (2 for "
        "high precision, chosen where the output level's scale is at least 2^45, as in preset 'B2': each bootstrap "
        "then runs twice, the second on the first's error), message_ratio_bits (log2 of q_0 over the message "
        "scale), order ('coeffs_to_slots_first' or 'slots_to_coeffs_first') and min_input_level (the lowest level an "
        "input may have), memory ('balanced', 'fast', 'seeded' or 'low'), seeded_keys (whether the keys keep their uniform halves as their seeds, drawn again at each use: 'balanced', 'seeded' and 'low'), whole_galois_keys (the Galois keys stored whole all the same: 'balanced' stores whole those a bootstrap reads at least twice over), rotation_steps, galois_keys (the number of Galois keys), "
        "key_bytes (the memory of the bootstrapping keys, the relinearization key aside), relin_key_bytes (that of the "
        "relinearization key, which bootstrapping's products need), diagonal_bytes (the memory "
        "of the DFTs' diagonals, encoded by keygen(bootstrap=True) and kept), encapsulates (a sparse "
        "ephemeral secret is used for ModRaise), has_keys (keygen(bootstrap=...) made them). ParameterError when the "
        "parameters cannot bootstrap, with the reason; ValueError for an unknown option.");
}

}  // namespace oboro::py
