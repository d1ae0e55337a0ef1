// What the binding files that serialize share (serialize.cpp, linalg.cpp): a view of any
// buffer-protocol object, the bytes of a serialized record, a path argument, the key-id check,
// and the serialize / deserialize / save / load methods every serializable class has.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <type_traits>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "oboro/io/byte_stream.hpp"
#include "oboro/io/serialize.hpp"
#include "state.hpp"

namespace oboro::py {

namespace nb = nanobind;

// A read-only view of any object with the buffer protocol (bytes, bytearray, memoryview, NumPy
// uint8 arrays, mmap), released on destruction.
class BufferView {
public:
    explicit BufferView(nb::handle obj, const char* op) {
        if (PyObject_GetBuffer(obj.ptr(), &buf_, PyBUF_SIMPLE) != 0) {
            PyErr_Clear();
            throw nb::type_error((std::string(op) + ": expected bytes (or bytearray / memoryview), got " +
                                  nb::cast<std::string>(nb::str(obj.type().attr("__name__"))))
                                     .c_str());
        }
    }
    ~BufferView() { PyBuffer_Release(&buf_); }
    BufferView(const BufferView&) = delete;
    BufferView& operator=(const BufferView&) = delete;
    io::ByteView view() const { return {static_cast<const uint8_t*>(buf_.buf), size_t(buf_.len)}; }

private:
    Py_buffer buf_{};
};

inline nb::bytes to_bytes(const io::Bytes& b) {
    return nb::bytes(reinterpret_cast<const char*>(b.data()), b.size());
}

// SerializationError when data encrypted under key set `key_id` is loaded into a context with
// other keys (0: unknown on either side, accepted). serialize.cpp.
void check_key_id(uint64_t key_id, const State& s, const char* op, const char* what);

// os.fspath(path): str or pathlib.Path.
inline std::string fspath(nb::handle path) {
    nb::object p = nb::module_::import_("os").attr("fspath")(path);
    return nb::cast<std::string>(p);
}

// Adds serialize / deserialize / save / load to `cls` (`name` in signatures and errors) over
// write(obj, compress) -> io::Bytes and read(StatePtr, io::ByteView) -> T, both run without the
// GIL. WithCompress: serialize and save take the keyword-only compress=True (else write gets true).
template <bool WithCompress, typename T, typename Write, typename Read>
void def_serialization(nb::class_<T>& cls, const char* name, Write write, Read read, const std::string& doc) {
    using namespace nb::literals;
    static std::deque<std::string> sigs;  // nb::sig keeps a pointer to its text
    auto sig = [&](std::string text) { return nb::sig(sigs.emplace_back(std::move(text)).c_str()); };
    const std::string n = name;
    const std::string compress_arg = WithCompress ? ", *, compress: bool = True" : "";
    auto serialize = [write](const T& x, bool compress) {
        io::Bytes out;
        {
            nb::gil_scoped_release release;
            out = write(x, compress);
        }
        return to_bytes(out);
    };
    auto save = [write](const T& x, nb::handle path, bool compress) {
        const std::string p = fspath(path);
        nb::gil_scoped_release release;
        io::write_file(p, write(x, compress));
    };
    if constexpr (WithCompress) {
        cls.def("serialize", serialize, nb::kw_only(), "compress"_a = true,
                sig("def serialize(self" + compress_arg + ") -> bytes"), doc.c_str());
        cls.def("save", save, "path"_a, nb::kw_only(), "compress"_a = true,
                sig("def save(self, path: str | os.PathLike[str]" + compress_arg + ") -> None"),
                "Writes serialize() to a file (atomically: a temporary file, then a rename).");
    } else {
        cls.def("serialize", [serialize](const T& x) { return serialize(x, true); }, sig("def serialize(self) -> bytes"),
                doc.c_str());
        cls.def("save", [save](const T& x, nb::handle path) { save(x, path, true); }, "path"_a,
                sig("def save(self, path: str | os.PathLike[str]) -> None"),
                "Writes serialize() to a file (atomically: a temporary file, then a rename).");
    }
    cls.def_static(
        "deserialize",
        [read, n](const PyContext& c, nb::handle data) {
            BufferView buf(data, (n + ".deserialize").c_str());
            nb::gil_scoped_release release;
            return read(c.st, buf.view());
        },
        "context"_a, "data"_a, sig("def deserialize(context: Context, data: bytes) -> " + n),
        ("A " + n + " from " + n + ".serialize() output, attached to `context`, which must have the same parameters "
         "and, for encrypted data, the same keys (when both are known); else SerializationError, as for truncated, "
         "corrupted, oversized "
         "or foreign data.")
            .c_str());
    cls.def_static(
        "load",
        [read](const PyContext& c, nb::handle path) {
            const std::string p = fspath(path);
            nb::gil_scoped_release release;
            return read(c.st, io::read_file(p));
        },
        "context"_a, "path"_a, sig("def load(context: Context, path: str | os.PathLike[str]) -> " + n),
        (n + ".deserialize of a file written by save().").c_str());
    // pickle: serialize() and, for encrypted data, the id of the keys to attach to on load
    cls.def(
        "__reduce__",
        [name](nb::handle self) {
            return reduce_with_context(self, *nb::cast<const T&>(self).st, name, !std::is_same_v<T, PyPlaintext>);
        },
        "pickle: serialize() (the checked format) and the key set's id; unpickling attaches it to a live context with "
        "those keys (SerializationError without one): unpickle the context first.");
}

}  // namespace oboro::py
