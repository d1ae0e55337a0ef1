// Pickling (pickle, copy, multiprocessing, joblib, Dask, Ray) through the checked serialization
// format: never raw memory.
//
// A Context pickles as its public part (parameters and public, relinearization and Galois keys):
// the secret key travels only when asked for, by pickling ctx.serialize(secret_key=True).
// Ciphertexts, batches and encrypted matrices pickle as their serialized bytes plus the id of the
// key set that encrypted them; unpickling attaches them to a live context of this process with
// those keys (find_state: the one with the secret key first), so a worker unpickles the context
// once (e.g. in a process pool's initializer) and then any number of ciphertexts, and results sent
// back attach to the client's context. Without such a context, or with a context of other keys,
// unpickling raises SerializationError. Plaintexts need only a context of the same parameters.
#include <cstdint>
#include <string>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "oboro/util/error.hpp"
#include "state.hpp"

using namespace nanobind::literals;

namespace oboro::py {

namespace {

nb::object core_attr(const char* name) { return nb::module_::import_("oboro._core").attr(name); }
// pickle stores a loader by its name: the loaders are the Python functions of oboro/_pickle.py
nb::object loader(const char* name) { return nb::module_::import_("oboro._pickle").attr(name); }

// The object of type `type_name` whose serialize() output is `data`, attached to a live context.
nb::object unpickle(const std::string& type_name, uint64_t key_id, uint64_t context_id, nb::bytes data) {
    const StatePtr st = find_state(key_id, context_id);
    if (!st)
        raise<SerializationError>(
            "unpickling a ", type_name, ": no context ", key_id ? "with the keys that encrypted it" : "of its parameters",
            " is alive in this process; unpickle (or load) its context first (pickle.dumps(ctx) carries the public "
            "part, e.g. to a process pool's initializer), then the ", type_name);
    return core_attr(type_name.c_str()).attr("deserialize")(nb::cast(PyContext{st}), data);
}

}  // namespace

nb::tuple reduce_with_context(nb::handle self, const State& st, const char* type_name, bool keyed) {
    nb::object data = self.attr("serialize")();
    return nb::make_tuple(loader("unpickle"),
                          nb::make_tuple(type_name, keyed ? st.key_id : uint64_t(0), st.ctx->id(), data));
}

void add_pickling(nb::module_& m, nb::class_<PyContext>& ctx) {
    m.def("_unpickle", &unpickle, "type_name"_a, "key_id"_a, "context_id"_a, "data"_a,
          "pickle's loader of oboro objects (see Context.__reduce__ and Ciphertext.__reduce__).");
    m.def(
        "_unpickle_context",
        [](nb::bytes data, bool automatic) { return core_attr("Context").attr("deserialize")(data, automatic); },
        "data"_a, "automatic"_a, "pickle's loader of a Context (its public part).");
    ctx.def(
           "__reduce__",
           [](nb::handle self) {
               const PyContext& c = nb::cast<const PyContext&>(self);
               return nb::make_tuple(loader("unpickle_context"),
                                     nb::make_tuple(self.attr("serialize")(), is_automatic(*c.st)));
           },
           "pickle: the public part (parameters and the public, relinearization and Galois keys), never the secret "
           "key; pickle ctx.serialize(secret_key=True) to send that.")
        .def("__copy__", [](nb::handle self) { return nb::borrow(self); }, "The context itself (it is shared state).")
        .def("__deepcopy__", [](nb::handle self, nb::handle) { return nb::borrow(self); }, "memo"_a,
             "The context itself (it is shared state; copy.deepcopy of a ciphertext keeps its context too).");
}

}  // namespace oboro::py
