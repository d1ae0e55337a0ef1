// Serialization in the Python API: Context.serialize / deserialize / save / load and the same for
// Ciphertext, over the C++ io layer (oboro/io/serialize.hpp); oboro.serialized_info.
//
// A serialized context is a bundle: the parameters record, then the keys it holds (public,
// relinearization, Galois; the secret key only with secret_key=True). A serialized ciphertext
// carries the NumPy shape and dtype and the key id of its context, so that loading it into a
// context with other keys is refused instead of decrypting to noise.
#include <algorithm>
#include <map>
#include <set>
#include <optional>
#include <string>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "oboro/io/serialize.hpp"
#include "oboro/util/error.hpp"
#include "oboro/util/wipe.hpp"
#include "buffer.hpp"
#include "state.hpp"

using namespace nanobind::literals;

namespace oboro::py {

void check_key_id(uint64_t key_id, const State& s, const char* op, const char* what) {
    if (key_id != 0 && s.key_id != 0 && key_id != s.key_id)
        raise<SerializationError>(op, ": the ", what, " was encrypted under other keys than this context's (same "
                                  "parameters, different key set); load it into the context whose keys encrypted it");
}

namespace {

// ---- contexts ----

// Bytes that hold (or may hold) the secret key, wiped when they go. The copies handed over (the
// Python bytes, the file) are the caller's (docs/security.md).
struct SecretBytes {
    io::Bytes bytes;
    bool secret = true;
    ~SecretBytes() {
        if (secret) wipe(bytes.data(), bytes.size());
    }
};

io::Bytes serialize_context(const State& state, bool secret_key, bool keys, bool compress) {
    const SessionPtr now = state.snapshot();
    const Session& s = *now;
    const Context& ctx = *state.ctx;
    if (secret_key && !s.sk)
        raise<MissingKey>("serialize: secret_key=True but this context holds no secret key (it was made by public(), "
                          "or keygen() was not called)");
    std::vector<io::Bytes> parts;
    parts.push_back(io::serialize(ctx, state.preset));
    if (keys) {
        if (s.pk) parts.push_back(io::serialize(ctx, *s.pk, compress));
        if (s.relin_key()) parts.push_back(io::serialize_relin_key(ctx, *s.relin_key(), compress));
        if (!s.galois_keys().keys.empty()) parts.push_back(io::serialize(ctx, s.galois_keys(), compress));
        if (s.bootstrapping)
            for (const auto& e : s.bootstrapping->entries())
                parts.push_back(io::serialize(ctx, e.boot->config(), e.keys, compress));
    }
    if (secret_key) parts.push_back(io::serialize_secret_key(ctx, *s.sk));
    io::Bytes bundle = io::make_bundle(parts);
    if (secret_key) wipe(parts.back().data(), parts.back().size());  // the record, copied into the bundle
    return bundle;
}

// The rotation step of a Galois element 5^k mod 2N, as the signed step in (-slots/2, slots/2].
std::optional<int64_t> rotation_step(const Context& ctx, uint64_t galois) {
    const uint64_t two_n = 2 * ctx.n();
    const int64_t slots = int64_t(ctx.max_slots());
    uint64_t g = 1;
    for (int64_t k = 0; k < slots; ++k) {
        if (g == galois) return k <= slots / 2 ? k : k - slots;
        g = g * 5 % two_n;
    }
    return std::nullopt;
}

StatePtr deserialize_context(io::ByteView data, bool auto_mode) {
    std::vector<io::ByteView> parts;
    if (io::peek_type(data) == io::ObjectType::bundle) parts = io::split_bundle(data);
    else parts.push_back(data);
    if (parts.empty() || io::peek_type(parts[0]) != io::ObjectType::context)
        raise<SerializationError>("Context.deserialize: the data does not start with a context (it holds a ",
                                  io::to_string(parts.empty() ? io::ObjectType::bundle : io::peek_type(parts[0])),
                                  "); use Ciphertext.deserialize for ciphertexts");
    std::string label;
    ContextPtr ctx = io::load_context(parts[0], &label);
    StatePtr st = make_state(ctx, label, auto_mode);
    SecretKeyPtr sk;
    std::shared_ptr<const PublicKey> pk;
    std::shared_ptr<const RelinKey> rk;
    std::shared_ptr<const GaloisKeys> gk;
    std::map<io::ObjectType, int> seen;
    std::vector<algorithms::BootstrapSet::Entry> boot;
    for (size_t i = 1; i < parts.size(); ++i) {
        const io::ObjectType type = io::peek_type(parts[i]);
        if (type == io::ObjectType::bootstrap_keys) {  // one per slot count
            auto [config, keys] = io::load_bootstrap_keys(*ctx, parts[i]);
            // a second set of one slot count is refused before its matrices are made (seconds each)
            const size_t n = config.slots.value_or(ctx->max_slots());
            if (std::any_of(boot.begin(), boot.end(),
                            [n](const algorithms::BootstrapSet::Entry& e) { return e.boot->slots() == n; }))
                raise<SerializationError>("Context.deserialize: the data holds two bootstrap key sets for ", n,
                                          " slots");
            std::shared_ptr<const algorithms::Bootstrapper> b;
            try {
                b = std::make_shared<const algorithms::Bootstrapper>(ctx, config);  // its matrices, made again
            } catch (const oboro::Error& e) {
                raise<SerializationError>("Context.deserialize: the bootstrap keys' configuration does not fit these "
                                          "parameters: ", e.what());
            }
            // keys written by an oboro whose DFT plans used other rotations
            try {
                b->require_keys("Context.deserialize", keys);
            } catch (const oboro::Error& e) {
                raise<SerializationError>("Context.deserialize: the bootstrap keys for ", n, " slots do not cover "
                                          "this version's bootstrapping circuit (written by another oboro version?); "
                                          "generate them again with keygen(bootstrap=...): ", e.what());
            }
            b->apply_memory_policy(keys);  // the loader seeds them all alike; the policy keeps the most used whole
            boot.push_back({std::move(b), std::move(keys)});
            continue;
        }
        if (seen[type]++)
            raise<SerializationError>("Context.deserialize: the data holds two ", io::to_string(type), " records");
        switch (type) {
            case io::ObjectType::public_key:
                pk = std::make_shared<const PublicKey>(io::load_public_key(*ctx, parts[i]));
                break;
            case io::ObjectType::relin_key:
                rk = std::make_shared<const RelinKey>(io::load_relin_key(*ctx, parts[i]));
                break;
            case io::ObjectType::galois_keys:
                gk = std::make_shared<const GaloisKeys>(io::load_galois_keys(*ctx, parts[i]));
                break;
            case io::ObjectType::secret_key:
                sk = io::load_secret_key(*ctx, parts[i]);
                break;
            default:
                raise<SerializationError>("Context.deserialize: a ", io::to_string(type),
                                          " record does not belong in a serialized context");
        }
    }
    if ((rk || gk || sk || !boot.empty()) && !pk)
        raise<SerializationError>("Context.deserialize: the data holds keys but no public key");
    std::set<int64_t> rotations;
    bool conjugation = false;
    if (gk) {
        for (const auto& [g, key] : gk->keys) {
            if (g == ctx->conjugation_element()) conjugation = true;
            else if (auto step = rotation_step(*ctx, g)) rotations.insert(*step);
        }
    }
    publish(*st, std::move(sk), std::move(pk), std::move(rk), std::move(gk), std::move(rotations), conjugation);
    if (!boot.empty()) publish_bootstrapping(*st, std::make_shared<const algorithms::BootstrapSet>(std::move(boot)));
    return st;
}

// ---- shape and dtype of plaintexts and ciphertexts ----

io::ArrayInfo array_info(const std::vector<size_t>& shape, bool is_complex, uint64_t key_id) {
    io::ArrayInfo info;
    info.key_id = key_id;
    info.shape.assign(shape.begin(), shape.end());
    info.is_complex = is_complex;
    return info;
}

// The shape and dtype stored in `info`; data written by C++ code without a shape holds all
// `slots` values, taken as complex.
void restore_array(const io::ArrayInfo& info, size_t slots, std::vector<size_t>& shape, bool& is_complex) {
    if (info.shape.empty()) {
        shape = {slots};
        is_complex = true;
    } else {
        shape.assign(info.shape.begin(), info.shape.end());
        is_complex = info.is_complex;
    }
}

// ---- ciphertexts ----

io::Bytes serialize_ciphertext(const PyCiphertext& c, bool compress) {
    return io::serialize(*c.st->ctx, c.ct, array_info(c.shape, c.is_complex, c.st->key_id), compress);
}

PyCiphertext deserialize_ciphertext(const StatePtr& st, io::ByteView data) {
    io::ArrayInfo info;
    Ciphertext ct = io::load_ciphertext(*st->ctx, data, &info);
    check_key_id(info.key_id, *st, "Ciphertext.deserialize", "ciphertext");
    PyCiphertext out{st, std::move(ct), {}, false};
    restore_array(info, out.ct.slots(), out.shape, out.is_complex);
    return out;
}

// ---- batches ----

io::Bytes serialize_batch(const PyBatch& b, bool compress) {
    return io::serialize(*b.st->ctx, b.batch, array_info(b.shape, b.is_complex, b.st->key_id), compress);
}

PyBatch deserialize_batch(const StatePtr& st, io::ByteView data) {
    io::ArrayInfo info;
    CiphertextBatch batch = io::load_ciphertext_batch(*st->ctx, data, &info);
    check_key_id(info.key_id, *st, "Batch.deserialize", "batch");
    PyBatch out{st, std::move(batch), {}, false};
    restore_array(info, out.batch.slots(), out.shape, out.is_complex);
    return out;
}

// ---- plaintexts ----

io::Bytes serialize_plaintext(const PyPlaintext& p) {
    return io::serialize(*p.st->ctx, p.pt, array_info(p.shape, p.is_complex, 0));
}

PyPlaintext deserialize_plaintext(const StatePtr& st, io::ByteView data) {
    io::ArrayInfo info;
    Plaintext pt = io::load_plaintext(*st->ctx, data, &info);
    PyPlaintext out{st, std::move(pt), {}, false};
    restore_array(info, out.pt.slots(), out.shape, out.is_complex);
    return out;
}

nb::dict serialized_info(io::ByteView data) {
    const io::RecordView v = io::read_record(data, "data");
    nb::dict d;
    d["type"] = io::to_string(v.type);
    d["format_version"] = v.version;
    d["size"] = v.size;
    d["context_id"] = v.context_id;
    if (v.type == io::ObjectType::bundle) {
        nb::list parts;
        for (io::ByteView part : io::split_bundle(data)) parts.append(serialized_info(part));
        d["parts"] = parts;
    }
    return d;
}

constexpr const char* kCompressDoc =
    "compress=True stores the uniformly random half of keys and of fresh secret-key ciphertexts as a 32-byte seed "
    "(half the size); residues are always bit-packed to the size of their prime.";

}  // namespace

void add_serialization_methods(nb::module_& m, nb::class_<PyContext>& ctx, nb::class_<PyCiphertext>& ct,
                               nb::class_<PyPlaintext>& pt) {
    ctx.def(
           "serialize",
           [](const PyContext& c, bool secret_key, bool keys, bool compress) {
               SecretBytes b{{}, secret_key};
               {
                   nb::gil_scoped_release release;
                   b.bytes = serialize_context(*c.st, secret_key, keys, compress);
               }
               return to_bytes(b.bytes);
           },
           nb::kw_only(), "secret_key"_a = false, "keys"_a = true, "compress"_a = true,
           (std::string("The context as bytes: its parameters and (keys=True) its public, relinearization and Galois "
                        "keys, so that a server can compute on the client's ciphertexts. The secret key is included "
                        "only with secret_key=True (MissingKey if the context has none): keep such data private. ") +
            kCompressDoc + " Load with Context.deserialize.")
               .c_str())
        .def_static(
            "deserialize",
            [](nb::handle data, bool auto_mode) {
                BufferView buf(data, "Context.deserialize");
                StatePtr st;
                {
                    nb::gil_scoped_release release;
                    st = deserialize_context(buf.view(), auto_mode);
                }
                return PyContext{st};
            },
            "data"_a, "auto"_a = true, nb::sig("def deserialize(data: bytes, auto: bool = True) -> Context"),
            "A context from Context.serialize() output (or a C++ io::serialize(Context) record): the parameters are "
            "re-created and checked (the primes must match), the keys loaded. Without the secret key in the data the "
            "context encrypts with the public key and cannot decrypt, like public(). Raises SerializationError for "
            "truncated, corrupted, foreign or unsupported data.")
        .def(
            "save",
            [](const PyContext& c, nb::handle path, bool secret_key, bool keys, bool compress) {
                const std::string p = fspath(path);
                nb::gil_scoped_release release;
                const SecretBytes b{serialize_context(*c.st, secret_key, keys, compress), secret_key};
                io::write_file(p, b.bytes);
            },
            "path"_a, nb::kw_only(), "secret_key"_a = false, "keys"_a = true, "compress"_a = true,
            nb::sig("def save(self, path: str | os.PathLike[str], *, secret_key: bool = False, keys: bool = True, "
                    "compress: bool = True) -> None"),
            "Writes serialize(...) to a file (atomically: a temporary file, then a rename).")
        .def_static(
            "load",
            [](nb::handle path, bool auto_mode) {
                const std::string p = fspath(path);
                StatePtr st;
                {
                    nb::gil_scoped_release release;
                    SecretBytes b{io::read_file(p)};  // wiped unless it turns out to hold no secret key
                    st = deserialize_context(b.bytes, auto_mode);
                    b.secret = bool(st->snapshot()->sk);
                }
                return PyContext{st};
            },
            "path"_a, "auto"_a = true,
            nb::sig("def load(path: str | os.PathLike[str], auto: bool = True) -> Context"),
            "Context.deserialize of a file written by save().");

    def_serialization<true>(
        ct, "Ciphertext", [](const PyCiphertext& c, bool compress) { return serialize_ciphertext(c, compress); },
        &deserialize_ciphertext,
        std::string("The ciphertext as bytes, with its level, exact scale, slots, shape, dtype and the id of the keys "
                    "that encrypted it. ") +
            kCompressDoc + " Load with Ciphertext.deserialize(ctx, data).");
    def_serialization<false>(
        pt, "Plaintext", [](const PyPlaintext& p, bool) { return serialize_plaintext(p); }, &deserialize_plaintext,
        "The plaintext as bytes (level, scale, slots, shape, dtype; residues bit-packed). Load with "
        "Plaintext.deserialize(ctx, data).");

    m.def(
        "serialized_info",
        [](nb::handle data) {
            BufferView buf(data, "serialized_info");
            return serialized_info(buf.view());
        },
        "data"_a, nb::sig("def serialized_info(data: bytes) -> dict[str, typing.Any]"),
        "What serialized data holds, from its headers (checksums verified): type, format_version, size, context_id, "
        "and for a bundle (a serialized context) the same for each part.");
    // For the serialization tests' fuzzing loop (tests/python/test_serialize.py): the library's own
    // io::reseal, so that Python mutants reach the field checks as the C++ ones do.
    m.def(
        "_reseal",
        [](nb::handle data) {
            BufferView buf(data, "_reseal");
            io::Bytes b(buf.view().begin(), buf.view().end());
            io::reseal(b);
            return to_bytes(b);
        },
        "data"_a, nb::sig("def _reseal(data: bytes) -> bytes"),
        "Testing aid: the data with its payload size set to its length and its checksums recomputed (those of the "
        "records nested in a bundle or an encrypted matrix too), so that a changed record reaches the field checks "
        "when loaded. Validates nothing.");
}

void add_batch_serialization(nb::class_<PyBatch>& b) {
    def_serialization<true>(
        b, "Batch", &serialize_batch, &deserialize_batch,
        std::string("The batch as bytes: its count, level, exact scale, slots, the element shape and dtype, the id "
                    "of the keys that encrypted it, and every element's residues bit-packed. ") +
            kCompressDoc +
            " (Elements of a fresh secret-key encrypt_batch keep their seeds until the batch is modified.) Load "
            "with Batch.deserialize(ctx, data).");
}

}  // namespace oboro::py
