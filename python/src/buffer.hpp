// What the binding files that serialize share (serialize.cpp, linalg.cpp): a view of any
// buffer-protocol object, the bytes of a serialized record, a path argument, the key-id check.
#pragma once

#include <cstdint>
#include <string>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "oboro/io/byte_stream.hpp"

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

struct State;
// SerializationError when data encrypted under key set `key_id` is loaded into a context with
// other keys (0: unknown on either side, accepted). serialize.cpp.
void check_key_id(uint64_t key_id, const State& s, const char* op, const char* what);

// os.fspath(path): str or pathlib.Path.
inline std::string fspath(nb::handle path) {
    nb::object p = nb::module_::import_("os").attr("fspath")(path);
    return nb::cast<std::string>(p);
}

}  // namespace oboro::py
